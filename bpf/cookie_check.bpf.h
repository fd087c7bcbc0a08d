/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Does an ACK return a valid SYN cookie of this host's kernel
 * (bpf_tcp_raw_check_syncookie_*: the kernel's secret)? The program's own
 * cookies (cookie.bpf.h) are the kernel's, and so are those a listener
 * sends when its SYN queue overflows (net.ipv4.tcp_syncookies), whose
 * SYN-ACKs have no socket for the egress hook to record: either proves
 * that the peer receives what this host sends its address
 * (xdp-ratelimit(8), Verified sources).
 */
#ifndef RL_COOKIE_CHECK_BPF_H
#define RL_COOKIE_CHECK_BPF_H

#include <linux/tcp.h>
#include "maps.bpf.h"
#include "parse.h"

/* The headers of a TCP segment: offsets of IP and TCP from the frame's
 * start (constant on each of the verifier's paths: Ethernet and up to two
 * tags), its family, its flags. 0 when it is not one we answer or check:
 * IPv4 with options or fragmented, IPv6 with extension headers. */
struct cookie_seg {
	__u32 l3;
	__u32 l4;
	int v6;
};

static __always_inline int cookie_parse(void *data, void *end, struct cookie_seg *s)
{
	struct ethhdr *eth = data;
	struct rl_vlan_hdr *vh;
	__be16 proto;

	if ((void *)(eth + 1) > end)
		return 0;
	proto = eth->h_proto;
	s->l3 = sizeof(*eth);
	if (rl_is_vlan(proto)) {
		vh = data + sizeof(*eth);
		if ((void *)(vh + 1) > end)
			return 0;
		proto = vh->encap_proto;
		s->l3 += sizeof(*vh);
		if (rl_is_vlan(proto)) {
			vh = data + sizeof(*eth) + sizeof(*vh);
			if ((void *)(vh + 1) > end)
				return 0;
			proto = vh->encap_proto;
			s->l3 += sizeof(*vh);
		}
	}
	if (proto == RL_HTONS(ETH_P_IP)) {
		struct iphdr *iph = data + s->l3;

		if ((void *)(iph + 1) > end || iph->ihl != 5 || iph->protocol != 6 ||
		    (iph->frag_off & RL_HTONS(0x3fff)))
			return 0;
		s->v6 = 0;
		s->l4 = s->l3 + sizeof(*iph);
	} else if (proto == RL_HTONS(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = data + s->l3;

		if ((void *)(ip6 + 1) > end || ip6->nexthdr != 6)
			return 0;
		s->v6 = 1;
		s->l4 = s->l3 + sizeof(*ip6);
	} else {
		return 0;
	}
	return data + s->l4 + sizeof(struct tcphdr) <= end;
}

/* Does the segment `s` of the frame at `data` return a valid cookie? */
static __always_inline int cookie_returned(void *data, void *end,
					   const struct cookie_seg *s)
{
	void *tcp = data + s->l4;

	if (tcp + sizeof(struct tcphdr) > end)
		return 0;
	if (s->v6) {
		struct ipv6hdr *ip6 = data + s->l3;

		return (void *)(ip6 + 1) <= end &&
		       !bpf_tcp_raw_check_syncookie_ipv6(ip6, tcp);
	} else {
		struct iphdr *iph = data + s->l3;

		return (void *)(iph + 1) <= end &&
		       !bpf_tcp_raw_check_syncookie_ipv4(iph, tcp);
	}
}

/*
 * Until when (the program's clock, 0: never) the kernel may have SYN
 * cookies out: RL_KERNEL_COOKIES_NS after the egress hook last saw a
 * SYN-ACK that no socket sent (kernel_cookies_from). Only then does an ACK
 * without a SYN-ACK on record pay a cookie check, as the kernel itself
 * checks cookies only after a listener overflowed: a forged ACK flood
 * otherwise costs no more than before. A hint for a check, never a
 * verdict: a valid cookie is proof whenever it is checked. Not pinned: a
 * reloaded program starts without it, and a kernel cookie sent before the
 * reload proves only once the next is seen.
 */
__u64 kernel_cookies_until;

/*
 * The window scale the kernel's cookie SYN-ACKs offer, by the listener's
 * port (network order; 1 + the scale, 0: none seen): the connection a
 * cookie proves has no SYN-ACK on record, and without its scale the
 * window a ban counts in (`answered`) would be the unscaled one, a
 * fraction of what the host advertises, so a bulk sender's packets would
 * fall out of it and never ban. A listener's scale is fixed by its
 * receive buffer; a forwarded SYN-ACK may write a port's, which only
 * sizes that window, never proves. Not pinned, as the hint.
 */
__u8 kernel_cookie_wscale[65536];

/* The egress hook saw a SYN-ACK from no socket at `now`: a kernel cookie,
 * or a SYN-ACK the host forwards, which only turns the check on. */
static __always_inline void kernel_cookies_from(__u64 now)
{
	__u64 until = now + RL_KERNEL_COOKIES_NS;

	/* one write a second at most: the line stays shared while a flood
	 * is answered */
	if (until - RL_READ(kernel_cookies_until) > 1000000000ULL)
		RL_WRITE(kernel_cookies_until, until);
}

/* May the kernel have SYN cookies out at `now`? */
static __always_inline int kernel_cookies(__u64 now)
{
	return now < RL_READ(kernel_cookies_until);
}

/* Does the ACK in `ctx` return a valid cookie? A global function: one
 * copy for every caller, its frame not the program's. */
__noinline int cookie_valid(struct xdp_md *ctx)
{
	struct cookie_seg s;
	void *data, *end;

	if (!ctx)
		return 0;	/* cannot happen: the caller's pointer */
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	return cookie_parse(data, end, &s) && cookie_returned(data, end, &s);
}
#endif /* RL_COOKIE_CHECK_BPF_H */
