// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The newcomer budget, verified sources and the default rule as one rule
 * (xdp-ratelimit(8), "Newcomer budget", "Verified sources", "Rules"), in
 * the program: refusals take no entry, a source the host answered (the
 * egress hook) never consults the budget on any CPU, however long an
 * unanswered one has been seen it stays new, and IPv4 and IPv6 share the
 * default rule's budgets.
 */
#include <stdio.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "lib/ban_map.h"
#include "lib/source_table.h"
#include "../harness.h"
#include "fixture.h"

#define W NSEC_S	/* the default window */

/* Entries of `newcomers` (a hash; `sources`: fixture_tracked()). */
static int count_entries(int map_fd)
{
	struct rl_key k, next;
	int n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(map_fd, prev, &next)) {
		k = next;
		prev = &k;
		n++;
	}
	return n;
}

/* `n` frames of 64 bytes from `addr` on `cpu` at `now`; how many passed. */
static int pass_count(struct fixture *f, const char *addr, int n, int cpu,
		      __u64 now)
{
	struct frame fr;

	frame_udp(&fr, addr, 64, 0);
	return fixture_send(f, &fr, n, cpu, now);
}

/* One frame from each of `n` sources 198.18.NET.1.. on `cpu`; passed. */
static int newcomers(struct fixture *f, int net, int n, int cpu, __u64 now)
{
	char addr[32];
	int passed = 0;

	for (int i = 0; i < n; i++) {
		snprintf(addr, sizeof(addr), "198.18.%d.%d", net + i / 250, 1 + i % 250);
		passed += pass_count(f, addr, 1, cpu, now);
	}
	return passed;
}

/* 198.18.0.0/15: 100 pps per source, 10 newcomer packets per window. */
static bool newcomer_rule(struct fixture *f, __u64 new_pps)
{
	struct rl_rule_change c = {
		.have_pps = true, .pps = 100,
		.have_new_pps = true, .new_pps = new_pps,
	};

	return fixture_rule(f, "198.18.0.0/15", &c);
}

TEST(newcomer_refusals_take_no_entry)
{
	struct rl_source_top top = {};
	struct rl_counters c;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !newcomer_rule(&f, 10))
		goto out;
	CHECK_EQ(newcomers(&f, 1, 10, 0, T0), 10, "the budget's worth of newcomers pass");
	CHECK_EQ(newcomers(&f, 10, 500, 0, T0), 0, "the rest of the flood is refused");
	c = fixture_totals(&f);
	CHECK_EQ(c.new_sources, 10, "only passed newcomers took an entry");
	CHECK_EQ(c.dropped_pkts, 500, "refusals dropped and counted");
	if (!CHECK_EQ(rl_source_top_read(&f.m, &f.s, 0, T0, 0, &top), 0, "read"))
		goto out;
	CHECK_EQ(top.tracked, 10, "the table holds the ten");
	CHECK_GE(top.refused_only, 1, "refusals counted in `refused`");
	/* the next window lets the next ten in */
	CHECK_EQ(newcomers(&f, 20, 15, 0, T0 + W), 10, "next window: the budget again");
out:
	rl_source_top_free(&top);
	fixture_close(&f);
}

TEST(newcomer_verified_pass_while_exhausted)
{
	const char *client = "198.19.0.1", *lurker = "198.19.0.2";
	struct rl_counters c;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !newcomer_rule(&f, 10))
		goto out;
	CHECK_EQ(pass_count(&f, client, 1, 0, T0), 1, "first packet: a newcomer");
	CHECK_EQ(pass_count(&f, lurker, 1, 0, T0), 1, "another newcomer");
	CHECK(fixture_answer(&f, client, 0, T0 + 1), "the host answers the client");
	/* a flood exhausts the newcomer budget ten windows later */
	CHECK_EQ(newcomers(&f, 1, 300, 0, T0 + 10 * W), 10, "flood: the budget");
	CHECK_EQ(pass_count(&f, client, 50, 0, T0 + 10 * W), 50,
		 "verified: its own quota only");
	CHECK_EQ(pass_count(&f, lurker, 5, 0, T0 + 10 * W), 0,
		 "seen for ten windows, never answered: still new, refused");
	c = fixture_totals(&f);
	CHECK_EQ(c.verified_new, 1, "one source verified");
out:
	fixture_close(&f);
}

/* A source the host answered on one CPU is verified on every CPU. */
TEST(newcomer_verified_on_every_cpu)
{
	const char *src = "198.19.0.1";
	int ncpus = rl_ncpus();
	struct fixture f;

	if (!fixture_open(&f, NULL) || !newcomer_rule(&f, 3))
		goto out;
	if (!CHECK_GE(ncpus, 2, "this test needs 2 CPUs or more"))
		goto out;
	CHECK_EQ(pass_count(&f, src, 1, 0, T0), 1, "tracked on CPU 0");
	CHECK_EQ(newcomers(&f, 1, 50, 1, T0 + 1), 2, "budget exhausted on CPU 1");
	CHECK_EQ(pass_count(&f, src, 1, 1, T0 + 2), 0, "on CPU 1, new: refused");
	CHECK(fixture_answer(&f, src, 0, T0 + 3), "answered on CPU 0");
	for (int cpu = 0; cpu < ncpus; cpu++)
		CHECK(pass_count(&f, src, 5, cpu, T0 + 4) == 5,
		      "verified on CPU %d", cpu);
out:
	fixture_close(&f);
}

/* Verified sources never count toward the newcomer window. */
TEST(newcomer_verified_not_counted)
{
	struct fixture f;

	if (!fixture_open(&f, NULL) || !newcomer_rule(&f, 5))
		goto out;
	CHECK(fixture_answer(&f, "198.19.0.1", 0, T0), "answered");
	CHECK_EQ(pass_count(&f, "198.19.0.1", 90, 0, T0), 90, "verified, 90 packets");
	CHECK_EQ(newcomers(&f, 1, 20, 0, T0), 5,
		 "the newcomer budget is whole for newcomers");
out:
	fixture_close(&f);
}

/* The attack of the issue: SYNs from a pool of spoofed addresses, looped
 * for many windows, never earn anything: each window passes at most the
 * newcomer budget, no address becomes verified, and none takes a
 * `sources` entry. */
TEST(newcomer_forged_syn_pool_never_verified)
{
	struct rl_counters c;
	struct frame fr;
	char addr[32];
	int worst = 0;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !newcomer_rule(&f, 20))
		goto out;
	for (int w = 0; w < 12; w++) {
		int passed = 0;

		for (int i = 0; i < 200; i++) {
			snprintf(addr, sizeof(addr), "198.18.1.%d", 1 + i % 100);
			frame_tcp(&fr, addr, "198.18.255.1", 1024 + i, 80, TCP_SYN);
			passed += fixture_send(&f, &fr, 1, w % 2 % rl_ncpus(),
					       T0 + (__u64)w * W + (__u64)i * (W / 200));
		}
		if (passed > worst)
			worst = passed;
	}
	CHECK(worst <= 20, "at most the newcomer budget each window (%d)", worst);
	CHECK(worst >= 19, "and the budget is used (%d)", worst);
	c = fixture_totals(&f);
	CHECK_EQ(c.verified_new, 0, "no address verified");
	CHECK_EQ(fixture_tracked(&f), 0, "no `sources` entry for a forged address");
	CHECK_GE(count_entries(f.m.newcomers), 20, "admitted ones in `newcomers`");
out:
	fixture_close(&f);
}

/* the default is one rule; its aggregate and newcomer budgets are one
 * window for IPv4 and IPv6 together. */
/*
 * The halves of the default set apart: IPv4's aggregate budget is 10, IPv6's
 * 1000. A lease taken under one half's budget must never be spent by the
 * other's packets (a review's model: the shared window let IPv4 pass up to
 * 959 per window, and IPv6 lose 95% of its own 1000).
 */
TEST(default_halves_apart_keep_their_budgets)
{
	struct rl_rule_change c4 = { .have_agg_pps = true, .agg_pps = 10 };
	struct rl_rule_change c6 = { .have_agg_pps = true, .agg_pps = 1000 };
	char addr[64];
	int v4 = 0, v6 = 0;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !fixture_rule(&f, "0.0.0.0/0", &c4) ||
	    !fixture_rule(&f, "::/0", &c6))
		goto out;
	/* IPv6 first takes a lease sized for 1000, then both interleave */
	for (int i = 1; i <= 200; i++) {
		snprintf(addr, sizeof(addr), "2001:db8:0:%x::", i);
		v6 += pass_count(&f, addr, 1, 0, T0);
		snprintf(addr, sizeof(addr), "198.18.%d.%d", i / 250, i % 250 + 1);
		v4 += pass_count(&f, addr, 1, 0, T0);
	}
	CHECK_EQ(v4, 10, "IPv4 half: its own aggregate budget");
	CHECK_EQ(v6, 200, "IPv6 half: within its own budget, nothing lost");
	/* and the other way round, on the other CPU, a window later */
	v4 = v6 = 0;
	for (int i = 1; i <= 200; i++) {
		snprintf(addr, sizeof(addr), "198.18.%d.%d", 2 + i / 250, i % 250 + 1);
		v4 += pass_count(&f, addr, 1, 1, T0 + 2 * W);
		snprintf(addr, sizeof(addr), "2001:db8:1:%x::", i);
		v6 += pass_count(&f, addr, 1, 1, T0 + 2 * W);
	}
	CHECK_EQ(v4, 10, "IPv4 half, IPv4 first");
	CHECK_EQ(v6, 200, "IPv6 half, IPv4 first");
out:
	fixture_close(&f);
}

TEST(default_budgets_shared_by_both_families)
{
	struct rl_rule_change c = {
		.have_pps = true, .pps = 100,
		.have_agg_pps = true, .agg_pps = 10,
	};
	char addr[64];
	int v4 = 0, v6 = 0;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !fixture_rule(&f, "default", &c))
		goto out;
	for (int i = 1; i <= 20; i++) {
		snprintf(addr, sizeof(addr), "198.18.0.%d", i);
		v4 += pass_count(&f, addr, 1, 0, T0);
		snprintf(addr, sizeof(addr), "2001:db8:0:%x::", i);
		v6 += pass_count(&f, addr, 1, 0, T0);
	}
	CHECK_EQ(v4 + v6, 10, "aggregate: one budget for both families");
	CHECK(v4 == 5 && v6 == 5, "interleaved, each family got half: v4 %d, v6 %d", v4, v6);

	/* the same for the newcomer budget, the aggregate lifted */
	c = (struct rl_rule_change){
		.have_agg_pps = true, .agg_pps = RL_UNLIMITED,
		.have_new_pps = true, .new_pps = 6,
	};
	if (!fixture_rule(&f, "default", &c))
		goto out;
	v4 = v6 = 0;
	for (int i = 1; i <= 20; i++) {
		snprintf(addr, sizeof(addr), "198.18.1.%d", i);
		v4 += pass_count(&f, addr, 1, 0, T0 + 5 * W);
		snprintf(addr, sizeof(addr), "2001:db8:1:%x::", i);
		v6 += pass_count(&f, addr, 1, 0, T0 + 5 * W);
	}
	CHECK_EQ(v4 + v6, 6, "newcomer budget: one for both families");
	/* a rule of its own keeps windows of its own */
	c = (struct rl_rule_change){ .have_pps = true, .pps = 100,
				     .have_new_pps = true, .new_pps = 2 };
	if (!fixture_rule(&f, "2001:db8:2::/48", &c))
		goto out;
	v6 = 0;
	for (int i = 1; i <= 5; i++) {
		snprintf(addr, sizeof(addr), "2001:db8:2:%x::", i);
		v6 += pass_count(&f, addr, 1, 0, T0 + 5 * W);
	}
	CHECK_EQ(v6, 2, "another rule's newcomer window is its own");
out:
	fixture_close(&f);
}

/*
 * Refusal before the source is looked up (bpf/refuse_first.bpf.h): while
 * the newcomer budget refuses, a source never verified here is refused
 * without its entry, so a tracked one's drops count in `refused`, not in
 * its entry; the next window, with room again, it passes as before.
 */
TEST(newcomer_refused_first_counts_in_refused)
{
	const char *tracked = "198.19.0.9";
	struct rl_counters before, after;
	struct rl_rule_change plain = { .have_pps = true, .pps = 100 };
	struct fixture f;

	if (!fixture_open(&f, NULL) || !fixture_rule(&f, "198.18.0.0/15", &plain))
		goto out;
	CHECK_EQ(pass_count(&f, tracked, 3, 0, T0), 3, "tracked before the budget");
	if (!newcomer_rule(&f, 10))
		goto out;
	CHECK(!fixture_refusing(&f, T0 + 10 * W), "no refusal yet: the usual path");
	CHECK_EQ(newcomers(&f, 1, 100, 0, T0 + 10 * W), 10, "flood: the budget");
	CHECK(fixture_refusing(&f, T0 + 10 * W), "the budget refuses: asked first");
	before = fixture_totals(&f);
	CHECK_EQ(pass_count(&f, tracked, 5, 0, T0 + 10 * W), 0, "never verified: refused");
	after = fixture_totals(&f);
	CHECK_EQ(after.dropped_pkts - before.dropped_pkts, 5, "dropped in the totals");
	CHECK_EQ(fixture_refused(&f, tracked), 5, "counted in `refused`");
	CHECK_SOURCE(&f, tracked, T0 + 10 * W, 3, 0, 0, "its entry untouched");
	CHECK(!fixture_refusing(&f, T0 + 12 * W), "two windows on: the hint is over");
	CHECK_EQ(pass_count(&f, tracked, 2, 0, T0 + 12 * W), 2, "room again: it passes");
	CHECK_SOURCE(&f, tracked, T0 + 12 * W, 5, 0, 2, "in its entry again");
out:
	fixture_close(&f);
}

/*
 * While the budget refuses first: a verified source passes, tracked or
 * not (the Bloom filter's "maybe" read in `verified`), and so does a
 * client completing its handshake (the ACK that proves it), and what it
 * sends next; a spoofed source is refused.
 */
TEST(newcomer_refused_first_keeps_real_clients)
{
	const char *tracked = "198.19.0.1", *untracked = "198.19.0.2";
	const char *joining = "198.19.0.3", *spoofed = "198.19.0.4";
	__u64 now = T0 + 10 * W;
	struct rl_counters before;
	char err[RL_ERR_LEN];
	struct rl_key key;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !newcomer_rule(&f, 10))
		goto out;
	CHECK(fixture_answer(&f, tracked, 0, T0), "the host answers one");
	CHECK(fixture_answer(&f, untracked, 0, T0), "and another");
	if (!CHECK(!rl_ban_key(untracked, RL_DEFAULT_V6_PREFIX, &key, err, sizeof(err)),
		   "key: %s", err))
		goto out;
	CHECK_EQ(fixture_evict(&f, &key), 0, "its entry evicted");
	CHECK_EQ(newcomers(&f, 1, 100, 0, now), 10, "flood: the budget");
	CHECK(fixture_refusing(&f, now), "the budget refuses: asked first");
	CHECK_EQ(pass_count(&f, tracked, 50, 0, now), 50, "verified, tracked: passes");
	CHECK_EQ(pass_count(&f, untracked, 5, 0, now), 5, "verified, untracked: passes");
	CHECK(fixture_synack(&f, joining, 0, now), "the host answers a SYN");
	before = fixture_totals(&f);
	CHECK_EQ(fixture_handshake_ack(&f, joining, HOST_ISN + 1, 0, now), XDP_PASS,
		 "the ACK that proves it passes");
	CHECK_EQ(fixture_totals(&f).verified_new - before.verified_new, 1, "verified");
	CHECK_EQ(pass_count(&f, joining, 5, 0, now), 5, "then its packets pass");
	CHECK_EQ(pass_count(&f, spoofed, 5, 0, now), 0, "a spoofed source is refused");
	CHECK_EQ(fixture_refused(&f, spoofed), 5, "in `refused`");
out:
	fixture_close(&f);
}

/* One frame from each of `n` sources NET.1.. (a /24) on CPU 0; passed. */
static int newcomers_in(struct fixture *f, const char *net, int n, __u64 now)
{
	char addr[32];
	int passed = 0;

	for (int i = 1; i <= n; i++) {
		snprintf(addr, sizeof(addr), "%s.%d", net, i);
		passed += pass_count(f, addr, 1, 0, now);
	}
	return passed;
}

/*
 * Another rule's packet goes the usual way while one rule's budget
 * refuses: a more specific rule without a newcomer budget, and one with
 * a budget of its own, not full.
 */
TEST(newcomer_refused_first_other_rules)
{
	struct rl_rule_change plain = { .have_pps = true, .pps = 100 };
	struct rl_rule_change own = { .have_pps = true, .pps = 100,
				      .have_new_pps = true, .new_pps = 5 };
	__u64 now = T0 + 10 * W;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !newcomer_rule(&f, 10) ||
	    !fixture_rule(&f, "198.19.128.0/17", &plain) ||
	    !fixture_rule(&f, "198.19.64.0/18", &own))
		goto out;
	CHECK_EQ(newcomers(&f, 1, 100, 0, now), 10, "flood: the /15's budget");
	CHECK(fixture_refusing(&f, now), "the budget refuses: asked first");
	CHECK_EQ(newcomers_in(&f, "198.19.200", 20, now), 20, "a /17 without a budget: all pass");
	CHECK_EQ(newcomers_in(&f, "198.19.100", 20, now), 5, "a /18 with its own: its 5");
	CHECK_EQ(newcomers(&f, 2, 20, 0, now), 0, "the /15 still refuses");
out:
	fixture_close(&f);
}

/*
 * An aggregate budget refuses first too: while it is full, a source never
 * verified here is refused without its entry (a tracked one's drops in
 * `refused`), while a verified source, refused by the same budget (it
 * binds every source), goes the usual way and counts in its own entry;
 * the next window has room for both.
 */
TEST(aggregate_refused_first_counts_in_refused)
{
	const char *tracked = "198.19.0.9", *real = "198.19.0.1";
	struct rl_rule_change agg = { .have_pps = true, .pps = 100,
				      .have_agg_pps = true, .agg_pps = 10 };
	__u64 now = T0 + 10 * W;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !fixture_rule(&f, "198.18.0.0/15", &agg))
		goto out;
	CHECK(fixture_answer(&f, real, 0, T0), "the host answers one source");
	CHECK_EQ(pass_count(&f, tracked, 3, 0, T0), 3, "tracked, never verified");
	CHECK_EQ(pass_count(&f, real, 2, 0, T0), 2, "the verified one passes");
	CHECK(!fixture_refusing(&f, now), "no refusal yet: the usual path");
	CHECK_EQ(newcomers(&f, 1, 100, 0, now), 10, "flood: the aggregate budget");
	CHECK(fixture_refusing(&f, now), "the budget refuses: asked first");
	CHECK_EQ(pass_count(&f, tracked, 5, 0, now), 0, "never verified: refused");
	CHECK_EQ(fixture_refused(&f, tracked), 5, "counted in `refused`");
	CHECK_SOURCE(&f, tracked, now, 3, 0, 0, "its entry untouched");
	CHECK_EQ(pass_count(&f, real, 4, 0, now), 0, "verified: refused as well");
	CHECK_EQ(fixture_refused(&f, real), 0, "not in `refused`");
	CHECK_SOURCE(&f, real, now, 3, 4, 0, "in its own entry, the usual way (its handshake passed too)");
	CHECK_EQ(newcomers(&f, 10, 20, 0, now), 0, "the spoofed flood stays refused");
	CHECK_EQ(pass_count(&f, tracked, 2, 0, T0 + 12 * W), 2, "room again: it passes");
	CHECK_EQ(pass_count(&f, real, 2, 0, T0 + 12 * W), 2, "and so does the verified one");
out:
	fixture_close(&f);
}

/* --dry-run: refused first, counted as dropped, passed. */
TEST(newcomer_refused_first_dry_run)
{
	struct rl_attach_req req;
	struct rl_counters c;
	struct fixture f;

	rl_attach_req_defaults(&req);
	req.flags = RL_F_DRY_RUN;
	if (!fixture_open(&f, &req) || !newcomer_rule(&f, 10))
		goto out;
	CHECK_EQ(newcomers(&f, 1, 100, 0, T0), 100, "a dry run passes the flood");
	CHECK(fixture_refusing(&f, T0), "the budget refuses: asked first");
	c = fixture_totals(&f);
	CHECK_EQ(c.dropped_pkts, 90, "what it would drop, counted");
	CHECK_EQ(c.new_sources, 10, "refusals take no entry");
	CHECK_EQ(fixture_refused(&f, "198.18.1.100"), 1, "in `refused`");
out:
	fixture_close(&f);
}
