// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer harness for the value parsers of user/lib/values.c: every input,
 * as a C string, through each parser. Invariants, beyond no crash and no
 * sanitizer report:
 *  - a refusal returns -1, leaves the output untouched, and writes a
 *    message within the error buffer (sized from the input, so that
 *    AddressSanitizer sees any overrun);
 *  - an accepted value is in range and prints (rl_format_*, or %llu for
 *    counts and rates) as text that parses back to the same value.
 * Build and run: make fuzz (long), tests/fuzz/run.sh (short, in make test).
 */
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ratelimit.h"
#include "lib/values.h"

#define POISON 0x5a5a5a5a5a5a5a5aULL

/* An invariant broken: say which and crash, so libFuzzer keeps the input. */
#define ENSURE(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz_values: %s:%d: ", __FILE__, __LINE__);	\
		fprintf(stderr, __VA_ARGS__);				\
		fprintf(stderr, " (input '%s')\n", in);			\
		abort();						\
	}								\
} while (0)

static const char *in;		/* the input, for messages */

static void check_refusal(int ret, const char *err, size_t errlen, bool untouched)
{
	ENSURE(ret == -EINVAL, "returned %d, want -EINVAL", ret);
	ENSURE(untouched, "refusal wrote the output");
	ENSURE(errlen == 0 || memchr(err, '\0', errlen), "message not terminated");
	ENSURE(errlen < 2 || err[0] != '\0', "refusal without a message");
}

static void fuzz_rate(char *err, size_t errlen)
{
	for (int allow = 0; allow <= 1; allow++) {
		__u64 v = POISON, back = POISON;
		char text[32], e[RL_ERR_LEN];
		int ret = rl_parse_rate(in, allow, &v, err, errlen);

		if (ret) {
			check_refusal(ret, err, errlen, v == POISON);
			continue;
		}
		ENSURE(allow || v != RL_UNLIMITED, "unlimited where not allowed");
		if (v == RL_UNLIMITED) {
			ENSURE(!strcmp(in, "unlimited"), "RL_UNLIMITED from a number");
			continue;
		}
		snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
		ENSURE(rl_parse_rate(text, false, &back, e, sizeof(e)) == 0 && back == v,
		       "rate %s does not parse back", text);
	}
}

static void fuzz_duration(char *err, size_t errlen)
{
	__u64 v = POISON, back = POISON;
	char text[32], e[RL_ERR_LEN];
	int ret = rl_parse_duration(in, &v, err, errlen);

	if (ret)
		return check_refusal(ret, err, errlen, v == POISON);
	ENSURE(v % RL_NSEC_PER_MSEC == 0, "duration %llu ns is not whole ms",
	       (unsigned long long)v);
	rl_format_duration(v, text, sizeof(text));
	ENSURE(rl_parse_duration(text, &back, e, sizeof(e)) == 0 && back == v,
	       "duration %s does not parse back", text);
}

static void fuzz_uint(char *err, size_t errlen)
{
	static const __u64 bounds[][2] = { { 1, 16 }, { 0, RL_UNLIMITED }, { 16, 16 << 20 } };

	for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
		__u64 v = POISON;
		int ret = rl_parse_uint(in, "--n", bounds[i][0], bounds[i][1], &v, err, errlen);

		if (ret) {
			check_refusal(ret, err, errlen, v == POISON);
			continue;
		}
		ENSURE(v >= bounds[i][0] && v <= bounds[i][1], "%llu out of range",
		       (unsigned long long)v);
		ENSURE(strtoull(in, NULL, 10) == v, "%llu is not the number",
		       (unsigned long long)v);
	}
}

static void fuzz_prefix(char *err, size_t errlen)
{
	struct rl_prefix p, poison, back, masked;
	char text[RL_PREFIX_STRLEN], e[RL_ERR_LEN];
	int ret;

	memset(&poison, 0x5a, sizeof(poison));
	p = poison;
	ret = rl_parse_prefix(in, &p, err, errlen);
	if (ret)
		return check_refusal(ret, err, errlen, !memcmp(&p, &poison, sizeof(p)));
	ENSURE(p.len <= (p.v6 ? 128u : 32u), "length %u", p.len);
	if (!p.is_default) {
		/* no host bits below the length */
		masked = p;
		for (__u32 i = p.len; i < (p.v6 ? 128u : 32u); i++)
			masked.addr[i / 8] &= (__u8)~(0x80 >> (i % 8));
		ENSURE(!memcmp(masked.addr, p.addr, 16), "host bits set");
		ENSURE(p.v6 || !memcmp(p.addr + 4, "\0\0\0\0\0\0\0\0\0\0\0\0", 12),
		       "IPv4 with bytes past its 4");
	}
	rl_format_prefix(&p, text, sizeof(text));
	ENSURE(rl_parse_prefix(text, &back, e, sizeof(e)) == 0, "%s does not parse back: %s",
	       text, e);
	ENSURE(back.v6 == p.v6 && back.len == p.len && back.is_default == p.is_default &&
	       !memcmp(back.addr, p.addr, 16), "%s parses back to another prefix", text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the error buffer: exactly as long as the input says, on the heap */
	size_t errlen = size ? data[0] % 80 : RL_ERR_LEN;
	char *s = malloc(size + 1), *err = malloc(errlen ? errlen : 1);

	if (!s || !err)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';		/* an embedded NUL ends the string early */
	in = s;
	fuzz_rate(err, errlen);
	fuzz_duration(err, errlen);
	fuzz_uint(err, errlen);
	fuzz_prefix(err, errlen);
	free(err);
	free(s);
	return 0;
}
