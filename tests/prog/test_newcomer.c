// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The newcomer budget and the default rule as one rule (xdp-ratelimit(8),
 * "Newcomer budget", "Rules"), in the program: refusals take no entry,
 * established sources never consult the budget, a source is new for
 * exactly one window wherever its packets arrive, and IPv4 and IPv6 share
 * the default rule's budgets.
 */
#include <stdio.h>
#include <linux/bpf.h>
#include "ratelimit.h"
#include "source_table.h"
#include "../harness.h"
#include "fixture.h"

#define W NSEC_S	/* the default window */

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

TEST(newcomer_established_pass_while_exhausted)
{
	const char *old = "198.19.0.1", *young = "198.19.0.2";
	struct rl_counters c;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !newcomer_rule(&f, 10))
		goto out;
	CHECK_EQ(pass_count(&f, old, 1, 0, T0), 1, "first packet: a newcomer");
	CHECK_EQ(pass_count(&f, young, 1, 0, T0 + W / 2), 1, "another, half a window on");
	/* a flood exhausts the newcomer budget a window later */
	CHECK_EQ(newcomers(&f, 1, 300, 0, T0 + W), 9,
		 "flood: what is left of the budget (the first pass left the window)");
	CHECK_EQ(pass_count(&f, old, 50, 0, T0 + W), 50,
		 "tracked for a whole window: established, its own quota only");
	CHECK_EQ(pass_count(&f, young, 5, 0, T0 + W + W / 2 - 1), 0,
		 "a window less 1 ns after its first packet: still new, refused");
	CHECK_EQ(pass_count(&f, young, 5, 0, T0 + W + W / 2), 5,
		 "exactly one window after: established");
	c = fixture_totals(&f);
	CHECK_EQ(c.new_sources, 11, "two plus the flood's nine took entries");
out:
	fixture_close(&f);
}

/* A source created on one CPU is established on every CPU after a window:
 * the other CPU reads the creation time from the first. */
TEST(newcomer_established_on_every_cpu)
{
	const char *src = "198.19.0.1";
	int ncpus = rl_ncpus();
	struct fixture f;

	if (!fixture_open(&f, NULL) || !newcomer_rule(&f, 3))
		goto out;
	if (!CHECK_GE(ncpus, 2, "this test needs 2 CPUs or more"))
		goto out;
	CHECK_EQ(pass_count(&f, src, 1, 0, T0), 1, "created on CPU 0");
	CHECK_EQ(newcomers(&f, 1, 50, 1, T0 + W - 1), 2, "budget exhausted on CPU 1");
	CHECK_EQ(pass_count(&f, src, 1, 1, T0 + W - 1), 0,
		 "on CPU 1, still new just before the window is over");
	CHECK_EQ(newcomers(&f, 2, 50, 1, T0 + W), 1,
		 "the next bucket: one more, the budget exhausted again");
	for (int cpu = 1; cpu < ncpus; cpu++)
		CHECK_EQ(pass_count(&f, src, 5, cpu, T0 + W), 5,
			 "established on another CPU");
out:
	fixture_close(&f);
}

/* Established sources never count toward the newcomer window. */
TEST(newcomer_established_not_counted)
{
	struct fixture f;

	if (!fixture_open(&f, NULL) || !newcomer_rule(&f, 5))
		goto out;
	CHECK_EQ(pass_count(&f, "198.19.0.1", 1, 0, T0), 1, "a newcomer");
	CHECK_EQ(pass_count(&f, "198.19.0.1", 90, 0, T0 + 2 * W), 90,
		 "established, 90 packets");
	CHECK_EQ(newcomers(&f, 1, 20, 0, T0 + 2 * W), 5,
		 "the newcomer budget is whole for newcomers");
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
