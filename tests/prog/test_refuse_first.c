// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Refusal before any per-source lookup (bpf/refuse_first.bpf.h) against
 * the full path: one random sequence of packets, sent to two programs
 * alike, one of which never asks refuse_first() (its hint cleared before
 * every packet), gets the same verdict for every packet and the same
 * totals, rule counters and bans (xdp-ratelimit(8), "Refused first": only
 * where a tracked source's drops are counted may differ).
 */
#include <stdio.h>
#include <stdlib.h>
#include <linux/bpf.h>
#include "ratelimit.h"
#include "ratelimit_test.skel.h"
#include "lib/ban_map.h"
#include "../harness.h"
#include "fixture.h"

#define W NSEC_S	/* the default window */

/* What a step sends (one packet judged by the program, but a handshake's
 * SYN-ACK through the egress hook first). */
enum kind {
	SPOOFED,	/* UDP, 198.19.1.0/24: never verified */
	TRACKED,	/* UDP of a source tracked before the budgets, never verified */
	ANSWERED,	/* an ACK of a verified source on its answered connection */
	FORGED,		/* UDP forged with a verified source's address */
	JOINING,	/* the host's SYN-ACK, then the peer's ACK proving it */
	COOKIE_SYN,	/* a SYN under the rule with --syn-cookies */
	COOKIE_UDP,	/* UDP under that rule */
	SPOOFED_V6,	/* UDP of a random /64, under the default rule */
	KINDS
};

/* Each kind's name, and its sources: IPv4 SUBNET.1 to SUBNET.N. */
static const struct pool {
	const char *name, *subnet;
	unsigned n;
} pools[KINDS] = {
	[SPOOFED] = { "spoofed", "198.19.1", 200 },
	[TRACKED] = { "tracked", "198.19.2", 4 },
	[ANSWERED] = { "answered", "198.19.3", 4 },
	[FORGED] = { "forged", "198.19.3", 4 },
	[JOINING] = { "joining", "198.19.4", 60 },
	[COOKIE_SYN] = { "cookie SYN", "198.19.200", 60 },
	[COOKIE_UDP] = { "cookie UDP", "198.19.200", 60 },
	[SPOOFED_V6] = { "spoofed IPv6", NULL, 0 },
};

/* The address of source `i` of `kind`. */
static void address(char *buf, size_t len, enum kind kind, unsigned i)
{
	const struct pool *p = &pools[kind];

	if (p->subnet)
		snprintf(buf, len, "%s.%u", p->subnet, 1 + i % p->n);
	else
		snprintf(buf, len, "2001:db8:%x:%x::", 1 + i % 7, i % 300);
}

/* The same rules on both: the default (both halves) and 198.18.0.0/15
 * with newcomer budgets, the /15 with an aggregate budget and bans too,
 * and 198.19.128.0/17 answering SYNs with cookies; the tracked sources
 * seen before the /15 had its budgets, the verified ones answered. */
static bool setup(struct fixture *f)
{
	struct rl_rule_change plain = { .have_pps = true, .pps = 5 };
	struct rl_rule_change full = {
		.have_pps = true, .pps = 5, .have_new_pps = true, .new_pps = 15,
		.have_agg_pps = true, .agg_pps = 80,
		.have_ban = true, .ban_ns = 10 * NSEC_S,
	};
	struct rl_rule_change cookies = {
		.have_new_pps = true, .new_pps = 5,
		.have_cookies = true, .cookies = true,
	};
	struct rl_rule_change def = { .have_new_pps = true, .new_pps = 10 };
	char addr[64];
	struct frame fr;

	if (!fixture_rule(f, "198.18.0.0/15", &plain))
		return false;
	for (unsigned i = 0; i < 4; i++) {
		address(addr, sizeof(addr), TRACKED, i);
		frame_udp(&fr, addr, 100, 0);
		if (!CHECK(fixture_send(f, &fr, 2, 0, T0) == 2, "%s tracked", addr))
			return false;
		address(addr, sizeof(addr), ANSWERED, i);
		if (!fixture_answer(f, addr, 0, T0 + 2 * W))
			return false;
	}
	return fixture_rule(f, "198.18.0.0/15", &full) &&
	       fixture_rule(f, "198.19.128.0/17", &cookies) &&
	       fixture_rule(f, "default", &def);
}

/* Step `kind` from source `i` at `now` on `f`; `full`: the program never
 * asks refuse_first() (its hint cleared). The verdict of the packet. */
static int step(struct fixture *f, enum kind kind, unsigned i, __u64 now, bool full)
{
	char addr[64];
	struct frame fr;

	address(addr, sizeof(addr), kind, i);
	switch (kind) {
	case ANSWERED:
		frame_tcp(&fr, addr, HOST_ADDR(addr), PEER_PORT, HOST_PORT, TCP_ACK);
		break;
	case JOINING:
		if (!fixture_synack(f, addr, 0, now))
			return -1;
		if (full)
			f->skel->bss->refusing_until = 0;
		return fixture_handshake_ack(f, addr, HOST_ISN + 1, 0, now);
	case COOKIE_SYN:
		frame_tcp(&fr, addr, HOST_ADDR(addr), PEER_PORT + i % 7, HOST_PORT, TCP_SYN);
		break;
	default:
		frame_udp(&fr, addr, 100, 0);
		break;
	}
	if (full)
		f->skel->bss->refusing_until = 0;
	return fixture_run(f, fr.data, fr.len, 0, now);
}

/* Both programs' totals, rule counters and bans are the same. */
static void same_outcome(struct fixture *a, struct fixture *b, __u64 now)
{
	struct rl_counters x = fixture_totals(a), y = fixture_totals(b);
	struct rl_rule_counters *rx = rl_percpu_alloc(sizeof(*rx));
	struct rl_rule_counters *ry = rl_percpu_alloc(sizeof(*ry));

	CHECK_EQ(x.passed_pkts, y.passed_pkts, "passed");
	CHECK_EQ(x.dropped_pkts, y.dropped_pkts, "dropped");
	CHECK_EQ(x.banned_pkts, y.banned_pkts, "banned packets");
	CHECK_EQ(x.cookies_sent, y.cookies_sent, "SYN cookies sent");
	CHECK_EQ(x.verified_new, y.verified_new, "sources verified");
	CHECK_EQ(rl_bans_count(&a->m, now), rl_bans_count(&b->m, now), "bans");
	for (__u32 id = 0; rx && ry && id < RL_MAX_RULES; id++) {
		if (rl_rule_counters_sum(&a->m, id, rx) || rl_rule_counters_sum(&b->m, id, ry))
			break;
		CHECK(rx->passed_pkts == ry->passed_pkts && rx->dropped_pkts == ry->dropped_pkts,
		      "rule %u: passed %llu and %llu, dropped %llu and %llu", id,
		      (unsigned long long)rx->passed_pkts, (unsigned long long)ry->passed_pkts,
		      (unsigned long long)rx->dropped_pkts, (unsigned long long)ry->dropped_pkts);
	}
	free(rx);
	free(ry);
}

TEST(refused_first_same_fates_as_full_path)
{
	int refused_first = 0, verdicts[5] = { 0 }, differ = 0;
	unsigned seed = 20261127;
	struct fixture a, b;
	__u64 now = T0 + 3 * W;

	b.skel = NULL;
	if (!fixture_open(&a, NULL) || !fixture_open(&b, NULL) ||
	    !setup(&a) || !setup(&b))
		goto out;
	fixture_hold(&a);
	fixture_hold(&b);
	for (int n = 0; n < 4000 && differ < 5; n++) {
		/* a flood mostly, the others among it */
		enum kind kind = rand_r(&seed) % 3 ?
				 (enum kind)(rand_r(&seed) % 2 ? SPOOFED_V6 : SPOOFED) :
				 (enum kind)(rand_r(&seed) % KINDS);
		unsigned i = (unsigned)rand_r(&seed);
		int va, vb;

		now += (__u64)(rand_r(&seed) % 4) * (W / 1000);
		refused_first += fixture_refusing(&a, now);
		va = step(&a, kind, i, now, false);
		vb = step(&b, kind, i, now, true);
		if (va >= 0 && va < 5)
			verdicts[va]++;
		if (!CHECK(va == vb, "step %d (%s, source %u, at %llu ns): verdicts %d and %d",
			   n, pools[kind].name, i, (unsigned long long)(now - T0), va, vb))
			differ++;
	}
	same_outcome(&a, &b, now);
	/* the test can fail: the flood was refused first, and each verdict came */
	CHECK_GE(refused_first, 1000, "packets sent while refusing first");
	CHECK_GE(verdicts[XDP_DROP], 1000, "drops");
	CHECK_GE(verdicts[XDP_PASS], 300, "passes");
	CHECK_GE(verdicts[XDP_TX], 10, "SYN cookies");
	CHECK_GE(fixture_totals(&a).banned_pkts, 1, "bans");
out:
	if (b.skel)
		fixture_close(&b);
	fixture_close(&a);
}
