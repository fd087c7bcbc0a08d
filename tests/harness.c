// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Runner for TEST()s: `BIN [NAME-SUBSTRING]` runs all or the matching ones. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"

#define MAX_TESTS 256

static struct {
	const char *name;
	test_fn fn;
} tests[MAX_TESTS];
static int ntests;
static int cur_failed;

void harness_register(const char *name, test_fn fn)
{
	if (ntests == MAX_TESTS) {
		fprintf(stderr, "harness: more than %d tests\n", MAX_TESTS);
		exit(1);
	}
	tests[ntests].name = name;
	tests[ntests].fn = fn;
	ntests++;
}

bool harness_check(bool ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return true;
	cur_failed++;
	printf("    %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return false;
}

bool harness_require_root(void)
{
	return harness_check(geteuid() == 0, __FILE__, __LINE__,
			     "needs root (CAP_BPF, CAP_NET_ADMIN)");
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < ntests; i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		cur_failed = 0;
		tests[i].fn();
		if (cur_failed) {
			failed++;
			printf("FAIL %s/%s\n", harness_suite, tests[i].name);
		} else {
			passed++;
			printf("ok   %s/%s\n", harness_suite, tests[i].name);
		}
	}
	printf("%s: %d passed, %d failed\n", harness_suite, passed, failed);
	return failed ? 1 : 0;
}
