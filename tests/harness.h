/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Minimal test harness shared by the C suites. A test is
 *
 *	TEST(window_rollover) { ... if (!CHECK_EQ(x, 3, "x")) return; ... }
 *
 * Checks return a bool so a failed check can also end the test; each
 * failure prints file:line, what, got and want. The runner (harness.c)
 * prints one line per test and ends with "N passed, N failed".
 */
#ifndef RL_HARNESS_H
#define RL_HARNESS_H

#include <stdbool.h>

typedef void (*test_fn)(void);

void harness_register(const char *name, test_fn fn);
bool harness_check(bool ok, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Fail the running test unless root: privileged suites never pass silently. */
bool harness_require_root(void);
/* Set by each suite: printed before the results, e.g. "prog". */
extern const char *harness_suite;

#define TEST(name)							\
	static void test_##name(void);					\
	__attribute__((constructor)) static void register_##name(void)	\
	{								\
		harness_register(#name, test_##name);			\
	}								\
	static void test_##name(void)

#define CHECK(cond, ...) harness_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define CHECK_EQ(actual, expected, what) ({				\
	unsigned long long __a = (unsigned long long)(actual);		\
	unsigned long long __e = (unsigned long long)(expected);	\
	harness_check(__a == __e, __FILE__, __LINE__,			\
		      "%s: got %llu, want %llu", (what), __a, __e);	\
})

#define CHECK_LE(actual, bound, what) ({				\
	unsigned long long __a = (unsigned long long)(actual);		\
	unsigned long long __b = (unsigned long long)(bound);		\
	harness_check(__a <= __b, __FILE__, __LINE__,			\
		      "%s: got %llu, want <= %llu", (what), __a, __b);	\
})

#define CHECK_GE(actual, bound, what) ({				\
	unsigned long long __a = (unsigned long long)(actual);		\
	unsigned long long __b = (unsigned long long)(bound);		\
	harness_check(__a >= __b, __FILE__, __LINE__,			\
		      "%s: got %llu, want >= %llu", (what), __a, __b);	\
})

#endif /* RL_HARNESS_H */
