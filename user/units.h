/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Former name of values.h, still included by bench/cost.c: remove once it
 * includes values.h. */
#include "values.h"
