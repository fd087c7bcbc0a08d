// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Verdicts of the XDP program on crafted frames, with a simulated clock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "../harness.h"
#include "fixture.h"
#include "spread.h"

#define SRC "198.18.0.7"
#define BUCKET (100 * NSEC_MS)	/* default: 1 s window, 10 buckets */

/*
 * The opening of most tests here: the fixture (req NULL: default
 * settings) with a default rule of `pps` packets per second, and `fr` a
 * frame of `len` bytes from SRC. False when the fixture cannot be had
 * (checked and reported).
 */
static bool open_default(struct fixture *f, const struct rl_attach_req *req,
			 __u64 pps, struct frame *fr, size_t len)
{
	if (!fixture_open(f, req))
		return false;
	if (!fixture_pps(f, "default", pps))
		return false;
	frame_udp(fr, SRC, len, 0);
	return true;
}

/* A step of a test: `n` frames on `cpu` at `now`, `want` of them pass. */
struct step {
	int n, cpu;
	__u64 now;
	int want;
	const char *what;
};

/* A table and its length, for the helpers that take one. */
#define ROWS(table) (table), sizeof(table) / sizeof((table)[0])

/* Each step in turn with the frame `fr`, checked. */
static void send_steps(struct fixture *f, const struct frame *fr,
		       const struct step *st, size_t n)
{
	for (size_t i = 0; i < n; i++)
		CHECK_EQ(fixture_send(f, fr, st[i].n, st[i].cpu, st[i].now), st[i].want,
			 st[i].what);
}

/* A rule: per-source packets per second under a prefix. */
struct pps_rule {
	const char *prefix;
	__u64 pps;
};

/* Each rule set in turn. False when one cannot be (checked and reported). */
static bool set_rules(struct fixture *f, const struct pps_rule *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!fixture_pps(f, r[i].prefix, r[i].pps))
			return false;
	return true;
}

/* `n` frames of `len` bytes from `src` on CPU 0 at T0, `want` of them pass. */
struct source_step {
	const char *src;
	size_t len;
	int n, want;
	const char *what;
};

/* Each source's frames in turn, checked. */
static void send_sources(struct fixture *f, const struct source_step *st, size_t n)
{
	struct frame fr;

	for (size_t i = 0; i < n; i++) {
		frame_udp(&fr, st[i].src, st[i].len, 0);
		CHECK_EQ(fixture_send(f, &fr, st[i].n, 0, T0), st[i].want, st[i].what);
	}
}

/* A test that is only steps: SRC's 64-byte frames under a default rule of `pps`. */
static void default_steps(__u64 pps, const struct step *st, size_t n)
{
	struct fixture f;
	struct frame fr;

	if (!open_default(&f, NULL, pps, &fr, 64))
		goto out;
	send_steps(&f, &fr, st, n);
out:
	fixture_close(&f);
}

/*
 * One 64-byte frame from each of `n` new sources (198.18.0.1, .2, ... on
 * through 198.18.1.x), the i-th on CPU (i / run) % ncpus at T0 + i * step:
 * how many passed. `fr` is left holding the last source's frame.
 */
static int send_new_sources(struct fixture *f, struct frame *fr, int n, int run,
			    __u64 step)
{
	char addr[32];
	int passed = 0;

	for (int i = 0; i < n; i++) {
		snprintf(addr, sizeof(addr), "198.18.%d.%d", i / 250, 1 + i % 250);
		frame_udp(fr, addr, 64, 0);
		passed += fixture_send(f, fr, 1, (i / run) % rl_ncpus(), T0 + i * step);
	}
	return passed;
}

TEST(quota_exact_at_edge)
{
	struct fixture f;
	struct frame fr;
	struct rl_counters c;
	struct rl_source_sum s;

	if (!open_default(&f, NULL, 5, &fr, 100))
		goto out;
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0), 5, "first 5 frames pass");
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_DROP, "6th drops");
	c = fixture_totals(&f);
	CHECK_EQ(c.passed_pkts, 5, "total passed");
	CHECK_EQ(c.passed_bytes, 500, "total passed bytes");
	CHECK_EQ(c.dropped_pkts, 1, "total dropped");
	CHECK_EQ(c.dropped_bytes, 100, "total dropped bytes");
	CHECK_EQ(c.malformed_pkts + c.non_ip_pkts, 0, "no malformed or non-IP");
	CHECK_EQ(c.new_sources, 1, "one new source");
	/* the window holds the passes only */
	CHECK_SOURCE(&f, SRC, T0, 5, 1, 5, "source");
	if (fixture_source(&f, SRC, T0, &s))
		CHECK_EQ(s.window_bytes, 500, "window bytes");
out:
	fixture_close(&f);
}

TEST(window_slides_bucket_by_bucket)
{
	const struct step steps[] = {
		/* 4 passes in bucket 0, 6 in bucket 3: the window is full */
		{ 4, 0, T0, 4, "bucket 0" },
		{ 8, 0, T0 + 3 * BUCKET, 6, "bucket 3 fills the window" },
		/* until bucket 0 leaves the window (at T0 + 10 buckets), nothing */
		{ 3, 0, T0 + 10 * BUCKET - 1, 0, "last ns of bucket 9" },
		{ 6, 0, T0 + 10 * BUCKET, 4, "bucket 0's 4 released" },
		/* bucket 3's 6 leave at bucket 13: no double burst at the edge */
		{ 6, 0, T0 + 12 * BUCKET, 0, "bucket 12" },
		{ 8, 0, T0 + 13 * BUCKET, 6, "bucket 13" },
		/* an idle gap longer than the window resets it whole */
		{ 12, 0, T0 + 1000 * NSEC_S, 10, "after a long gap" },
	};

	default_steps(10, ROWS(steps));
}

TEST(byte_budget)
{
	struct fixture f;
	struct frame big, small;
	struct rl_source_sum s;

	if (!fixture_open(&f, NULL))
		goto out;
	/* 1000 B/s over 1 s: 1000 bytes per window */
	if (!fixture_quota(&f, "default", RL_UNLIMITED, 1000, RL_UNLIMITED, RL_UNLIMITED))
		goto out;
	frame_udp(&big, SRC, 300, 0);
	frame_udp(&small, SRC, 100, 0);
	CHECK_EQ(fixture_send(&f, &big, 3, 0, T0), 3, "900 bytes pass");
	CHECK_EQ(fixture_send(&f, &big, 1, 0, T0), 0, "1200 would not fit");
	CHECK_EQ(fixture_send(&f, &small, 1, 0, T0), 1, "exactly 1000 fits");
	CHECK_EQ(fixture_send(&f, &small, 1, 0, T0), 0, "1100 does not");
	if (fixture_source(&f, SRC, T0, &s)) {
		CHECK_EQ(s.window_bytes, 1000, "window bytes");
		CHECK_EQ(s.dropped_bytes, 400, "dropped bytes");
	}
out:
	fixture_close(&f);
}

TEST(packet_and_byte_budgets_together)
{
	struct fixture f;
	struct frame fr;

	if (!fixture_open(&f, NULL))
		goto out;
	if (!fixture_quota(&f, "default", 3, 10000, RL_UNLIMITED, RL_UNLIMITED))
		goto out;
	frame_udp(&fr, SRC, 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0), 3, "packet budget binds");
	if (!fixture_quota(&f, "default", 100, 250, RL_UNLIMITED, RL_UNLIMITED))
		goto out;
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0 + 2 * NSEC_S), 2, "byte budget binds");
out:
	fixture_close(&f);
}

TEST(sources_are_independent)
{
	const struct source_step steps[] = {
		{ "198.18.0.1", 64, 5, 2, "source a" },
		{ "198.18.0.2", 64, 5, 2, "source b untouched by a" },
	};
	struct fixture f;

	if (!fixture_open(&f, NULL))
		goto out;
	if (!fixture_pps(&f, "default", 2))
		goto out;
	send_sources(&f, ROWS(steps));
	CHECK_EQ(fixture_totals(&f).new_sources, 2, "two sources");
out:
	fixture_close(&f);
}

TEST(longest_prefix_wins)
{
	const struct pps_rule rules[] = {
		{ "default", 1 }, { "198.18.0.0/15", 3 }, { "198.18.5.0/24", 6 },
	};
	const struct source_step steps[] = {
		{ "198.18.5.9", 64, 10, 6, "/24 rule" },
		{ "198.19.5.9", 64, 10, 3, "/15 rule" },
		{ "2001:db8::1", 80, 10, 1, "IPv6 default rule" },
	};
	struct rl_source_sum s;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !set_rules(&f, ROWS(rules)))
		goto out;
	send_sources(&f, ROWS(steps));
	if (fixture_source(&f, "198.18.5.9", T0, &s))
		CHECK_EQ(s.dropped_pkts, 4, "/24 source dropped");
out:
	fixture_close(&f);
}

TEST(block_and_allow_list)
{
	const struct pps_rule rules[] = {
		{ "default", 2 }, { "198.18.9.0/24", 0 }, { "198.18.9.7", RL_UNLIMITED },
	};
	const struct source_step steps[] = {
		{ "198.18.9.8", 64, 5, 0, "--pps 0 blocks" },
		{ "198.18.9.7", 64, 500, 500, "unlimited exempts" },
		{ "198.18.10.1", 64, 5, 2, "default still applies" },
	};
	struct fixture f;

	if (!fixture_open(&f, NULL) || !set_rules(&f, ROWS(rules)))
		goto out;
	send_sources(&f, ROWS(steps));
out:
	fixture_close(&f);
}

TEST(unruled_sources_pass_and_count)
{
	struct fixture f;
	struct frame fr;
	struct rl_source_sum s;

	if (!fixture_open(&f, NULL))
		goto out;
	frame_udp(&fr, SRC, 64, 0);
	CHECK_EQ(fixture_send(&f, &fr, 50, 0, T0), 50, "no rule: not limited");
	if (fixture_source(&f, SRC, T0, &s)) {
		CHECK_EQ(s.passed_pkts, 50, "still counted");
		CHECK_EQ(s.window_pkts, 50, "and in its window");
	}
out:
	fixture_close(&f);
}

TEST(aggregate_budget_caps_a_prefix)
{
	struct fixture f;
	struct frame fr;

	if (!fixture_open(&f, NULL))
		goto out;
	/* each source may send 100, the /16 as a whole 50 */
	if (!fixture_quota(&f, "198.18.0.0/16", 100, RL_UNLIMITED, 50, RL_UNLIMITED))
		goto out;
	CHECK_EQ(send_new_sources(&f, &fr, 200, 1, 0), 50, "aggregate holds many sources");
	/* a source dropped by the aggregate kept its own budget untouched */
	CHECK_EQ(fixture_totals(&f).dropped_pkts, 150, "dropped by aggregate");
	frame_udp(&fr, "198.18.0.1", 64, 0);
	CHECK_EQ(fixture_send(&f, &fr, 60, 0, T0 + 2 * NSEC_S), 50, "next window");
out:
	fixture_close(&f);
}

/* A new source whose first packet would be dropped anyway (blocked prefix,
 * full aggregate) takes no table entry: a spoofed flood cannot evict the
 * sources that keep sending. */
TEST(refused_newcomers_take_no_entry)
{
	struct fixture f;
	struct frame fr;
	struct rl_source_sum ss;
	struct rl_counters c;
	char addr[32];

	if (!fixture_open(&f, NULL))
		goto out;
	if (!fixture_quota(&f, "198.18.0.0/16", 100, RL_UNLIMITED, 50, RL_UNLIMITED) ||
	    !fixture_pps(&f, "198.19.9.0/24", 0))
		goto out;
	frame_udp(&fr, "198.18.200.1", 64, 0);
	CHECK_EQ(fixture_send(&f, &fr, 1, 0, T0), 1, "the steady source's first packet");
	CHECK_EQ(send_new_sources(&f, &fr, 200, 1, 0), 49, "the aggregate's remaining 49");
	for (int i = 0; i < 20; i++) {
		snprintf(addr, sizeof(addr), "198.19.9.%d", 1 + i);
		frame_udp(&fr, addr, 64, 0);
		CHECK_EQ(fixture_send(&f, &fr, 1, 0, T0), 0, "blocked prefix");
	}
	c = fixture_totals(&f);
	CHECK_EQ(c.new_sources, 50, "entries only for sources that passed");
	CHECK_EQ(c.untracked_pkts, 0, "refusals are not 'untracked'");
	CHECK_EQ(c.dropped_pkts, 151 + 20, "every refusal counted as dropped");
	CHECK_EQ(c.passed_pkts + c.dropped_pkts, 221, "every frame counted once");
	/* the steady source kept its entry and window */
	CHECK(fixture_source(&f, "198.18.200.1", T0, &ss) && ss.passed_pkts == 1 &&
	      ss.window_pkts == 1, "the steady source is still tracked");
	frame_udp(&fr, "198.18.200.1", 64, 0);
	CHECK_EQ(fixture_send(&f, &fr, 120, 0, T0 + 2 * NSEC_S), 50,
		 "next window: the aggregate again");
out:
	fixture_close(&f);
}

TEST(dry_run_counts_but_passes)
{
	struct rl_attach_req req;
	struct fixture f;
	struct frame fr;
	struct rl_counters c;

	rl_attach_req_defaults(&req);
	req.flags = RL_F_DRY_RUN;
	if (!open_default(&f, &req, 3, &fr, 64))
		goto out;
	CHECK_EQ(fixture_send(&f, &fr, 10, 0, T0), 10, "everything passes");
	c = fixture_totals(&f);
	CHECK_EQ(c.passed_pkts, 3, "would pass");
	CHECK_EQ(c.dropped_pkts, 7, "would drop");
	/* would-be drops do not fill the window: the same 3 per window */
	CHECK_EQ(fixture_send(&f, &fr, 10, 0, T0 + 2 * NSEC_S), 10, "next window passes");
	CHECK_EQ(fixture_totals(&f).passed_pkts, 6, "3 more would pass");
out:
	fixture_close(&f);
}

TEST(live_quota_change_keeps_counters)
{
	struct fixture f;
	struct frame fr;
	struct rl_source_sum s;

	if (!open_default(&f, NULL, 100, &fr, 64))
		goto out;
	CHECK_EQ(fixture_send(&f, &fr, 20, 0, T0), 20, "under 100");
	/* lowered below what the window already holds: takes effect at once */
	if (!fixture_pps(&f, "default", 10))
		goto out;
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0 + 1), 0, "lowered quota applies at once");
	CHECK_SOURCE(&f, SRC, T0 + 1, 20, 5, 20, "kept");
	/* raised: the same window continues */
	if (!fixture_pps(&f, "default", 25))
		goto out;
	CHECK_EQ(fixture_send(&f, &fr, 10, 0, T0 + 2), 5, "raised quota: 5 more");
	/* a new, more specific rule reaches the existing source too */
	if (!fixture_pps(&f, SRC, 40))
		goto out;
	CHECK_EQ(fixture_send(&f, &fr, 20, 0, T0 + 3), 15, "new /32 rule");
	if (fixture_source(&f, SRC, T0 + 3, &s))
		CHECK_EQ(s.passed_pkts, 40, "nothing lost");
out:
	fixture_close(&f);
}

/* One source spread over every CPU in turn: the quota holds as a whole. */
TEST(cross_cpu_quota)
{
	int ncpus = rl_ncpus();
	struct fixture f;
	struct frame fr;
	int passed = 0, v;

	if (!open_default(&f, NULL, 100, &fr, 64))
		goto out;
	if (!CHECK_GE(ncpus, 2, "this test needs 2 CPUs or more"))
		goto out;
	/* rotate CPUs every frame, then in runs of 7 */
	for (int i = 0; i < 300; i++) {
		v = fixture_run(&f, fr.data, fr.len, i % ncpus, T0 + i);
		passed += v == XDP_PASS;
	}
	CHECK_EQ(passed, 100, "alternating CPUs: exactly the quota");
	passed = 0;
	for (int i = 0; i < 300; i++) {
		v = fixture_run(&f, fr.data, fr.len, (i / 7) % ncpus,
				T0 + 5 * NSEC_S + i);
		passed += v == XDP_PASS;
	}
	CHECK_EQ(passed, 100, "runs of 7 per CPU: exactly the quota");
	/* sliding across CPUs: passes made on CPU 0 hold CPU 1 back */
	passed = fixture_send(&f, &fr, 100, 0, T0 + 10 * NSEC_S);
	CHECK_EQ(passed, 100, "CPU 0 takes the whole window");
	CHECK_EQ(fixture_send(&f, &fr, 10, 1, T0 + 10 * NSEC_S + 5 * BUCKET), 0,
		 "CPU 1 sees CPU 0's passes");
	CHECK_EQ(fixture_send(&f, &fr, 150, 1, T0 + 11 * NSEC_S), 100,
		 "CPU 1 gets them when they leave the window");
out:
	fixture_close(&f);
}

/*
 * The opening of the history tests: SRC at 10 pps, two packets in each of
 * buckets 0 and 1 on CPU 0, 2 on CPU 1, 3 on CPU 0, so that CPU 0's bucket
 * 0 has gone to the source's history and 8 of 10 passed. False when the
 * fixture cannot be had (checked and reported).
 */
static bool history_opening(struct fixture *f, struct frame *fr)
{
	const struct step opening[] = {
		{ 2, 0, T0, 2, "CPU 0, bucket 0" },
		{ 2, 0, T0 + 1 * BUCKET, 2, "CPU 0, bucket 1" },
		{ 2, 1, T0 + 2 * BUCKET, 2, "CPU 1, bucket 2" },
		/* CPU 0's bucket 0 goes to the history here */
		{ 2, 0, T0 + 3 * BUCKET, 2, "CPU 0, bucket 3" },
	};

	if (!open_default(f, NULL, 10, fr, 64))
		return false;
	if (!CHECK_GE(rl_ncpus(), 2, "this test needs 2 CPUs or more"))
		return false;
	send_steps(f, fr, ROWS(opening));
	return true;
}

/* A CPU keeps its newest bucket and the one before; a third bucket of the
 * window sends the oldest to the source's shared history (struct
 * rl_history): every CPU counts it, and each bucket leaves the window
 * exactly when it ends, wherever it is kept. */
TEST(past_buckets_of_every_cpu_count)
{
	struct rl_key key = { .addr = { [10] = 0xff, [11] = 0xff,
					[12] = 198, [13] = 18, [15] = 7 } };
	const struct step leaving[] = {
		{ 5, 1, T0 + 10 * BUCKET, 2, "bucket 0 left" },
		{ 5, 0, T0 + 11 * BUCKET, 2, "bucket 1 left" },
		{ 5, 0, T0 + 12 * BUCKET, 2, "bucket 2 left" },
	};
	struct rl_source_sum s;
	struct rl_history h;
	struct fixture f;
	struct frame fr;
	__u64 sum = 0;

	if (!history_opening(&f, &fr))
		goto out;
	CHECK_EQ(fixture_send(&f, &fr, 5, 1, T0 + 4 * BUCKET), 2,
		 "CPU 1, bucket 4: what is left of the window");
	/* and CPU 1's bucket 2 here */
	CHECK_EQ(fixture_send(&f, &fr, 5, 1, T0 + 5 * BUCKET), 0, "CPU 1, bucket 5: full");
	if (CHECK_EQ(bpf_map_lookup_elem(f.m.history, &key, &h), 0, "history entry")) {
		for (int i = 0; i < RL_MAX_BUCKETS; i++)
			sum += h.slot[i].pkts.count;
		CHECK_EQ(sum, 4, "buckets 0 (CPU 0) and 2 (CPU 1) in the history");
		CHECK_EQ(h.newest, (T0 + 2 * BUCKET) / BUCKET + 1, "newest bucket added");
	}
	if (fixture_source(&f, SRC, T0 + 5 * BUCKET, &s))
		CHECK_EQ(s.window_pkts, 10, "stats: history, past and newest buckets");
	send_steps(&f, &fr, ROWS(leaving));
out:
	fixture_close(&f);
}

/* A source's history evicted (deleted here, as the LRU would) while a
 * CPU's marker says it holds part of the window: what went in is lost, so
 * the source is judged as if its budget were spent until that bucket leaves
 * the window (fails closed), also after a CPU creates the history again
 * (the lost bucket taken as full); then the true counts decide again. */
TEST(history_evicted_fails_closed)
{
	struct rl_key key = { .addr = { [10] = 0xff, [11] = 0xff,
					[12] = 198, [13] = 18, [15] = 7 } };
	struct rl_history h;
	struct fixture f;
	struct frame fr;
	__u64 b0 = T0 / BUCKET;

	if (!history_opening(&f, &fr))
		goto out;
	if (!CHECK_EQ(bpf_map_delete_elem(f.m.history, &key), 0, "history evicted"))
		goto out;
	CHECK_EQ(fixture_send(&f, &fr, 5, 1, T0 + 4 * BUCKET), 0,
		 "CPU 1: the history is gone, judged as spent (2 more would pass 12)");
	/* CPU 0 flushes bucket 1: the history is created again, bucket 0 lost */
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0 + 5 * BUCKET), 0,
		 "CPU 0: the history created again, bucket 0 taken as full");
	if (CHECK_EQ(bpf_map_lookup_elem(f.m.history, &key, &h), 0, "history again")) {
		CHECK_EQ(h.slot[b0 % RL_MAX_BUCKETS].pkts.count, RL_COUNT_MAX, "bucket 0: full");
		CHECK_EQ(h.slot[(b0 + 1) % RL_MAX_BUCKETS].pkts.count, 2, "bucket 1: CPU 0's 2");
	}
	CHECK_EQ(fixture_send(&f, &fr, 5, 1, T0 + 9 * BUCKET), 0, "bucket 0 still in");
	/* bucket 0 left: buckets 1, 2, 3 hold 6 */
	CHECK_EQ(fixture_send(&f, &fr, 10, 1, T0 + 10 * BUCKET), 4,
		 "the true counts decide once the lost bucket left");
out:
	fixture_close(&f);
}

/* ---- one source on every CPU at once ---- */

#define SPREAD_ROUNDS 20
#define SPREAD_BUDGET 100000	/* packets per window (1 s at the default) */
#define SPREAD_REPEAT (5 * SPREAD_BUDGET)	/* frames per CPU per round */

/*
 * xdp-ratelimit(8) "Across CPUs": the documented error bound
 * measured with one source spread over all CPUs at once (doc/design/cpus.md: within one bucket, never over the budget; CPUs racing for
 * the last packets may leave up to ncpus - 1 of it unused).
 * One thread per CPU, pinned, floods the same source's frame, all started
 * together, at a fixed test clock: every frame falls in one bucket, so one
 * window. A new source each round. Every CPU keeps sending well past the
 * budget, so each uses all of any lease it took: the budget is reached but
 * for what CPUs that both backed off from the last packets left.
 */
TEST(cross_cpu_quota_concurrent)
{
	int ncpus = rl_ncpus(), cpus[SPREAD_MAX_CPUS], n = fixture_cpus(cpus, SPREAD_MAX_CPUS);
	__u64 bound = SPREAD_BUDGET;
	__u64 worst = 0, least = ~0ULL, over_rounds = 0, spread_rounds = 0, overlap_rounds = 0;
	struct spread_cpu *c = calloc(n, sizeof(*c));
	struct rl_source *pc = NULL;
	struct fixture f;
	struct frame fr;
	char addr[32];
	bool ok = true;
	int rounds = 0;

	if (!fixture_open(&f, NULL))
		goto out;
	if (!CHECK_GE(n, 2, "this test needs 2 CPUs or more") ||
	    !CHECK(c, "calloc"))
		goto out;
	if (n < ncpus)
		printf("    only %d of %d possible CPUs usable\n",
		       n, ncpus);
	if (!fixture_pps(&f, "default", SPREAD_BUDGET))
		goto out;
	if (!spread_prepare(&f, T0))
		goto out;
	pc = rl_percpu_alloc(sizeof(*pc));
	if (!CHECK(pc, "rl_percpu_alloc"))
		goto out;
	for (int i = 0; i < n; i++)
		c[i].cpu = cpus[i];

	/* a failed check ends the rounds only when nothing can be measured */
	for (int round = 0; round < SPREAD_ROUNDS; round++) {
		struct rl_counters before = fixture_totals(&f), after;
		__u64 sent = (__u64)n * SPREAD_REPEAT, first_end = ~0ULL, last_start = 0;
		struct rl_source_sum s;
		char per_cpu[256] = "";
		int passing_cpus = 0, len = 0;
		bool round_ok = true;

		snprintf(addr, sizeof(addr), "198.18.77.%d", 1 + round);
		frame_udp(&fr, addr, 64, 0);
		if (!spread_round(&f, &fr, SPREAD_REPEAT, c, n) || !fixture_source(&f, addr, T0, &s) ||
		    !CHECK_EQ(fixture_source_vals(&f, &s.key, pc), 0,
			      "per-CPU values of the source")) {
			ok = false;
			break;
		}
		after = fixture_totals(&f);
		round_ok &= CHECK_EQ(after.passed_pkts - before.passed_pkts +
				     after.dropped_pkts - before.dropped_pkts, sent,
				     "interface: passed + dropped = frames sent");
		round_ok &= CHECK_EQ(s.passed_pkts, after.passed_pkts - before.passed_pkts,
				     "source passed = interface passed");
		round_ok &= CHECK_EQ(s.passed_pkts + s.dropped_pkts, sent,
				     "source: passed + dropped = frames sent");
		round_ok &= CHECK_EQ(s.window_pkts, s.passed_pkts,
				     "one window holds every pass");
		round_ok &= CHECK_LE(s.passed_pkts, bound,
				     "passed in the window <= budget");
		round_ok &= CHECK_GE(s.passed_pkts + ncpus - 1, SPREAD_BUDGET,
				     "passed in the window >= budget - (ncpus - 1)");
		for (int i = 0; i < n; i++) {
			const struct rl_source *v = RL_PERCPU_VAL(pc, sizeof(*pc), c[i].cpu);

			/* the pinning worked: each CPU judged its own thread's frames */
			round_ok &= CHECK_EQ(v->passed_pkts + v->dropped_pkts, SPREAD_REPEAT,
					     "frames judged on a CPU");
			passing_cpus += v->passed_pkts > 0;
			if (len < (int)sizeof(per_cpu) - 32)
				len += snprintf(per_cpu + len, sizeof(per_cpu) - len,
						" %llu", (unsigned long long)v->passed_pkts);
			if (c[i].end < first_end)
				first_end = c[i].end;
			if (c[i].start > last_start)
				last_start = c[i].start;
		}
		spread_rounds += passing_cpus > 1;
		overlap_rounds += last_start < first_end;
		over_rounds += s.passed_pkts > SPREAD_BUDGET;
		if (s.passed_pkts > SPREAD_BUDGET && s.passed_pkts - SPREAD_BUDGET > worst)
			worst = s.passed_pkts - SPREAD_BUDGET;
		if (s.passed_pkts < least)
			least = s.passed_pkts;
		rounds++;
		if (!round_ok)
			printf("    round %d, source %s: %llu of %llu frames passed, budget %d;"
			       " passed per CPU:%s\n", round, addr,
			       (unsigned long long)s.passed_pkts, (unsigned long long)sent,
			       SPREAD_BUDGET, per_cpu);
	}
	if (rounds)
		printf("    %d rounds x %d CPUs x %d frames, budget %d: worst excess %llu"
		       " (bound 0), over the budget in %llu rounds, least"
		       " passed %llu; runs overlapping in %llu rounds, passes on 2+ CPUs"
		       " in %llu\n", rounds, n, SPREAD_REPEAT, SPREAD_BUDGET,
		       (unsigned long long)worst,
		       (unsigned long long)over_rounds, (unsigned long long)least,
		       (unsigned long long)overlap_rounds,
		       (unsigned long long)spread_rounds);
	/* else the rounds measured nothing concurrent */
	if (ok)
		CHECK_GE(spread_rounds, 1, "rounds with passes on more than one CPU");
out:
	free(pc);
	free(c);
	fixture_close(&f);
}

TEST(cross_cpu_aggregate)
{
	struct fixture f;
	struct frame fr;

	if (!fixture_open(&f, NULL))
		goto out;
	if (!fixture_quota(&f, "198.18.0.0/16", RL_UNLIMITED, RL_UNLIMITED, 30, RL_UNLIMITED))
		goto out;
	/* runs of 3 sources per CPU, 1 ns apart */
	CHECK_EQ(send_new_sources(&f, &fr, 100, 3, 1), 30, "aggregate across CPUs");
out:
	fixture_close(&f);
}

/* bpf_ktime_get_ns() starts at boot, but the window must not care where
 * the clock is: the same sliding behaviour across 2^64. */
TEST(window_across_clock_wrap)
{
	const __u64 t1 = (__u64)-(150 * NSEC_MS);	/* 150 ms before the wrap */
	const struct step steps[] = {
		{ 12, 0, t1, 10, "before the wrap" },
		{ 5, 1, t1 + 500 * NSEC_MS, 0, "after the wrap, same window" },
		{ 12, 0, t1 + 9 * BUCKET, 0, "9 buckets on" },
		{ 12, 1, t1 + 10 * BUCKET, 10, "released 10 buckets on" },
	};

	default_steps(10, ROWS(steps));
}
