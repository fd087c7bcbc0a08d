/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * SYN cookies at the driver (xdp-ratelimit(8) SYN COOKIES). An unverified
 * source's SYN under a rule with --syn-cookies is answered here with
 * a SYN-ACK whose sequence number is the kernel's own SYN cookie
 * (bpf_tcp_raw_gen_syncookie_*, the kernel's secret), sent back out of the
 * interface (XDP_TX) within the interface's budget. The ACK returning a
 * valid cookie (bpf_tcp_raw_check_syncookie_*) proves the return path: it
 * verifies its source and passes to the host, whose SYNPROXY (the nft table
 * of user/lib/cookie_host.c) completes the handshake with the listener. The options are
 * what the kernel's cookies carry: the MSS in the cookie; window scale, SACK
 * and ECN in the low bits of the timestamp, which SYNPROXY decodes from the
 * echo (a client without timestamps gets the MSS only).
 */
#ifndef RL_COOKIE_BPF_H
#define RL_COOKIE_BPF_H

#include <linux/tcp.h>
#include "maps.bpf.h"
#include "parse.h"
#include "events.h"
#include "verified.bpf.h"
#include "cookie_check.bpf.h"

/* What cookie_first() made of a packet */
#define RL_COOKIE_DROP	0	/* nothing: judged as any packet */
#define RL_COOKIE_PASS	1	/* an ACK returning a valid cookie */
#define RL_COOKIE_SENT	2	/* a SYN answered with a SYN-ACK: XDP_TX */
#define RL_COOKIE_BAD	3	/* an ACK checked, no valid cookie: judged as
				 * any packet, not checked again (prove_source) */

#define RL_TCP_ECE	0x40
#define RL_TCP_CWR	0x80
/* the timestamp's low bits, as the kernel's cookies use them */
#define RL_TS_WSCALE_NONE	0xf
#define RL_TS_SACK		(1U << 4)
#define RL_TS_ECN		(1U << 5)
#define RL_TS_BITS		0x3f

/* The one's complement sum folded to 16 bits, inverted: a checksum */
static __always_inline __u16 csum_fold32(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* The TCP checksum of a segment of `len` bytes from `tcp`, IPv4 or IPv6
 * addresses at `saddr` (the destination follows the source in both). */
static __always_inline __u16 tcp_csum(const __be32 *saddr, int v6, void *tcp,
				      __u32 len)
{
	__s64 part = bpf_csum_diff(NULL, 0, tcp, len, 0);
	__u64 sum = part < 0 ? 0 : (__u64)part;
	int i, n = v6 ? 8 : 2;

	for (i = 0; i < 8; i++)
		if (i < n)
			sum += saddr[i];
	sum += RL_HTONL(len) + RL_HTONL(6);
	return csum_fold32(sum);
}

/* The SYN's options a cookie keeps: window scale (RL_TS_WSCALE_NONE:
 * none), SACK permitted, the timestamp (its value in *tsval). */
struct cookie_opts {
	__u32 tsval;
	__u8 wscale;
	__u8 sack;
	__u8 ts;
};

/* The walk of a SYN's options, one option a step (bpf_loop: a loop the
 * verifier would walk once per offset is too long for it). */
struct opt_walk {
	__u8 *tcp;
	void *end;
	__u32 off;
	__u32 thlen;
	struct cookie_opts o;
};

static long opt_step(__u32 i, void *arg)
{
	struct opt_walk *w = arg;
	__u8 kind, len, *p;
	__u32 off = w->off;

	if (off >= w->thlen || off >= 60)
		return 1;
	p = w->tcp + off;
	if ((void *)(p + 2) > w->end)
		return 1;
	kind = p[0];
	if (kind == 0)
		return 1;
	if (kind == 1) {
		w->off = off + 1;
		return 0;
	}
	len = p[1];
	if (len < 2 || off + len > w->thlen)
		return 1;
	if (kind == 3 && len == 3) {
		if ((void *)(p + 3) > w->end)
			return 1;
		w->o.wscale = p[2] < 14 ? p[2] : 14;
	} else if (kind == 4 && len == 2) {
		w->o.sack = 1;
	} else if (kind == 8 && len == 10) {
		if ((void *)(p + 10) > w->end)
			return 1;
		w->o.ts = 1;
		w->o.tsval = (__u32)p[2] << 24 | (__u32)p[3] << 16 |
			     (__u32)p[4] << 8 | p[5];
	}
	w->off = off + len;
	return 0;
}

/* The length of the SYN-ACK's options for a SYN's (synack_options) */
static __always_inline __u32 synack_optlen(const struct cookie_opts *o)
{
	if (!o->ts)
		return 4;	/* nowhere to keep the rest: the kernel's way */
	return o->wscale == RL_TS_WSCALE_NONE ? 16 : 20;
}

/* Write the SYN-ACK's `len` bytes of options (synack_optlen) at `w`:
 * the MSS; with a timestamp, SACK (or two NOPs) and the timestamp whose
 * low bits keep the cookie's options; the window scale when offered. */
static __always_inline void synack_options(__be32 *w, __u32 len,
					   const struct cookie_opts *o,
					   __u16 mss, __u8 wscale, __u8 ecn)
{
	__u32 tsval;

	w[0] = RL_HTONL(2 << 24 | 4 << 16 | mss);
	if (len == 4)
		return;
	/* the cookie's options in the low bits of our timestamp, which the
	 * client echoes; the rest is a millisecond clock, as SYNPROXY's */
	tsval = (__u32)(bpf_ktime_get_ns() / 1000000) & ~RL_TS_BITS;
	tsval |= (o->wscale & RL_TS_WSCALE_NONE) | (o->sack ? RL_TS_SACK : 0) |
		 (ecn ? RL_TS_ECN : 0);
	w[1] = o->sack ? RL_HTONL(4 << 24 | 2 << 16 | 8 << 8 | 10)
		       : RL_HTONL(1 << 24 | 1 << 16 | 8 << 8 | 10);
	w[2] = RL_HTONL(tsval);
	w[3] = RL_HTONL(o->tsval);
	if (len == 16)
		return;
	w[4] = RL_HTONL(1 << 24 | 3 << 16 | 3 << 8 | wscale);
}

/* The kernel's cookie for the SYN whose IP header is `l3` bytes into the
 * frame (`v6`: IPv6, else IPv4 without options), or -1. The helpers take
 * a header length the verifier knows, so one call per length: a global
 * function, so that its eleven paths are walked once, not once for each
 * path of the caller. */
#define RL_GEN_COOKIE(n, gen)						\
	case n:								\
		if ((void *)tcp + n > end)				\
			return -1;					\
		return gen(ip, tcp, n);
#define RL_GEN_COOKIES(gen)						\
	switch (thlen) {						\
	RL_GEN_COOKIE(20, gen) RL_GEN_COOKIE(24, gen) RL_GEN_COOKIE(28, gen) \
	RL_GEN_COOKIE(32, gen) RL_GEN_COOKIE(36, gen) RL_GEN_COOKIE(40, gen) \
	RL_GEN_COOKIE(44, gen) RL_GEN_COOKIE(48, gen) RL_GEN_COOKIE(52, gen) \
	RL_GEN_COOKIE(56, gen) RL_GEN_COOKIE(60, gen)			\
	}
__noinline __s64 cookie_gen(struct xdp_md *ctx, __u32 l3, __u32 v6)
{
	void *data, *end, *ip;
	struct tcphdr *tcp;
	__u32 thlen;

	if (!ctx || l3 > sizeof(struct ethhdr) + 2 * sizeof(struct rl_vlan_hdr))
		return -1;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	ip = data + l3;
	tcp = ip + (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr));
	if ((void *)(tcp + 1) > end)
		return -1;
	thlen = (((__u8 *)tcp)[12] >> 4) * 4;
	if (v6)
		RL_GEN_COOKIES(bpf_tcp_raw_gen_syncookie_ipv6)
	else
		RL_GEN_COOKIES(bpf_tcp_raw_gen_syncookie_ipv4)
	return -1;
}

static __always_inline void swap_bytes(__u8 *a, __u8 *b, __u32 n)
{
	__u8 t;
	__u32 i;

	for (i = 0; i < 16; i++) {
		if (i >= n)
			break;
		t = a[i];
		a[i] = b[i];
		b[i] = t;
	}
}

/* Turn the SYN in `ctx` into its SYN-ACK carrying a cookie, in place; 1
 * if it is ready to send back. Global functions, this and cookie_ack():
 * the chain of frames below the program's stays short. */
__noinline int cookie_synack(struct xdp_md *ctx)
{
	void *data, *end;
	struct opt_walk w = { .o.wscale = RL_TS_WSCALE_NONE };
	struct cookie_opts *o = &w.o;
	struct cookie_seg seg, *s = &seg;
	struct rl_config *cfg;
	struct tcphdr *tcp;
	__u32 thlen, optlen, zero = 0;
	__u64 len;
	__u16 mss;
	__u8 wscale;
	__u8 flags, ecn;
	__s64 cookie;
	__u32 seq;

	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!ctx || !cfg)
		return 0;	/* cannot happen: an array */
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (!cookie_parse(data, end, s))
		return 0;
	mss = cfg->cookie_mss ? cfg->cookie_mss : 1460;
	wscale = cfg->cookie_wscale ? cfg->cookie_wscale : RL_COOKIE_DEFAULT_WSCALE;

	cookie = cookie_gen(ctx, s->l3, s->v6);
	if (cookie < 0)
		return 0;
	data = (void *)(long)ctx->data;	/* the call forgot the bounds */
	end = (void *)(long)ctx->data_end;
	if (data + s->l4 + sizeof(*tcp) > end)
		return 0;
	tcp = data + s->l4;
	thlen = (((__u8 *)tcp)[12] >> 4) * 4;
	if (s->v6)
		mss -= 20;
	w.tcp = (__u8 *)tcp;
	w.end = end;
	w.off = sizeof(*tcp);
	w.thlen = thlen;
	bpf_loop(40, opt_step, &w, 0);
	flags = ((__u8 *)tcp)[13];
	ecn = (flags & (RL_TCP_ECE | RL_TCP_CWR)) == (RL_TCP_ECE | RL_TCP_CWR) && o->ts;
	seq = RL_HTONL(tcp->seq);	/* a byte swap either way */

	/* the frame becomes the SYN-ACK's length: a SYN from Linux is as
	 * long (or longer), one without options 4 bytes shorter than the
	 * Ethernet minimum it was padded to */
	optlen = synack_optlen(o);
	len = end - data;	/* 64-bit: the verifier refuses 32-bit pointer math */
	barrier_var(len);
	if (bpf_xdp_adjust_tail(ctx, (int)(s->l4 + sizeof(*tcp) + optlen) - (int)len))
		return 0;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	/* one length per path, so that the verifier knows each write's */
	if (optlen == 20) {
		if (data + s->l4 + sizeof(*tcp) + 20 > end)
			return 0;
	} else if (optlen == 16) {
		if (data + s->l4 + sizeof(*tcp) + 16 > end)
			return 0;
	} else {
		optlen = 4;
		if (data + s->l4 + sizeof(*tcp) + 4 > end)
			return 0;
	}
	tcp = data + s->l4;

	swap_bytes(data, data + ETH_ALEN, ETH_ALEN);
	if (s->v6) {
		struct ipv6hdr *ip6 = data + s->l3;

		*(__be32 *)ip6 = RL_HTONL(0x60000000);
		ip6->hop_limit = 64;
		swap_bytes((__u8 *)&ip6->saddr, (__u8 *)&ip6->daddr, 16);
	} else {
		struct iphdr *iph = data + s->l3;

		iph->tos = 0;
		iph->id = 0;
		iph->frag_off = RL_HTONS(0x4000);	/* DF */
		iph->ttl = 64;
		swap_bytes((__u8 *)&iph->saddr, (__u8 *)&iph->daddr, 4);
	}
	swap_bytes((__u8 *)&tcp->source, (__u8 *)&tcp->dest, 2);
	tcp->ack_seq = RL_HTONL(seq + 1);
	tcp->seq = RL_HTONL((__u32)cookie);
	tcp->window = 0;	/* as SYNPROXY's: the server's ACK opens it */
	tcp->urg_ptr = 0;
	tcp->check = 0;
	synack_options((__be32 *)(tcp + 1), optlen, o, mss, wscale, ecn);
	((__u8 *)tcp)[12] = ((sizeof(*tcp) + optlen) / 4) << 4;
	((__u8 *)tcp)[13] = RL_TCP_SYN | RL_TCP_ACK | (ecn ? RL_TCP_ECE : 0);
	thlen = sizeof(*tcp) + optlen;
	if (s->v6) {
		struct ipv6hdr *ip6 = data + s->l3;

		ip6->payload_len = RL_HTONS(thlen);
		tcp->check = tcp_csum((__be32 *)&ip6->saddr, 1, tcp, thlen);
	} else {
		struct iphdr *iph = data + s->l3;

		iph->tot_len = RL_HTONS(sizeof(*iph) + thlen);
		iph->check = 0;
		iph->check = csum_fold32((__u64)bpf_csum_diff(NULL, 0, (void *)iph,
							      sizeof(*iph), 0));
		tcp->check = tcp_csum((__be32 *)&iph->saddr, 0, tcp, thlen);
	}
	return 1;
}

/* An ACK: does it return a valid cookie? Then its source is verified. */
__noinline int cookie_ack(struct xdp_md *ctx, __u64 now)
{
	void *data, *end;
	struct cookie_seg seg, *s = &seg;
	struct rl_counters *cnt;
	struct rl_key key;
	__u32 zero = 0;

	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!ctx || !cnt)
		return 0;	/* cannot happen: an array */
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (!cookie_parse(data, end, s) || !cookie_returned(data, end, s))
		return 0;

	/* valid: the mark the host's SYNPROXY rule matches (RL_COOKIE_MARK_*) */
	if (s->v6) {
		struct ipv6hdr *ip6 = data + s->l3;

		if ((void *)(ip6 + 1) > end)
			return 0;
		rl_parse_ipv6(&(struct rl_cursor){ .pos = ip6 }, end, &key,
			      settings.v6_mask);
		*(__be32 *)ip6 = (*(__be32 *)ip6 & RL_HTONL(0xfff00000)) |
				 RL_HTONL(RL_COOKIE_MARK_V6);
	} else {
		struct iphdr *iph = data + s->l3;
		__u16 old;

		if ((void *)(iph + 1) > end)
			return 0;
		rl_v4_mapped(key.addr, &iph->saddr);
		old = iph->frag_off;
		iph->frag_off |= RL_HTONS(RL_COOKIE_MARK_V4);
		/* RFC 1624: HC' = ~(~HC + ~m + m') */
		iph->check = csum_fold32((__u64)(__u16)~iph->check + (__u16)~old +
					 iph->frag_off);
	}
	verify_source(&key, now);
	return 1;
}

/*
 * A packet of an unverified source under a rule with --syn-cookies
 * (rl_rule_cookies): a SYN is answered with a SYN-ACK carrying a cookie
 * while the interface's budget of them lasts (RL_COOKIE_SENT); an ACK
 * returning a valid cookie passes, marked for the host's SYNPROXY, and
 * verifies its source (RL_COOKIE_PASS, counted as passed by the program's
 * account()). Anything else, a SYN past the
 * budget and an ACK without a valid cookie included, is judged as any
 * packet (RL_COOKIE_DROP: "not answered here"; RL_COOKIE_BAD: an ACK whose
 * cookie was checked and is not valid). Every SYN, not only those
 * the newcomer budget would refuse: during a flood a SYN it admits would
 * open a handshake whose ACK it refuses. A global function: its frame is
 * not the program's, whose stack the cross-CPU sum fills.
 */
__noinline int cookie_first(struct xdp_md *ctx, __u64 now)
{
	struct rl_counters *cnt;
	struct cookie_seg s;
	__u32 zero = 0;
	__u8 flags;

	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!ctx || !cnt || (settings.flags & RL_F_DRY_RUN))
		return RL_COOKIE_DROP;	/* a dry run passes everything */
	if (!cookie_parse((void *)(long)ctx->data, (void *)(long)ctx->data_end, &s))
		return RL_COOKIE_DROP;
	flags = ((__u8 *)(long)ctx->data + s.l4)[13];
	if ((flags & (RL_TCP_SYN | RL_TCP_ACK | RL_TCP_RST | RL_TCP_FIN)) == RL_TCP_SYN) {
		if (!rl_period_take(&cnt->cookies_period, &cnt->cookies_in_period, now,
				    RL_COOKIES_PERIOD_NS,
				    rl_per_cpu_share(RL_COOKIES_PER_PERIOD, settings.ncpus)))
			return RL_COOKIE_DROP;
		if (!cookie_synack(ctx))
			return RL_COOKIE_DROP;
		cnt->cookies_sent++;
		return RL_COOKIE_SENT;
	}
	if ((flags & (RL_TCP_SYN | RL_TCP_ACK | RL_TCP_RST | RL_TCP_FIN)) != RL_TCP_ACK)
		return RL_COOKIE_DROP;
	if (!cookie_ack(ctx, now)) {
		cnt->cookies_bad++;
		return RL_COOKIE_BAD;
	}
	cnt->cookies_valid++;
	return RL_COOKIE_PASS;
}
#endif /* RL_COOKIE_BPF_H */
