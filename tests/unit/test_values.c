// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The value parsers and formatters of user/lib/values.c: RATE, DURATION, PREFIX,
 * counts. Tables of accepted and refused text, edges, round-trips. */
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include "ratelimit.h"
#include "lib/values.h"
#include "harness.h"

#define U64_MAX_TEXT "18446744073709551615"	/* = RL_UNLIMITED */
#define POISON 0x5a5a5a5a5a5a5a5aULL

struct u64_case {
	const char *in;
	__u64 want;
};

/* Every refusal: -1, a message, the output untouched. */
static void refused(int ret, const __u64 *out, const char *err, const char *in,
		    const char *what)
{
	CHECK(ret == -EINVAL, "%s '%s' accepted", what, in);
	CHECK(*out == POISON, "%s '%s' refused but wrote its output", what, in);
	CHECK(err[0] != '\0', "%s '%s' refused without a message", what, in);
}

TEST(rate_accepted)
{
	static const struct u64_case ok[] = {
		{ "0", 0 }, { "1", 1 }, { "1000", 1000 }, { "10k", 10000 },
		{ "2M", 2000000 }, { "1G", 1000000000 }, { "0k", 0 },
		{ "007", 7 },				/* leading zeros: decimal */
		{ "18446744073709551614", RL_UNLIMITED - 1 },	/* largest */
		{ "18446744073709551k", 18446744073709551000ULL },
		{ "18446744073G", 18446744073000000000ULL },
	};
	char err[RL_ERR_LEN];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		__u64 v = POISON;

		CHECK(rl_parse_rate(ok[i].in, false, &v, err, sizeof(err)) == 0 &&
		      v == ok[i].want, "rate '%s': got %llu, want %llu", ok[i].in,
		      (unsigned long long)v, (unsigned long long)ok[i].want);
	}
}

TEST(rate_refused)
{
	static const char *const bad[] = {
		"", " ", "k", "-1", "+1", " 1", "1 ", "1\n", "1.5", "1.5k", "1e3",
		"0x10", "10K", "10m", "10g", "10kk", "10kb", "10k ", "1,000", "１",
		"unlimited", "Unlimited", "inf", "nan",
		U64_MAX_TEXT,				/* = RL_UNLIMITED */
		"18446744073709551616", "99999999999999999999999",
		"18446744073709552k", "18446744074G",	/* overflow by the suffix */
	};
	char err[RL_ERR_LEN];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		__u64 v = POISON;

		err[0] = '\0';
		refused(rl_parse_rate(bad[i], false, &v, err, sizeof(err)), &v, err,
			bad[i], "rate");
		CHECK(strstr(err, "rate"), "rate message '%s' names what", err);
	}
}

TEST(rate_unlimited_word)
{
	char err[RL_ERR_LEN];
	__u64 v = POISON;

	CHECK(rl_parse_rate("unlimited", true, &v, err, sizeof(err)) == 0 &&
	      v == RL_UNLIMITED, "'unlimited' where allowed");
	v = POISON;
	refused(rl_parse_rate("unlimited", false, &v, err, sizeof(err)), &v, err,
		"unlimited", "rate without unlimited");
	CHECK(!strstr(err, "or 'unlimited'"), "no hint of 'unlimited' where refused: %s", err);
	refused(rl_parse_rate("unlimitedk", true, &v, err, sizeof(err)), &v, err,
		"unlimitedk", "rate");
	CHECK(strstr(err, "or 'unlimited'"), "hint of 'unlimited' where allowed: %s", err);
	/* the largest number is not the word */
	refused(rl_parse_rate(U64_MAX_TEXT, true, &v, err, sizeof(err)), &v, err,
		U64_MAX_TEXT, "rate");
}

TEST(duration_accepted)
{
	static const struct u64_case ok[] = {
		{ "0ms", 0 }, { "1ms", RL_NSEC_PER_MSEC }, { "500ms", 500 * RL_NSEC_PER_MSEC },
		{ "1s", RL_NSEC_PER_SEC }, { "10s", 10 * RL_NSEC_PER_SEC },
		{ "1m", 60 * RL_NSEC_PER_SEC }, { "0s", 0 }, { "0m", 0 },
		{ "1000ms", RL_NSEC_PER_SEC }, { "60s", 60 * RL_NSEC_PER_SEC },
		{ "18446744073s", 18446744073ULL * RL_NSEC_PER_SEC },	/* largest s */
		{ "307445734m", 307445734ULL * 60 * RL_NSEC_PER_SEC },
		{ "1h", 3600 * RL_NSEC_PER_SEC }, { "24h", 24 * 3600 * RL_NSEC_PER_SEC },
		{ "0h", 0 }, { "5124095h", 5124095ULL * 3600 * RL_NSEC_PER_SEC },
	};
	char err[RL_ERR_LEN];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		__u64 v = POISON;

		CHECK(rl_parse_duration(ok[i].in, &v, err, sizeof(err)) == 0 &&
		      v == ok[i].want, "duration '%s': got %llu, want %llu", ok[i].in,
		      (unsigned long long)v, (unsigned long long)ok[i].want);
	}
}

TEST(duration_refused)
{
	static const char *const bad[] = {
		"", "1", "0", "ms", "s", "h", "1H", "1hh", "1h1m", "5124096h", "1us", "1ns", "1S", "1MS", "1 s", " 1s",
		"1s ", "1ss", "1mss", "1msx", "-1s", "+1s", "1.5s", "1e3ms", "1sms",
		"1m1s", "0x1s", "18446744074s", "307445735m",	/* overflow by the unit */
		"18446744073709551616ms",
	};
	char err[RL_ERR_LEN];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		__u64 v = POISON;

		err[0] = '\0';
		refused(rl_parse_duration(bad[i], &v, err, sizeof(err)), &v, err, bad[i],
			"duration");
		CHECK(strstr(err, "duration"), "duration message '%s' names what", err);
	}
}

TEST(duration_format_and_round_trip)
{
	static const struct {
		__u64 ns;
		const char *text;
	} cases[] = {
		{ 0, "0ms" }, { RL_NSEC_PER_MSEC, "1ms" }, { 500 * RL_NSEC_PER_MSEC, "500ms" },
		{ RL_NSEC_PER_SEC, "1s" }, { 90 * RL_NSEC_PER_SEC, "90s" },
		{ 60 * RL_NSEC_PER_SEC, "1m" }, { 1500 * RL_NSEC_PER_MSEC, "1500ms" },
		{ 120 * RL_NSEC_PER_SEC, "2m" }, { 3600 * RL_NSEC_PER_SEC, "1h" },
		{ 90 * 60 * RL_NSEC_PER_SEC, "90m" }, { 24 * 3600 * RL_NSEC_PER_SEC, "24h" },
		{ 1, "1ns" }, { 333333333, "333333333ns" },
		{ RL_UNLIMITED, U64_MAX_TEXT "ns" },
	};
	char buf[64], err[RL_ERR_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u64 back = POISON;

		rl_format_duration(cases[i].ns, buf, sizeof(buf));
		CHECK(!strcmp(buf, cases[i].text), "format %llu: got %s, want %s",
		      (unsigned long long)cases[i].ns, buf, cases[i].text);
		/* whole milliseconds (all a DURATION can say) parse back */
		if (cases[i].ns % RL_NSEC_PER_MSEC == 0)
			CHECK(rl_parse_duration(buf, &back, err, sizeof(err)) == 0 &&
			      back == cases[i].ns, "%s parses back to %llu", buf,
			      (unsigned long long)back);
	}
	/* a short buffer truncates, terminated */
	rl_format_duration(500 * RL_NSEC_PER_MSEC, buf, 3);
	CHECK(!strcmp(buf, "50"), "truncated: %s", buf);
}

TEST(uint_bounds)
{
	char err[RL_ERR_LEN];
	__u64 v = POISON;

	CHECK(rl_parse_uint("1", "--buckets", 1, 16, &v, err, sizeof(err)) == 0 && v == 1,
	      "min");
	CHECK(rl_parse_uint("16", "--buckets", 1, 16, &v, err, sizeof(err)) == 0 && v == 16,
	      "max");
	CHECK(rl_parse_uint(U64_MAX_TEXT, "--n", 0, RL_UNLIMITED, &v, err, sizeof(err)) == 0 &&
	      v == RL_UNLIMITED, "the whole u64 range");
	CHECK(rl_parse_uint("0", "--top", 0, 10, &v, err, sizeof(err)) == 0 && v == 0, "zero");
	CHECK(rl_parse_uint("010", "--top", 0, 10, &v, err, sizeof(err)) == 0 && v == 10,
	      "leading zero: decimal");
	{
		static const char *const bad[] = {
			"0", "17", "", " 1", "1 ", "-1", "+1", "1k", "0x1", "1.0",
			"18446744073709551616", "99999999999999999999999",
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			v = POISON;
			err[0] = '\0';
			refused(rl_parse_uint(bad[i], "--buckets", 1, 16, &v, err, sizeof(err)),
				&v, err, bad[i], "uint");
			CHECK(strstr(err, "--buckets") && strstr(err, "1 to 16"),
			      "message names the option and range: %s", err);
		}
	}
}

/* ---- prefixes ---- */

static bool prefix_is(const char *in, bool v6, const char *addr_hex, __u32 len)
{
	char err[RL_ERR_LEN], hex[33] = "";
	struct rl_prefix p;

	if (!CHECK(rl_parse_prefix(in, &p, err, sizeof(err)) == 0, "prefix '%s': %s", in, err))
		return false;
	for (int i = 0; i < (v6 ? 16 : 4); i++)
		sprintf(hex + 2 * i, "%02x", p.addr[i]);
	return CHECK(p.v6 == v6 && p.len == len && !p.is_default && !strcmp(hex, addr_hex),
		     "prefix '%s': got v6=%d %s/%u", in, p.v6, hex, p.len);
}

TEST(prefix_accepted)
{
	prefix_is("198.18.0.7", false, "c6120007", 32);
	prefix_is("198.18.0.0/15", false, "c6120000", 15);
	prefix_is("198.18.0.7/32", false, "c6120007", 32);
	prefix_is("0.0.0.0/0", false, "00000000", 0);
	prefix_is("2001:db8::/32", true, "20010db8000000000000000000000000", 32);
	prefix_is("2001:db8::1", true, "20010db8000000000000000000000001", 128);
	prefix_is("2001:DB8::/32", true, "20010db8000000000000000000000000", 32);
	prefix_is("::/0", true, "00000000000000000000000000000000", 0);
	prefix_is("2001:db8:1:2::/64", true, "20010db8000100020000000000000000", 64);
	/* IPv4 in IPv6 text other than mapped is IPv6 */
	prefix_is("::198.18.0.7", true, "000000000000000000000000c6120007", 128);
	prefix_is("::fffe:0:0/96", true, "00000000000000000000fffe00000000", 96);
	{
		struct rl_prefix p;
		char err[RL_ERR_LEN];

		CHECK(rl_parse_prefix("default", &p, err, sizeof(err)) == 0 && p.is_default,
		      "default");
	}
}

TEST(prefix_refused)
{
	static const struct {
		const char *in, *says;
	} bad[] = {
		{ "", "bad address" }, { "/", "bad address" }, { "/15", "bad address" },
		{ "198.18.0.0/", "prefix length" }, { "198.18.0.0/33", "too long" },
		{ "198.18.0.0/015", "prefix length" }, { "198.18.0.0/00", "prefix length" },
		{ "198.18.0.0/-1", "prefix length" }, { "198.18.0.0/+15", "prefix length" },
		{ "198.18.0.0/15 ", "prefix length" }, { "198.18.0.0/1x", "prefix length" },
		{ "198.18.0.0/15/15", "prefix length" }, { "198.18.0.0/99999999999999999999", "prefix length" },
		{ " 198.18.0.0", "bad address" }, { "198.18.0.0 ", "bad address" },
		{ "198.18.0", "bad address" }, { "198.18.0.0.0", "bad address" },
		{ "198.18.0.256", "bad address" }, { "198.018.0.1", "bad address" },
		{ "0x7f.0.0.1", "bad address" }, { "2130706433", "bad address" },
		{ "2001:db8::/129", "too long" }, { "2001:db8:::/32", "bad address" },
		{ "2001:db8::g", "bad address" }, { "fe80::1%eth0", "bad address" },
		{ "[2001:db8::1]", "bad address" }, { "Default", "bad address" },
		{ "default/0", "bad address" }, { "any", "bad address" },
		/* host bits: the message names the network */
		{ "198.18.0.1/15", "did you mean 198.18.0.0/15?" },
		{ "198.19.0.0/15", "did you mean 198.18.0.0/15?" },
		{ "0.0.0.1/0", "did you mean 0.0.0.0/0?" },
		{ "2001:db8::1/32", "did you mean 2001:db8::/32?" },
		{ "2001:db8:1:2:3::/64", "did you mean 2001:db8:1:2::/64?" },
		/* IPv4-mapped: IPv4 traffic never matches IPv6 rules */
		{ "::ffff:198.18.0.7", "use 198.18.0.7/32" },
		{ "::ffff:198.18.0.0/111", "use 198.18.0.0/15" },
		{ "::ffff:0:0/96", "use 0.0.0.0/0" },
		{ "0:0:0:0:0:ffff:c612:7", "use 198.18.0.7/32" },
		{ "::ffff:198.18.0.1/111", "did you mean ::ffff:198.18.0.0/111?" },
	};
	char err[RL_ERR_LEN], long_in[300];
	struct rl_prefix p, poison;

	memset(&poison, 0x5a, sizeof(poison));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = poison;
		err[0] = '\0';
		CHECK(rl_parse_prefix(bad[i].in, &p, err, sizeof(err)) == -EINVAL,
		      "prefix '%s' accepted", bad[i].in);
		CHECK(!memcmp(&p, &poison, sizeof(p)), "prefix '%s' refused but wrote its output",
		      bad[i].in);
		CHECK(strstr(err, bad[i].says), "prefix '%s': message '%s' lacks '%s'",
		      bad[i].in, err, bad[i].says);
	}
	memset(long_in, '1', sizeof(long_in) - 1);
	long_in[sizeof(long_in) - 1] = '\0';
	CHECK(rl_parse_prefix(long_in, &p, err, sizeof(err)) == -EINVAL, "long input refused");
	CHECK(strlen(err) < sizeof(err) && strstr(err, "..."), "long input shortened: %s", err);
}

static bool prefix_eq(const struct rl_prefix *a, const struct rl_prefix *b)
{
	return a->v6 == b->v6 && a->len == b->len && a->is_default == b->is_default &&
	       !memcmp(a->addr, b->addr, sizeof(a->addr));
}

/* Every accepted prefix prints as text that parses back to it. */
TEST(prefix_round_trip)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "198.18.0.7", "198.18.0.7/32" }, { "198.18.0.0/15", "198.18.0.0/15" },
		{ "0.0.0.0/0", "0.0.0.0/0" }, { "default", "default" },
		{ "2001:db8::1", "2001:db8::1/128" }, { "2001:DB8:0::/32", "2001:db8::/32" },
		{ "2001:0db8:0000:0000:0000:0000:0000:0000/48", "2001:db8::/48" },
		{ "::/0", "::/0" }, { "::198.18.0.7", "::198.18.0.7/128" },
		{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		  "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128" },
	};
	char err[RL_ERR_LEN], buf[RL_PREFIX_STRLEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rl_prefix p, back;

		if (!CHECK(rl_parse_prefix(cases[i].in, &p, err, sizeof(err)) == 0,
			   "'%s': %s", cases[i].in, err))
			continue;
		rl_format_prefix(&p, buf, sizeof(buf));
		CHECK(!strcmp(buf, cases[i].out), "'%s' prints %s, want %s", cases[i].in,
		      buf, cases[i].out);
		CHECK(rl_parse_prefix(buf, &back, err, sizeof(err)) == 0 &&
		      prefix_eq(&back, &p), "%s parses back to the same", buf);
	}
	/* every IPv4 length of one address, masked */
	for (__u32 len = 0; len <= 32; len++) {
		struct rl_prefix p = { .len = len, .addr = { 198, 18, 255, 255 } }, back;
		__u32 keep = len ? ~0U << (32 - len) : 0;
		__u32 a = (198U << 24 | 18U << 16 | 0xffff) & keep;

		p.addr[0] = (__u8)(a >> 24);
		p.addr[1] = (__u8)(a >> 16);
		p.addr[2] = (__u8)(a >> 8);
		p.addr[3] = (__u8)a;
		rl_format_prefix(&p, buf, sizeof(buf));
		CHECK(rl_parse_prefix(buf, &back, err, sizeof(err)) == 0 &&
		      prefix_eq(&back, &p), "/%u: %s parses back (%s)", len, buf, err);
	}
}
