/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Minimal test harness shared by the C suites. A test is
 *
 *	TEST(window_rollover) { ... if (!CHECK_EQ(x, 3, "x")) return; ... }
 *
 * Checks return a bool so a failed check can also end the test; each
 * failure prints file:line, what, got and want (CHECK_EQ and kin, below),
 * or the message CHECK was given. The runner (harness.c)
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

/*
 * Integer checks keep each operand's type, as the kernel selftests'
 * ASSERT_EQ: a negative int is compared and printed as negative, never
 * cast to a huge unsigned value, whatever the type of the other operand.
 * Each operand is evaluated once, actual first; the check returns a bool.
 *
 *	if (!CHECK_EQ(res.retval, XDP_DROP, "11th packet"))
 *		goto out;
 */
struct harness_int {
	bool is_signed;
	union {
		long long s;
		unsigned long long u;
	};
};

enum harness_op { HARNESS_EQ, HARNESS_NE, HARNESS_LT, HARNESS_LE, HARNESS_GT, HARNESS_GE };

bool harness_check_int(enum harness_op op, struct harness_int actual,
		       struct harness_int expected, const char *file, int line,
		       const char *what);

/* `+ 0` promotes bit-fields and drops qualifiers, keeping the signedness. */
#define HARNESS_INT(x) ({						\
	typeof((x) + 0) __v = (x);					\
	((typeof(__v))-1 < (typeof(__v))1) ?				\
		(struct harness_int){ .is_signed = true, .s = (long long)__v } : \
		(struct harness_int){ .u = (unsigned long long)__v };	\
})

#define HARNESS_CHECK_INT(op, actual, expected, what) ({		\
	struct harness_int __act = HARNESS_INT(actual);			\
	struct harness_int __exp = HARNESS_INT(expected);		\
	harness_check_int(op, __act, __exp, __FILE__, __LINE__, (what)); \
})

#define CHECK_EQ(actual, expected, what) HARNESS_CHECK_INT(HARNESS_EQ, actual, expected, what)
#define CHECK_NE(actual, expected, what) HARNESS_CHECK_INT(HARNESS_NE, actual, expected, what)
#define CHECK_LT(actual, bound, what) HARNESS_CHECK_INT(HARNESS_LT, actual, bound, what)
#define CHECK_LE(actual, bound, what) HARNESS_CHECK_INT(HARNESS_LE, actual, bound, what)
#define CHECK_GT(actual, bound, what) HARNESS_CHECK_INT(HARNESS_GT, actual, bound, what)
#define CHECK_GE(actual, bound, what) HARNESS_CHECK_INT(HARNESS_GE, actual, bound, what)

#endif /* RL_HARNESS_H */
