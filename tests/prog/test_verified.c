// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Verified sources (xdp-ratelimit(8), "Verified sources"), in the
 * programs: the egress hook marks a peer verified only for a TCP segment
 * the host sends that is neither SYN nor RST, keyed as `sources` keys it
 * (IPv6 per /64, through extension headers); verification lapses after
 * --verified-ttl; it survives eviction from `sources`.
 */
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "lib/ban_map.h"
#include "../harness.h"
#include "fixture.h"

#define W NSEC_S

static bool key_of(const char *addr, struct rl_key *key)
{
	char err[RL_ERR_LEN];

	return CHECK(rl_ban_key(addr, RL_DEFAULT_V6_PREFIX, key, err, sizeof(err)) == 0,
		     "key of %s: %s", addr, err);
}

static bool is_verified(struct fixture *f, const char *addr)
{
	struct rl_verified v;
	struct rl_key key;

	return key_of(addr, &key) && !bpf_map_lookup_elem(f->m.verified, &key, &v);
}

/* The host sends `flags` from HOST to `peer` through the egress hook. */
static void host_sends(struct fixture *f, const char *peer, __u8 flags, __u64 now)
{
	struct frame fr;

	frame_tcp(&fr, HOST_ADDR(peer), peer, HOST_PORT, PEER_PORT, flags);
	CHECK_EQ(fixture_egress(f, &fr, 0, now), 0, "egress returns TC_ACT_OK");
}

TEST(egress_marks_only_answers)
{
	struct fixture f;
	struct frame fr;

	if (!fixture_open(&f, NULL))
		goto out;
	host_sends(&f, "198.18.0.1", TCP_SYN | TCP_ACK, T0);
	CHECK(!is_verified(&f, "198.18.0.1"), "a SYN-ACK proves nothing");
	host_sends(&f, "198.18.0.1", TCP_RST | TCP_ACK, T0);
	CHECK(!is_verified(&f, "198.18.0.1"), "nor a RST");
	host_sends(&f, "198.18.0.1", TCP_SYN, T0);
	CHECK(!is_verified(&f, "198.18.0.1"), "nor the host's own SYN");
	frame_udp(&fr, "198.18.255.1", 100, 0);
	CHECK_EQ(fixture_egress(&f, &fr, 0, T0), 0, "UDP passes the hook");
	CHECK_EQ(fixture_totals(&f).replies, 0, "no answer seen yet");
	host_sends(&f, "198.18.0.1", TCP_ACK, T0);
	CHECK(is_verified(&f, "198.18.0.1"), "an ACK past the handshake verifies");
	host_sends(&f, "198.18.0.2", TCP_ACK | TCP_FIN, T0);
	CHECK(is_verified(&f, "198.18.0.2"), "a FIN too");
	host_sends(&f, "2001:db8:5:6:7::9", TCP_ACK, T0);
	CHECK(is_verified(&f, "2001:db8:5:6::"), "IPv6: its /64 verified");
	CHECK_EQ(fixture_totals(&f).replies, 3, "three answers seen");
	CHECK_EQ(fixture_totals(&f).verified_new, 3, "three sources verified");
out:
	fixture_close(&f);
}

/* IPv6 answers behind extension headers (destination options, routing)
 * verify as well; a later fragment cannot be read and proves nothing. */
TEST(egress_ipv6_extension_headers)
{
	struct fixture f;
	struct frame fr;
	__u8 *ip6, *ext;

	if (!fixture_open(&f, NULL))
		goto out;
	frame_tcp(&fr, "2001:db8:ffff::1", "2001:db8:7::1", HOST_PORT, PEER_PORT, TCP_ACK);
	/* insert 8 bytes of destination options (60) before TCP */
	ip6 = fr.data + 14;
	memmove(ip6 + 48, ip6 + 40, fr.len - 14 - 40);
	ext = ip6 + 40;
	memset(ext, 0, 8);
	ext[0] = 6;		/* next: TCP */
	ext[1] = 0;		/* 8 bytes */
	ip6[6] = 60;
	fr.len += 8;
	CHECK_EQ(fixture_egress(&f, &fr, 0, T0), 0, "egress");
	CHECK(is_verified(&f, "2001:db8:7::"), "through destination options");
	/* a fragment header with a non-zero offset: not readable */
	frame_tcp(&fr, "2001:db8:ffff::1", "2001:db8:8::1", HOST_PORT, PEER_PORT, TCP_ACK);
	ip6 = fr.data + 14;
	memmove(ip6 + 48, ip6 + 40, fr.len - 14 - 40);
	ext = ip6 + 40;
	memset(ext, 0, 8);
	ext[0] = 6;
	ext[3] = 8 << 3;	/* offset 8 x 8 bytes */
	ip6[6] = 44;
	fr.len += 8;
	CHECK_EQ(fixture_egress(&f, &fr, 0, T0), 0, "egress");
	CHECK(!is_verified(&f, "2001:db8:8::"), "a later fragment verifies nothing");
out:
	fixture_close(&f);
}

/* Verification lapses a TTL after the last answer; an answer renews it. */
TEST(verified_ttl_expiry)
{
	struct rl_attach_req req;
	struct rl_rule_change c = {
		.have_pps = true, .pps = 100,
		.have_new_pps = true, .new_pps = 1,
	};
	struct fixture f;
	struct frame fr;
	__u64 ttl = 60 * NSEC_S;

	rl_attach_req_defaults(&req);
	req.verified_ttl_ns = ttl;
	if (!fixture_open(&f, &req) || !fixture_rule(&f, "198.18.0.0/15", &c))
		goto out;
	frame_udp(&fr, "198.18.0.1", 100, 0);
	CHECK(fixture_answer(&f, "198.18.0.1", 0, T0), "answered");
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0 + ttl - W), 5, "verified near the TTL");
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0 + ttl), 1,
		 "a TTL on: new again, the newcomer budget's one");
	CHECK(fixture_answer(&f, "198.18.0.1", 0, T0 + ttl + W), "answered again");
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0 + ttl + W), 5, "verified again");
out:
	fixture_close(&f);
}

/* A verified source evicted from `sources` (a full table) is still
 * verified: its next packet is not judged as a newcomer. */
TEST(verified_survives_eviction)
{
	struct rl_rule_change c = {
		.have_pps = true, .pps = 100,
		.have_new_pps = true, .new_pps = 1,
	};
	struct rl_key key;
	struct fixture f;
	struct frame fr;

	if (!fixture_open(&f, NULL) || !fixture_rule(&f, "198.18.0.0/15", &c) ||
	    !key_of("198.18.0.1", &key))
		goto out;
	CHECK(fixture_answer(&f, "198.18.0.1", 0, T0), "answered");
	frame_udp(&fr, "198.18.0.1", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0), 5, "verified");
	CHECK_EQ(bpf_map_delete_elem(f.m.sources, &key), 0, "evicted from `sources`");
	frame_udp(&fr, "198.18.0.2", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 1, 0, T0), 1, "a newcomer spends the budget");
	frame_udp(&fr, "198.18.0.1", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0 + 1), 5, "still verified");
out:
	fixture_close(&f);
}
