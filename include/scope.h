/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Rule scope (xdp-ratelimit(8) "Rule scope"): which packets a scoped rule
 * judges, which one rule judges a packet, and where a scoped rule keeps a
 * source's window. Plain C shared by the XDP program and the host tests,
 * like window.h.
 *
 * One rule judges each packet: the most specific one.
 *  - Among the scoped rules whose scope the packet is in, the one of the
 *    longest prefix, then of the narrowest scope (rl_scope_rank), then of
 *    the lowest port range.
 *  - That rule judges the packet instead of the unscoped rule covering the
 *    source, unless the unscoped rule has a longer prefix and allows or
 *    blocks everything (rl_scoped_judges): an allow-listed host or a
 *    blocked prefix is never overridden by a scoped rule of a shorter
 *    prefix, while a plain limit of a longer prefix is (a SYN limit of the
 *    default still holds a prefix with a quota of its own).
 *  - Packets in no scope are judged by the unscoped rule, as without scopes.
 *
 * Scope fails closed, so that a scope is never a way around a limit:
 *  - An unverified packet that a scoped rule judges still pays the
 *    newcomer budget of the unscoped rule covering its source, beside the
 *    scoped rule's own (rl_scoped_pays_cover): a SYN limit without
 *    --new-pps does not lift the default's newcomer budget off SYNs.
 *  - A packet whose TCP or UDP header cannot be read (a fragment after the
 *    first, a first fragment that ends inside the header, as in the tiny
 *    fragment attack of RFC 1858; an IPv6 chain of more than
 *    RL_MAX_EXT_HDRS extension headers, or a cut one) might fall under
 *    every rule of its protocol (of every rule, when even the protocol is
 *    unknown), and under the unscoped rule unless a scope holds it for
 *    certain (rl_scope_certain). Of those, the strictest judges it
 *    (rl_rule_strictness), not the most specific: hiding its header never
 *    moves a packet from a strict rule to a looser one. The price: a real
 *    client's TCP fragments (rare: TCP sets DF) count against a SYN rule.
 *
 * A scoped rule's window of a source lives in `sources` beside the source's
 * own, under a key of its own (rl_scoped_key): ff00::/8, which no packet's
 * source can be (multicast: rl_parse_ipv6 refuses it), then the family, the
 * rule's slot and the address (IPv6: its first 96 bits, which is why
 * scoped rules covering IPv6 need --ipv6-prefix 96 or shorter).
 */
#ifndef RL_SCOPE_H
#define RL_SCOPE_H

#include "ratelimit.h"
#include "quota.h"
#include "newcomer.h"
#include "parse.h"

/* How much of a packet's transport header was read (struct rl_l4). */
#define RL_L4_NONE	0	/* nothing: an IPv6 chain too long or cut */
#define RL_L4_PROTO	1	/* the protocol, not its header (a later
				 * fragment, a cut header) */
#define RL_L4_FULL	2	/* the protocol and its header */

/* What scopes look at in a packet. */
struct rl_l4 {
	__u8 known;		/* RL_L4_* */
	__u8 proto;
	__u8 tcp_flags;
	__u8 pad;
	__u16 dport;		/* host order; TCP and UDP */
};

/* The transport view of an IP frame (one rl_parse_frame() took as IPv4 or
 * IPv6): the protocol after IPv6's extension headers (hop-by-hop, routing,
 * destination options, fragment), and the destination port and TCP flags
 * when the header is there. */
RL_INLINE void rl_parse_l4(void *data, void *end, struct rl_l4 *l4)
{
	struct rl_cursor c = { .pos = data };
	int proto = rl_parse_eth(&c, end);
	int left;	/* bytes of the IP payload after the headers read */
	__u8 next, *h;
	int i, later = 0;

	l4->known = RL_L4_NONE;
	if (proto == RL_HTONS(ETH_P_IP)) {
		struct iphdr *iph = c.pos;

		if ((void *)(iph + 1) > end)
			return;
		next = iph->protocol;
		later = (iph->frag_off & RL_HTONS(0x1fff)) != 0;
		left = (int)(RL_HTONS(iph->tot_len) & 0xffff) - iph->ihl * 4;
		c.pos += iph->ihl * 4;
	} else if (proto == RL_HTONS(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = c.pos;

		if ((void *)(ip6 + 1) > end)
			return;
		next = ip6->nexthdr;
		c.pos = ip6 + 1;
		left = RL_HTONS(ip6->payload_len) & 0xffff;
RL_UNROLL
		for (i = 0; i < RL_MAX_EXT_HDRS; i++) {
			if (!rl_ipv6_ext(next) || later)
				break;
			h = c.pos;
			if ((void *)(h + 8) > end)
				return;
			if (next == 44) {
				/* offset in bits 3-15 of bytes 2-3 */
				later = (h[2] << 5 | h[3] >> 3) != 0;
				c.pos = h + 8;
				left -= 8;
			} else {
				c.pos = h + (h[1] + 1) * 8;
				left -= (h[1] + 1) * 8;
			}
			next = h[0];
		}
		if (rl_ipv6_ext(next))
			return;
	} else {
		return;
	}
	l4->proto = next;
	l4->known = RL_L4_PROTO;
	if (later)
		return;
	/* a header cut by the IP length, not only by the frame: a first
	 * fragment may end inside it (the rest, its flags, in the next) */
	h = c.pos;
	if (next == 6) {
		if ((void *)(h + 14) > end || left < 14)
			return;
		l4->tcp_flags = h[13];
	} else if (next == 17) {
		if ((void *)(h + 4) > end || left < 4)
			return;
	} else {
		l4->known = RL_L4_FULL;
		return;
	}
	l4->dport = (__u16)(h[2] << 8 | h[3]);
	l4->known = RL_L4_FULL;
}

/* The first byte of a scoped window's key, and the family tags after it. */
#define RL_SCOPED_TAG		0xff
#define RL_SCOPED_V4		4
#define RL_SCOPED_V6		6
/* The longest --ipv6-prefix a scoped window of an IPv6 source can hold. */
#define RL_SCOPED_MAX_V6_PREFIX	96

/* Which bit of rl_config.scope_skip stands for protocol `proto`: TCP,
 * UDP, ICMP, ICMPv6, and one for every other number (a scope matches a
 * packet by the number, whatever the family). */
#define RL_SCOPE_SKIP_ALL	0x1f
RL_INLINE __u8 rl_scope_skip_bit(__u8 proto)
{
	if (proto == 6)
		return 1;
	if (proto == 17)
		return 2;
	if (proto == 1)
		return 4;
	if (proto == 58)
		return 8;
	return 16;
}

RL_INLINE int rl_proto_has_ports(__u8 proto)
{
	return proto == 6 || proto == 17;
}

/* How specific a scope is: a port range beats SYN alone, a narrower
 * range a wider one, SYN and a range both beat a range alone; every
 * scope beats none (0: a free entry of `scopes`). */
RL_INLINE __u32 rl_scope_rank(const struct rl_scope *s)
{
	__u32 r = 1;

	if (s->flags & RL_SCOPE_F_DPORT)
		r += (1U << 17) + (0xffffU - (__u32)(s->dport_hi - s->dport_lo));
	if (s->flags & RL_SCOPE_F_SYN)
		r += 1U << 16;
	return r;
}

/* Is a packet with transport view `l4` in scope `s`? */
RL_INLINE int rl_scope_matches(const struct rl_scope *s, const struct rl_l4 *l4)
{
	if (!s->rank)
		return 0;
	if (l4->known == RL_L4_NONE)
		return 1;
	if (l4->proto != s->proto)
		return 0;
	if (l4->known != RL_L4_FULL)
		return 1;
	if ((s->flags & RL_SCOPE_F_DPORT) &&
	    (l4->dport < s->dport_lo || l4->dport > s->dport_hi))
		return 0;
	if ((s->flags & RL_SCOPE_F_SYN) &&
	    (l4->tcp_flags & (RL_TCP_SYN | RL_TCP_ACK)) != RL_TCP_SYN)
		return 0;
	return 1;
}

/* Is a packet with transport view `l4` in scope `s` for certain, not only
 * perhaps (a header it could not read)? */
RL_INLINE int rl_scope_certain(const struct rl_scope *s, const struct rl_l4 *l4)
{
	if (l4->known == RL_L4_FULL)
		return rl_scope_matches(s, l4);
	return l4->known == RL_L4_PROTO && s->rank && l4->proto == s->proto &&
	       !(s->flags & (RL_SCOPE_F_DPORT | RL_SCOPE_F_SYN));
}

/* How strict rule `r` is to a packet whose header could not be read,
 * smaller is stricter: a block (--pps 0, --bps 0) first, then the per-source
 * packet budget, then the byte budget, as one number (the packet budget in
 * the high 24 bits, the byte budget in the low 40, each saturated: 2^24
 * packets or 2^40 bytes a window are as good as no limit). No rule: the
 * least strict. */
RL_INLINE __u64 rl_rule_strictness(const struct rl_rule *r)
{
	__u64 pkts, bytes;

	if (!r)
		return ~0ULL;
	if (r->pkt_budget == 0 || r->byte_budget == 0)
		return 0;
	pkts = r->pkt_budget < (1ULL << 24) ? r->pkt_budget : (1ULL << 24) - 1;
	bytes = r->byte_budget < (1ULL << 40) ? r->byte_budget : (1ULL << 40) - 1;
	return pkts << 40 | bytes;
}

/* Of two scoped rules the packet is in (prefix length, scope rank, first
 * port: equal ranks that both match are overlapping ranges of one width),
 * does the first judge rather than the second? */
RL_INLINE int rl_scoped_better(__u32 plen, __u32 rank, __u32 lo,
			       __u32 best_plen, __u32 best_rank, __u32 best_lo)
{
	if (plen != best_plen)
		return plen > best_plen;
	if (rank != best_rank)
		return rank > best_rank;
	return lo < best_lo;
}

/* A scoped rule whose scope a packet is in, as the walk of the scopes
 * compares them. */
struct rl_scope_cand {
	__u64 strict;		/* rl_rule_strictness */
	__u32 plen;		/* its prefix length */
	__u32 rank;		/* its scope's rl_scope_rank */
	__u32 lo;		/* its scope's first port */
	__u32 pad;
};

/* Does candidate `a` judge rather than `b`? The most specific, but for a
 * packet whose header could not be read (`unreadable`) the strictest. */
RL_INLINE int rl_scoped_beats(const struct rl_scope_cand *a,
			      const struct rl_scope_cand *b, int unreadable)
{
	if (unreadable && a->strict != b->strict)
		return a->strict < b->strict;
	return rl_scoped_better(a->plen, a->rank, a->lo, b->plen, b->rank, b->lo);
}

/* Does unscoped rule `u` pass everything (no budget of any kind) or block
 * its sources (--pps 0 or --bps 0)? */
RL_INLINE int rl_rule_allows_all(const struct rl_rule *u)
{
	return u->pkt_budget == RL_UNLIMITED && u->byte_budget == RL_UNLIMITED &&
	       u->agg_pkt_budget == RL_UNLIMITED && u->agg_byte_budget == RL_UNLIMITED &&
	       u->new_pkt_budget == RL_UNLIMITED && u->new_byte_budget == RL_UNLIMITED;
}

RL_INLINE int rl_rule_blocks(const struct rl_rule *u)
{
	return u->pkt_budget == 0 || u->byte_budget == 0;
}

/* The shortest prefix of a scoped rule that judges a packet rather than
 * `u`, the unscoped rule covering its source (NULL: none): any, unless `u`
 * allows or blocks everything. Compared with the prefix the walk of the
 * scopes kept (bpf/scope.bpf.h), the scoped rule is not read again. */
RL_INLINE __u32 rl_scoped_min_plen(const struct rl_rule *u)
{
	if (!u || (!rl_rule_allows_all(u) && !rl_rule_blocks(u)))
		return 0;
	return u->prefixlen;
}

/* Does scoped rule `c`, the best whose scope the packet is in, judge it
 * rather than `u`, the unscoped rule covering its source (NULL: none)? */
RL_INLINE int rl_scoped_judges(const struct rl_rule *u, const struct rl_rule *c)
{
	return c->prefixlen >= rl_scoped_min_plen(u);
}

/* A packet that a scoped rule judges instead of `u`, the unscoped rule
 * covering its source (NULL: none): does it pay `u`'s newcomer budget too,
 * when unverified? Whenever `u` has one; the scoped rule's own newcomer
 * budget, if any, caps its scope's share of it. */
RL_INLINE int rl_scoped_pays_cover(const struct rl_rule *u)
{
	struct rl_budget nb;

	if (!u)
		return 0;
	nb = rl_newcomer_budget(u);
	return rl_budget_limited(&nb);
}

/* The key of rule slot `slot`'s window of source `src` (may be `out`). */
RL_INLINE void rl_scoped_key(struct rl_key *out, const struct rl_key *src,
			     __u32 slot, int v6)
{
	__u32 w[4], h;
	__u8 *b = (__u8 *)&h;

	__builtin_memcpy(w, src->addr, sizeof(w));
	b[0] = RL_SCOPED_TAG;
	b[1] = v6 ? RL_SCOPED_V6 : RL_SCOPED_V4;
	b[2] = (__u8)(slot >> 8);
	b[3] = (__u8)slot;
	if (v6) {
		w[3] = w[2];
		w[2] = w[1];
		w[1] = w[0];
	} else {
		w[1] = 0;
		w[2] = 0;
	}
	w[0] = h;
	__builtin_memcpy(out->addr, w, sizeof(w));
}

/* Is `k` a scoped window's key, not a source's? */
RL_INLINE int rl_key_scoped(const struct rl_key *k)
{
	return k->addr[0] == RL_SCOPED_TAG;
}

/* The source and rule slot of scoped key `k` (`src` may be `k`); the
 * slot. An IPv6 source comes back as its first 96 bits. */
RL_INLINE __u32 rl_scoped_source(const struct rl_key *k, struct rl_key *src)
{
	__u32 slot = (__u32)k->addr[2] << 8 | k->addr[3];
	int v6 = k->addr[1] == RL_SCOPED_V6;
	__u32 w[4];

	__builtin_memcpy(w, k->addr, sizeof(w));
	if (v6) {
		w[0] = w[1];
		w[1] = w[2];
		w[2] = w[3];
		w[3] = 0;
		__builtin_memcpy(src->addr, w, sizeof(w));
	} else {
		rl_v4_mapped(src->addr, &w[3]);
	}
	return slot;
}

#endif /* RL_SCOPE_H */
