// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Frame parsing (include/parse.h) on the host: the program skips the proof
 * (and, under a rule that reads no verification, the reading of it) for a
 * frame that rl_parse_frame_tcp() says holds no TCP segment without SYN,
 * so the flag must be there for every frame in which rl_parse_tcp() finds
 * one, whatever the protocol, fragment, IPv6 header chain or flags. And a
 * frame whose protocol rl_frame_proto() names skips the scope walk when
 * no scope names that protocol, so the scopes' own parse (rl_parse_l4)
 * must read the same protocol there.
 */
#include <string.h>
#include "parse.h"
#include "scope.h"
#include "harness.h"
#include "frame.h"

static const __u32 all_ones[4] = { ~0U, ~0U, ~0U, ~0U };

/* The flag and rl_parse_tcp() agree on the frame b..end: a segment
 * without SYN found is never hidden. Returns the flag (1: set). */
static int may_tcp_agrees(__u8 *b, __u8 *end, const char *what, int n)
{
	struct rl_key k, k2;
	struct rl_flow f;
	struct rl_seg seg;
	int kind = rl_parse_frame_tcp(b, end, &k, all_ones);
	int plain = rl_parse_frame(b, end, &k2, all_ones);
	int may = !!(kind & RL_PKT_MAY_TCP);
	struct rl_l4 l4 = { 0 };

	int proto = rl_frame_proto(b, end);

	CHECK(plain == (kind & ~RL_PKT_MAY_TCP), "%s %d: the same kind", what, n);
	CHECK(!(plain & RL_PKT_MAY_TCP), "%s %d: no flag from rl_parse_frame", what, n);
	rl_parse_l4(b, end, &l4);
	if (proto >= 0)
		CHECK(l4.known != RL_L4_NONE && l4.proto == proto,
		      "%s %d: protocol %d, the scopes read %d (known %d)", what, n,
		      proto, l4.proto, l4.known);
	if (rl_parse_tcp(b, end, &f, 0, &seg) && !(seg.flags & RL_TCP_SYN))
		CHECK(may, "%s %d: a TCP segment without RL_PKT_MAY_TCP", what, n);
	return may;
}

static const __u8 tcp_flags[] = {
	RL_TCP_ACK, RL_TCP_SYN, RL_TCP_SYN | RL_TCP_ACK, RL_TCP_RST,
	RL_TCP_FIN | RL_TCP_ACK, 0,
};
#define NFLAGS	(sizeof(tcp_flags) / sizeof(tcp_flags[0]))

/* IPv4 with every protocol, whole, first fragment, later fragment, and
 * TCP flags: the flag exactly when it is TCP, no later fragment, no SYN. */
TEST(parse_may_tcp_ipv4)
{
	static const __u16 frag[] = { 0, 0x2000 /* MF */, 185 };
	FRAME_BUF(b);

	for (int p = 0; p < 256; p++)
		for (unsigned int i = 0; i < sizeof(frag) / sizeof(frag[0]); i++)
			for (unsigned int fl = 0; fl < NFLAGS; fl++) {
				size_t o = eth(b, ETH_P_IP);
				int may;

				b[o] = 0x45;
				b[o + 3] = 40;
				b[o + 6] = frag[i] >> 8;
				b[o + 7] = frag[i] & 0xff;
				b[o + 9] = p;
				b[o + 20 + 13] = tcp_flags[fl];
				may = may_tcp_agrees(b, b + o + 40, "v4 proto", p);
				CHECK_EQ(rl_frame_proto(b, b + o + 40), p,
					 "v4: the protocol named, fragment or not");
				CHECK(may == (p == 6 && (frag[i] & 0x1fff) == 0 &&
					      !(tcp_flags[fl] & RL_TCP_SYN)),
				      "v4 proto %d frag %#x flags %#x: flag %d", p,
				      frag[i], tcp_flags[fl], may);
			}
}

/* IPv4 with options (IHL 6 to 15): the flags read after them, not at 20
 * bytes. */
TEST(parse_may_tcp_ipv4_options)
{
	FRAME_BUF(b);

	for (int ihl = 6; ihl <= 15; ihl++)
		for (unsigned int fl = 0; fl < NFLAGS; fl++) {
			size_t o = eth(b, ETH_P_IP), t = o + 4 * (size_t)ihl;
			int may;

			b[o] = 0x40 | ihl;
			b[o + 9] = 6;
			/* where a parse that ignored the options would look */
			b[o + 20 + 13] = tcp_flags[fl] ^ RL_TCP_SYN;
			b[t + 13] = tcp_flags[fl];
			may = may_tcp_agrees(b, b + t + 20, "v4 ihl", ihl);
			CHECK(may == !(tcp_flags[fl] & RL_TCP_SYN),
			      "v4 ihl %d flags %#x: flag %d", ihl, tcp_flags[fl], may);
		}
}

/* Behind two VLAN tags, and cut before the TCP header ends. */
TEST(parse_may_tcp_vlan_and_cut)
{
	FRAME_BUF(b);
	size_t o = eth(b, ETH_P_8021AD) + 8;

	b[16] = ETH_P_8021Q >> 8;
	b[17] = ETH_P_8021Q & 0xff;
	b[20] = ETH_P_IP >> 8;
	b[21] = ETH_P_IP & 0xff;
	b[o] = 0x45;
	b[o + 9] = 6;
	b[o + 20 + 13] = RL_TCP_ACK;
	CHECK(may_tcp_agrees(b, b + o + 40, "vlan", 0), "a twice tagged TCP segment");
	/* cut: no segment to prove, the flag harmless */
	may_tcp_agrees(b, b + o + 30, "cut", 0);
}

/* IPv6 with every first next header, each extension header that the
 * proof looks through followed by TCP, a later fragment, and TCP flags. */
TEST(parse_may_tcp_ipv6)
{
	FRAME_BUF(b);

	for (int next = 0; next < 256; next++)
		for (int later = 0; later < 2; later++)
			for (unsigned int fl = 0; fl < NFLAGS; fl++) {
				size_t o = eth(b, ETH_P_IPV6);
				int may;

				b[o] = 0x60;
				b[o + 6] = next;
				b[o + 8] = 0x20;	/* 2001:: */
				b[o + 9] = 0x01;
				/* an extension header of 8 bytes, then TCP */
				b[o + 40] = 6;
				if (next == 44 && later)
					b[o + 43] = 185 << 3 & 0xff;
				b[o + 48 + 13] = tcp_flags[fl];
				b[o + 40 + 13] = tcp_flags[fl];	/* TCP right after */
				may = may_tcp_agrees(b, b + o + 68, "v6 next", next);
				CHECK(rl_frame_proto(b, b + o + 68) ==
				      (rl_ipv6_ext(next) ? -1 : next),
				      "v6 next %d: named unless an extension header", next);
				if (next == 17 || next == 58)
					CHECK(!may, "v6 next %d: no TCP", next);
				if (next == 6)
					CHECK(may == !(tcp_flags[fl] & RL_TCP_SYN),
					      "v6 TCP flags %#x: flag %d", tcp_flags[fl], may);
			}
}
