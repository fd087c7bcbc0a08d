// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What the parser makes of each kind of frame, and what it counts. */
#include <arpa/inet.h>
#include <stddef.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include "ratelimit.h"
#include "../harness.h"
#include "fixture.h"

/* A fixture where every source may pass 1 frame per window, so whether a
 * frame was judged as the expected source shows in the verdicts. */
static bool open_limited(struct fixture *f, __u32 flags)
{
	struct rl_attach_req req;

	rl_attach_req_defaults(&req);
	req.flags = flags;
	return fixture_open(f, &req) &&
	       fixture_pps(f, "default", 1);
}

/* The verdict on one UDP frame of `len` bytes from `src` behind `nvlan`
 * tags, run on CPU 0 at T0. */
static int udp_verdict(struct fixture *f, const char *src, size_t len, int nvlan)
{
	struct frame fr;

	frame_udp(&fr, src, len, nvlan);
	return fixture_run(f, fr.data, fr.len, 0, T0);
}

static void check_totals(struct fixture *f, __u64 passed, __u64 dropped,
			 __u64 malformed, __u64 non_ip, const char *what)
{
	struct rl_counters c = fixture_totals(f);

	CHECK(c.passed_pkts == passed, "%s: passed %llu, want %llu", what,
	      (unsigned long long)c.passed_pkts, (unsigned long long)passed);
	CHECK(c.dropped_pkts == dropped, "%s: dropped %llu, want %llu", what,
	      (unsigned long long)c.dropped_pkts, (unsigned long long)dropped);
	CHECK(c.malformed_pkts == malformed, "%s: malformed %llu, want %llu", what,
	      (unsigned long long)c.malformed_pkts, (unsigned long long)malformed);
	CHECK(c.non_ip_pkts == non_ip, "%s: non_ip %llu, want %llu", what,
	      (unsigned long long)c.non_ip_pkts, (unsigned long long)non_ip);
}

TEST(vlan_tags)
{
	struct fixture f;
	struct rl_source_sum s;

	if (!open_limited(&f, 0))
		goto out;
	for (int nvlan = 0; nvlan <= 2; nvlan++)
		CHECK_EQ(udp_verdict(&f, "198.18.0.1", 100, nvlan), nvlan ? XDP_DROP : XDP_PASS,
			 "same source behind 0, 1 or 2 tags");
	CHECK_EQ(udp_verdict(&f, "2001:db8::1", 100, 2), XDP_PASS, "IPv6 in QinQ");
	CHECK_EQ(udp_verdict(&f, "2001:db8::1", 100, 2), XDP_DROP, "same IPv6 source");
	if (fixture_source(&f, "198.18.0.1", T0, &s)) {
		CHECK_EQ(s.passed_pkts, 1, "v4 passed");
		CHECK_EQ(s.dropped_pkts, 2, "v4 dropped");
	}
	check_totals(&f, 2, 3, 0, 0, "vlan");
out:
	fixture_close(&f);
}

/* IP in an encapsulation the parser does not read (a third tag, PPPoE
 * session, MPLS) cannot be judged: adding a tag must not dodge a rule. It
 * is counted as encap_packets and dropped, or passed with --pass-malformed;
 * it never makes a source. */
static void encapsulations(__u32 flags)
{
	static const __u8 mpls[] = { 0x00, 0x06, 0x41, 0x40 };	/* label 100, S */
	static const __u8 pppoe[] = { 0x11, 0x00, 0x00, 0x01, 0x00, 0x52, 0x00, 0x21 };
	bool pass = flags & RL_F_PASS_MALFORMED;
	struct fixture f;
	struct frame fr;
	__u64 n;

	if (!open_limited(&f, flags))
		goto out;
	frame_udp(&fr, "198.18.0.1", 100, 3);
	CHECK_EQ(fixture_send(&f, &fr, 3, 0, T0), pass ? 3 : 0, "a third VLAN tag");
	frame_encap(&fr, "198.18.0.1", ETH_P_MPLS_UC, mpls, sizeof(mpls));
	CHECK_EQ(fixture_send(&f, &fr, 3, 0, T0), pass ? 3 : 0, "MPLS");
	frame_encap(&fr, "2001:db8::1", ETH_P_MPLS_MC, mpls, sizeof(mpls));
	CHECK_EQ(fixture_send(&f, &fr, 3, 0, T0), pass ? 3 : 0, "MPLS multicast");
	frame_encap(&fr, "198.18.0.1", ETH_P_PPP_SES, pppoe, sizeof(pppoe));
	CHECK_EQ(fixture_send(&f, &fr, 3, 0, T0), pass ? 3 : 0, "PPPoE session");
	n = 12;
	check_totals(&f, pass ? n : 0, pass ? 0 : n, 0, 0, "encapsulations");
	CHECK_EQ(fixture_totals(&f).encap_pkts, n, "counted as encap_packets");
	CHECK_EQ(fixture_totals(&f).new_sources, 0, "no source made");
	/* the source itself, bare, still has its whole quota */
	frame_udp(&fr, "198.18.0.1", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 2, 0, T0), 1, "bare: judged by its quota");
out:
	fixture_close(&f);
}

TEST(encapsulations_dropped_counted)
{
	encapsulations(0);
}

TEST(encapsulations_pass_malformed)
{
	encapsulations(RL_F_PASS_MALFORMED);
}

TEST(arp_is_non_ip)
{
	struct fixture f;
	struct frame fr;

	if (!open_limited(&f, 0))
		goto out;
	frame_arp(&fr);
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0), 5, "ARP passes");
	check_totals(&f, 5, 0, 0, 5, "arp");
	CHECK_EQ(fixture_totals(&f).new_sources, 0, "ARP is not a source");
out:
	fixture_close(&f);
}

/* Every truncation short of the end of the IP header is malformed. */
static void truncations(struct fixture *f, const char *src, int nvlan,
			size_t hdr_end, __u64 *count)
{
	struct frame fr;

	frame_udp(&fr, src, 100, nvlan);
	/* BPF_PROG_TEST_RUN refuses XDP frames shorter than an Ethernet header */
	for (size_t len = ETH_HLEN; len < hdr_end; len++) {
		CHECK(fixture_run(f, fr.data, len, 0, T0) == XDP_DROP,
		      "%s behind %d tags cut at %zu bytes drops", src, nvlan, len);
		(*count)++;
	}
	/* the whole header (and nothing after it) is a well-formed frame */
	CHECK(fixture_run(f, fr.data, hdr_end, 0, T0) == XDP_PASS,
	      "%s cut at %zu bytes (end of header) passes", src, hdr_end);
}

TEST(truncated_frames_are_malformed)
{
	struct fixture f;
	__u64 n = 0;

	if (!open_limited(&f, 0))
		goto out;
	truncations(&f, "198.18.0.1", 0, 14 + 20, &n);
	truncations(&f, "198.18.0.2", 1, 18 + 20, &n);
	truncations(&f, "198.18.0.3", 2, 22 + 20, &n);
	truncations(&f, "2001:db8::1", 0, 14 + 40, &n);
	truncations(&f, "2001:db8:1::1", 2, 22 + 40, &n);
	check_totals(&f, 5, n, n, 0, "truncations");
out:
	fixture_close(&f);
}

TEST(bad_ip_headers_are_malformed)
{
	struct fixture f;
	struct frame fr;
	struct iphdr *ip;
	struct ipv6hdr *ip6;

	if (!open_limited(&f, 0))
		goto out;
	frame_udp(&fr, "198.18.0.1", 100, 0);
	ip = (struct iphdr *)(fr.data + 14);
	ip->version = 6;	/* v6 version in an IPv4 EtherType */
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_DROP, "IPv4 version 6");
	ip->version = 4;
	ip->ihl = 4;
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_DROP, "IHL 4");
	ip->ihl = 15;		/* 60 bytes of header in a 34-byte frame */
	CHECK_EQ(fixture_run(&f, fr.data, 14 + 40, 0, T0), XDP_DROP, "IHL past the end");
	CHECK_EQ(fixture_run(&f, fr.data, 14 + 60, 0, T0), XDP_PASS, "IHL 15 with options");
	frame_udp(&fr, "2001:db8::1", 100, 0);
	ip6 = (struct ipv6hdr *)(fr.data + 14);
	ip6->version = 4;
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_DROP, "IPv6 version 4");
	check_totals(&f, 1, 4, 4, 0, "bad headers");
	CHECK_EQ(fixture_totals(&f).new_sources, 1, "malformed frames are no source");
out:
	fixture_close(&f);
}

TEST(pass_malformed_option)
{
	struct fixture f;
	struct frame fr;

	if (!open_limited(&f, RL_F_PASS_MALFORMED))
		goto out;
	frame_udp(&fr, "198.18.0.1", 100, 0);
	CHECK_EQ(fixture_run(&f, fr.data, 20, 0, T0), XDP_PASS, "truncated passes");
	CHECK_EQ(fixture_run(&f, fr.data, 16, 0, T0), XDP_PASS, "runt passes");
	check_totals(&f, 2, 0, 2, 0, "pass-malformed");
out:
	fixture_close(&f);
}

TEST(ipv4_fragments_judged_by_source)
{
	struct fixture f;
	struct frame first, later;
	struct iphdr *ip;

	if (!open_limited(&f, 0))
		goto out;
	frame_udp(&first, "198.18.0.1", 100, 0);
	ip = (struct iphdr *)(first.data + 14);
	ip->frag_off = htons(0x2000);		/* MF, offset 0 */
	frame_udp(&later, "198.18.0.1", 100, 0);
	ip = (struct iphdr *)(later.data + 14);
	ip->frag_off = htons(185);		/* offset 1480, last */
	ip->protocol = 0;			/* no L4 header here */
	CHECK_EQ(fixture_run(&f, first.data, first.len, 0, T0), XDP_PASS, "first fragment");
	CHECK_EQ(fixture_run(&f, later.data, later.len, 0, T0), XDP_DROP,
		 "later fragment counts for the same source");
	check_totals(&f, 1, 1, 0, 0, "fragments");
out:
	fixture_close(&f);
}

TEST(ipv6_extension_headers_and_prefix)
{
	struct fixture f;
	struct frame fr;
	struct ipv6hdr *ip6;
	struct rl_source_sum s;

	if (!open_limited(&f, 0))
		goto out;
	/* hop-by-hop then fragment header: the source is where it always is */
	frame_udp(&fr, "2001:db8:1:2::1", 120, 0);
	ip6 = (struct ipv6hdr *)(fr.data + 14);
	ip6->nexthdr = 0;			/* hop-by-hop */
	fr.data[54] = 44;			/* next: fragment */
	fr.data[55] = 0;
	fr.data[62] = 17;			/* fragment header: next UDP */
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_PASS, "ext headers");
	/* another host in the same /64 shares its window */
	CHECK_EQ(udp_verdict(&f, "2001:db8:1:2:ffff::9", 80, 0), XDP_DROP, "same /64");
	CHECK_EQ(udp_verdict(&f, "2001:db8:1:3::1", 80, 0), XDP_PASS, "next /64");
	if (fixture_source(&f, "2001:db8:1:2::", T0, &s)) {
		CHECK_EQ(s.passed_pkts, 1, "/64 passed");
		CHECK_EQ(s.dropped_pkts, 1, "/64 dropped");
	}
	CHECK_EQ(fixture_totals(&f).new_sources, 2, "two /64s tracked");
out:
	fixture_close(&f);
}

TEST(ipv6_prefix_setting)
{
	struct rl_attach_req req;
	struct fixture f;

	rl_attach_req_defaults(&req);
	req.v6_prefix = 128;
	if (!fixture_open(&f, &req) ||
	    !fixture_pps(&f, "default", 1))
		goto out;
	CHECK_EQ(udp_verdict(&f, "2001:db8:1:2::1", 80, 0), XDP_PASS, "host 1");
	CHECK_EQ(udp_verdict(&f, "2001:db8:1:2::2", 80, 0), XDP_PASS, "host 2 apart at /128");
	CHECK_EQ(fixture_totals(&f).new_sources, 2, "two /128s");
out:
	fixture_close(&f);
}

TEST(minimal_and_jumbo_frames)
{
	struct fixture f;
	struct rl_source_sum s;

	if (!open_limited(&f, 0))
		goto out;
	if (!fixture_quota(&f, "default", RL_UNLIMITED, 2000, RL_UNLIMITED, RL_UNLIMITED))
		goto out;
	/* a bare IPv4 header */
	CHECK_EQ(udp_verdict(&f, "198.18.0.1", 34, 0), XDP_PASS, "34-byte frame");
	CHECK_EQ(udp_verdict(&f, "198.18.0.1", FRAME_MAX, 0), XDP_DROP, "2048 > 2000-34");
	if (fixture_source(&f, "198.18.0.1", T0, &s))
		CHECK_EQ(s.dropped_bytes, FRAME_MAX, "bytes are the frame length");
out:
	fixture_close(&f);
}
