// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Rule scopes on the command line (user/lib/scope_opts.c): --proto, --dport
 * and their checks, the text and options a scope prints as, the packed
 * form userspace rule sets hold, and the choice of a `scopes` entry. */
#include <errno.h>
#include <string.h>
#include "lib/scope_opts.h"
#include "lib/values.h"
#include "../harness.h"

TEST(scope_parse_proto)
{
	static const struct { const char *s; int ok; __u8 proto; } c[] = {
		{ "tcp", 1, 6 }, { "udp", 1, 17 }, { "icmp", 1, 1 },
		{ "icmpv6", 1, 58 }, { "0", 1, 0 }, { "47", 1, 47 },
		{ "255", 1, 255 }, { "256", 0, 0 }, { "-1", 0, 0 },
		{ "TCP", 0, 0 }, { "sctp", 0, 0 }, { "", 0, 0 }, { "6x", 0, 0 },
	};
	char err[RL_ERR_LEN];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		__u8 p = 99;
		int ret = rl_scope_parse_proto(c[i].s, &p, err, sizeof(err));

		if (!c[i].ok) {
			CHECK(ret && strstr(err, "tcp, udp, icmp, icmpv6") &&
			      strstr(err, "0 to 255"), "'%s' refused naming the allowed values: %s",
			      c[i].s, err);
			CHECK_EQ(p, 99, "output untouched");
			continue;
		}
		if (CHECK_EQ(ret, 0, c[i].s))
			CHECK_EQ(p, c[i].proto, c[i].s);
	}
}

TEST(scope_parse_dport)
{
	static const struct { const char *s; int ok; __u16 lo, hi; } c[] = {
		{ "80", 1, 80, 80 }, { "1", 1, 1, 1 }, { "65535", 1, 65535, 65535 },
		{ "1000-2000", 1, 1000, 2000 }, { "53-53", 1, 53, 53 },
		{ "0", 0, 0, 0 }, { "65536", 0, 0, 0 }, { "2000-1000", 0, 0, 0 },
		{ "80-", 0, 0, 0 }, { "-80", 0, 0, 0 }, { "1-2-3", 0, 0, 0 },
		{ "http", 0, 0, 0 }, { "", 0, 0, 0 }, { "123456789-1", 0, 0, 0 },
	};
	char err[RL_ERR_LEN];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		__u16 lo = 7, hi = 7;
		int ret = rl_scope_parse_dport(c[i].s, &lo, &hi, err, sizeof(err));

		if (!c[i].ok) {
			CHECK(ret && strstr(err, "1 to 65535"), "'%s' refused: %s", c[i].s, err);
			CHECK(lo == 7 && hi == 7, "'%s': output untouched", c[i].s);
			continue;
		}
		if (CHECK_EQ(ret, 0, c[i].s)) {
			CHECK_EQ(lo, c[i].lo, c[i].s);
			CHECK_EQ(hi, c[i].hi, c[i].s);
		}
	}
}

TEST(scope_check_combinations)
{
	struct rl_scope s;
	char err[RL_ERR_LEN];

	CHECK_EQ(rl_scope_check(&(struct rl_scope_opts){ 0 }, &s, err, sizeof(err)), 0, "none");
	CHECK(!rl_scope_any(&s), "no option: unscoped");
	CHECK_NE(rl_scope_check(&(struct rl_scope_opts){ .dport_set = true, .dport_lo = 53,
		 .dport_hi = 53 }, &s, err, sizeof(err)), 0, "--dport alone");
	CHECK(strstr(err, "--proto tcp or --proto udp"), "%s", err);
	CHECK_NE(rl_scope_check(&(struct rl_scope_opts){ .proto_set = true, .proto = 1,
		 .dport_set = true, .dport_lo = 1, .dport_hi = 1 }, &s, err, sizeof(err)), 0,
		 "--dport with icmp");
	CHECK_NE(rl_scope_check(&(struct rl_scope_opts){ .syn = true }, &s, err, sizeof(err)),
		 0, "--syn alone");
	CHECK(strstr(err, "--proto tcp"), "%s", err);
	CHECK_NE(rl_scope_check(&(struct rl_scope_opts){ .proto_set = true, .proto = 17,
		 .syn = true }, &s, err, sizeof(err)), 0, "--syn with udp");
	CHECK_EQ(rl_scope_check(&(struct rl_scope_opts){ .proto_set = true, .proto = 6,
		 .syn = true, .dport_set = true, .dport_lo = 80, .dport_hi = 80 },
		 &s, err, sizeof(err)), 0, "tcp dport 80 syn");
	CHECK_EQ(s.flags, RL_SCOPE_F_SYN | RL_SCOPE_F_DPORT, "flags");
	CHECK_EQ(s.rank, rl_scope_rank(&s), "rank");
	CHECK_GT(s.rank, 0, "a scope");
}

TEST(scope_text_and_options)
{
	static const struct { struct rl_scope s; const char *text, *opts; } c[] = {
		{ { 0 }, "", "" },
		{ { 6, RL_SCOPE_F_SYN, 0, 0, 0, 1 + (1U << 16) }, "tcp syn", " --proto tcp --syn" },
		{ { 17, RL_SCOPE_F_DPORT, 53, 53, 0, 1 }, "udp dport 53", " --proto udp --dport 53" },
		{ { 6, RL_SCOPE_F_DPORT, 1000, 2000, 0, 1 }, "tcp dport 1000-2000",
		  " --proto tcp --dport 1000-2000" },
		{ { 1, 0, 0, 0, 0, 1 }, "icmp", " --proto icmp" },
		{ { 58, 0, 0, 0, 0, 1 }, "icmpv6", " --proto icmpv6" },
		{ { 47, 0, 0, 0, 0, 1 }, "proto 47", " --proto 47" },
	};
	char buf[RL_SCOPE_STRLEN * 2];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		rl_scope_text(&c[i].s, buf, sizeof(buf));
		CHECK(!strcmp(buf, c[i].text), "text '%s', want '%s'", buf, c[i].text);
		rl_scope_opts_text(&c[i].s, buf, sizeof(buf));
		CHECK(!strcmp(buf, c[i].opts), "options '%s', want '%s'", buf, c[i].opts);
	}
}

/* The packed form round-trips, and keeps scopes apart as rule keys. */
TEST(scope_packed_in_rule)
{
	const struct rl_scope all[] = {
		rl_scope_of(6, RL_SCOPE_F_SYN, 0, 0), rl_scope_of(6, 0, 0, 0),
		rl_scope_of(0, 0, 0, 0), rl_scope_of(17, RL_SCOPE_F_DPORT, 53, 53),
		rl_scope_of(17, RL_SCOPE_F_DPORT, 53, 54),
		rl_scope_of(6, RL_SCOPE_F_DPORT | RL_SCOPE_F_SYN, 1, 65535),
	};
	struct rl_rule r[6], none = { 0 };
	struct rl_scope back;

	for (int i = 0; i < 6; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		rl_rule_scope_put(&r[i], &all[i]);
		rl_rule_scope_get(&r[i], &back);
		CHECK(rl_scope_same(&back, &all[i]) && back.rank == all[i].rank,
		      "scope %d round-trips", i);
		CHECK(r[i].scope > RL_MAX_SCOPES, "scope %d: never taken for an index", i);
		CHECK(r[i].scope != none.scope || r[i].pad != none.pad, "scope %d: not none", i);
		for (int k = 0; k < i; k++)
			CHECK(r[i].scope != r[k].scope || r[i].pad != r[k].pad,
			      "scopes %d and %d apart", k, i);
	}
	rl_rule_scope_get(&none, &back);
	CHECK(!rl_scope_any(&back), "an unscoped rule has none");
}

TEST(scope_pick_entries)
{
	struct rl_scope table[RL_MAX_SCOPES] = { 0 }, syn = rl_scope_of(6, RL_SCOPE_F_SYN, 0, 0),
		dns = rl_scope_of(17, RL_SCOPE_F_DPORT, 53, 53), other;
	bool used[RL_MAX_SCOPES] = { 0 };

	CHECK_EQ(rl_scope_pick(table, used, &syn), 0, "the first scope: entry 0");
	CHECK_EQ(rl_scopes_used(used), 0, "none used");
	table[0] = syn, used[0] = true;
	CHECK_EQ(rl_scope_pick(table, used, &syn), 0, "the same scope: its entry");
	CHECK_EQ(rl_scope_pick(table, used, &dns), 1, "another: the lowest free");
	table[3] = dns;		/* left by a change cut short, unused */
	CHECK_EQ(rl_scope_pick(table, used, &dns), 3, "an entry holding it, unused, is taken");
	used[1] = true, used[3] = true;
	CHECK_EQ(rl_scopes_used(used), 4, "1 + the highest used");
	used[3] = false;
	CHECK_EQ(rl_scopes_used(used), 2, "after the highest is freed");
	for (int i = 0; i < RL_MAX_SCOPES; i++) {
		table[i] = rl_scope_of(6, RL_SCOPE_F_DPORT, (__u16)(i + 1), (__u16)(i + 1));
		used[i] = true;
	}
	other = rl_scope_of(17, 0, 0, 0);
	CHECK_EQ(rl_scope_pick(table, used, &other), -ENOSPC, "all entries in use");
	CHECK_EQ(rl_scope_pick(table, used, &table[7]), 7, "full, but the scope is there");
	used[9] = false;
	CHECK_EQ(rl_scope_pick(table, used, &other), 9, "a freed entry is reused");
}

/* config.scope_skip: the protocols no scope in use names, by number
 * (rl_scope_skip_bit), so that their packets walk no scope; an entry that
 * holds a scope counts when `used` is not given (a scope just written,
 * before its rule: never skipped). */
TEST(scope_skip_the_protocols_no_scope_names)
{
	struct rl_scope table[RL_MAX_SCOPES] = { 0 };
	bool used[RL_MAX_SCOPES] = { 0 };
	__u8 tcp = rl_scope_skip_bit(6), udp = rl_scope_skip_bit(17),
	     icmp = rl_scope_skip_bit(1), icmp6 = rl_scope_skip_bit(58),
	     other = rl_scope_skip_bit(47);

	CHECK_EQ(tcp | udp | icmp | icmp6 | other, RL_SCOPE_SKIP_ALL, "a bit each");
	CHECK_EQ(rl_scope_skip_bit(132), other, "every other number shares one");
	CHECK_EQ(rl_scope_skip(table, NULL), RL_SCOPE_SKIP_ALL, "no scope: all skip");
	table[0] = rl_scope_of(6, RL_SCOPE_F_SYN, 0, 0);
	CHECK_EQ(rl_scope_skip(table, NULL), RL_SCOPE_SKIP_ALL & ~tcp, "a SYN scope");
	CHECK_EQ(rl_scope_skip(table, used), RL_SCOPE_SKIP_ALL,
		 "an entry no rule uses names nothing");
	used[0] = true;
	table[5] = rl_scope_of(17, RL_SCOPE_F_DPORT, 53, 53), used[5] = true;
	table[6] = rl_scope_of(47, 0, 0, 0), used[6] = true;
	CHECK_EQ(rl_scope_skip(table, used), icmp | icmp6, "TCP, UDP and GRE named");
	used[6] = false;
	CHECK_EQ(rl_scope_skip(table, used), icmp | icmp6 | other, "GRE's scope freed");
}
