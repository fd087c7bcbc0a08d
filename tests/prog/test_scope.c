// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Rule scope and burst in the program (include/scope.h, quota.h
 * rl_usage_burst): crafted SYN, SYN-ACK, ACK, UDP/53, ICMP echo, IPv6
 * extension headers and fragments against the common setups (an
 * allow-listed host, a blocked prefix, new connections per source, DNS
 * per source, an ICMP cap, an overall rate), on IPv4 and IPv6. Scoped
 * rules are written into the maps here as `quota set` writes them: the
 * program is under test, not the CLI.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <linux/if_ether.h>
#include "fixture.h"
#include "lib/reload_carry.h"
#include "../harness.h"
#include "ratelimit.h"
#include "scope.h"
#include "../gen/frames.h"
#include <bpf/bpf.h>

#define V4	"198.18.0.7"
#define V4B	"198.18.0.8"
#define V6	"2001:db8:7::1"
#define V6B	"2001:db8:8::1"

/* Slots from the top: rl_rule_set() takes the lowest free ones. */
static __u32 next_slot = RL_MAX_RULES - 1;

/* A scoped rule `prefix` (one family) with scope `sc` in entry `idx` of
 * `scopes`, with the limits of `c`, --burst burst (0: none). */
static bool scoped_change(struct fixture *f, const char *prefix, __u32 idx,
			  struct rl_scope sc, const struct rl_rule_change *c,
			  __u64 burst)
{
	char err[RL_ERR_LEN];
	struct rl_prefix p;
	struct rl_config cfg;
	struct rl_rule r;
	__u32 zero = 0, slot = next_slot--;

	if (!CHECK(rl_parse_prefix(prefix, &p, err, sizeof(err)) == 0, "%s", err))
		return false;
	sc.rank = rl_scope_rank(&sc);
	if (!CHECK(bpf_map_update_elem(f->m.scopes, &idx, &sc, BPF_ANY) == 0, "scope"))
		return false;
	rl_rule_init(&r, &p);
	rl_rule_apply(&r, c, f->s.window_ns);
	r.burst = burst;
	r.scope = idx + 1;
	if (!CHECK(bpf_map_update_elem(f->m.rules, &slot, &r, BPF_ANY) == 0, "rule"))
		return false;
	if (p.v6) {
		struct rl_lpm_scoped_v6 k = { .prefixlen = 32 + p.len, .scope = idx };

		memcpy(k.addr, p.addr, 16);
		if (!CHECK(bpf_map_update_elem(f->m.scoped_v6, &k, &slot, BPF_ANY) == 0,
			   "trie"))
			return false;
	} else {
		struct rl_lpm_scoped_v4 k = { .prefixlen = 32 + p.len, .scope = idx };

		memcpy(k.addr, p.addr, 4);
		if (!CHECK(bpf_map_update_elem(f->m.scoped_v4, &k, &slot, BPF_ANY) == 0,
			   "trie"))
			return false;
	}
	if (!CHECK(bpf_map_lookup_elem(f->m.config, &zero, &cfg) == 0, "config"))
		return false;
	if (cfg.scopes_used < idx + 1)
		cfg.scopes_used = idx + 1;
	cfg.rules_gen += 2;
	return CHECK(bpf_map_update_elem(f->m.config, &zero, &cfg, BPF_ANY) == 0,
		     "config");
}

/* The same with --pps pps (RL_UNLIMITED: none) alone. */
static bool scoped(struct fixture *f, const char *prefix, __u32 idx,
		   struct rl_scope sc, __u64 pps, __u64 burst)
{
	struct rl_rule_change c = { .have_pps = true, .pps = pps };

	return scoped_change(f, prefix, idx, sc, &c, burst);
}

static const struct rl_scope SYN = { .proto = 6, .flags = RL_SCOPE_F_SYN };
static const struct rl_scope DNS = { .proto = 17, .flags = RL_SCOPE_F_DPORT,
				     .dport_lo = 53, .dport_hi = 53 };
static const struct rl_scope UDP = { .proto = 17 };
static const struct rl_scope ICMP = { .proto = 1 };
static const struct rl_scope ICMP6 = { .proto = 58 };
static const struct rl_scope TCP80 = { .proto = 6, .flags = RL_SCOPE_F_DPORT,
				       .dport_lo = 80, .dport_hi = 80 };

/* Extension headers before the upper layer (IPv6 only). */
#define EXT_NONE	0
#define FRAG_LATER	(1 << 8)	/* a fragment after the first */
#define FRAG_FIRST	(1 << 9)	/* a first fragment (offset 0, more) */
#define FRAG_TINY	(1 << 10)	/* IPv4: a first fragment ending 8 bytes
					 * into TCP (RFC 1858), the frame padded */

/*
 * A frame from `src` to HOST_ADDR with upper-layer protocol `proto`
 * (TCP: `flags`; TCP and UDP: to port `dport`; ICMP: an echo request),
 * behind `ext & 0xff` IPv6 destination options headers and, with
 * FRAG_*, a fragment header (IPv4: the header's fragment offset).
 */
static void frame_l4(struct frame *fr, const char *src, __u8 proto,
		     __u16 dport, __u8 flags, int ext)
{
	bool v6 = strchr(src, ':') != NULL;
	int nopt = ext & 0xff, i;
	__u8 *p = fr->data, *l3, *l4, *next;
	size_t l4len = proto == 6 ? 20 : 8;

	memset(fr->data, 0, sizeof(fr->data));
	memset(p, 0x02, 12);
	tg_put16(p + 12, v6 ? ETH_P_IPV6 : ETH_P_IP);
	l3 = p + ETH_HLEN;
	if (v6) {
		l3[0] = 0x60;
		l3[7] = 64;
		CHECK(inet_pton(AF_INET6, src, l3 + 8) == 1, "%s", src);
		CHECK(inet_pton(AF_INET6, HOST_ADDR(src), l3 + 24) == 1, "dst");
		next = &l3[6];
		l4 = l3 + 40;
		for (i = 0; i < nopt; i++) {	/* destination options, 8 bytes */
			*next = 60;
			next = &l4[0];
			l4[1] = 0;
			l4[2] = 1;	/* PadN of 4 */
			l4[3] = 4;
			l4 += 8;
		}
		if (ext & (FRAG_LATER | FRAG_FIRST)) {
			*next = 44;
			next = &l4[0];
			tg_put16(l4 + 2, ext & FRAG_LATER ? (185 << 3) : 1);
			l4 += 8;
		}
		*next = proto;
		tg_put16(l3 + 4, (l4 - l3 - 40) + l4len);
	} else {
		l3[0] = 0x45;
		l3[8] = 64;
		l3[9] = proto;
		CHECK(inet_pton(AF_INET, src, l3 + 12) == 1, "%s", src);
		CHECK(inet_pton(AF_INET, HOST_ADDR(src), l3 + 16) == 1, "dst");
		if (ext & FRAG_LATER)
			tg_put16(l3 + 6, 185);	/* offset 1480 */
		if (ext & FRAG_FIRST)
			tg_put16(l3 + 6, 0x2000);	/* more fragments */
		l4 = l3 + 20;
		tg_put16(l3 + 2, 20 + l4len);
		if (ext & FRAG_TINY) {
			tg_put16(l3 + 6, 0x2000);
			tg_put16(l3 + 2, 20 + 8);
		}
	}
	if (proto == 6) {
		tg_put16(l4, PEER_PORT);
		tg_put16(l4 + 2, dport);
		l4[12] = 5 << 4;
		l4[13] = flags;
	} else if (proto == 17) {
		tg_put16(l4, PEER_PORT);
		tg_put16(l4 + 2, dport);
		tg_put16(l4 + 4, 8);
	} else {
		l4[0] = proto == 58 ? 128 : 8;	/* echo request */
	}
	fr->len = (l4 - p) + l4len;
	if (fr->len < 60)
		fr->len = 60;
}

static int send_l4(struct fixture *f, const char *src, __u8 proto, __u16 dport,
		   __u8 flags, int ext, int n, __u64 now)
{
	struct frame fr;

	frame_l4(&fr, src, proto, dport, flags, ext);
	return fixture_send(f, &fr, n, 0, now);
}

static int syns(struct fixture *f, const char *src, int n, __u64 now)
{
	return send_l4(f, src, 6, HOST_PORT, TCP_SYN, EXT_NONE, n, now);
}

static bool open_fixture(struct fixture *f)
{
	next_slot = RL_MAX_RULES - 1;
	if (!fixture_open(f, NULL))
		return false;
	fixture_hold(f);
	return true;
}

/* "Every source: 5 new TCP connections a window, 1000 packets in all":
 * SYNs are held to 5, the rest of a connection is not counted as new. */
TEST(scope_syn_per_source)
{
	const char *srcs[] = { V4, V6 };
	struct fixture f;

	if (!open_fixture(&f))
		return;
	CHECK(fixture_pps(&f, "default", 1000), "default");
	CHECK(scoped(&f, "0.0.0.0/0", 0, SYN, 5, 0), "syn v4");
	CHECK(scoped(&f, "::/0", 0, SYN, 5, 0), "syn v6");
	for (int i = 0; i < 2; i++) {
		const char *s = srcs[i];

		CHECK_EQ(syns(&f, s, 20, T0), 5, "syns(&f, s, 20, T0)");
		CHECK_EQ(send_l4(&f, s, 6, HOST_PORT, TCP_ACK, EXT_NONE, 200, T0), 200, "send_l4(&f, s, 6, HOST_PORT, TCP_ACK, EXT_NONE, 200, T0)");
		CHECK_EQ(send_l4(&f, s, 6, HOST_PORT, TCP_SYN | TCP_ACK, EXT_NONE, 10, T0),
			 10, "send_l4(&f, s, 6, HOST_PORT, TCP_SYN | TCP_ACK, EXT_NONE, 10, T0)");
		CHECK_EQ(send_l4(&f, s, 6, HOST_PORT, TCP_RST, EXT_NONE, 10, T0), 10, "send_l4(&f, s, 6, HOST_PORT, TCP_RST, EXT_NONE, 10, T0)");
		/* a SYN's window is its own; the next window takes 5 again */
		CHECK_EQ(syns(&f, s, 20, T0 + 2 * NSEC_S), 5, "syns(&f, s, 20, T0 + 2 * NSEC_S)");
	}
	/* another source has its own SYN window */
	CHECK_EQ(syns(&f, V4B, 20, T0), 5, "syns(&f, V4B, 20, T0)");
	fixture_close(&f);
}

/* The scoped window lives under its own key in `sources`: the source's
 * and the rule's, never an address a packet can carry. */
TEST(scope_window_key_is_scoped)
{
	struct rl_source v[RL_MAX_CPUS > 256 ? 256 : RL_MAX_CPUS];
	struct fixture f;
	struct rl_key k = { 0 }, src = { 0 }, back;
	__u32 slot;
	__u8 a4[4];

	if (!open_fixture(&f))
		return;
	slot = next_slot;
	CHECK(scoped(&f, "0.0.0.0/0", 0, SYN, 5, 0), "syn");
	CHECK_EQ(syns(&f, V4, 7, T0), 5, "syns(&f, V4, 7, T0)");
	inet_pton(AF_INET, V4, a4);
	rl_v4_mapped(src.addr, a4);
	rl_scoped_key(&k, &src, slot, 0);
	CHECK(rl_key_scoped(&k), "scoped key");
	CHECK_EQ(rl_scoped_source(&k, &back), slot, "rl_scoped_source(&k, &back)");
	CHECK(memcmp(back.addr, src.addr, 16) == 0, "decodes to the source");
	CHECK(libbpf_num_possible_cpus() <= 256, "cpus");
	CHECK_EQ(fixture_source_vals(&f, &k, v), 0, "the scoped window's values");
	CHECK_EQ(v[0].passed_pkts, 5, "v[0].passed_pkts");
	CHECK_EQ(v[0].dropped_pkts, 2, "v[0].dropped_pkts");
	/* the source itself took no entry: only SYNs were sent */
	CHECK_EQ(fixture_source_vals(&f, &src, v), -ENOENT, "no plain entry");
	fixture_close(&f);
}

/* A multicast IPv6 source is malformed (ipv6_rcv drops it too): it could
 * otherwise name a scoped window's key and spend another source's quota. */
TEST(scope_multicast_source_is_malformed)
{
	struct rl_counters before, after;
	struct fixture f;
	struct frame fr;

	if (!open_fixture(&f))
		return;
	CHECK(scoped(&f, "0.0.0.0/0", 0, SYN, 5, 0), "syn");
	frame_l4(&fr, "ff04:fff::c612:7", 6, HOST_PORT, TCP_SYN, EXT_NONE);
	before = fixture_totals(&f);
	CHECK_EQ(fixture_send(&f, &fr, 3, 0, T0), 0, "fixture_send(&f, &fr, 3, 0, T0)");
	after = fixture_totals(&f);
	CHECK_EQ(after.malformed_pkts - before.malformed_pkts, 3, "after.malformed_pkts - before.malformed_pkts");
	/* the victim's SYN window is whole */
	CHECK_EQ(syns(&f, V4, 20, T0), 5, "syns(&f, V4, 20, T0)");
	fixture_close(&f);
}

/* DNS per source under an overall UDP rule: the port rule (narrower)
 * judges port 53, the UDP rule the rest; and the most specific prefix. */
TEST(scope_dns_narrowest_scope)
{
	struct fixture f;

	if (!open_fixture(&f))
		return;
	CHECK(scoped(&f, "0.0.0.0/0", 0, UDP, 50, 0), "udp");
	CHECK(scoped(&f, "0.0.0.0/0", 1, DNS, 3, 0), "dns");
	CHECK(scoped(&f, "::/0", 1, DNS, 4, 0), "dns v6");
	CHECK_EQ(send_l4(&f, V4, 17, 53, 0, EXT_NONE, 10, T0), 3, "send_l4(&f, V4, 17, 53, 0, EXT_NONE, 10, T0)");
	CHECK_EQ(send_l4(&f, V4, 17, 54, 0, EXT_NONE, 100, T0), 50, "send_l4(&f, V4, 17, 54, 0, EXT_NONE, 100, T0)");
	CHECK_EQ(send_l4(&f, V6, 17, 53, 0, EXT_NONE, 10, T0), 4, "send_l4(&f, V6, 17, 53, 0, EXT_NONE, 10, T0)");
	/* no IPv6 UDP rule: port 54 over IPv6 is unscoped, and no rule */
	CHECK_EQ(send_l4(&f, V6, 17, 54, 0, EXT_NONE, 100, T0), 100, "send_l4(&f, V6, 17, 54, 0, EXT_NONE, 100, T0)");
	/* TCP to port 53 is in no scope */
	CHECK_EQ(send_l4(&f, V4, 6, 53, TCP_SYN, EXT_NONE, 10, T0), 10, "send_l4(&f, V4, 6, 53, TCP_SYN, EXT_NONE, 10, T0)");
	fixture_close(&f);
}

/* Every entry of `scopes` is walked (the first by scoped_rule() itself,
 * the rest by its callback): a free first entry, the best at the third,
 * and a tie between equal scopes goes to the first entry, as before. */
TEST(scope_walk_every_entry)
{
	static const struct rl_scope TCP = { .proto = 6 };
	struct fixture f;

	if (!open_fixture(&f))
		return;
	/* entry 0 free while 1 and 2 are in use */
	CHECK(scoped(&f, "0.0.0.0/0", 2, DNS, 3, 0), "dns");
	CHECK(scoped(&f, "0.0.0.0/0", 1, UDP, 50, 0), "udp");
	CHECK_EQ(send_l4(&f, V4, 17, 53, 0, EXT_NONE, 10, T0), 3, "DNS: entry 2");
	CHECK_EQ(send_l4(&f, V4, 17, 54, 0, EXT_NONE, 100, T0), 50, "UDP: entry 1");
	CHECK_EQ(syns(&f, V4, 10, T0), 10, "no TCP scope yet");
	CHECK(scoped(&f, "0.0.0.0/0", 0, SYN, 5, 0), "syn");
	CHECK_EQ(syns(&f, V4B, 10, T0), 5, "SYN: entry 0");
	CHECK_EQ(send_l4(&f, V4B, 17, 53, 0, EXT_NONE, 10, T0), 3, "DNS still entry 2");
	/* an IPv6 chain too long to read is in both scopes, equal in
	 * strictness, prefix, rank and port: the first entry's rule judges,
	 * and the other's window is untouched */
	CHECK(scoped(&f, "::/0", 0, TCP, 4, 0), "tcp6");
	CHECK(scoped(&f, "::/0", 1, UDP, 4, 0), "udp6");
	CHECK_EQ(send_l4(&f, V6, 6, HOST_PORT, TCP_ACK, RL_MAX_EXT_HDRS + 1, 10, T0), 4,
		 "a tie: entry 0");
	CHECK_EQ(send_l4(&f, V6, 17, 54, 0, EXT_NONE, 10, T0), 4, "entry 1's window whole");
	CHECK_EQ(send_l4(&f, V6, 6, HOST_PORT, TCP_ACK, EXT_NONE, 10, T0), 0,
		 "entry 0's spent");
	fixture_close(&f);
}

/* An ICMP cap: echo requests of one source held to 2, per family. */
TEST(scope_icmp_cap)
{
	struct fixture f;

	if (!open_fixture(&f))
		return;
	CHECK(fixture_pps(&f, "default", 1000), "default");
	CHECK(scoped(&f, "0.0.0.0/0", 0, ICMP, 2, 0), "icmp");
	CHECK(scoped(&f, "::/0", 1, ICMP6, 3, 0), "icmpv6");
	CHECK_EQ(send_l4(&f, V4, 1, 0, 0, EXT_NONE, 10, T0), 2, "send_l4(&f, V4, 1, 0, 0, EXT_NONE, 10, T0)");
	CHECK_EQ(send_l4(&f, V6, 58, 0, 0, EXT_NONE, 10, T0), 3, "send_l4(&f, V6, 58, 0, 0, EXT_NONE, 10, T0)");
	CHECK_EQ(send_l4(&f, V4, 17, 9, 0, EXT_NONE, 10, T0), 10, "send_l4(&f, V4, 17, 9, 0, EXT_NONE, 10, T0)");
	fixture_close(&f);
}

/* An allow-listed host and a blocked prefix are never overridden by a
 * scoped rule of a shorter prefix; a plain limit of a longer prefix is
 * (the default's SYN limit still holds it); a longer scoped prefix beats
 * a shorter one. */
TEST(scope_composes_with_allow_and_block)
{
	struct fixture f;

	if (!open_fixture(&f))
		return;
	CHECK(fixture_pps(&f, "default", 1000), "default");
	CHECK(scoped(&f, "0.0.0.0/0", 0, SYN, 5, 0), "syn");
	CHECK(scoped(&f, "::/0", 0, SYN, 5, 0), "syn6");
	CHECK(fixture_pps(&f, "198.18.0.9", RL_UNLIMITED), "allow");
	CHECK(fixture_pps(&f, "2001:db8:9::/64", RL_UNLIMITED), "allow6");
	CHECK(fixture_pps(&f, "198.18.5.0/24", 0), "block");
	CHECK(fixture_pps(&f, "2001:db8:5::/48", 0), "block6");
	CHECK(fixture_pps(&f, "198.18.6.0/24", 100), "limit");
	CHECK(scoped(&f, "198.18.0.10", 0, SYN, 8, 0), "longer syn");

	CHECK_EQ(syns(&f, "198.18.0.9", 40, T0), 40, "syns(&f, \"198.18.0.9\", 40, T0)");
	CHECK_EQ(syns(&f, "2001:db8:9::1", 40, T0), 40, "syns(&f, \"2001:db8:9::1\", 40, T0)");
	CHECK_EQ(syns(&f, "198.18.5.1", 10, T0), 0, "syns(&f, \"198.18.5.1\", 10, T0)");
	CHECK_EQ(syns(&f, "2001:db8:5::1", 10, T0), 0, "syns(&f, \"2001:db8:5::1\", 10, T0)");
	CHECK_EQ(syns(&f, "198.18.6.1", 20, T0), 5, "syns(&f, \"198.18.6.1\", 20, T0)");
	CHECK_EQ(send_l4(&f, "198.18.6.1", 6, HOST_PORT, TCP_ACK, EXT_NONE, 150, T0),
		 100, "send_l4(&f, \"198.18.6.1\", 6, HOST_PORT, TCP_ACK, EXT_NONE, 150, T0)");
	CHECK_EQ(syns(&f, "198.18.0.10", 20, T0), 8, "syns(&f, \"198.18.0.10\", 20, T0)");
	CHECK_EQ(syns(&f, V4, 20, T0), 5, "syns(&f, V4, 20, T0)");
	fixture_close(&f);
}

/* IPv6 extension headers before TCP are looked through; a chain too long
 * to read, and a fragment after the first, are in the scope of every rule
 * of their protocol (or of every rule): never passed unjudged. */
TEST(scope_ipv6_ext_headers_and_fragments)
{
	struct fixture f;

	if (!open_fixture(&f))
		return;
	CHECK(scoped(&f, "::/0", 0, SYN, 5, 0), "syn6");
	CHECK(scoped(&f, "::/0", 1, DNS, 3, 0), "dns6");
	CHECK(scoped(&f, "0.0.0.0/0", 1, DNS, 3, 0), "dns4");
	CHECK(scoped(&f, "0.0.0.0/0", 0, SYN, 5, 0), "syn4");
	/* two destination options headers, then a SYN: in scope */
	CHECK_EQ(send_l4(&f, V6, 6, HOST_PORT, TCP_SYN, 2, 20, T0), 5, "send_l4(&f, V6, 6, HOST_PORT, TCP_SYN, 2, 20, T0)");
	/* first fragment with its TCP header: read */
	CHECK_EQ(send_l4(&f, V6B, 6, HOST_PORT, TCP_SYN, FRAG_FIRST, 20, T0), 5, "send_l4(&f, V6B, 6, HOST_PORT, TCP_SYN, FRAG_FIRST, 20, T0)");
	CHECK_EQ(send_l4(&f, V6B, 6, HOST_PORT, TCP_ACK, FRAG_FIRST, 20, T0), 20, "send_l4(&f, V6B, 6, HOST_PORT, TCP_ACK, FRAG_FIRST, 20, T0)");
	/* later UDP fragments: in the DNS scope, whatever their port */
	CHECK_EQ(send_l4(&f, "2001:db8:20::1", 17, 9999, 0, FRAG_LATER, 10, T0), 3, "send_l4(&f, \"2001:db8:20::1\", 17, 9999, 0, FRAG_LATER, 10, T0)");
	CHECK_EQ(send_l4(&f, "198.18.0.20", 17, 9999, 0, FRAG_LATER, 10, T0), 3, "send_l4(&f, \"198.18.0.20\", 17, 9999, 0, FRAG_LATER, 10, T0)");
	CHECK_EQ(send_l4(&f, "198.18.0.21", 17, 9999, 0, FRAG_FIRST, 10, T0), 10, "send_l4(&f, \"198.18.0.21\", 17, 9999, 0, FRAG_FIRST, 10, T0)");
	/* a tiny first fragment whose flags are in the next: in scope, its
	 * padding is not read as flags */
	CHECK_EQ(send_l4(&f, "198.18.0.22", 6, HOST_PORT, 0, FRAG_TINY, 10, T0), 5,
		 "tiny first fragments: in the SYN scope");
	CHECK_EQ(send_l4(&f, "198.18.0.23", 6, HOST_PORT, TCP_ACK, FRAG_LATER, 10, T0), 5,
		 "later TCP fragments: in the SYN scope");
	/* a chain longer than RL_MAX_EXT_HDRS: the protocol is unknown, so
	 * it is in every scope, and the strictest rule judges it (DNS's 3) */
	CHECK_EQ(send_l4(&f, "2001:db8:21::1", 6, HOST_PORT, TCP_ACK,
			 RL_MAX_EXT_HDRS + 1, 10, T0), 3, "send_l4(&f, \"2001:db8:21::1\", 6, HOST_PORT, TCP_ACK, RL_MAX_EXT_HDRS + 1, 10, T0)");
	fixture_close(&f);
}

/* One SYN from each of `n` sources (IPv4 198.18.NET.x, or IPv6
 * 2001:db8:NET:x::1 when `v6`); how many passed. */
static int spoofed_syns(struct fixture *f, int net, int n, int v6, __u64 now)
{
	char a[48];
	int passed = 0;

	for (int i = 0; i < n; i++) {
		if (v6)
			snprintf(a, sizeof(a), "2001:db8:%x:%x::1", net, i);
		else
			snprintf(a, sizeof(a), "198.18.%d.%d", net + i / 250, 1 + i % 250);
		passed += syns(f, a, 1, now);
	}
	return passed;
}

/* The default's newcomer budget on the common setup, a SYN limit of its
 * own without --new-pps: spoofed SYNs from 500 sources still pay the
 * default's newcomer budget, IPv4 and IPv6 together, and those it refuses
 * take no entry; a verified source's SYNs pay only the SYN rule. */
TEST(scope_syn_rule_pays_default_newcomer_budget)
{
	struct rl_rule_change d = { .have_pps = true, .pps = 1000,
				    .have_new_pps = true, .new_pps = 10 };
	struct rl_counters before, after;
	struct fixture f;

	if (!open_fixture(&f))
		return;
	CHECK(fixture_rule(&f, "default", &d), "default");
	CHECK(scoped(&f, "0.0.0.0/0", 0, SYN, 20, 0), "syn");
	CHECK(scoped(&f, "::/0", 0, SYN, 20, 0), "syn6");
	before = fixture_totals(&f);
	CHECK_EQ(spoofed_syns(&f, 1, 250, 0, T0) + spoofed_syns(&f, 1, 250, 1, T0), 10,
		 "500 spoofed SYNs from 500 sources: the default's newcomer budget");
	after = fixture_totals(&f);
	CHECK_EQ(after.new_sources - before.new_sources, 10, "refused SYNs took no entry");
	CHECK_EQ(after.dropped_pkts - before.dropped_pkts, 490, "the rest dropped");
	CHECK_EQ(spoofed_syns(&f, 10, 50, 0, T0 + 2 * NSEC_S), 10, "the next window: the budget again");
	/* a source the host answered is verified: the SYN rule alone */
	CHECK(fixture_answer(&f, V4, 0, T0 + 2 * NSEC_S), "answer");
	CHECK_EQ(syns(&f, V4, 30, T0 + 2 * NSEC_S + 1), 20, "verified: its 20 SYNs");
	fixture_close(&f);
}

/* A scoped rule with a newcomer budget of its own pays both: the smaller
 * holds, whichever it is. */
TEST(scope_own_newcomer_budget_and_the_covering_one)
{
	struct rl_rule_change d = { .have_pps = true, .pps = 1000,
				    .have_new_pps = true, .new_pps = 10 };
	struct rl_rule_change loose = { .have_pps = true, .pps = 20,
					.have_new_pps = true, .new_pps = 50 };
	struct rl_rule_change strict = { .have_pps = true, .pps = 20,
					 .have_new_pps = true, .new_pps = 3 };
	struct fixture f;

	if (!open_fixture(&f))
		return;
	CHECK(fixture_rule(&f, "default", &d), "default");
	CHECK(scoped_change(&f, "0.0.0.0/0", 0, SYN, &loose, 0), "syn, --new-pps 50");
	CHECK_EQ(spoofed_syns(&f, 1, 100, 0, T0), 10, "a looser --new-pps: the default's holds");
	CHECK(scoped_change(&f, "::/0", 0, SYN, &strict, 0), "syn6, --new-pps 3");
	CHECK_EQ(spoofed_syns(&f, 1, 100, 1, T0 + 2 * NSEC_S), 3, "a stricter one holds");
	/* a rule that covers the source without a newcomer budget: none */
	CHECK(fixture_pps(&f, "198.18.100.0/24", 1000), "unscoped /24");
	CHECK_EQ(spoofed_syns(&f, 100, 100, 0, T0 + 2 * NSEC_S), 50,
		 "under a rule without one, the SYN rule's own");
	fixture_close(&f);
}

/*
 * A packet whose header cannot be read is judged by the strictest rule it
 * might fall under, not the most specific, so hiding the header never
 * moves it from a strict rule to a looser one: UDP to anything but a DNS
 * server held to 5 escaped into the DNS rule's 1,000 as later fragments.
 */
TEST(scope_unreadable_judged_by_the_strictest)
{
	static const struct rl_scope PORT9 = { .proto = 17, .flags = RL_SCOPE_F_DPORT,
					       .dport_lo = 9, .dport_hi = 9 };
	struct fixture f;

	if (!open_fixture(&f))
		return;
	CHECK(scoped(&f, "0.0.0.0/0", 0, UDP, 5, 0), "udp 5");
	CHECK(scoped(&f, "0.0.0.0/0", 1, DNS, 1000, 0), "dns 1000");
	CHECK_EQ(send_l4(&f, "198.18.0.30", 17, 53, 0, EXT_NONE, 20, T0), 20,
		 "DNS queries: the DNS rule");
	CHECK_EQ(send_l4(&f, "198.18.0.31", 17, 53, 0, FRAG_LATER, 20, T0), 5,
		 "later UDP fragments: the UDP rule, the stricter");
	/* certainly UDP: the unscoped rule is not one it might fall under */
	CHECK(fixture_pps(&f, "198.18.0.32", 2), "unscoped 2");
	CHECK_EQ(send_l4(&f, "198.18.0.32", 17, 53, 0, FRAG_LATER, 20, T0), 5,
		 "certainly in the UDP scope: not the unscoped rule's 2");
	/* perhaps not to port 80: the unscoped rule is one */
	CHECK(fixture_pps(&f, "198.18.0.33", 4), "unscoped 4");
	CHECK(scoped(&f, "0.0.0.0/0", 2, TCP80, 1000, 0), "tcp 80");
	CHECK_EQ(send_l4(&f, "198.18.0.33", 6, 80, TCP_ACK, EXT_NONE, 20, T0), 20,
		 "readable: port 80's rule");
	CHECK_EQ(send_l4(&f, "198.18.0.33", 6, 80, TCP_ACK, FRAG_TINY, 20, T0 + 2 * NSEC_S),
		 4, "tiny first fragments: the unscoped rule, the stricter");
	/* a block among them drops it */
	CHECK(scoped(&f, "0.0.0.0/0", 3, PORT9, 0, 0), "udp 9 blocked");
	CHECK_EQ(send_l4(&f, "198.18.0.34", 17, 53, 0, FRAG_LATER, 10, T0), 0,
		 "later UDP fragments: perhaps to the blocked port 9");
	CHECK_EQ(send_l4(&f, "198.18.0.34", 17, 53, 0, EXT_NONE, 10, T0), 10,
		 "readable queries still pass");
	/* IPv6: a protocol unknown behind too many extension headers */
	CHECK(fixture_pps(&f, "2001:db8:30::/48", 3), "unscoped 3");
	CHECK(scoped(&f, "::/0", 2, TCP80, 1000, 0), "tcp 80 v6");
	CHECK_EQ(send_l4(&f, "2001:db8:30::1", 6, 80, TCP_ACK, EXT_NONE, 20, T0), 20,
		 "readable: port 80's rule");
	CHECK_EQ(send_l4(&f, "2001:db8:30::2", 6, 80, TCP_ACK, RL_MAX_EXT_HDRS + 1, 20, T0),
		 3, "behind too many extension headers: the unscoped rule");
	fixture_close(&f);
}

/* The numbers: a strict rule of 100 a window and a looser one of
 * 10,000 its port's traffic gets; a flood of tiny first fragments from one
 * source is held to the 100, as it is when readable. */
TEST(scope_fragments_do_not_escape_a_strict_rule)
{
	struct fixture f;

	if (!open_fixture(&f))
		return;
	CHECK(fixture_pps(&f, "default", 100), "default 100");
	CHECK(scoped(&f, "0.0.0.0/0", 0, TCP80, 10000, 0), "web 10,000");
	CHECK_EQ(send_l4(&f, V4, 6, 443, TCP_ACK, EXT_NONE, 300, T0), 100,
		 "to port 443: the default's 100");
	CHECK_EQ(send_l4(&f, V4B, 6, 443, TCP_ACK, FRAG_TINY, 300, T0), 100,
		 "as tiny fragments: still 100, not 10,000");
	CHECK_EQ(send_l4(&f, "198.18.0.9", 6, 443, TCP_ACK, FRAG_LATER, 300, T0), 100,
		 "as later fragments: still 100");
	fixture_close(&f);
}

/* --burst: at most N a bucket, all CPUs together, under the window's
 * budget; a burst alone (no --pps) caps too. */
TEST(burst_caps_each_bucket)
{
	const __u64 bucket = NSEC_S / 10;	/* the default 1 s in 10 */
	int cpus[8], n = fixture_cpus(cpus, 8);
	struct rl_rule_change c = { .have_pps = true, .pps = 30 };
	char err[RL_ERR_LEN];
	struct rl_prefix p;
	struct rl_rule r;
	struct frame fr;
	struct fixture f;
	__u32 slot = 0;
	__u64 total = 0;
	int got;

	if (!open_fixture(&f))
		return;
	CHECK(fixture_pps(&f, "198.18.0.0/24", 30), "rule");
	/* the rule's slot: the only one, set burst 4 in place */
	CHECK(rl_parse_prefix("198.18.0.0/24", &p, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ(bpf_map_lookup_elem(f.m.rules, &slot, &r), 0, "bpf_map_lookup_elem(f.m.rules, &slot, &r)");
	CHECK(r.prefixlen == 24, "slot 0 is the rule");
	r.burst = 4;
	CHECK_EQ(bpf_map_update_elem(f.m.rules, &slot, &r, BPF_ANY), 0, "bpf_map_update_elem(f.m.rules, &slot, &r, BPF_ANY)");
	frame_udp(&fr, V4, 100, 0);
	for (int b = 0; b < 10; b++) {
		__u64 t = T0 + b * bucket + 1000;
		int passed = 0;

		for (int i = 0; i < 12; i++) {
			got = fixture_run(&f, fr.data, fr.len, cpus[i % n], t + i);
			passed += got == XDP_PASS;
		}
		CHECK(passed <= 4, "bucket %d: %d passed, burst 4", b, passed);
		CHECK(b >= 7 || passed == 4, "bucket %d: %d passed", b, passed);
		total += passed;
	}
	/* 7 buckets of 4 and the window's 30 in all */
	CHECK_EQ(total, 30, "total");

	/* --pps unlimited --burst 3: 3 a bucket, every bucket */
	c.pps = RL_UNLIMITED;
	CHECK(fixture_rule(&f, "198.18.1.0/24", &c), "rule 2");
	slot = 1;
	CHECK_EQ(bpf_map_lookup_elem(f.m.rules, &slot, &r), 0, "bpf_map_lookup_elem(f.m.rules, &slot, &r)");
	CHECK(r.prefixlen == 24 && r.addr[2] == 1, "slot 1 is rule 2");
	r.burst = 3;
	r.pkt_budget = RL_MAX_BUDGET;	/* as quota set gives --burst alone */
	CHECK_EQ(bpf_map_update_elem(f.m.rules, &slot, &r, BPF_ANY), 0, "bpf_map_update_elem(f.m.rules, &slot, &r, BPF_ANY)");
	frame_udp(&fr, "198.18.1.7", 100, 0);
	for (int b = 0; b < 20; b++) {
		__u64 t = T0 + 100 * NSEC_S + b * bucket + 1000;
		int passed = 0;

		for (int i = 0; i < 10; i++)
			passed += fixture_run(&f, fr.data, fr.len, cpus[i % n],
					      t + i) == XDP_PASS;
		CHECK_EQ(passed, 3, "passed");
	}
	fixture_close(&f);
}

/* A scoped rule's ban bans the source itself (ban_source decodes the
 * scoped key), and only by its answered connection's packets. */
TEST(scope_ban_bans_the_source)
{
	struct rl_rule_change c = { .have_pps = true, .pps = 3, .have_ban = true,
				    .ban_ns = 10 * NSEC_S };
	struct rl_scope web = { .proto = 6, .flags = RL_SCOPE_F_DPORT,
				.dport_lo = HOST_PORT, .dport_hi = HOST_PORT };
	struct rl_key src = { 0 };
	struct rl_ban ban;
	struct rl_rule r;
	struct fixture f;
	__u32 slot;
	__u8 a4[4];

	if (!open_fixture(&f))
		return;
	slot = next_slot;
	CHECK(scoped(&f, "0.0.0.0/0", 0, web, 3, 0), "web");
	/* the ban of --ban 10s, on the scoped rule */
	CHECK_EQ(bpf_map_lookup_elem(f.m.rules, &slot, &r), 0, "bpf_map_lookup_elem(f.m.rules, &slot, &r)");
	rl_rule_apply(&r, &c, f.s.window_ns);
	CHECK_EQ(bpf_map_update_elem(f.m.rules, &slot, &r, BPF_ANY), 0, "bpf_map_update_elem(f.m.rules, &slot, &r, BPF_ANY)");
	{
		struct rl_config cfg;
		__u32 zero = 0;

		CHECK_EQ(bpf_map_lookup_elem(f.m.config, &zero, &cfg), 0, "bpf_map_lookup_elem(f.m.config, &zero, &cfg)");
		cfg.bans_used = 1;
		cfg.rules_gen += 2;
		CHECK_EQ(bpf_map_update_elem(f.m.config, &zero, &cfg, BPF_ANY), 0, "bpf_map_update_elem(f.m.config, &zero, &cfg, BPF_ANY)");
	}
	/* forged copies (no answered connection) are held, never ban */
	CHECK_EQ(send_l4(&f, V4, 6, HOST_PORT, TCP_ACK, EXT_NONE, 10, T0), 3, "send_l4(&f, V4, 6, HOST_PORT, TCP_ACK, EXT_NONE, 10, T0)");
	inet_pton(AF_INET, V4, a4);
	rl_v4_mapped(src.addr, a4);
	CHECK(bpf_map_lookup_elem(f.m.bans, &src, &ban) != 0, "no ban from forgeries");
	/* the host answers V4: its own packets over the quota ban it */
	CHECK(fixture_answer(&f, V4, 0, T0 + 2 * NSEC_S), "answer");
	CHECK_EQ(send_l4(&f, V4, 6, HOST_PORT, TCP_ACK, EXT_NONE, 10,
			 T0 + 2 * NSEC_S + 1), 3, "send_l4(&f, V4, 6, HOST_PORT, TCP_ACK, EXT_NONE, 10, T0 + 2 * NSEC_S + 1)");
	CHECK_EQ(bpf_map_lookup_elem(f.m.bans, &src, &ban), 0, "bpf_map_lookup_elem(f.m.bans, &src, &ban)");
	/* banned: UDP of the source, in no scope, drops too */
	CHECK_EQ(send_l4(&f, V4, 17, 9, 0, EXT_NONE, 5, T0 + 3 * NSEC_S), 0, "send_l4(&f, V4, 17, 9, 0, EXT_NONE, 5, T0 + 3 * NSEC_S)");
	fixture_close(&f);
}

/*
 * With scoped rules in use nothing is refused before its source is looked
 * up (bpf/refuse_first.bpf.h): a source tracked before its rule had a
 * newcomer budget, never verified, keeps the drops of the budget's
 * refusals in its own entry, as it did before that early path.
 */
TEST(scope_nothing_refused_first)
{
	struct rl_rule_change plain = { .have_pps = true, .pps = 1000 };
	struct rl_rule_change d = { .have_pps = true, .pps = 1000,
				    .have_new_pps = true, .new_pps = 10 };
	__u64 now = T0 + 10 * NSEC_S;
	char a[32];
	int passed = 0;
	struct fixture f;

	if (!open_fixture(&f))
		return;
	CHECK(fixture_rule(&f, "default", &plain), "default");
	CHECK_EQ(send_l4(&f, V4, 17, 53, 0, EXT_NONE, 2, T0), 2, "tracked");
	CHECK(fixture_rule(&f, "default", &d), "default, --new-pps 10");
	CHECK(scoped(&f, "0.0.0.0/0", 0, SYN, 20, 0), "syn");
	for (int i = 1; i <= 50; i++) {
		snprintf(a, sizeof(a), "198.18.1.%d", i);
		passed += send_l4(&f, a, 17, 53, 0, EXT_NONE, 1, now);
	}
	CHECK_EQ(passed, 10, "a UDP flood: the newcomer budget");
	CHECK(fixture_refusing(&f, now), "the budget refuses");
	CHECK_EQ(send_l4(&f, V4, 17, 53, 0, EXT_NONE, 3, now), 0, "never verified: refused");
	CHECK_SOURCE(&f, V4, now, 2, 3, 0, "its drops in its entry");
	CHECK_EQ(fixture_refused(&f, V4), 0, "none in `refused`");
	fixture_close(&f);
}

/* Scope `sc` ranked as quota set ranks it. */
static struct rl_scope ranked(const struct rl_scope *sc)
{
	return rl_scope_of(sc->proto, sc->flags, sc->dport_lo, sc->dport_hi);
}

/* quota set (the library, as the CLI calls it) of a scoped rule of 1000
 * pps over `prefix` with scope `sc`; and its quota del. */
static bool lib_scoped(struct fixture *f, const char *prefix,
		       const struct rl_scope *sc)
{
	struct rl_rule_change c = { .have_pps = true, .pps = 1000 };
	struct rl_scope s = ranked(sc);

	return fixture_rule_scoped(f, prefix, &s, &c);
}

static bool lib_scoped_del(struct fixture *f, const char *prefix,
			   const struct rl_scope *sc)
{
	struct rl_scope s = ranked(sc);

	return fixture_rule_scoped(f, prefix, &s, NULL);
}

static __u8 scope_skip(struct fixture *f)
{
	struct rl_config cfg = { 0 };
	__u32 zero = 0;

	CHECK_EQ(bpf_map_lookup_elem(f->m.config, &zero, &cfg), 0, "config");
	return cfg.scope_skip;
}

/*
 * A packet of a protocol no scope names walks no scope (config.scope_skip,
 * kept by quota set and del): under a SYN scope, UDP is judged by the
 * unscoped rule; a UDP scope set takes UDP out of the skip before its
 * rule can be found, and its del puts it back.
 */
TEST(scope_skip_kept_by_quota_set_and_del)
{
	__u8 tcp = rl_scope_skip_bit(6), udp = rl_scope_skip_bit(17);
	struct fixture f;

	if (!open_fixture(&f) || !fixture_pps(&f, "198.18.0.0/15", 5) ||
	    !lib_scoped(&f, "198.18.0.0/15", &SYN))
		goto out;
	CHECK_EQ(scope_skip(&f), RL_SCOPE_SKIP_ALL & ~tcp, "a SYN scope: TCP walks");
	CHECK_EQ(send_l4(&f, V4, 17, 53, 0, EXT_NONE, 10, T0), 5,
		 "UDP, skipping the walk: the unscoped rule's 5");
	CHECK_EQ(syns(&f, V4, 10, T0), 10, "SYNs: the SYN rule's");
	if (!lib_scoped(&f, "198.18.0.0/15", &UDP))
		goto out;
	CHECK_EQ(scope_skip(&f), RL_SCOPE_SKIP_ALL & ~tcp & ~udp, "UDP walks too");
	CHECK_EQ(send_l4(&f, V4B, 17, 53, 0, EXT_NONE, 10, T0), 10,
		 "UDP: the UDP rule's");
	if (!lib_scoped_del(&f, "198.18.0.0/15", &UDP))
		goto out;
	CHECK_EQ(scope_skip(&f), RL_SCOPE_SKIP_ALL & ~tcp, "its del: UDP skips again");
	CHECK_EQ(send_l4(&f, "198.18.0.9", 17, 53, 0, EXT_NONE, 10, T0), 5,
		 "UDP: the unscoped rule's again");
out:
	fixture_close(&f);
}

/* The skip is the program's: a config that says UDP skips while a UDP
 * scope is in use (only a test writes one) has UDP judged by the unscoped
 * rule. An IPv6 packet behind an extension header names no protocol to
 * the parse, and walks the scopes whatever the skip says. */
TEST(scope_skip_read_by_the_program)
{
	struct rl_config cfg;
	struct fixture f;
	__u32 zero = 0;

	if (!open_fixture(&f) || !fixture_pps(&f, "198.18.0.0/15", 5) ||
	    !fixture_pps(&f, "2001:db8::/32", 5) ||
	    !lib_scoped(&f, "198.18.0.0/15", &UDP) ||
	    !lib_scoped(&f, "2001:db8::/32", &UDP))
		goto out;
	CHECK_EQ(send_l4(&f, V4, 17, 53, 0, EXT_NONE, 10, T0), 10, "UDP: its scope's rule");
	if (!CHECK_EQ(bpf_map_lookup_elem(f.m.config, &zero, &cfg), 0, "config"))
		goto out;
	cfg.scope_skip = RL_SCOPE_SKIP_ALL;
	if (!CHECK_EQ(bpf_map_update_elem(f.m.config, &zero, &cfg, BPF_ANY), 0, "skip all"))
		goto out;
	CHECK_EQ(send_l4(&f, V4B, 17, 53, 0, EXT_NONE, 10, T0), 5,
		 "told to skip: the unscoped rule's");
	CHECK_EQ(send_l4(&f, V6, 17, 53, 0, 1, 10, T0), 10,
		 "IPv6 behind a destination options header: walks, its scope's rule");
out:
	fixture_close(&f);
}

/* The skip after `reload` onto new maps from pins of `layout` whose
 * config holds `skip`, its scopes a SYN scope's. */
static __u8 skip_carried(__u32 layout)
{
	struct rl_iface old = { .name = "old" };
	struct rl_carried carried;
	char err[RL_ERR_LEN];
	struct fixture f, g;
	__u8 skip = 0xff;

	memset(&g, 0, sizeof(g));
	if (!open_fixture(&f) || !lib_scoped(&f, "198.18.0.0/15", &SYN))
		goto out;
	old.m = f.m;
	if (!CHECK_EQ(rl_config_read(&f.m, &old.cfg), 0, "the old config"))
		goto out;
	old.cfg.layout = layout;
	if (fixture_open(&g, NULL) &&
	    CHECK(rl_carry(&old, &g.s, &g.m, &carried, err, sizeof(err)) == 0,
		  "carry: %s", err))
		skip = scope_skip(&g);
out:
	if (g.skel)
		fixture_close(&g);
	fixture_close(&f);
	return skip;
}

/* reload carries the skip from pins of this layout; from layout 14's,
 * whose byte was a pad that a CLI of its time kept as it found it while
 * it changed the scopes (a SYN scope set by one, under a skip that says
 * TCP walks none, would never judge), every packet walks until a quota
 * set or del works the skip out again. */
TEST(scope_skip_carried_from_this_layout_only)
{
	CHECK_EQ(skip_carried(RL_LAYOUT_VERSION), RL_SCOPE_SKIP_ALL & ~rl_scope_skip_bit(6),
		 "from this layout: carried");
	CHECK_EQ(skip_carried(14), 0, "from layout 14: every packet walks");
}
