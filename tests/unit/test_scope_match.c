// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Rule scope (include/scope.h) on the host: what is in a scope, which
 * scope is narrower, which rule judges a packet, the transport view of
 * crafted frames, and the keys of scoped windows, which no packet's
 * source can take.
 */
#include <string.h>
#include "scope.h"
#include "model.h"
#include "harness.h"
#include "frame.h"

static struct rl_scope scope(__u8 proto, __u8 flags, __u16 lo, __u16 hi)
{
	struct rl_scope s = { .proto = proto, .flags = flags, .dport_lo = lo,
			      .dport_hi = hi };

	s.rank = rl_scope_rank(&s);
	return s;
}

TEST(scope_match_syn_means_new_connections)
{
	struct rl_scope syn = scope(6, RL_SCOPE_F_SYN, 0, 0);

	CHECK(rl_scope_matches(&syn, &(struct rl_l4){ RL_L4_FULL, 6, RL_TCP_SYN, 0, 80 }),
	      "SYN");
	CHECK(!rl_scope_matches(&syn, &(struct rl_l4){ RL_L4_FULL, 6,
						       RL_TCP_SYN | RL_TCP_ACK, 0, 80 }),
	      "SYN-ACK is not a new connection");
	CHECK(!rl_scope_matches(&syn, &(struct rl_l4){ RL_L4_FULL, 6, RL_TCP_ACK, 0, 80 }),
	      "ACK");
	CHECK(!rl_scope_matches(&syn, &(struct rl_l4){ RL_L4_FULL, 6, RL_TCP_RST, 0, 80 }),
	      "RST");
	/* SYN with FIN or PSH is still a SYN without ACK */
	CHECK(rl_scope_matches(&syn, &(struct rl_l4){ RL_L4_FULL, 6,
						      RL_TCP_SYN | RL_TCP_FIN, 0, 80 }),
	      "SYN+FIN");
	CHECK(!rl_scope_matches(&syn, &(struct rl_l4){ RL_L4_FULL, 17, RL_TCP_SYN, 0, 80 }),
	      "UDP");
}

TEST(scope_match_ports_and_protocols)
{
	struct rl_scope dns = scope(17, RL_SCOPE_F_DPORT, 53, 53);
	struct rl_scope range = scope(6, RL_SCOPE_F_DPORT, 1000, 2000);
	struct rl_scope icmp = scope(1, 0, 0, 0);
	struct rl_scope freed = dns;

	CHECK(rl_scope_matches(&dns, &(struct rl_l4){ RL_L4_FULL, 17, 0, 0, 53 }), "53");
	CHECK(!rl_scope_matches(&dns, &(struct rl_l4){ RL_L4_FULL, 17, 0, 0, 54 }), "54");
	CHECK(!rl_scope_matches(&dns, &(struct rl_l4){ RL_L4_FULL, 6, 0, 0, 53 }), "TCP 53");
	CHECK(rl_scope_matches(&range, &(struct rl_l4){ RL_L4_FULL, 6, 0, 0, 1000 }), "lo");
	CHECK(rl_scope_matches(&range, &(struct rl_l4){ RL_L4_FULL, 6, 0, 0, 2000 }), "hi");
	CHECK(!rl_scope_matches(&range, &(struct rl_l4){ RL_L4_FULL, 6, 0, 0, 999 }), "below");
	CHECK(!rl_scope_matches(&range, &(struct rl_l4){ RL_L4_FULL, 6, 0, 0, 2001 }), "above");
	CHECK(rl_scope_matches(&icmp, &(struct rl_l4){ RL_L4_FULL, 1, 0, 0, 0 }), "ICMP");
	CHECK(!rl_scope_matches(&icmp, &(struct rl_l4){ RL_L4_FULL, 58, 0, 0, 0 }),
	      "ICMPv6 is its own protocol");
	freed.rank = 0;
	CHECK(!rl_scope_matches(&freed, &(struct rl_l4){ RL_L4_NONE, 0, 0, 0, 0 }),
	      "a free entry matches nothing");
}

/* What cannot be read is in scope: a later fragment of its protocol's
 * rules, a packet whose protocol is unknown of every rule. */
TEST(scope_match_unreadable_is_in_scope)
{
	struct rl_scope dns = scope(17, RL_SCOPE_F_DPORT, 53, 53);
	struct rl_scope syn = scope(6, RL_SCOPE_F_SYN, 0, 0);

	CHECK(rl_scope_matches(&dns, &(struct rl_l4){ RL_L4_PROTO, 17, 0, 0, 0 }),
	      "a later UDP fragment is in the DNS scope");
	CHECK(!rl_scope_matches(&syn, &(struct rl_l4){ RL_L4_PROTO, 17, 0, 0, 0 }),
	      "but not in a TCP one");
	CHECK(rl_scope_matches(&syn, &(struct rl_l4){ RL_L4_PROTO, 6, 0, 0, 0 }),
	      "a later TCP fragment is in the SYN scope");
	CHECK(rl_scope_matches(&dns, &(struct rl_l4){ RL_L4_NONE, 0, 0, 0, 0 }) &&
	      rl_scope_matches(&syn, &(struct rl_l4){ RL_L4_NONE, 0, 0, 0, 0 }),
	      "an unknown protocol is in every scope");
}

TEST(scope_rank_narrower_wins)
{
	struct rl_scope tcp = scope(6, 0, 0, 0), syn = scope(6, RL_SCOPE_F_SYN, 0, 0);
	struct rl_scope all = scope(6, RL_SCOPE_F_DPORT, 1, 65535);
	struct rl_scope wide = scope(6, RL_SCOPE_F_DPORT, 1000, 2000);
	struct rl_scope one = scope(6, RL_SCOPE_F_DPORT, 22, 22);
	struct rl_scope one_syn = scope(6, RL_SCOPE_F_DPORT | RL_SCOPE_F_SYN, 22, 22);

	CHECK(tcp.rank > 0, "every scope ranks above a free entry");
	CHECK(syn.rank > tcp.rank, "SYN is narrower than TCP");
	CHECK(all.rank > syn.rank, "a port range beats SYN alone");
	CHECK(wide.rank > all.rank && one.rank > wide.rank, "narrower ranges win");
	CHECK(one_syn.rank > one.rank, "SYN and a port beat the port");
	/* prefix first, then rank, then the lower port range */
	CHECK(rl_scoped_better(32, 1, 5, 24, 99999, 0), "longer prefix");
	CHECK(!rl_scoped_better(24, 99999, 0, 32, 1, 5), "shorter prefix");
	CHECK(rl_scoped_better(24, 9, 5, 24, 8, 0), "higher rank");
	CHECK(rl_scoped_better(24, 8, 0, 24, 8, 5), "lower port range");
}

/* An allow-listed or blocked prefix is never overridden by a scoped rule
 * of a shorter prefix; a plain limit is. */
TEST(scope_which_rule_judges)
{
	struct rl_rule allow = { .prefixlen = 32 }, block = { .prefixlen = 24 };
	struct rl_rule limit = { .prefixlen = 24 }, c = { .prefixlen = 0 };
	struct rl_rule c32 = { .prefixlen = 32 };
	__u64 *all[] = { &allow.pkt_budget, &allow.byte_budget, &allow.agg_pkt_budget,
			 &allow.agg_byte_budget, &allow.new_pkt_budget,
			 &allow.new_byte_budget };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		*all[i] = RL_UNLIMITED;
	block = allow;
	block.prefixlen = 24;
	block.pkt_budget = 0;
	limit = allow;
	limit.prefixlen = 24;
	limit.pkt_budget = 100;

	CHECK(rl_rule_allows_all(&allow) && !rl_rule_blocks(&allow), "allow");
	CHECK(rl_rule_blocks(&block), "block");
	CHECK(rl_scoped_judges(NULL, &c), "no unscoped rule");
	CHECK(!rl_scoped_judges(&allow, &c), "an allow-listed host stays allowed");
	CHECK(!rl_scoped_judges(&block, &c), "a blocked prefix stays blocked");
	CHECK(rl_scoped_judges(&limit, &c), "a plain limit keeps the default's SYN limit");
	CHECK(rl_scoped_judges(&allow, &c32), "a scoped rule as long as the allow-list");
	/* a --bps 0 block, and an aggregate-only rule is a limit */
	block.pkt_budget = RL_UNLIMITED;
	block.byte_budget = 0;
	CHECK(!rl_scoped_judges(&block, &c), "--bps 0 blocks");
	limit.pkt_budget = RL_UNLIMITED;
	limit.agg_pkt_budget = 1000;
	CHECK(rl_scoped_judges(&limit, &c), "aggregate-only is a limit");
	/* the prefix a scoped rule needs, as the program compares it */
	CHECK_EQ(rl_scoped_min_plen(NULL), 0, "no unscoped rule");
	CHECK_EQ(rl_scoped_min_plen(&limit), 0, "a limit: any prefix");
	CHECK_EQ(rl_scoped_min_plen(&allow), 32, "an allow-list: its own");
	CHECK_EQ(rl_scoped_min_plen(&block), 24, "a block: its own");
}

/* What a packet whose header could not be read is in for certain: a scope
 * of its protocol with no port or SYN to read; never one when even the
 * protocol is unknown. A readable packet: every scope it is in. */
TEST(scope_certain_only_what_was_read)
{
	struct rl_scope udp = scope(17, 0, 0, 0), dns = scope(17, RL_SCOPE_F_DPORT, 53, 53);
	struct rl_scope syn = scope(6, RL_SCOPE_F_SYN, 0, 0), freed = udp;

	freed.rank = 0;
	CHECK(rl_scope_certain(&udp, &(struct rl_l4){ RL_L4_PROTO, 17, 0, 0, 0 }),
	      "a later UDP fragment is UDP");
	CHECK(!rl_scope_certain(&dns, &(struct rl_l4){ RL_L4_PROTO, 17, 0, 0, 0 }),
	      "but perhaps not to port 53");
	CHECK(!rl_scope_certain(&syn, &(struct rl_l4){ RL_L4_PROTO, 6, 0, 0, 0 }),
	      "nor a SYN");
	CHECK(!rl_scope_certain(&udp, &(struct rl_l4){ RL_L4_PROTO, 6, 0, 0, 0 }),
	      "a TCP fragment is not UDP");
	CHECK(!rl_scope_certain(&udp, &(struct rl_l4){ RL_L4_NONE, 0, 0, 0, 0 }),
	      "an unknown protocol: nothing for certain");
	CHECK(!rl_scope_certain(&freed, &(struct rl_l4){ RL_L4_PROTO, 17, 0, 0, 0 }),
	      "a free entry");
	CHECK(rl_scope_certain(&dns, &(struct rl_l4){ RL_L4_FULL, 17, 0, 0, 53 }) &&
	      !rl_scope_certain(&dns, &(struct rl_l4){ RL_L4_FULL, 17, 0, 0, 54 }),
	      "read: what matches");
}

/* Strictness: a block first, then the packet budget, then the byte
 * budget; no rule is the least strict. */
TEST(scope_strictness_orders_rules)
{
	struct rl_rule none = { .pkt_budget = RL_UNLIMITED, .byte_budget = RL_UNLIMITED };
	struct rl_rule p100 = none, p100b = none, p5 = none, bps0 = none, huge = none;

	p100.pkt_budget = 100;
	p100b = p100;
	p100b.byte_budget = 10000;
	p5.pkt_budget = 5;
	bps0.byte_budget = 0;
	huge.pkt_budget = 1ULL << 30;	/* saturated: as good as no limit */
	CHECK(rl_rule_strictness(&p5) < rl_rule_strictness(&p100), "fewer packets");
	CHECK(rl_rule_strictness(&p100b) < rl_rule_strictness(&p100), "then fewer bytes");
	CHECK(rl_rule_strictness(&bps0) < rl_rule_strictness(&p5) &&
	      rl_rule_strictness(&bps0) == 0, "--bps 0 blocks: the strictest");
	CHECK(rl_rule_strictness(&p100) < rl_rule_strictness(&none), "a limit beats none");
	CHECK(rl_rule_strictness(&none) <= rl_rule_strictness(NULL) &&
	      rl_rule_strictness(&huge) <= rl_rule_strictness(NULL), "no rule: least strict");
	CHECK(rl_rule_strictness(&p100) < rl_rule_strictness(&huge), "saturated");
}

/* The walk's order: the most specific, but the strictest for a packet
 * whose header could not be read (then the most specific among equals). */
TEST(scope_unreadable_prefers_the_strictest)
{
	struct rl_scope_cand strict = { .strict = 5, .plen = 0, .rank = 1, .lo = 0 };
	struct rl_scope_cand loose = { .strict = 1000, .plen = 24, .rank = 99, .lo = 0 };
	struct rl_scope_cand same = strict;

	CHECK(rl_scoped_beats(&loose, &strict, 0), "readable: the longer prefix");
	CHECK(rl_scoped_beats(&strict, &loose, 1), "unreadable: the stricter");
	CHECK(!rl_scoped_beats(&loose, &strict, 1), "unreadable: not the looser");
	same.plen = 8;
	CHECK(rl_scoped_beats(&same, &strict, 1), "as strict: the more specific");
}

/* Who pays the covering rule's newcomer budget: whenever it has one. */
TEST(scope_pays_the_covering_newcomer_budget)
{
	struct rl_rule u = { .new_pkt_budget = RL_UNLIMITED, .new_byte_budget = RL_UNLIMITED };

	CHECK(!rl_scoped_pays_cover(NULL), "no unscoped rule");
	CHECK(!rl_scoped_pays_cover(&u), "no newcomer budget");
	u.new_pkt_budget = 200;
	CHECK(rl_scoped_pays_cover(&u), "--new-pps");
	u.new_pkt_budget = RL_UNLIMITED;
	u.new_byte_budget = 1 << 20;
	CHECK(rl_scoped_pays_cover(&u), "--new-bps");
}

/* Scoped keys decode to their source and slot, and are never a key a
 * packet can give: IPv4 keys start ::ffff: (byte 0 is 0), an IPv6 source
 * starting 0xff (multicast) is malformed. */
TEST(scope_keys_round_trip_and_stay_apart)
{
	uint64_t s = 0x5c09e;

	for (int i = 0; i < 100000; i++) {
		struct rl_key src = { 0 }, k, back;
		int v6 = (int)rng_range(&s, 0, 1);
		__u32 slot = (__u32)rng_range(&s, 0, RL_MAX_RULES - 1);

		if (v6) {
			for (int j = 0; j < 12; j++)
				src.addr[j] = (__u8)rng_next(&s);
			src.addr[0] &= 0xfe;	/* not multicast */
		} else {
			__u32 a = (__u32)rng_next(&s);

			rl_v4_mapped(src.addr, &a);
		}
		rl_scoped_key(&k, &src, slot, v6);
		if (!CHECK(rl_key_scoped(&k), "scoped") ||
		    !CHECK(!rl_key_scoped(&src), "a source's key is not scoped") ||
		    !CHECK_EQ(rl_scoped_source(&k, &back), slot, "slot") ||
		    !CHECK(memcmp(back.addr, src.addr, 16) == 0, "source back"))
			return;
		/* in place, as the program does */
		back = src;
		rl_scoped_key(&back, &back, slot, v6);
		if (!CHECK(memcmp(back.addr, k.addr, 16) == 0, "in place"))
			return;
	}
}

/* ---- the transport view of crafted frames ---- */

TEST(scope_parse_l4_frames)
{
	FRAME_BUF(b);
	struct rl_l4 v = { 0 };
	size_t o;

	/* IPv4 TCP SYN to 443 */
	o = eth(b, ETH_P_IP);
	b[o] = 0x45;
	b[o + 3] = 40;		/* total length */
	b[o + 9] = 6;
	b[o + 20 + 2] = 443 >> 8;
	b[o + 20 + 3] = 443 & 0xff;
	b[o + 20 + 13] = RL_TCP_SYN;
	rl_parse_l4(b, b + o + 40, &v);
	CHECK(v.known == RL_L4_FULL && v.proto == 6 && v.dport == 443 &&
	      v.tcp_flags == RL_TCP_SYN, "v4 SYN: %d %d %d", v.known, v.proto, v.dport);
	/* cut before the flags: the protocol only */
	rl_parse_l4(b, b + o + 20 + 13, &v);
	CHECK(v.known == RL_L4_PROTO && v.proto == 6, "cut TCP");
	/* a first fragment whose IP length ends inside the TCP header (RFC
	 * 1858's tiny fragment, flags in the next one), the frame padded:
	 * the padding is not read as flags */
	b[o + 3] = 28;
	b[o + 6] = 0x20;	/* more fragments */
	b[o + 20 + 13] = 0;
	rl_parse_l4(b, b + o + 46, &v);
	CHECK(v.known == RL_L4_PROTO && v.proto == 6, "tiny first fragment");
	b[o + 3] = 40;
	/* a later fragment */
	b[o + 6] = 0;
	b[o + 7] = 185;
	rl_parse_l4(b, b + o + 40, &v);
	CHECK(v.known == RL_L4_PROTO && v.proto == 6, "later fragment");

	/* IPv6: n destination options headers, then UDP to 53 */
	for (int n = 0; n <= RL_MAX_EXT_HDRS + 1; n++) {
		__u8 *p;

		o = eth(b, ETH_P_IPV6);
		b[o] = 0x60;
		b[o + 5] = (__u8)(8 * n + 8);	/* payload length */
		b[o + 6] = n ? 60 : 17;
		p = b + o + 40;
		for (int i = 0; i < n; i++, p += 8)
			p[0] = i + 1 < n ? 60 : 17;
		p[2] = 0;
		p[3] = 53;
		rl_parse_l4(b, p + 8, &v);
		if (n <= RL_MAX_EXT_HDRS)
			CHECK(v.known == RL_L4_FULL && v.proto == 17 && v.dport == 53,
			      "%d extension headers: read (%d)", n, v.known);
		else
			CHECK(v.known == RL_L4_NONE, "%d extension headers: unknown", n);
	}
	/* IPv6 fragment header: first fragment read, later one not */
	o = eth(b, ETH_P_IPV6);
	b[o] = 0x60;
	b[o + 5] = 16;
	b[o + 6] = 44;
	b[o + 40] = 17;
	b[o + 43] = 1;		/* offset 0, more fragments */
	b[o + 48 + 3] = 53;
	rl_parse_l4(b, b + o + 56, &v);
	CHECK(v.known == RL_L4_FULL && v.dport == 53, "first fragment");
	b[o + 42] = (185 << 3) >> 8;	/* offset 185 */
	b[o + 43] = (185 << 3) & 0xff;
	rl_parse_l4(b, b + o + 56, &v);
	CHECK(v.known == RL_L4_PROTO && v.proto == 17, "later fragment v6");
	/* ICMPv6 echo: nothing more to read */
	b[o + 6] = 58;
	rl_parse_l4(b, b + o + 48, &v);
	CHECK(v.known == RL_L4_FULL && v.proto == 58, "ICMPv6");
}

/* A multicast IPv6 source (and so any scoped key) is malformed. */
TEST(scope_multicast_source_malformed)
{
	__u32 mask[4] = { ~0U, ~0U, ~0U, ~0U };
	FRAME_BUF(b);
	struct rl_key k;
	size_t o = eth(b, ETH_P_IPV6);

	b[o] = 0x60;
	b[o + 8] = 0xff;
	b[o + 9] = 0x04;
	CHECK_EQ(rl_parse_frame(b, b + o + 40, &k, mask), RL_PKT_MALFORMED, "ff04::");
	b[o + 8] = 0x20;
	b[o + 9] = 0x01;
	CHECK_EQ(rl_parse_frame(b, b + o + 40, &k, mask), RL_PKT_V6, "2001::");
}
