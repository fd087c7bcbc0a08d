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

/* -1, 0 or 1 as a is below, equal to or above b, as numbers. */
static int int_cmp(struct harness_int a, struct harness_int b)
{
	bool aneg = a.is_signed && a.s < 0, bneg = b.is_signed && b.s < 0;

	if (aneg != bneg)
		return aneg ? -1 : 1;
	if (aneg)
		return (a.s > b.s) - (a.s < b.s);
	/* both >= 0: the unsigned view holds the value */
	return (a.u > b.u) - (a.u < b.u);
}

static const char *int_fmt(struct harness_int v, char *buf, size_t len)
{
	if (v.is_signed)
		snprintf(buf, len, "%lld", v.s);
	else
		snprintf(buf, len, "%llu", v.u);
	return buf;
}

bool harness_check_int(enum harness_op op, struct harness_int actual,
		       struct harness_int expected, const char *file, int line,
		       const char *what)
{
	static const char *const want[] = {
		[HARNESS_EQ] = "", [HARNESS_NE] = "!= ", [HARNESS_LT] = "< ",
		[HARNESS_LE] = "<= ", [HARNESS_GT] = "> ", [HARNESS_GE] = ">= ",
	};
	int c = int_cmp(actual, expected);
	bool ok = false;
	char a[24], e[24];

	switch (op) {
	case HARNESS_EQ: ok = c == 0; break;
	case HARNESS_NE: ok = c != 0; break;
	case HARNESS_LT: ok = c < 0; break;
	case HARNESS_LE: ok = c <= 0; break;
	case HARNESS_GT: ok = c > 0; break;
	case HARNESS_GE: ok = c >= 0; break;
	}
	return harness_check(ok, file, line, "%s: got %s, want %s%s", what,
			     int_fmt(actual, a, sizeof(a)), want[op],
			     int_fmt(expected, e, sizeof(e)));
}

bool harness_require_root(void)
{
	return harness_check(geteuid() == 0, __FILE__, __LINE__,
			     "needs root (CAP_BPF, CAP_NET_ADMIN)");
}

/* Does test `name` match one of the NAME arguments (none: every test)? */
static int selected(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (strstr(name, argv[i]))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < ntests; i++) {
		if (!selected(tests[i].name, argc, argv))
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
