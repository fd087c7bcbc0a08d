// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * SYN cookies at the driver (xdp-ratelimit(8), SYN COOKIES), in the
 * program: an unverified source's SYN under a rule with --syn-cookies is
 * answered with a SYN-ACK (XDP_TX) carrying the kernel's cookie and the
 * SYN's options as the kernel's cookies keep them; the ACK returning it
 * passes, marked for SYNPROXY, and verifies its source; a wrong cookie,
 * an old one, one for another 4-tuple or replayed from another address
 * is judged as any packet (here: refused, counted bad). IPv4, IPv6, VLAN
 * tags, the SYN-ACK budget, dry runs.
 */
#include <arpa/inet.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "lib/ban_map.h"
#include "events.h"
#include "gen/frames.h"
#include "../harness.h"
#include "fixture.h"

#define SPORT	40000
#define DPORT	80
#define ISN	0x11223344u
#define TSVAL	0x01020304u

/* A SYN (or, with `ack`, the ACK of a cookie) from `src` to HOST_ADDR(src)
 * behind `nvlan` 802.1Q tags; `opts`: MSS 1460, SACK permitted, a
 * timestamp TSVAL and window scale 7, as Linux sends them. The TCP
 * checksum is left 0: neither the program nor the kernel's cookie helpers
 * read it. */
static void segment(struct frame *fr, const char *src, __u16 sport, int nvlan,
		    bool opts, __u32 seq, __u32 ack, __u8 flags)
{
	static const __u8 linux_opts[20] = {
		2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0x01, 0x02, 0x03, 0x04,
		0, 0, 0, 0, 1, 3, 3, 7,
	};
	bool v6 = strchr(src, ':') != NULL;
	size_t l3, iplen = v6 ? 40 : 20, olen = opts ? sizeof(linux_opts) : 0;
	__u8 *p = fr->data, *tcp;

	memset(fr->data, 0, sizeof(fr->data));
	memset(p, 0x02, 6);
	memset(p + 6, 0x04, 6);
	l3 = ETH_HLEN;
	for (int i = 0; i < nvlan; i++) {
		tg_put16(p + l3 - 2, TG_ETH_P_8021Q);
		tg_put16(p + l3, 100 + i);
		l3 += 4;
	}
	tg_put16(p + l3 - 2, v6 ? ETH_P_IPV6 : ETH_P_IP);
	p += l3;
	if (v6) {
		p[0] = 0x60;
		tg_put16(p + 4, (__u16)(20 + olen));
		p[6] = 6;
		p[7] = 64;
		CHECK(inet_pton(AF_INET6, src, p + 8) == 1, "IPv6 %s", src);
		CHECK(inet_pton(AF_INET6, HOST_ADDR(src), p + 24) == 1, "IPv6 host");
	} else {
		p[0] = 0x45;
		tg_put16(p + 2, (__u16)(20 + 20 + olen));
		tg_put16(p + 6, 0x4000);	/* DF */
		p[8] = 64;
		p[9] = 6;
		CHECK(inet_pton(AF_INET, src, p + 12) == 1, "IPv4 %s", src);
		CHECK(inet_pton(AF_INET, HOST_ADDR(src), p + 16) == 1, "IPv4 host");
		tg_put16(p + 10, tg_csum_fold(tg_csum_add(0, p, 20)));
	}
	tcp = p + iplen;
	tg_put16(tcp, sport);
	tg_put16(tcp + 2, DPORT);
	tg_put16(tcp + 4, (__u16)(seq >> 16));
	tg_put16(tcp + 6, (__u16)seq);
	tg_put16(tcp + 8, (__u16)(ack >> 16));
	tg_put16(tcp + 10, (__u16)ack);
	tcp[12] = (__u8)(((20 + olen) / 4) << 4);
	tcp[13] = flags;
	tg_put16(tcp + 14, 64240);
	memcpy(tcp + 20, linux_opts, olen);
	fr->len = l3 + iplen + 20 + olen;
	if (fr->len < 60)
		fr->len = 60;
}

static __u32 get32(const __u8 *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

/* The one's complement sum over the TCP segment and its pseudo-header:
 * 0xffff when the checksum is right. */
static __u16 tcp_sum(const __u8 *ip, bool v6, const __u8 *tcp, size_t len)
{
	__u32 sum = tg_csum_add(0, tcp, (unsigned int)len);
	__u8 pseudo[4] = { 0, 0, 0, 6 };

	sum = tg_csum_add(sum, v6 ? ip + 8 : ip + 12, v6 ? 32 : 8);
	sum = tg_csum_add(sum, pseudo, 4);
	pseudo[2] = (__u8)(len >> 8);
	pseudo[3] = (__u8)len;
	pseudo[1] = 0;
	sum = tg_csum_add(sum, (const __u8[]){ pseudo[2], pseudo[3] }, 2);
	return (__u16)~tg_csum_fold(sum);
}

struct synack {
	__u32 cookie;
	__u32 tsval;		/* ours: the options in its low bits */
	__u32 tsecr;
	__u16 mss;
	int wscale;		/* -1: none */
	bool sack, ts;
};

/* Check the frame the program answered SYN `syn` with; what it offered. */
static bool read_synack(const struct frame *syn, const struct frame *out,
			int nvlan, bool v6, struct synack *a)
{
	size_t l3 = ETH_HLEN + 4 * (size_t)nvlan, iplen = v6 ? 40 : 20;
	const __u8 *ip = out->data + l3, *tcp = ip + iplen, *o;
	size_t thlen = (size_t)(tcp[12] >> 4) * 4;
	bool ok = true;

	memset(a, 0, sizeof(*a));
	a->wscale = -1;
	ok &= CHECK(!memcmp(out->data, syn->data + 6, 6) && !memcmp(out->data + 6, syn->data, 6),
		    "the SYN-ACK goes back to the SYN's sender's MAC");
	ok &= CHECK(!memcmp(out->data + 12, syn->data + 12, l3 - 12), "the tags kept");
	ok &= CHECK_EQ(out->len, l3 + iplen + thlen, "the SYN-ACK's length");
	if (v6) {
		ok &= CHECK(!memcmp(ip + 8, syn->data + l3 + 24, 16) &&
			    !memcmp(ip + 24, syn->data + l3 + 8, 16), "addresses swapped");
		ok &= CHECK_EQ((ip[4] << 8 | ip[5]), thlen, "IPv6 payload length");
	} else {
		ok &= CHECK(!memcmp(ip + 12, syn->data + l3 + 16, 4) &&
			    !memcmp(ip + 16, syn->data + l3 + 12, 4), "addresses swapped");
		ok &= CHECK_EQ((ip[2] << 8 | ip[3]), 20 + thlen, "IPv4 total length");
		ok &= CHECK_EQ(tg_csum_fold(tg_csum_add(0, ip, 20)), 0, "IPv4 header checksum");
	}
	ok &= CHECK_EQ(tcp_sum(ip, v6, tcp, thlen), 0xffff, "TCP checksum");
	ok &= CHECK_EQ((tcp[0] << 8 | tcp[1]), DPORT, "source port: the SYN's destination");
	ok &= CHECK_EQ((tcp[2] << 8 | tcp[3]), SPORT, "destination port");
	ok &= CHECK_EQ(tcp[13], TCP_SYN | TCP_ACK, "flags SYN|ACK");
	ok &= CHECK_EQ(get32(tcp + 8), ISN + 1, "acknowledges the SYN");
	a->cookie = get32(tcp + 4);
	for (o = tcp + 20; o < tcp + thlen;) {
		if (o[0] == 1) {
			o++;
			continue;
		}
		if (o[0] == 2)
			a->mss = (__u16)(o[2] << 8 | o[3]);
		else if (o[0] == 3)
			a->wscale = o[2];
		else if (o[0] == 4)
			a->sack = true;
		else if (o[0] == 8) {
			a->ts = true;
			a->tsval = get32(o + 2);
			a->tsecr = get32(o + 6);
		}
		if (!CHECK_GE(o[1], 2, "option length"))
			return false;
		o += o[1];
	}
	return ok;
}

static bool cookie_rule(struct fixture *f)
{
	struct rl_rule_change c = {
		.have_new_pps = true, .new_pps = 0,
		.have_cookies = true, .cookies = true,
	};

	return fixture_rule(f, "default", &c);
}

static bool verified(struct fixture *f, const char *addr)
{
	char err[RL_ERR_LEN];
	struct rl_verified v;
	struct rl_key key;

	return !rl_ban_key(addr, RL_DEFAULT_V6_PREFIX, &key, err, sizeof(err)) &&
	       !bpf_map_lookup_elem(f->m.verified, &key, &v);
}

/* A SYN from `src` answered, then its ACK: both as they should be. */
static bool handshake(struct fixture *f, const char *src, int nvlan, bool opts,
		      struct synack *a)
{
	bool v6 = strchr(src, ':') != NULL;
	size_t l3 = ETH_HLEN + 4 * (size_t)nvlan;
	struct frame syn, fr;
	struct rl_counters t0 = fixture_totals(f), t1;

	segment(&syn, src, SPORT, nvlan, opts, ISN, 0, TCP_SYN);
	fr = syn;
	if (!CHECK(fixture_run_frame(f, &fr, 0, T0) == XDP_TX, "SYN of %s answered", src) ||
	    !read_synack(&syn, &fr, nvlan, v6, a))
		return false;
	t1 = fixture_totals(f);
	CHECK_EQ(t1.cookies_sent - t0.cookies_sent, 1, "cookies_sent");
	CHECK_EQ(t1.dropped_pkts - t0.dropped_pkts, 1,
		 "an answered SYN counts as dropped: it never reaches the host");
	CHECK_EQ(t1.passed_pkts - t0.passed_pkts, 0, "nor as passed");
	segment(&fr, src, SPORT, nvlan, false, ISN + 1, a->cookie + 1, TCP_ACK);
	if (!CHECK(fixture_run_frame(f, &fr, 0, T0 + NSEC_S / 10) == XDP_PASS,
		   "the ACK of %s's cookie passes", src))
		return false;
	t0 = fixture_totals(f);
	CHECK_EQ(t0.cookies_valid - t1.cookies_valid, 1, "cookies_valid");
	if (v6)
		CHECK_EQ(get32(fr.data + l3) & 0xfffff, RL_COOKIE_MARK_V6, "marked for SYNPROXY");
	else if (CHECK(fr.data[l3 + 6] & 0x80, "marked for SYNPROXY"))
		CHECK_EQ(tg_csum_fold(tg_csum_add(0, fr.data + l3, 20)), 0,
			 "IPv4 header checksum after the mark");
	return CHECK(verified(f, src), "%s verified by its cookie", src);
}

TEST(cookie_answers_syn_with_options)
{
	struct fixture f;
	struct synack a;
	struct frame fr;

	if (!fixture_open(&f, NULL) || !cookie_rule(&f))
		goto out;
	if (!handshake(&f, "198.18.0.7", 0, true, &a))
		goto out;
	CHECK_EQ(a.mss, 1460, "MSS offered: the interface's MTU less 40");
	CHECK(a.ts && a.sack, "timestamps and SACK offered back");
	CHECK_GE(a.wscale, 0, "window scale offered back");
	CHECK_EQ(a.tsecr, TSVAL, "the client's timestamp echoed");
	CHECK_EQ(a.tsval & 0xf, 7, "the client's window scale in our timestamp");
	CHECK(a.tsval & (1 << 4), "SACK in our timestamp");
	/* verified now: its next SYN goes to the host */
	segment(&fr, "198.18.0.7", SPORT + 1, 0, true, ISN, 0, TCP_SYN);
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0 + NSEC_S / 5), XDP_PASS,
		 "a verified source's SYN passes");
out:
	fixture_close(&f);
}

TEST(cookie_without_timestamps_keeps_mss)
{
	struct fixture f;
	struct synack a;

	if (!fixture_open(&f, NULL) || !cookie_rule(&f))
		goto out;
	if (!handshake(&f, "198.18.0.9", 0, false, &a))
		goto out;
	CHECK(!a.ts && !a.sack && a.wscale < 0 && a.mss == 1460,
	      "no timestamp: the MSS alone (ts %d sack %d wscale %d mss %u)",
	      a.ts, a.sack, a.wscale, a.mss);
out:
	fixture_close(&f);
}

TEST(cookie_ipv6_and_vlan)
{
	struct fixture f;
	struct synack a;

	if (!fixture_open(&f, NULL) || !cookie_rule(&f))
		goto out;
	handshake(&f, "2001:db8:7::1", 0, true, &a);
	CHECK_EQ(a.mss, 1440, "IPv6: 20 less");
	handshake(&f, "198.18.0.11", 1, true, &a);
	handshake(&f, "198.18.0.12", 2, true, &a);
	handshake(&f, "2001:db8:7:1::1", 2, true, &a);
out:
	fixture_close(&f);
}

/* Each bad ACK: judged as any packet (the rule refuses every newcomer),
 * counted bad, its source not verified. */
static void bad_ack(struct fixture *f, const char *src, __u16 sport, __u32 seq,
		    __u32 ack, const char *what)
{
	struct rl_counters t0 = fixture_totals(f);
	struct frame fr;

	segment(&fr, src, sport, 0, false, seq, ack, TCP_ACK);
	CHECK(fixture_run(f, fr.data, fr.len, 0, T0 + NSEC_S / 10) == XDP_DROP, "%s: refused", what);
	CHECK(fixture_totals(f).cookies_bad - t0.cookies_bad == 1, "%s: counted bad", what);
	CHECK(!verified(f, src), "%s: %s not verified", what, src);
}

TEST(cookie_bad_acks_refused)
{
	struct fixture f;
	struct synack a;
	struct frame syn, fr;

	if (!fixture_open(&f, NULL) || !cookie_rule(&f))
		goto out;
	segment(&syn, "198.18.0.20", SPORT, 0, true, ISN, 0, TCP_SYN);
	fr = syn;
	if (!CHECK_EQ(fixture_run_frame(&f, &fr, 0, T0), XDP_TX, "SYN answered") ||
	    !read_synack(&syn, &fr, 0, false, &a))
		goto out;
	bad_ack(&f, "198.18.0.20", SPORT, ISN + 1, a.cookie + 2, "a wrong cookie");
	bad_ack(&f, "198.18.0.20", SPORT, ISN + 1, a.cookie + 1 - (3u << 24),
		"a cookie three minutes old");
	bad_ack(&f, "198.18.0.20", SPORT + 1, ISN + 1, a.cookie + 1, "another 4-tuple's");
	bad_ack(&f, "198.18.0.21", SPORT, ISN + 1, a.cookie + 1, "replayed from another address");
	/* the right one still passes */
	segment(&fr, "198.18.0.20", SPORT, 0, false, ISN + 1, a.cookie + 1, TCP_ACK);
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0 + NSEC_S / 10), XDP_PASS, "the right one");
out:
	fixture_close(&f);
}

TEST(cookie_synacks_budgeted)
{
	struct fixture f;
	struct frame fr;
	char src[32];
	int sent = 0, refused = 0;
	__u64 share;

	if (!fixture_open(&f, NULL) || !cookie_rule(&f))
		goto out;
	share = rl_per_cpu_share(RL_COOKIES_PER_PERIOD, f.s.ncpus);
	for (__u64 i = 0; i < share + 10; i++) {
		int v;

		snprintf(src, sizeof(src), "198.19.%u.%u", (unsigned)(i >> 8), (unsigned)(i & 255));
		segment(&fr, src, SPORT, 0, true, ISN, 0, TCP_SYN);
		v = fixture_run(&f, fr.data, fr.len, 0, T0);
		sent += v == XDP_TX;
		refused += v == XDP_DROP;
	}
	CHECK_EQ(sent, share, "SYN-ACKs in one period on one CPU: its share");
	CHECK_EQ(refused, 10, "past it: judged, so refused");
	segment(&fr, "198.19.200.1", SPORT, 0, true, ISN, 0, TCP_SYN);
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0 + RL_COOKIES_PERIOD_NS), XDP_TX,
		 "the next period: answered again");
out:
	fixture_close(&f);
}

TEST(cookie_off_and_dry_run)
{
	struct rl_attach_req req;
	struct rl_rule_change off = { .have_cookies = true, .cookies = false };
	struct fixture f;
	struct frame fr;

	if (!fixture_open(&f, NULL) || !cookie_rule(&f))
		goto out;
	if (!fixture_rule(&f, "default", &off))
		goto out;
	segment(&fr, "198.18.0.30", SPORT, 0, true, ISN, 0, TCP_SYN);
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_DROP,
		 "--syn-cookies off: refused as before");
	fixture_close(&f);
	rl_attach_req_defaults(&req);
	req.flags = RL_F_DRY_RUN;
	if (!fixture_open(&f, &req) || !cookie_rule(&f))
		goto out;
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_PASS,
		 "--dry-run: passes, no SYN-ACK");
	CHECK_EQ(fixture_totals(&f).cookies_sent, 0, "none sent in a dry run");
out:
	fixture_close(&f);
}

/* A UDP frame from `src` at `now` is refused (the rule refuses every
 * newcomer), after which the program asks refuse_first() first. */
static bool refusing_after_udp(struct fixture *f, const char *src, __u64 now)
{
	struct frame fr;

	frame_udp(&fr, src, 100, 0);
	return CHECK(fixture_run(f, fr.data, fr.len, 0, now) == XDP_DROP,
		     "%s refused", src) &&
	       CHECK(fixture_refusing(f, now), "refused first at %llu",
		     (unsigned long long)now);
}

/* While the newcomer budget refuses before any per-source lookup, a SYN
 * is still answered with a cookie and the ACK returning it passes. */
TEST(cookie_answered_while_refusing_first)
{
	const char *src = "198.18.0.40";
	__u64 later = T0 + NSEC_S / 10;
	struct frame syn, fr;
	struct synack a;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !cookie_rule(&f) ||
	    !refusing_after_udp(&f, "198.18.9.1", T0))
		goto out;
	segment(&syn, src, SPORT, 0, true, ISN, 0, TCP_SYN);
	fr = syn;
	if (!CHECK_EQ(fixture_run_frame(&f, &fr, 0, T0), XDP_TX, "the SYN answered") ||
	    !read_synack(&syn, &fr, 0, false, &a) ||
	    !refusing_after_udp(&f, "198.18.9.2", later))
		goto out;
	segment(&fr, src, SPORT, 0, false, ISN + 1, a.cookie + 1, TCP_ACK);
	CHECK_EQ(fixture_run_frame(&f, &fr, 0, later), XDP_PASS, "the cookie's ACK passes");
	CHECK(verified(&f, src), "verified by its cookie");
	frame_udp(&fr, src, 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 3, 0, later), 3, "then its packets pass");
out:
	fixture_close(&f);
}

/* The kernel's own SYN cookie (a listener whose SYN queue overflowed
 * answers with one, from no socket, so the egress hook records no SYN-ACK)
 * verifies its source as the program's does, under any rule: the same
 * secret. Here the program's cookie stands in for the kernel's (the same
 * helper makes both); the rule's --syn-cookies is then off, so the ACK
 * meets the usual path, with no SYN-ACK on record (`refusing_first`: the
 * path taken while the newcomer budget refuses first). It passes unmarked
 * (the host's own stack checks it again and opens the connection), and
 * only the right cookie, 4-tuple and address prove. (A cookie whose low
 * bits are off by one or two may still be valid: they hold the MSS's
 * index, so the wrong one here is wrong in its hash.) */
static void kernel_cookie(const char *src, const char *other, int nvlan,
			  bool refusing_first)
{
	struct rl_rule_change off = { .have_cookies = true, .cookies = false };
	bool v6 = strchr(src, ':') != NULL;
	size_t l3 = ETH_HLEN + 4 * (size_t)nvlan;
	struct frame syn, fr, sent;
	struct rl_counters t0;
	struct fixture f;
	struct synack a;

	if (!fixture_open(&f, NULL) || !cookie_rule(&f))
		goto out;
	segment(&syn, src, SPORT, nvlan, true, ISN, 0, TCP_SYN);
	fr = syn;
	if (!CHECK(fixture_run_frame(&f, &fr, 0, T0) == XDP_TX, "%s: a cookie", src) ||
	    !read_synack(&syn, &fr, nvlan, v6, &a) || !fixture_rule(&f, "default", &off))
		goto out;
	/* checked only while the kernel may have cookies out: it sent a
	 * SYN-ACK from no socket in the last RL_KERNEL_COOKIES_NS */
	segment(&fr, src, SPORT, nvlan, false, ISN + 1, a.cookie + 1, TCP_ACK);
	CHECK(fixture_run(&f, fr.data, fr.len, 0, T0 + NSEC_S / 10) == XDP_DROP &&
	      !verified(&f, src), "%s: no kernel cookie out: not checked, refused", src);
	fixture_kernel_cookies(&f, T0 + NSEC_S / 10 + 1);
	t0 = fixture_totals(&f);
	segment(&fr, src, SPORT, nvlan, false, ISN + 1, a.cookie + (1u << 20), TCP_ACK);
	CHECK(fixture_run(&f, fr.data, fr.len, 0, T0 + NSEC_S / 10) == XDP_DROP,
		 "%s: a wrong cookie is refused", src);
	segment(&fr, src, SPORT + 1, nvlan, false, ISN + 1, a.cookie + 1, TCP_ACK);
	CHECK(fixture_run(&f, fr.data, fr.len, 0, T0 + NSEC_S / 10) == XDP_DROP,
		 "%s: another 4-tuple's is refused", src);
	segment(&fr, other, SPORT, nvlan, false, ISN + 1, a.cookie + 1, TCP_ACK);
	CHECK(fixture_run(&f, fr.data, fr.len, 0, T0 + NSEC_S / 10) == XDP_DROP,
		 "%s's cookie replayed from %s is refused", src, other);
	CHECK(!verified(&f, src) && !verified(&f, other), "%s: none of those verifies", src);
	/* while refused before any per-source lookup, the ACK is still
	 * looked at for its proof */
	if (refusing_first && !refusing_after_udp(&f, "198.18.9.1", T0 + NSEC_S / 10))
		goto out;
	segment(&fr, src, SPORT, nvlan, false, ISN + 1, a.cookie + 1, TCP_ACK);
	sent = fr;
	CHECK(fixture_run_frame(&f, &fr, 0, T0 + NSEC_S / 10) == XDP_PASS,
		 "%s: the ACK returning the kernel's cookie passes", src);
	CHECK(!memcmp(fr.data, sent.data, l3 + (v6 ? 40 : 20)),
	      "%s: unmarked: the host's stack takes it, not SYNPROXY", src);
	CHECK(verified(&f, src), "%s verified by the kernel's cookie", src);
	CHECK(fixture_totals(&f).verified_new - t0.verified_new == 1, "%s: counted verified", src);
	CHECK(fixture_totals(&f).cookies_valid - t0.cookies_valid == 0,
		 "%s: not counted as one of the program's cookies", src);
	frame_udp(&fr, src, 100, 0);
	CHECK(fixture_send(&f, &fr, 3, 0, T0 + NSEC_S / 5) == 3,
		 "%s: then its packets pass the newcomer budget", src);
out:
	fixture_close(&f);
}

TEST(kernel_cookie_verifies)
{
	kernel_cookie("198.18.0.50", "198.18.0.51", 0, false);
	kernel_cookie("2001:db8:8::1", "2001:db8:8:1::1", 0, false);
	kernel_cookie("198.18.0.52", "198.18.0.53", 1, false);
	kernel_cookie("198.18.0.54", "198.18.0.55", 0, true);
}

/* In the interface's totals, passed + dropped is every frame the program
 * saw: a SYN answered with a cookie (XDP_TX) is one of them (a drop: it
 * never reaches the host). */
TEST(cookie_answered_syn_in_totals)
{
	struct fixture f;
	struct rl_counters t0, t1;
	struct frame fr;

	if (!fixture_open(&f, NULL) || !cookie_rule(&f))
		goto out;
	t0 = fixture_totals(&f);
	segment(&fr, "198.18.0.9", SPORT, 0, true, ISN, 0, TCP_SYN);
	if (!CHECK_EQ(fixture_run_frame(&f, &fr, 0, T0), XDP_TX, "the SYN answered"))
		goto out;
	t1 = fixture_totals(&f);
	CHECK_EQ((t1.passed_pkts + t1.dropped_pkts) - (t0.passed_pkts + t0.dropped_pkts), 1,
		 "passed + dropped counts the answered SYN");
out:
	fixture_close(&f);
}
