// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Verified sources (xdp-ratelimit(8), "Verified sources"), in the
 * programs: a peer is verified only when its ACK acknowledges the ISN of
 * a SYN-ACK the host's own stack sent on that connection (the egress hook
 * records it, the XDP program checks it), keyed as `sources` keys it
 * (IPv6 per /64, through extension headers); nothing else the host sends
 * verifies (its ACKs, RSTs, SYNs, segments it forwards); verification
 * lapses after --verified-ttl; it survives eviction from `sources`. Bans
 * count only packets within the window the host advertised.
 */
#include <arpa/inet.h>
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

/* The host sends `flags` from HOST to `peer` through the egress hook (a
 * test run's skb has a socket, not a TCP one: as a packet socket's). */
static void host_sends(struct fixture *f, const char *peer, __u8 flags, __u64 now)
{
	struct frame fr;

	frame_tcp(&fr, HOST_ADDR(peer), peer, HOST_PORT, PEER_PORT, flags);
	CHECK_EQ(fixture_egress(f, &fr, 0, now), TC_ACT_UNSPEC,
		 "egress returns TC_ACT_UNSPEC");
}

/* The peer's segment on the tests' connection: `flags`, `seq`, `ack`. */
static int peer_sends(struct fixture *f, const char *peer, __u8 flags, __u32 seq,
		      __u32 ack, __u64 now)
{
	struct frame fr;

	frame_tcp(&fr, peer, HOST_ADDR(peer), PEER_PORT, HOST_PORT, flags);
	frame_tcp_numbers(&fr, seq, ack);
	return fixture_run(f, fr.data, fr.len, 0, now);
}

static int synacks_left(struct fixture *f)
{
	struct rl_flow k, next;
	void *prev = NULL;
	int n = 0;

	while (n < 100 && !bpf_map_get_next_key(f->m.synacks, prev, &next)) {
		k = next;
		prev = &k;
		n++;
	}
	return n;
}

/* Only the peer's ACK of the SYN-ACK's ISN verifies: not the SYN-ACK, nor
 * any other segment the host sends (a test run's socket is no established
 * TCP one: it stands for the request socket's ACK to an out-of-window
 * segment, TIME_WAIT and challenge ACKs), nor an ACK of another number,
 * nor a SYN or RST of the peer that carries the right one. */
/* A rule for every source the tests prove: a source no rule covers is
 * not judged, and not proved either. */
static bool any_rule(struct fixture *f)
{
	struct rl_rule_change c = { .have_pps = true, .pps = 1000 };

	return fixture_rule(f, "198.18.0.0/15", &c) && fixture_rule(f, "2001:db8::/32", &c);
}

TEST(proof_is_the_ack_of_the_isn)
{
	const char *peer = "198.18.0.1";
	struct fixture f;
	struct frame fr;

	if (!fixture_open(&f, NULL) || !any_rule(&f))
		goto out;
	host_sends(&f, peer, TCP_ACK, T0);
	host_sends(&f, peer, TCP_ACK | TCP_FIN, T0);
	host_sends(&f, peer, TCP_RST | TCP_ACK, T0);
	host_sends(&f, peer, TCP_SYN, T0);
	frame_udp(&fr, "198.18.255.1", 100, 0);
	CHECK_EQ(fixture_egress(&f, &fr, 0, T0), TC_ACT_UNSPEC, "UDP passes the hook");
	CHECK_EQ(synacks_left(&f), 0, "no SYN-ACK recorded");
	CHECK(!is_verified(&f, peer), "the host's ACKs, FIN, RST, SYN prove nothing");
	CHECK_EQ(fixture_totals(&f).replies, 0, "none of an established socket");
	CHECK(fixture_synack(&f, peer, 0, T0), "SYN-ACK");
	CHECK_EQ(synacks_left(&f), 1, "the SYN-ACK recorded");
	CHECK(!is_verified(&f, peer), "a SYN-ACK proves nothing");
	CHECK_EQ(peer_sends(&f, peer, TCP_ACK, PEER_ISN + 1, HOST_ISN, T0), XDP_PASS, "ack ISN");
	CHECK_EQ(peer_sends(&f, peer, TCP_ACK, PEER_ISN + 1, HOST_ISN + 2, T0), XDP_PASS,
		 "ack ISN + 2");
	CHECK_EQ(peer_sends(&f, peer, TCP_ACK | TCP_SYN, PEER_ISN + 7, HOST_ISN + 1, T0),
		 XDP_PASS, "a second SYN");
	CHECK_EQ(peer_sends(&f, peer, TCP_ACK | TCP_RST, PEER_ISN + 1, HOST_ISN + 1, T0),
		 XDP_PASS, "RST");
	CHECK(!is_verified(&f, peer), "wrong numbers, a SYN, a RST prove nothing");
	CHECK_EQ(peer_sends(&f, "198.18.0.2", TCP_ACK, PEER_ISN + 1, HOST_ISN + 1, T0),
		 XDP_PASS, "another peer's ACK");
	CHECK(!is_verified(&f, "198.18.0.2"), "another peer: not its SYN-ACK");
	CHECK_EQ(peer_sends(&f, peer, TCP_ACK, PEER_ISN + 1, HOST_ISN + 1, T0), XDP_PASS,
		 "the ACK of ISN + 1");
	CHECK(is_verified(&f, peer), "the ACK of the ISN verifies");
	CHECK_EQ(synacks_left(&f), 0, "the record goes with the proof");
	CHECK(fixture_answer(&f, "2001:db8:5:6:7::9", 0, T0), "IPv6 handshake");
	CHECK(is_verified(&f, "2001:db8:5:6::"), "IPv6: its /64 verified");
	CHECK_EQ(fixture_totals(&f).verified_new, 2, "two sources verified");
	CHECK_EQ(fixture_totals(&f).verified_inserts, 2, "two entries inserted");
out:
	fixture_close(&f);
}

/* An IPv6 handshake to ::ffff:a.b.c.d proves nothing for IPv4 a.b.c.d. */
TEST(proof_not_through_v4_mapped)
{
	const char *mapped = "::ffff:198.18.0.5";
	struct fixture f;

	if (!fixture_open(&f, NULL) || !any_rule(&f))
		goto out;
	CHECK(fixture_synack(&f, mapped, 0, T0), "a SYN-ACK to %s", mapped);
	CHECK(fixture_handshake_ack(&f, mapped, HOST_ISN + 1, 0, T0) >= 0, "its ACK");
	CHECK(!is_verified(&f, "198.18.0.5"), "IPv4 198.18.0.5 not verified");
	CHECK_EQ(synacks_left(&f), 0, "nothing recorded");
	CHECK_EQ(fixture_totals(&f).verified_new, 0, "nothing verified");
out:
	fixture_close(&f);
}

/* A SYN-ACK behind IPv6 extension headers (destination options) is
 * recorded; one in a later fragment cannot be read and is not. */
TEST(proof_through_ipv6_extension_headers)
{
	struct fixture f;
	struct frame fr;
	__u8 *ip6, *ext;

	if (!fixture_open(&f, NULL) || !any_rule(&f))
		goto out;
	for (int later = 0; later < 2; later++) {
		const char *peer = later ? "2001:db8:8::1" : "2001:db8:7::1";

		frame_tcp(&fr, "2001:db8:ffff::1", peer, HOST_PORT, PEER_PORT,
			  TCP_SYN | TCP_ACK);
		frame_tcp_numbers(&fr, HOST_ISN, PEER_ISN + 1);
		ip6 = fr.data + 14;
		memmove(ip6 + 48, ip6 + 40, fr.len - 14 - 40);
		ext = ip6 + 40;
		memset(ext, 0, 8);
		ext[0] = 6;			/* next: TCP */
		if (later)
			ext[3] = 8 << 3;	/* a fragment, offset 8 x 8 bytes */
		ip6[6] = later ? 44 : 60;
		fr.len += 8;
		CHECK_EQ(fixture_egress(&f, &fr, 0, T0), TC_ACT_UNSPEC, "egress");
		CHECK_EQ(fixture_handshake_ack(&f, peer, HOST_ISN + 1, 0, T0), XDP_PASS,
			 "the peer's ACK");
	}
	CHECK(is_verified(&f, "2001:db8:7::"), "through destination options");
	CHECK(!is_verified(&f, "2001:db8:8::"), "a later fragment proves nothing");
out:
	fixture_close(&f);
}

/* The SYN-ACK's window scale is kept with the connection, and a ban
 * counts only the peer's segments within the window the host
 * advertised: from its ack number on, that many bytes. */
TEST(ban_counts_only_the_window)
{
	static const __u8 opts[8] = { 2, 4, 0x05, 0xb4, 1, 3, 3, 7 };
	struct rl_rule_change c = {
		.have_pps = true, .pps = 5,
		.have_ban = true, .ban_ns = 10 * NSEC_S,
	};
	const char *peer = "198.18.0.9";
	struct rl_flow fl = { 0 };
	struct rl_answered a;
	struct rl_key key;
	struct rl_ban b;
	struct fixture f;
	struct frame fr;
	int passed = 0;
	__u8 *l4;

	if (!fixture_open(&f, NULL) || !fixture_rule(&f, "198.18.0.0/15", &c) ||
	    !key_of(peer, &key))
		goto out;
	/* a SYN-ACK with MSS, NOP, window scale 7 */
	frame_tcp(&fr, HOST_ADDR(peer), peer, HOST_PORT, PEER_PORT, TCP_SYN | TCP_ACK);
	frame_tcp_numbers(&fr, HOST_ISN, PEER_ISN + 1);
	l4 = fr.data + ETH_HLEN + 20;
	memcpy(l4 + 20, opts, sizeof(opts));
	l4[12] = 7 << 4;
	fr.data[ETH_HLEN + 3] = 48;	/* IPv4 total length */
	fr.len = ETH_HLEN + 48 > 60 ? ETH_HLEN + 48 : 60;
	CHECK_EQ(fixture_egress(&f, &fr, 0, T0), TC_ACT_UNSPEC, "SYN-ACK");
	CHECK_EQ(peer_sends(&f, peer, TCP_ACK, PEER_ISN + 1, HOST_ISN + 1, T0), XDP_PASS,
		 "the proving ACK");
	memcpy(fl.peer, key.addr, 16);
	memcpy(fl.host, key.addr, 12);
	fl.host[12] = 198, fl.host[13] = 18, fl.host[14] = 255, fl.host[15] = 1;
	fl.peer_port = htons(PEER_PORT);
	fl.host_port = htons(HOST_PORT);
	if (CHECK_EQ(bpf_map_lookup_elem(f.m.answered, &fl, &a), 0, "connection established"))
		CHECK(a.ack == PEER_ISN + 1 && a.win == 65535 && a.wscale == 7,
		      "ack %u win %u wscale %u", a.ack, a.win, a.wscale);
	/* beyond the window: dropped past the quota, never a ban */
	for (int i = 0; i < 20; i++)
		passed += peer_sends(&f, peer, TCP_ACK, 65535 + (__u32)i * 1000, HOST_ISN + 1,
				     T0) == XDP_PASS;
	CHECK_EQ(passed, 4, "the quota's 5 (the proving ACK one of them)");
	CHECK(bpf_map_lookup_elem(f.m.bans, &key, &b) != 0,
	      "segments outside the window ban nobody");
	/* within it: a ban once they alone exceed the quota */
	for (int i = 0; i < 8; i++)
		peer_sends(&f, peer, TCP_ACK, (__u32)i * 1000, HOST_ISN + 1, T0 + 2 * NSEC_S);
	CHECK(bpf_map_lookup_elem(f.m.bans, &key, &b) == 0, "in-window segments ban");
out:
	fixture_close(&f);
}

/* Verification lapses a TTL after the proof; a new proof renews it. */
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
	/* proved a window and a bucket before T0 (fixture_answer) */
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0 + ttl - 2 * W), 5, "verified near the TTL");
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0 + ttl - W), 1,
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
	CHECK_EQ(fixture_evict(&f, &key), 0, "evicted from `sources`");
	frame_udp(&fr, "198.18.0.2", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 1, 0, T0), 1, "a newcomer spends the budget");
	frame_udp(&fr, "198.18.0.1", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0 + 1), 5, "still verified");
out:
	fixture_close(&f);
}
