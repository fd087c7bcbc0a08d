// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Capacity of the `sources` table (doc/design/pool.md): --max-sources N
 * sources cycled through the program, alternating CPUs, stay tracked (at
 * least 99.9% of them: each keeps its window, none is evicted and
 * re-created), and a population far above N keeps working: a new source
 * takes the way of one in its two buckets.
 * Tens of thousands of frames: the program is held in the XDP dispatcher
 * (fixture_hold) so that each run costs microseconds, not milliseconds.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ratelimit.h"
#include "ratelimit_test.skel.h"
#include "lib/maps.h"
#include "lib/source_index_map.h"
#include "lib/settings.h"
#include "../harness.h"
#include "fixture.h"
#include "gen/frames.h"

/* Source i: the i-th address of 198.18.0.0/15 (i < 2^17), written into the
 * frame's IPv4 header. */
static void set_source(struct frame *fr, __u32 i)
{
	__u8 *saddr = fr->data + tg_l3_off(0) + TG_IPV4_SADDR_OFF;

	saddr[0] = 198;
	saddr[1] = (__u8)(18 + ((i >> 16) & 1));
	saddr[2] = (__u8)(i >> 8);
	saddr[3] = (__u8)i;
}

struct pass_result {
	__u64 passed;
	__u64 dropped;
	__u64 failed;
};

/*
 * Send one frame for each source in [first, first + n) at `now`; source i
 * goes to CPU (i + shift) % ncpus. Sources i with i % skip_mod == 0 (when
 * skip_mod) are replaced by fresh ones numbered from `fresh`.
 */
static struct pass_result send_pass(struct fixture *f, struct frame *fr,
				    __u32 first, __u32 n, int shift, __u64 now,
				    __u32 skip_mod, __u32 fresh)
{
	struct pass_result r = { 0 };
	int ncpus = rl_ncpus() > 1 ? 2 : 1;

	for (__u32 i = first; i < first + n; i++) {
		int passed;

		set_source(fr, skip_mod && i % skip_mod == 0 ? fresh + i : i);
		passed = fixture_send(f, fr, 1, (int)((i + shift) % ncpus), now);
		if (passed < 0)
			r.failed++;
		else if (passed)
			r.passed++;
		else
			r.dropped++;
	}
	return r;
}

static bool open_sized(struct fixture *f, __u64 max_sources)
{
	struct rl_attach_req req;

	rl_attach_req_defaults(&req);
	req.max_sources = max_sources;
	if (!fixture_open(f, &req))
		return false;
	/* a slot of `sources` per way of the index */
	if (!CHECK_EQ(bpf_map__max_entries(f->skel->maps.source_index),
		      rl_index_buckets(max_sources), "source_index sized by rl_index_buckets") ||
	    !CHECK_EQ(bpf_map__max_entries(f->skel->maps.sources),
		      rl_pool_slots(rl_index_buckets(max_sources)),
		      "a slot of sources per way") ||
	    !CHECK_EQ(bpf_map__max_entries(f->skel->maps.source_keys),
		      rl_pool_slots(rl_index_buckets(max_sources)), "a key per slot"))
		return false;
	fixture_hold(f);
	/* 1 packet per 1 s window per source: a tracked source drops its
	 * second packet within the window, a re-created one passes it */
	return fixture_pps(f, "default", 1);
}

/*
 * N sources, three passes within one window: the first passes, the second
 * (same CPU) and third (the other CPU) drop for every source that kept its
 * window; a source evicted for another (both its buckets full) is
 * re-created, and its packet passes as a new window's. At least 99.9% of
 * the N stay tracked through both passes.
 */
static void all_tracked(__u32 n)
{
	struct fixture f;
	struct frame fr;
	struct pass_result r1, r2, r3;
	struct rl_counters c;
	__u64 recreated;

	if (!open_sized(&f, n))
		goto out;
	frame_udp(&fr, "198.18.0.0", 64, 0);
	r1 = send_pass(&f, &fr, 0, n, 0, T0, 0, 0);
	CHECK_EQ(r1.failed, 0, "pass 1: runs failed");
	CHECK_EQ(r1.passed, n, "pass 1: every source's first packet passes");
	r2 = send_pass(&f, &fr, 0, n, 0, T0 + NSEC_MS, 0, 0);
	CHECK_EQ(r2.failed, 0, "pass 2: runs failed");
	r3 = send_pass(&f, &fr, 0, n, 1, T0 + 2 * NSEC_MS, 0, 0);
	CHECK_EQ(r3.failed, 0, "pass 3: runs failed");
	c = fixture_totals(&f);
	recreated = c.new_sources - n;
	printf("    %u sources: %llu re-created in passes 2 and 3\n", n,
	       (unsigned long long)recreated);
	CHECK_GE(c.new_sources, n, "every source created in the first pass");
	CHECK_LE(recreated, n / 1000, "sources re-created after the first pass (<= 0.1%)");
	CHECK_EQ(r2.passed + r3.passed, recreated,
		 "passes 2 and 3: only a re-created source passes, every other "
		 "kept its window on either CPU");
	CHECK_EQ(c.untracked_pkts, 0, "no packet judged untracked");
	CHECK_EQ(c.passed_pkts, n + recreated, "total passed");
	CHECK_EQ(c.dropped_pkts, 2ULL * n - recreated, "total dropped");
out:
	fixture_close(&f);
}

TEST(capacity_4096_sources_stay_tracked)
{
	all_tracked(4096);
}

TEST(capacity_65536_sources_stay_tracked)
{
	all_tracked(65536);
}

/*
 * Churn: each pass, a quarter of the N sources is replaced by sources never
 * seen before (N distinct per pass, 7N/4 in all, more than the table
 * holds): the three quarters that return must keep their windows, the
 * sources of earlier passes that never return being the ones evicted.
 * Eviction is approximate (the way a packet found least recently goes
 * first, by a stamp of 268 ms: the passes are a stamp apart, all in one
 * window): allow 0.1%.
 */
TEST(capacity_with_churn)
{
	const __u32 n = 4096, passes = 4;
	struct fixture f;
	struct frame fr;
	struct pass_result r;
	struct rl_counters c;
	__u64 stable = n - n / 4, passed_after = 0;

	if (!open_sized(&f, n))
		goto out;
	frame_udp(&fr, "198.18.0.0", 64, 0);
	for (__u32 p = 0; p < passes; p++) {
		/* fresh sources of pass p: n * (p + 1) + i, beyond the stable ones */
		r = send_pass(&f, &fr, 0, n, (int)p, T0 + p * (1ULL << RL_STAMP_SHIFT),
			      4, n * (p + 1));
		CHECK_EQ(r.failed, 0, "runs failed");
		if (p == 0)
			CHECK_EQ(r.passed, n, "first pass: all pass");
		else
			passed_after += r.passed - n / 4;	/* fresh ones pass */
	}
	CHECK_LE(passed_after, (stable * (passes - 1)) / 1000,
		 "returning sources re-created (<= 0.1%)");
	c = fixture_totals(&f);
	CHECK_LE(c.new_sources, n + (n / 4) * (passes - 1) + passed_after,
		 "sources created");
	CHECK_EQ(c.passed_pkts + c.dropped_pkts, (__u64)n * passes,
		 "every frame passed or dropped");
out:
	fixture_close(&f);
}

/* 4N distinct sources, twice, alternating CPUs: the table evicts, nothing
 * fails, every verdict is accounted for, and each new source takes a way
 * (an unverified source's way may be taken for any other source). */
TEST(capacity_overpopulation)
{
	const __u32 n = 4096, total = 4 * n;
	struct fixture f;
	struct frame fr;
	struct pass_result r1, r2;
	struct rl_counters c;

	if (!open_sized(&f, n))
		goto out;
	frame_udp(&fr, "198.18.0.0", 64, 0);
	r1 = send_pass(&f, &fr, 0, total, 0, T0, 0, 0);
	r2 = send_pass(&f, &fr, 0, total, 1, T0 + NSEC_MS, 0, 0);
	CHECK_EQ(r1.failed + r2.failed, 0, "runs failed");
	CHECK_EQ(r1.passed, total, "first pass: all new, all pass");
	c = fixture_totals(&f);
	CHECK_EQ(c.passed_pkts + c.dropped_pkts, 2ULL * total,
		 "passed + dropped = frames sent");
	CHECK_EQ(c.passed_pkts, r1.passed + r2.passed, "passed as seen");
	CHECK_EQ(c.dropped_pkts, r1.dropped + r2.dropped, "dropped as seen");
	CHECK_EQ(c.malformed_pkts + c.non_ip_pkts, 0, "no malformed or non-IP");
	/* a 1-packet budget passes exactly the packets that start a window:
	 * a source (re)created, or one judged without state */
	CHECK_EQ(c.passed_pkts, c.new_sources + c.untracked_pkts,
		 "every pass is a new window");
	CHECK_GE(c.new_sources, total, "every distinct source created");
	CHECK_EQ(c.untracked_pkts, 0, "every new source took a way: none untracked");
out:
	fixture_close(&f);
}

/* An allow-listed source is never dropped because the table is full: 4N
 * sources of the default rule (1 packet a window, and a newcomer budget
 * that refuses every unverified source once spent) churn a table sized for
 * N while sources of an allow-listed prefix send in between, many packets
 * each in one window, on both CPUs: every one of theirs passes, whatever
 * the table holds and evicts. */
TEST(capacity_allow_listed_never_dropped)
{
	const __u32 n = 4096, total = 4 * n, allowed = 64;
	struct rl_rule_change newcomers = { .have_new_pps = true, .new_pps = 1 };
	int ncpus = rl_ncpus() > 1 ? 2 : 1, passed = 0;
	struct fixture f;
	struct frame fr, ok;
	char src[32];

	if (!open_sized(&f, n) || !fixture_rule(&f, "default", &newcomers) ||
	    !fixture_pps(&f, "198.19.0.0/16", RL_UNLIMITED))
		goto out;
	frame_udp(&fr, "198.18.0.0", 64, 0);
	for (__u32 i = 0; i < total; i++) {
		set_source(&fr, i);
		if (fixture_send(&f, &fr, 1, (int)(i % ncpus), T0) < 0)
			goto out;
		if (i % (total / allowed))
			continue;
		snprintf(src, sizeof(src), "198.19.0.%u", 1 + i / (total / allowed));
		frame_udp(&ok, src, 64, 0);
		passed += fixture_send(&f, &ok, 5, (int)(i % ncpus), T0);
	}
	CHECK_EQ(passed, 5 * allowed, "every packet of the allow-listed sources passed");
	CHECK_GE(fixture_totals(&f).dropped_pkts, total - n,
		 "while the flood was refused (the check is not vacuous)");
out:
	fixture_close(&f);
}
