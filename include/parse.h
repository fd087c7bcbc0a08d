/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Frame parsing for the XDP program, in the cursor style of xdp-tools'
 * parsing_helpers.h: each helper checks the bounds of its header once and
 * advances the cursor. UAPI headers only, so host tests can include it.
 */
#ifndef RL_PARSE_H
#define RL_PARSE_H

#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include "ratelimit.h"
#include "compiler.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define RL_HTONS(x)	((__be16)__builtin_bswap16(x))
#define RL_HTONL(x)	((__be32)__builtin_bswap32(x))
#else
#define RL_HTONS(x)	((__be16)(x))
#define RL_HTONL(x)	((__be32)(x))
#endif

/* Loops the verifier must see unrolled; host compilers (the tests) do
 * without. */
#ifdef __clang__
#define RL_UNROLL _Pragma("unroll")
#else
#define RL_UNROLL
#endif

/* Tags we look through: 802.1Q and 802.1ad (QinQ), at most two. */
#define RL_MAX_VLAN_DEPTH	2

enum rl_pkt_kind {
	RL_PKT_V4,
	RL_PKT_V6,
	RL_PKT_NON_IP,		/* always passes */
	RL_PKT_MALFORMED,	/* dropped unless RL_F_PASS_MALFORMED */
	RL_PKT_ENCAP,		/* IP may be inside, unread: as malformed */
};

struct rl_cursor {
	void *pos;
};

struct rl_vlan_hdr {
	__be16 tci;
	__be16 encap_proto;
};

RL_INLINE int rl_is_vlan(__be16 proto)
{
	return proto == RL_HTONS(ETH_P_8021Q) || proto == RL_HTONS(ETH_P_8021AD);
}

/* Ethernet and up to RL_MAX_VLAN_DEPTH tags; returns the inner EtherType
 * (network order) or -1 when a header is cut short. A third tag is left
 * in place: rl_is_encap() tells it from non-IP. */
RL_INLINE int rl_parse_eth(struct rl_cursor *c, void *end)
{
	struct ethhdr *eth = c->pos;
	struct rl_vlan_hdr *vh;
	__be16 proto;
	int i;

	if ((void *)(eth + 1) > end)
		return -1;
	proto = eth->h_proto;
	c->pos = eth + 1;
RL_UNROLL
	for (i = 0; i < RL_MAX_VLAN_DEPTH; i++) {
		if (!rl_is_vlan(proto))
			break;
		vh = c->pos;
		if ((void *)(vh + 1) > end)
			return -1;
		proto = vh->encap_proto;
		c->pos = vh + 1;
	}
	return proto;
}

/*
 * Is `proto` (after the tags read) an encapsulation the parser does not
 * read, that may carry IP: a third VLAN tag, a PPPoE session, MPLS? Its
 * sender cannot be judged, and passing it would let anyone route around
 * every rule by adding a tag, so it is treated as malformed (dropped
 * unless --pass-malformed), and counted on its own (encap_packets).
 */
RL_INLINE int rl_is_encap(__be16 proto)
{
	return rl_is_vlan(proto) || proto == RL_HTONS(ETH_P_PPP_SES) ||
	       proto == RL_HTONS(ETH_P_MPLS_UC) || proto == RL_HTONS(ETH_P_MPLS_MC);
}

/* The v4-mapped form of an IPv4 address, as struct rl_key holds it. */
RL_INLINE void rl_v4_mapped(__u8 out[16], const void *v4)
{
	__builtin_memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	__builtin_memcpy(&out[12], v4, 4);
}

/* IPv4: the whole header its IHL claims must be there. */
RL_INLINE int rl_parse_ipv4(struct rl_cursor *c, void *end, struct rl_key *key)
{
	struct iphdr *iph = c->pos;
	__u32 hlen;

	if ((void *)(iph + 1) > end)
		return RL_PKT_MALFORMED;
	if (iph->version != 4 || iph->ihl < 5)
		return RL_PKT_MALFORMED;
	hlen = iph->ihl * 4;
	if (c->pos + hlen > end)
		return RL_PKT_MALFORMED;
	rl_v4_mapped(key->addr, &iph->saddr);
	c->pos += hlen;
	return RL_PKT_V4;
}

/* IPv6: the fixed header; extension headers do not move the source. The
 * key keeps the source masked to the tracked prefix (`mask`: volatile, so
 * that the program reads its load-time settings, not their initial value). */
RL_INLINE int rl_parse_ipv6(struct rl_cursor *c, void *end, struct rl_key *key,
			    const volatile __u32 *mask)
{
	struct ipv6hdr *ip6 = c->pos;
	__u32 w[4];
	int i;

	if ((void *)(ip6 + 1) > end)
		return RL_PKT_MALFORMED;
	if (ip6->version != 6)
		return RL_PKT_MALFORMED;
	__builtin_memcpy(w, &ip6->saddr, sizeof(w));
	/* An IPv4-mapped source (::ffff:0:0/96) must not appear on the wire
	 * (RFC 4291 2.5.5.2; Linux drops it in ipv6_rcv). Tracking it would
	 * let a sender dodge its IPv4 rule, so it is malformed. */
	if (w[0] == 0 && w[1] == 0 && w[2] == RL_HTONL(0xffff))
		return RL_PKT_MALFORMED;
	/* Nor may a multicast source (ff00::/8, RFC 4291 2.7; Linux drops
	 * it in ipv6_rcv): its keys are a scoped window's (include/scope.h). */
	if (((const __u8 *)w)[0] == 0xff)
		return RL_PKT_MALFORMED;
RL_UNROLL
	for (i = 0; i < 4; i++)
		w[i] &= mask[i];
	__builtin_memcpy(key->addr, w, sizeof(w));
	c->pos = ip6 + 1;
	return RL_PKT_V6;
}

#define RL_TCP_FIN	0x01
#define RL_TCP_SYN	0x02
#define RL_TCP_RST	0x04
#define RL_TCP_ACK	0x10

/*
 * A flag rl_parse_frame_tcp() adds to RL_PKT_V4 or RL_PKT_V6: the frame
 * may hold a TCP segment without SYN that rl_parse_tcp() reads (IPv4:
 * protocol 6, no later fragment; IPv6: next header 6, or an extension
 * header before it; and SYN not seen set). Only such a segment can be the
 * ACK that proves its source or a proven packet, and only a verified
 * client's next segments need its verification read under any rule:
 * without the flag, a frame skips a second parse, and a SYN flood the
 * reading.
 */
#define RL_PKT_MAY_TCP	0x100

/* RL_PKT_MAY_TCP for the segment that may start at `tcp`: unless its
 * flags are there and say SYN. */
RL_INLINE int rl_may_tcp_at(const __u8 *tcp, void *end)
{
	if ((void *)(tcp + 14) <= end && (tcp[13] & RL_TCP_SYN))
		return 0;
	return RL_PKT_MAY_TCP;
}

/* Is IPv6 next header `next` an extension header (hop-by-hop, routing,
 * fragment, destination options) that the parsers look through? */
RL_INLINE int rl_ipv6_ext(__u8 next)
{
	return next == 0 || next == 43 || next == 60 || next == 44;
}

/*
 * The transport protocol number of the frame data..end, where its IP
 * header names it: -1 for a frame that is not IP, or malformed, or IPv6
 * with an extension header first (which this does not read through). A
 * frame of a protocol no rule scope names walks no scope
 * (rl_config.scope_skip, include/scope.h): read only while scopes are in
 * use, not by every packet's parse.
 */
RL_INLINE int rl_frame_proto(void *data, void *end)
{
	struct rl_cursor c = { .pos = data };
	int proto = rl_parse_eth(&c, end);
	__u8 next;

	if (proto == RL_HTONS(ETH_P_IP)) {
		const struct iphdr *iph = c.pos;

		if ((void *)(iph + 1) > end)
			return -1;
		return iph->protocol;
	}
	if (proto == RL_HTONS(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6 = c.pos;

		if ((void *)(ip6 + 1) > end)
			return -1;
		next = ip6->nexthdr;
		return rl_ipv6_ext(next) ? -1 : next;
	}
	return -1;
}

/* Classify a frame and fill `key` for IP frames; RL_PKT_MAY_TCP added. */
RL_INLINE int rl_parse_frame_tcp(void *data, void *end, struct rl_key *key,
				 const volatile __u32 *v6_mask)
{
	struct rl_cursor c = { .pos = data };
	int proto = rl_parse_eth(&c, end);
	int kind;

	if (proto < 0)
		return RL_PKT_MALFORMED;
	if (proto == RL_HTONS(ETH_P_IP)) {
		const struct iphdr *iph = c.pos;

		kind = rl_parse_ipv4(&c, end, key);
		if (kind == RL_PKT_V4 && iph->protocol == 6 &&
		    !(iph->frag_off & RL_HTONS(0x1fff)))
			kind |= rl_may_tcp_at(c.pos, end);
		return kind;
	}
	if (proto == RL_HTONS(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6 = c.pos;
		__u8 next;

		kind = rl_parse_ipv6(&c, end, key, v6_mask);
		if (kind != RL_PKT_V6)
			return kind;
		next = ip6->nexthdr;
		if (next == 6)
			kind |= rl_may_tcp_at(c.pos, end);
		else if (rl_ipv6_ext(next))
			kind |= RL_PKT_MAY_TCP;
		return kind;
	}
	if (rl_is_encap(proto))
		return RL_PKT_ENCAP;
	return RL_PKT_NON_IP;
}

/* Classify a frame and fill `key` for IP frames. */
RL_INLINE int rl_parse_frame(void *data, void *end, struct rl_key *key,
			     const volatile __u32 *v6_mask)
{
	return rl_parse_frame_tcp(data, end, key, v6_mask) & ~RL_PKT_MAY_TCP;
}

/* ---- TCP segments: verified sources (include/verified.h) ---- */

/* IPv6 extension headers looked through before TCP, at most */
#define RL_MAX_EXT_HDRS		4

/* After the IPv6 header: the upper-layer protocol, the cursor moved past
 * the extension headers (hop-by-hop, routing, destination options, a
 * first fragment); -1 when it cannot be read (a later fragment, a cut or
 * too long chain). */
RL_INLINE int rl_skip_ipv6_ext(struct rl_cursor *c, void *end, __u8 next)
{
	int i;

RL_UNROLL
	for (i = 0; i < RL_MAX_EXT_HDRS; i++) {
		__u8 *h = c->pos;

		if (!rl_ipv6_ext(next))
			return next;
		if ((void *)(h + 8) > end)
			return -1;
		if (next == 44) {	/* fragment: offset in bits 3-15 of bytes 2-3 */
			if ((h[2] << 5 | h[3] >> 3) != 0)
				return -1;
			c->pos = h + 8;
		} else {
			c->pos = h + (h[1] + 1) * 8;
		}
		next = h[0];
	}
	return rl_ipv6_ext(next) ? -1 : next;
}

/* What the proof and the ban windows read of a TCP segment (host order). */
struct rl_seg {
	__u32 seq;
	__u32 ack;
	__u16 win;
	__u8 flags;
	__u8 doff;		/* header length in bytes */
};

/* An address of IPv6 that names IPv4 (::ffff:a.b.c.d): never a peer of
 * IPv6, so it proves nothing for the IPv4 address it names. */
RL_INLINE int rl_v4_mapped_addr(const __u8 *a)
{
	__u32 w[3];

	__builtin_memcpy(w, a, sizeof(w));
	return w[0] == 0 && w[1] == 0 && w[2] == RL_HTONL(0xffff);
}

/*
 * The TCP segment in a frame: its connection as `f` (egress: the host is
 * the sender, else the receiver), and the segment's numbers as `seg`. The
 * TCP header, or NULL if the frame is no TCP segment whose whole fixed
 * header is there (a later fragment cannot be read; an IPv6 segment of a
 * v4-mapped address is none: it must not stand for IPv4).
 */
RL_INLINE __u8 *rl_parse_tcp(void *data, void *end, struct rl_flow *f, int egress,
			     struct rl_seg *seg)
{
	struct rl_cursor c = { .pos = data };
	int proto = rl_parse_eth(&c, end);
	__u8 *from = egress ? f->host : f->peer, *to = egress ? f->peer : f->host;
	__be16 *ports;
	__be32 *nums;
	__u8 *tcp;

	if (proto == RL_HTONS(ETH_P_IP)) {
		struct iphdr *iph = c.pos;

		if ((void *)(iph + 1) > end || iph->version != 4 || iph->ihl < 5)
			return 0;
		if (iph->protocol != 6 || (iph->frag_off & RL_HTONS(0x1fff)))
			return 0;
		rl_v4_mapped(from, &iph->saddr);
		rl_v4_mapped(to, &iph->daddr);
		c.pos += iph->ihl * 4;
	} else if (proto == RL_HTONS(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = c.pos;

		if ((void *)(ip6 + 1) > end || ip6->version != 6)
			return 0;
		__builtin_memcpy(from, &ip6->saddr, 16);
		__builtin_memcpy(to, &ip6->daddr, 16);
		if (rl_v4_mapped_addr(from) || rl_v4_mapped_addr(to))
			return 0;
		c.pos = ip6 + 1;
		if (rl_skip_ipv6_ext(&c, end, ip6->nexthdr) != 6)
			return 0;
	} else {
		return 0;
	}
	tcp = c.pos;
	if ((void *)(tcp + 20) > end)
		return 0;
	ports = (__be16 *)tcp;
	nums = (__be32 *)(tcp + 4);
	f->peer_port = egress ? ports[1] : ports[0];
	f->host_port = egress ? ports[0] : ports[1];
	seg->seq = __builtin_bswap32(nums[0]);
	seg->ack = __builtin_bswap32(nums[1]);
	seg->doff = (tcp[12] >> 4) * 4;
	seg->flags = tcp[13];
	seg->win = (__u16)(tcp[14] << 8 | tcp[15]);
	return tcp;
}

/* TCP options looked through for the window scale, at most */
#define RL_MAX_TCP_OPTS		12

/* The window-scale option of a segment whose TCP header is at `tcp`
 * (`doff` bytes), capped at 14 (RFC 7323); 0 without one. */
RL_INLINE __u8 rl_tcp_wscale(__u8 *tcp, void *end, __u8 doff)
{
	__u32 off = 20;
	int i;

	for (i = 0; i < RL_MAX_TCP_OPTS; i++) {
		__u8 *o;

		off &= 63;	/* a TCP header is at most 60 bytes */
		o = tcp + off;
		if (off >= doff || (void *)(o + 1) > end || o[0] == 0)
			return 0;
		if (o[0] == 1) {	/* no-op */
			off++;
			continue;
		}
		if ((void *)(o + 3) > end || o[1] < 2)
			return 0;
		if (o[0] == 3 && o[1] == 3)
			return o[2] > 14 ? 14 : o[2];
		off += o[1];
	}
	return 0;
}

#endif /* RL_PARSE_H */
