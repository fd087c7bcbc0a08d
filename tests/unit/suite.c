// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The host unit tests: one binary, every tests/unit/test_*.c registered. */
#include "harness.h"

const char *harness_suite = "unit";
