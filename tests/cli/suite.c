// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The CLI's host tests (option tables, views, rules files): every
 * tests/cli/test_*.c, linked with the CLI's archive as well as the
 * library's; tests/unit links the library alone. */
#include "harness.h"

const char *harness_suite = "cli";
