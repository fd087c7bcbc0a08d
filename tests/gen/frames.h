/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The traffic generator's frame: the settings trafficgen.bpf.c reads to
 * rewrite the source address of every frame, and (host side only) the one
 * frame builder: trafficgen.c makes its first frame with it, the program
 * tests (tests/prog/fixture.c) and the benchmark (bench/cost.c) theirs.
 *
 * Live-frame test runs copy the first frame into page-pool pages once and
 * recycle the pages without copying it again, so a page holds whatever the
 * program wrote into it last time: every field that varies is written in
 * full on every run (address and checksum), never patched incrementally.
 */
#ifndef TG_FRAMES_H
#define TG_FRAMES_H

#include <linux/types.h>

enum tg_mode {
	TG_MODE_FIXED,		/* the frame as built (one source, or --hex) */
	TG_MODE_CYCLE,		/* sources in order, wrapping */
	TG_MODE_RANDOM,		/* uniform among the sources, xorshift64* */
	TG_MODE_SHUFFLE,	/* every source once a pass, in a fixed
				 * pseudo-random order (tg_shuffle) */
};

/* Read by the program on every frame; written by userspace through the
 * skeleton's .bss before the first run and never changed during one. */
struct tg_settings {
	__u32 mode;		/* enum tg_mode */
	__u32 ipv6;
	__u32 nsources;
	__u32 src_off;		/* source address, from the start of the frame */
	__u32 csum_off;		/* IPv4 header checksum, or IPv6 UDP checksum */
	__u32 csum_base;	/* unfolded sum of that checksum's words but the source address */
	__u32 shift;		/* IPv6: source i is base + (i << shift) */
	__u32 v4_base;		/* host order */
	__u64 v6_base_hi;	/* host order */
	__u64 v6_base_lo;
	__u32 shuffle_bits;	/* TG_MODE_SHUFFLE: tg_shuffle_bits(nsources) */
	__u32 shuffle_key;	/* and its key, from --seed */
};

/* Advanced by the program, seeded by userspace; carried across runs. */
struct tg_state {
	__u64 rng;		/* xorshift64* state, never 0 */
	__u32 next;		/* next index in TG_MODE_CYCLE; TG_MODE_SHUFFLE's
				 * counter over [0, 2^shuffle_bits) */
	__u32 pad;
};

/* Header offsets are masked with this so the verifier sees a bounded
 * offset; the largest (QinQ + IPv6 + UDP checksum) is 14 + 8 + 40 + 6. */
#define TG_OFF_MASK		0x7f

/* TG_MODE_SHUFFLE: a bijection of [0, 2^bits) onto itself (multiplies
 * by odd constants and xor-shifts, each invertible modulo 2^bits), so that
 * walking a counter over the domain and skipping the values >= N visits
 * each of the N sources once a pass, in an order that does not follow the
 * addresses: no memory read per frame (a permutation table would add a
 * cache miss to the generator's own cost). Shared by the program and the
 * unit test that checks it is a permutation. */
static inline __u32 tg_shuffle(__u32 c, __u32 bits, __u32 key)
{
	__u32 mask = bits >= 32 ? 0xffffffffu : (1u << bits) - 1;
	__u32 s = bits / 2 + 1, x = c & mask;

	x = (x * 0x9e3779b1u + key) & mask;
	x ^= x >> s;
	x = (x * 0x85ebca6bu) & mask;
	x ^= x >> s;
	x = (x * 0xc2b2ae35u) & mask;
	x ^= x >> s;
	return x;
}

/* The smallest power of two (its log) that holds n sources. */
static inline __u32 tg_shuffle_bits(__u64 n)
{
	__u32 b = 0;

	while (b < 32 && (1ULL << b) < n)
		b++;
	return b;
}

/* A counter lands in [0, N) at least half the time (2^bits < 2N): this
 * many steps miss all of it with a chance far below one in 2^32. */
#define TG_SHUFFLE_TRIES	32

#define TG_ETH_HLEN		14
#define TG_SRC_MAC_OFF		6
#define TG_VLAN_HLEN		4
#define TG_IPV4_HLEN		20
#define TG_IPV6_HLEN		40
#define TG_UDP_HLEN		8
#define TG_TCP_HLEN		20
#define TG_MAX_VLANS		2	/* what trafficgen sends */
#define TG_BUILD_MAX_VLANS	3	/* what the builder makes: a third tag is not IP */
#define TG_MIN_FRAME		60	/* Ethernet minimum without FCS */
#define TG_ETH_P_IP		0x0800
#define TG_ETH_P_IPV6		0x86dd
#define TG_ETH_P_ARP		0x0806
#define TG_ETH_P_8021Q		0x8100
#define TG_ETH_P_8021AD		0x88a8
#define TG_IPPROTO_UDP		17
#define TG_IPPROTO_TCP		6
#define TG_TCP_DPORT		80
#define TG_TCP_SYN		0x02
#define TG_TTL			64
#define TG_UDP_SPORT		9000
#define TG_UDP_DPORT		9	/* discard */

/* Offsets of the fields the program rewrites, inside the IP header. */
#define TG_IPV4_SADDR_OFF	12
#define TG_IPV4_CSUM_OFF	10
#define TG_IPV6_SADDR_OFF	8
#define TG_UDP_CSUM_OFF		6
#define TG_TCP_CSUM_OFF		16

#ifndef __bpf__
#include <arpa/inet.h>
#include <string.h>

/* Where frames go when nobody says: inside the benchmark ranges. */
#define TG_DEFAULT_DST4		"198.18.1.1"
#define TG_DEFAULT_DST6		"2001:db8:1::1"

/* What to build: addresses in network order (IPv4 in the first 4 bytes). */
struct tg_frame_spec {
	__u8 dst_mac[6];
	__u8 src_mac[6];
	unsigned int nvlans;
	__u16 vlan[TG_BUILD_MAX_VLANS];	/* outermost first */
	int ipv6;
	__u8 src[16];
	__u8 dst[16];
	unsigned int size;		/* whole frame, Ethernet header included */
	int tcp_syn;			/* a TCP SYN to TG_TCP_DPORT, not UDP */
};

static inline unsigned int tg_l3_off(unsigned int nvlans)
{
	return TG_ETH_HLEN + nvlans * TG_VLAN_HLEN;
}

static inline unsigned int tg_headers_len(unsigned int nvlans, int ipv6)
{
	return tg_l3_off(nvlans) + (ipv6 ? TG_IPV6_HLEN : TG_IPV4_HLEN) +
	       TG_UDP_HLEN;
}

/* The same for a TCP SYN (tg_frame_spec tcp_syn). */
static inline unsigned int tg_headers_len_tcp(unsigned int nvlans, int ipv6)
{
	return tg_headers_len(nvlans, ipv6) - TG_UDP_HLEN + TG_TCP_HLEN;
}

static inline void tg_put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* One's-complement sum of big-endian 16-bit words, not folded. */
static inline __u32 tg_csum_add(__u32 sum, const __u8 *p, unsigned int len)
{
	unsigned int i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (__u32)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (__u32)p[len - 1] << 8;
	return sum;
}

static inline __u16 tg_csum_fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/*
 * Build a UDP frame (or, with s->tcp_syn, a TCP SYN) of s->size bytes
 * (zero payload) into buf, which holds at least that many, with valid
 * checksums for s->src (the IPv4 UDP checksum is left 0, "none"). Fills
 * the offsets and csum_base of set. The program rewrites one checksum with
 * the source: over IPv4 the header's, so a SYN's TCP checksum holds for
 * s->src only (what XDP and netfilter's early hooks see does not check it).
 */
static inline void tg_build_frame(const struct tg_frame_spec *s, __u8 *buf,
				  struct tg_settings *set)
{
	unsigned int l3 = tg_l3_off(s->nvlans);
	unsigned int l3_len = s->size - l3;
	unsigned int i, udp, udp_len;
	__u8 proto = s->tcp_syn ? TG_IPPROTO_TCP : TG_IPPROTO_UDP;
	__u8 *p = buf;
	__u32 sum;

	memset(buf, 0, s->size);
	memcpy(p, s->dst_mac, 6);
	memcpy(p + 6, s->src_mac, 6);
	p += 12;
	for (i = 0; i < s->nvlans; i++) {
		/* Two tags or more: S-tag outside, C-tags inside; one tag: C-tag. */
		tg_put16(p, s->nvlans >= 2 && i == 0 ? TG_ETH_P_8021AD :
						      TG_ETH_P_8021Q);
		tg_put16(p + 2, s->vlan[i]);
		p += TG_VLAN_HLEN;
	}
	tg_put16(p, s->ipv6 ? TG_ETH_P_IPV6 : TG_ETH_P_IP);
	p = buf + l3;

	if (!s->ipv6) {
		udp = l3 + TG_IPV4_HLEN;
		p[0] = 0x45;			/* version 4, 5 words */
		tg_put16(p + 2, l3_len);
		p[8] = TG_TTL;
		p[9] = proto;
		memcpy(p + 16, s->dst, 4);
		/* Everything but the source address and the checksum. */
		set->csum_base = tg_csum_add(0, p, TG_IPV4_HLEN);
		memcpy(p + TG_IPV4_SADDR_OFF, s->src, 4);
		sum = tg_csum_add(set->csum_base, p + TG_IPV4_SADDR_OFF, 4);
		tg_put16(p + TG_IPV4_CSUM_OFF, tg_csum_fold(sum));
		set->src_off = l3 + TG_IPV4_SADDR_OFF;
		set->csum_off = l3 + TG_IPV4_CSUM_OFF;
	} else {
		udp = l3 + TG_IPV6_HLEN;
		p[0] = 0x60;			/* version 6 */
		tg_put16(p + 4, l3_len - TG_IPV6_HLEN);
		p[6] = proto;
		p[7] = TG_TTL;
		memcpy(p + 24, s->dst, 16);
	}
	udp_len = s->size - udp;
	if (s->tcp_syn) {
		__u8 pseudo[12] = { 0 };
		unsigned int at = s->ipv6 ? TG_IPV6_SADDR_OFF : TG_IPV4_SADDR_OFF;

		tg_put16(buf + udp, TG_UDP_SPORT);
		tg_put16(buf + udp + 2, TG_TCP_DPORT);
		buf[udp + 12] = 5 << 4;		/* 20 header bytes */
		buf[udp + 13] = TG_TCP_SYN;
		tg_put16(buf + udp + 14, 65535);
		/* pseudo-header: length and protocol, then both addresses */
		tg_put16(pseudo + (s->ipv6 ? 2 : 10), udp_len);
		pseudo[s->ipv6 ? 7 : 9] = TG_IPPROTO_TCP;
		sum = tg_csum_add(0, pseudo, s->ipv6 ? 8 : 12);
		sum = tg_csum_add(sum, s->dst, s->ipv6 ? 16 : 4);
		sum = tg_csum_add(sum, buf + udp, TG_TCP_HLEN);
		if (s->ipv6) {
			set->csum_base = sum;
			set->csum_off = udp + TG_TCP_CSUM_OFF;
			memcpy(p + TG_IPV6_SADDR_OFF, s->src, 16);
			set->src_off = l3 + TG_IPV6_SADDR_OFF;
		}
		sum = tg_csum_add(sum, p + at, s->ipv6 ? 16 : 4);
		tg_put16(buf + udp + TG_TCP_CSUM_OFF, tg_csum_fold(sum));
		return;
	}
	tg_put16(buf + udp, TG_UDP_SPORT);
	tg_put16(buf + udp + 2, TG_UDP_DPORT);
	tg_put16(buf + udp + 4, udp_len);

	if (s->ipv6) {
		/* Pseudo-header length and next header, destination, UDP
		 * header; the payload is zeros and adds nothing. */
		__u8 pseudo[8] = { 0 };

		tg_put16(pseudo + 2, udp_len);
		pseudo[7] = TG_IPPROTO_UDP;
		sum = tg_csum_add(0, pseudo, sizeof(pseudo));
		sum = tg_csum_add(sum, s->dst, 16);
		set->csum_base = tg_csum_add(sum, buf + udp, TG_UDP_HLEN);
		memcpy(p + TG_IPV6_SADDR_OFF, s->src, 16);
		sum = tg_csum_add(set->csum_base, s->src, 16);
		/* 0 means "no checksum", which IPv6 forbids: send ~0. */
		tg_put16(buf + udp + TG_UDP_CSUM_OFF,
			 tg_csum_fold(sum) ?: 0xffff);
		set->src_off = l3 + TG_IPV6_SADDR_OFF;
		set->csum_off = udp + TG_UDP_CSUM_OFF;
	}
}

/* The frame size for `size` (0: the smallest that holds the headers, at
 * least TG_MIN_FRAME), or 0 when `size` is shorter than the headers. */
static inline unsigned int tg_frame_size(unsigned int size, unsigned int nvlans,
					 int ipv6)
{
	unsigned int hdrs = tg_headers_len(nvlans, ipv6);

	if (!size)
		return hdrs > TG_MIN_FRAME ? hdrs : TG_MIN_FRAME;
	return size < hdrs ? 0 : size;
}

/*
 * A test frame: UDP from `src` (IPv4 or IPv6 text, the family follows) to
 * TG_DEFAULT_DST4/6, 02:00:00:00:00:01 to 02:00:00:00:00:02, behind
 * `nvlans` tags (IDs 100, 101, ...), `size` bytes as tg_frame_size(), into
 * buf of `cap` bytes. Returns the frame's length, or -1 for a bad address,
 * too many tags or a size that does not fit.
 */
static inline int tg_frame_udp(__u8 *buf, unsigned int cap, const char *src,
			       unsigned int size, unsigned int nvlans)
{
	struct tg_frame_spec s = {
		.dst_mac = { 2, 0, 0, 0, 0, 2 },
		.src_mac = { 2, 0, 0, 0, 0, 1 },
		.nvlans = nvlans,
		.ipv6 = strchr(src, ':') != NULL,
	};
	struct tg_settings set;
	int af = s.ipv6 ? AF_INET6 : AF_INET;
	unsigned int i;

	if (nvlans > TG_BUILD_MAX_VLANS)
		return -1;
	s.size = tg_frame_size(size, nvlans, s.ipv6);
	if (!s.size || s.size > cap || inet_pton(af, src, s.src) != 1 ||
	    inet_pton(af, s.ipv6 ? TG_DEFAULT_DST6 : TG_DEFAULT_DST4, s.dst) != 1)
		return -1;
	for (i = 0; i < nvlans; i++)
		s.vlan[i] = 100 + i;
	tg_build_frame(&s, buf, &set);
	return (int)s.size;
}
#endif /* !__bpf__ */

#endif /* TG_FRAMES_H */
