// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The sliding window of include/window.h on a simulated clock: roll-over,
 * the budget edge, buckets released one by one, long gaps, byte budgets,
 * drops not counting, clock wrap and a clock going backwards; then millions
 * of random steps against the naive model of model.h, verdict by verdict.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "window.h"
#include "model.h"
#include "harness.h"

#define UNL RL_UNLIMITED

/* One budget on one CPU: its state (newest bucket) and its history (the
 * buckets before), as the program keeps them; `now` is the time of the
 * last roll, at which wpkts()/wbytes() read the window. */
struct win1 {
	struct rl_state st;
	struct rl_history h;
	uint64_t now, width;
	uint32_t nb;
};

static void wroll(struct win1 *w, uint64_t now, uint64_t width, uint32_t nb)
{
	rl_state_roll(&w->st, &w->h, now, width, nb);
	w->now = now;
	w->width = width;
	w->nb = nb;
}

/* What the window holds at `at` without rolling it: the newest bucket if
 * still inside, the one before it, and the history if the marker says it
 * holds any of it (as the program reads it). */
static void wusage(const struct win1 *w, uint64_t at, uint64_t width,
		   uint32_t nb, __u64 *p, __u64 *b)
{
	uint64_t bucket = rl_window_bucket_at(&w->st.win, at, width);

	rl_window_usage_at(&w->st.win, at, width, nb, p, b);
	rl_past_usage(&w->st.past, bucket, nb, p, b);
	if (rl_marker_live(w->st.flushed, bucket, nb))
		rl_hist_usage(&w->h, bucket, nb, p, b);
}

static __u64 wpkts(const struct win1 *w)
{
	__u64 p, b;

	wusage(w, w->now, w->width, w->nb, &p, &b);
	return p;
}

static __u64 wbytes(const struct win1 *w)
{
	__u64 p, b;

	wusage(w, w->now, w->width, w->nb, &p, &b);
	return b;
}

/* Packets bucket `idx` holds while inside the window (0 once it left). */
static __u64 wbucket(const struct win1 *w, uint64_t idx)
{
	const union rl_hist_count *c = &w->h.slot[RL_SLOT(idx)].pkts;

	if (idx == w->st.win.bucket)
		return w->st.win.pkts;
	if (w->st.win.bucket - idx >= w->nb)
		return 0;
	if (w->st.past.bucket == (__u32)idx)
		return w->st.past.pkts;
	return c->bucket == (__u32)idx ? c->count : 0;
}

/* One packet through the window alone, as the verdict uses it: roll to
 * `now`, pass iff it fits every budget set, count it only if passed. */
static int wjudge(struct win1 *w, uint64_t now, uint64_t len,
		  uint64_t width, uint32_t nb, uint64_t pb, uint64_t bb)
{
	__u64 p, b;

	wroll(w, now, width, nb);
	wusage(w, now, width, nb, &p, &b);
	if (pb != UNL && p + 1 > pb)
		return 0;
	if (bb != UNL && (b > bb || len > bb - b))
		return 0;
	rl_window_add(&w->st.win, 1, len);
	return 1;
}

/* Send `n` packets at `now`; how many passed. */
static unsigned burst(struct win1 *w, uint64_t now, unsigned n,
		      uint64_t len, uint64_t width, uint32_t nb, uint64_t pb,
		      uint64_t bb)
{
	unsigned passed = 0;

	while (n--)
		passed += wjudge(w, now, len, width, nb, pb, bb);
	return passed;
}

/* The window's own invariants on one CPU: the history holds only buckets
 * before the newest and `past` (pkts and bytes of a slot for the same
 * bucket), and the marker covers every one of them still inside the
 * window. */
static bool window_consistent(const struct win1 *w, uint32_t nb)
{
	__u32 newest = (__u32)w->st.win.bucket;

	for (uint32_t i = 0; i < RL_MAX_BUCKETS; i++) {
		const struct rl_hist_slot *sl = &w->h.slot[i];
		__u32 age = newest - sl->pkts.bucket;

		if (!sl->pkts.count)
			continue;
		if (!CHECK(sl->bytes.count && sl->bytes.bucket == sl->pkts.bucket,
			   "slot %u: bytes of bucket %u, pkts of bucket %u", i,
			   sl->bytes.bucket, sl->pkts.bucket) ||
		    !CHECK(age >= 1, "slot %u holds bucket %u, not before the newest %u",
			   i, sl->pkts.bucket, newest) ||
		    !CHECK(age >= nb || !w->st.past.pkts ||
			   (__u32)(w->st.past.bucket - sl->pkts.bucket) - 1 < RL_MAX_BUCKETS,
			   "slot %u holds bucket %u, not before past %u", i,
			   sl->pkts.bucket, w->st.past.bucket))
			return false;
		if (age < nb && !CHECK(w->st.flushed &&
				       (__u32)(w->st.flushed - 1) - sl->pkts.bucket < RL_MAX_BUCKETS,
				       "slot %u: bucket %u inside the window, marker %" PRIu64,
				       i, sl->pkts.bucket, (uint64_t)w->st.flushed))
			return false;
	}
	return true;
}

/* wusage() must agree with rolling a copy. */
static bool usage_agrees(const struct win1 *w, uint64_t at, uint64_t width,
			 uint32_t nb)
{
	struct win1 c = *w;
	__u64 p, b, cp, cb;

	wusage(w, at, width, nb, &p, &b);
	wroll(&c, at, width, nb);
	wusage(&c, at, width, nb, &cp, &cb);
	return CHECK(p == cp && b == cb,
		     "usage_at(%" PRIu64 ") = %" PRIu64 "/%" PRIu64
		     ", rolled copy holds %" PRIu64 "/%" PRIu64,
		     at, (uint64_t)p, (uint64_t)b, (uint64_t)cp, (uint64_t)cb);
}

TEST(window_rollover)
{
	const uint64_t w = 100;
	struct win1 win = { 0 };

	/* first packet anchors the window on the grid: bucket 12 */
	CHECK_EQ(wjudge(&win, 1234, 10, w, 4, UNL, UNL), 1, "first");
	CHECK_EQ(rl_window_start(&win.st.win, w), 1200, "anchored on the grid");
	CHECK_EQ(win.st.win.bucket, 12, "bucket index");
	/* same bucket up to its last ns */
	CHECK_EQ(wjudge(&win, 1299, 10, w, 4, UNL, UNL), 1, "same bucket");
	CHECK_EQ(rl_window_start(&win.st.win, w), 1200, "no roll inside a bucket");
	CHECK_EQ(wbucket(&win, 12), 2, "bucket 12");
	/* next bucket starts exactly at the boundary */
	wjudge(&win, 1300, 10, w, 4, UNL, UNL);
	CHECK_EQ(rl_window_start(&win.st.win, w), 1300, "rolled at the boundary");
	CHECK_EQ(wbucket(&win, 13), 1, "bucket 13");
	/* skip a bucket: 1500 is two buckets on, bucket at 1400 stays empty */
	wjudge(&win, 1517, 10, w, 4, UNL, UNL);
	CHECK_EQ(rl_window_start(&win.st.win, w), 1500, "start");
	CHECK_EQ(wbucket(&win, 14), 0, "skipped bucket empty");
	CHECK_EQ(wpkts(&win), 4, "all 4 in the window [1200,1600)");
	/* bucket 1200 leaves: its slot is emptied */
	wjudge(&win, 1600, 10, w, 4, UNL, UNL);
	CHECK_EQ(wbucket(&win, 12), 0, "old bucket 1200 emptied");
	CHECK_EQ(wbucket(&win, 16), 1, "bucket 1600");
	CHECK_EQ(wpkts(&win), 3, "the 2 of bucket 1200 left");
	CHECK_EQ(wbytes(&win), 30, "bytes follow");
	window_consistent(&win, 4);
	/* nbuckets 1: every bucket change empties the window */
	memset(&win, 0, sizeof(win));
	CHECK_EQ(burst(&win, 50, 3, 1, w, 1, 3, UNL), 3, "B=1 first bucket");
	CHECK_EQ(burst(&win, 99, 1, 1, w, 1, 3, UNL), 0, "B=1 full");
	CHECK_EQ(burst(&win, 100, 4, 1, w, 1, 3, UNL), 3, "B=1 next bucket");
	window_consistent(&win, 1);
	/* nbuckets 16: the whole ring */
	memset(&win, 0, sizeof(win));
	for (uint64_t i = 0; i < 40; i++) {
		CHECK_EQ(wjudge(&win, i * w, 1, w, 16, UNL, UNL), 1, "B=16");
		CHECK_EQ(wpkts(&win), i + 1 < 16 ? i + 1 : 16, "B=16 window");
		CHECK_EQ(win.st.win.bucket, i, "B=16 bucket");
	}
	window_consistent(&win, 16);
}

TEST(window_budget_edge)
{
	const uint64_t w = 1000;

	for (uint64_t n = 1; n <= 64; n++) {
		struct win1 win = { 0 };
		unsigned passed = 0;

		/* spread over the window's buckets: still exactly n */
		for (uint64_t i = 0; i < 3 * n; i++)
			passed += wjudge(&win, 5000 + i * (9 * w / (3 * n)), 1,
					 w, 10, n, UNL);
		CHECK_EQ(passed, n, "n-th passes, n+1-th not (spread)");
		/* all in one instant */
		memset(&win, 0, sizeof(win));
		CHECK_EQ(burst(&win, 77, (unsigned)n, 1, w, 10, n, UNL), n,
			 "the n-th packet passes");
		CHECK_EQ(burst(&win, 77, 1, 1, w, 10, n, UNL), 0,
			 "the n+1-th does not");
	}
	/* budget 0 never passes */
	struct win1 win = { 0 };
	CHECK_EQ(burst(&win, 0, 5, 1, w, 10, 0, UNL), 0, "budget 0");
	CHECK_EQ(wpkts(&win), 0, "nothing counted");
}

/*
 * Bucket j of a full window holds c_j = j+1 passes. As time moves, each
 * bucket frees exactly its count at the ns it leaves the window (the
 * window is then the bucket of t and the B-1 before it): one ns earlier
 * nothing passes, at the boundary exactly c_j pass.
 */
TEST(window_release_one_by_one)
{
	const uint64_t w = 100 * RL_NSEC_PER_MSEC;
	const uint64_t base = 7 * RL_NSEC_PER_SEC;

	for (uint32_t nb = 1; nb <= RL_MAX_BUCKETS; nb++) {
		struct win1 win = { 0 };
		uint64_t budget = (uint64_t)nb * (nb + 1) / 2;

		for (uint32_t j = 0; j < nb; j++)
			CHECK_EQ(burst(&win, base + j * w + j, j + 1, 100, w, nb,
				       budget, UNL), j + 1, "filling");
		if (!CHECK_EQ(wpkts(&win), budget, "full"))
			return;
		for (uint32_t j = 0; j < 3 * nb; j++) {
			uint64_t edge = base + (nb + j) * w;
			uint64_t frees = j % nb + 1;	/* refilled below */

			usage_agrees(&win, edge - 1, w, nb);
			usage_agrees(&win, edge, w, nb);
			CHECK_EQ(burst(&win, edge - 1, 1, 100, w, nb, budget, UNL),
				 0, "one ns before the bucket leaves");
			CHECK_EQ(burst(&win, edge, (unsigned)frees + 3, 100, w,
				       nb, budget, UNL),
				 frees, "freed exactly at the boundary");
			CHECK_EQ(wpkts(&win), budget, "full again");
			CHECK_EQ(wbytes(&win), budget * 100, "bytes");
			window_consistent(&win, nb);
		}
	}
}

TEST(window_long_gaps)
{
	const uint64_t w = 100 * RL_NSEC_PER_MSEC;
	const uint32_t nb = 10;
	const uint64_t W = w * nb;
	/* gaps from the first packet at t0, and what is still in the window:
	 * the 5 of t0's bucket and the 3 of the bucket before it */
	struct {
		uint64_t gap;
		uint64_t left;
	} cases[] = {
		{ w - 1, 8 },			/* same bucket */
		{ W - w - 1, 8 },
		{ W - w, 5 },			/* last ns of the earlier one */
		{ W - 1, 5 },
		{ W, 0 },			/* t0's bucket too */
		{ W + w / 2, 0 },
		{ RL_MAX_BUCKETS * w - 1, 0 },	/* < ring */
		{ RL_MAX_BUCKETS * w, 0 },	/* == ring */
		{ 3 * RL_MAX_BUCKETS * w + 5, 0 },
		{ 1ULL << 40, 0 },
		{ 1ULL << 62, 0 },
		{ (1ULL << 63) - W, 0 },	/* 292 years on */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct win1 win = { 0 };
		uint64_t t0 = 3 * W + w, t;	/* a bucket start */

		burst(&win, t0 - w, 3, 10, w, nb, 8, UNL);
		burst(&win, t0, 5, 10, w, nb, 8, UNL);
		t = t0 + cases[i].gap;
		usage_agrees(&win, t, w, nb);
		wroll(&win, t, w, nb);
		CHECK_EQ(wpkts(&win), cases[i].left, "left in window after gap");
		CHECK_EQ(wbytes(&win), cases[i].left * 10, "bytes left");
		CHECK_EQ(rl_window_start(&win.st.win, w), t - t % w, "start on the grid");
		window_consistent(&win, nb);
		CHECK_EQ(burst(&win, t, 9, 10, w, nb, 8, UNL), 8 - cases[i].left,
			 "what passes after the gap");
	}
	/* gap of d buckets for every d with nbuckets < d < ring and d >= ring:
	 * a ring smaller than RL_MAX_BUCKETS never reads stale slots */
	for (uint32_t n = 1; n <= RL_MAX_BUCKETS; n++) {
		for (uint64_t d = 0; d <= 2 * RL_MAX_BUCKETS + 1; d++) {
			struct win1 win = { 0 };

			for (uint32_t k = 0; k < n; k++)
				burst(&win, (50 + k) * w, 1, 1, w, n, UNL, UNL);
			wroll(&win, (50 + n - 1 + d) * w, w, n);
			CHECK_EQ(wpkts(&win), d < n ? n - d : 0, "window after d buckets");
			window_consistent(&win, n);
		}
	}
}

TEST(window_byte_budget)
{
	const uint64_t w = 10 * RL_NSEC_PER_MSEC;
	struct win1 win = { 0 };
	const uint64_t bb = 3 * 1500 + 100;

	CHECK_EQ(burst(&win, 1, 3, 1500, w, 4, UNL, bb), 3, "3 full frames");
	CHECK_EQ(burst(&win, 2, 1, 1500, w, 4, UNL, bb), 0, "4th frame over");
	CHECK_EQ(burst(&win, 3, 1, 101, w, 4, UNL, bb), 0, "101 bytes over");
	CHECK_EQ(burst(&win, 3, 1, 100, w, 4, UNL, bb), 1, "100 bytes fit exactly");
	CHECK_EQ(burst(&win, 3, 1, 1, w, 4, UNL, bb), 0, "not a byte more");
	CHECK_EQ(wbytes(&win), bb, "bytes counted: passes only");
	CHECK_EQ(wpkts(&win), 4, "pkts counted: passes only");
	/* a frame larger than the whole budget never passes */
	memset(&win, 0, sizeof(win));
	CHECK_EQ(burst(&win, 1, 3, bb + 1, w, 4, UNL, bb), 0, "frame > budget");
	/* packets and bytes: the tighter one wins */
	memset(&win, 0, sizeof(win));
	CHECK_EQ(burst(&win, 1, 10, 64, w, 4, 5, 1000), 5, "pps tighter");
	memset(&win, 0, sizeof(win));
	CHECK_EQ(burst(&win, 1, 10, 300, w, 4, 5, 1000), 3, "bps tighter");
	/* bytes leave with their bucket */
	CHECK_EQ(burst(&win, 4 * w - 1, 1, 100, w, 4, 5, 1000), 1, "100 of 1000 left");
	CHECK_EQ(burst(&win, 4 * w - 1, 1, 1, w, 4, 5, 1000), 0, "then full");
	CHECK_EQ(burst(&win, 4 * w, 4, 300, w, 4, 5, 1000), 3,
		 "900 freed at the boundary");
	window_consistent(&win, 4);
}

/* A source at twice its quota still gets its quota through, in every
 * window position: drops take nothing from the window. */
TEST(window_drops_not_counted)
{
	const uint64_t w = 100, budget = 50;
	const uint32_t nb = 10;
	/* 100 packets per window, evenly spaced: 10 per bucket */
	struct win1 win = { 0 };
	uint64_t passed_in[400] = { 0 };
	uint64_t dropped = 0;

	for (uint64_t i = 0; i < 4000; i++) {
		uint64_t t = i * 10 + 3;

		if (wjudge(&win, t, 1, w, nb, budget, UNL))
			passed_in[t / w]++;
		else
			dropped++;
	}
	CHECK_EQ(dropped, 2000, "half dropped");
	/* passes of any nb consecutive buckets: exactly the budget, once
	 * the first window is through */
	for (uint64_t k = nb - 1; k < 400; k++) {
		uint64_t sum = 0;

		for (uint64_t j = k + 1 - nb; j <= k; j++)
			sum += passed_in[j];
		if (!CHECK_EQ(sum, budget, "passes per window at 2x quota"))
			break;
	}
}

/*
 * The clock wraps at 2^64: the window stays continuous (a pass just
 * before the wrap still counts just after it, and leaves exactly B
 * buckets after its own), for a width dividing 2^64 and for one that
 * does not (100 ms: its grid continues across the wrap while the window
 * holds passes; an empty window anchors on the u64 grid again).
 */
TEST(window_clock_wrap)
{
	const uint64_t widths[] = { 1ULL << 20, 100 * RL_NSEC_PER_MSEC, 3 };
	const uint32_t nb = 4;

	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		uint64_t w = widths[i];
		uint64_t top = ~0ULL - ~0ULL % w;	/* last grid point < 2^64 */
		struct win1 win = { 0 };
		struct model m;
		uint64_t t;

		/* 4 passes in the last bucket before the wrap */
		CHECK_EQ(burst(&win, top, 4, 1, w, nb, 6, UNL), 4, "before wrap");
		CHECK_EQ(rl_window_start(&win.st.win, w), top, "newest bucket before the wrap");
		/* right after the wrap, still counted: only 2 more pass */
		t = top + w;			/* wraps */
		CHECK_EQ(burst(&win, t, 3, 1, w, nb, 6, UNL), 2, "after wrap");
		CHECK_EQ(rl_window_start(&win.st.win, w), t, "continuous grid across the wrap");
		CHECK_EQ(wpkts(&win), 6, "both buckets count");
		/* the pre-wrap bucket leaves exactly nb buckets after its start */
		t = top + nb * w;
		usage_agrees(&win, t - 1, w, nb);
		usage_agrees(&win, t, w, nb);
		CHECK_EQ(burst(&win, t - 1, 1, 1, w, nb, 6, UNL), 0, "1 ns before");
		CHECK_EQ(burst(&win, t, 5, 1, w, nb, 6, UNL), 4, "freed at its edge");
		window_consistent(&win, nb);
		/* an empty window after the wrap keeps its grid: every CPU's
		 * index counts on from the same anchor, and the history's
		 * slots are tagged by index */
		t += 10 * nb * w;
		wroll(&win, t, w, nb);
		CHECK_EQ(wpkts(&win), 0, "emptied");
		CHECK_EQ(burst(&win, t, 1, 1, w, nb, 6, UNL), 1, "fresh window");
		CHECK_EQ(rl_window_start(&win.st.win, w), top + (t - top) / w * w,
			 "the grid continues");

		/* same run through the model with a 128-bit clock */
		model_init(&m, w, nb, 6, UNL);
		memset(&win, 0, sizeof(win));
		u128 T = (u128)~0ULL - 5 * w;
		uint64_t seed = 42;
		for (int k = 0; k < 20000; k++) {
			uint64_t got, want;

			T += rng_range(&seed, 0, w / 2 + 1);
			got = wjudge(&win, (uint64_t)T, 1, w, nb, 6, UNL);
			want = model_judge(&m, T, 1);
			/* gaps under a bucket never let the window empty, so
			 * its grid stays the 128-bit model's across the wrap */
			if (!CHECK_EQ(got, want, "verdict vs model across the wrap"))
				break;
		}
		model_free(&m);
	}
}

/* A clock slightly behind the newest bucket counts into the newest bucket
 * (window.h): such passes leave with that bucket, not earlier. */
TEST(window_clock_backwards)
{
	const uint64_t w = 100;
	const uint32_t nb = 4;
	struct win1 win = { 0 };

	CHECK_EQ(burst(&win, 1050, 2, 1, w, nb, 5, UNL), 2, "bucket 1000");
	CHECK_EQ(burst(&win, 1110, 1, 1, w, nb, 5, UNL), 1, "bucket 1100");
	/* back 20 ns into bucket 1000: counted in 1100 */
	CHECK_EQ(burst(&win, 1090, 1, 1, w, nb, 5, UNL), 1, "behind");
	CHECK_EQ(rl_window_start(&win.st.win, w), 1100, "start does not move back");
	CHECK_EQ(wbucket(&win, win.st.win.bucket), 2, "counted in the newest bucket");
	/* far behind (before the whole window): still the newest bucket */
	CHECK_EQ(burst(&win, 10, 1, 1, w, nb, 5, UNL), 1, "far behind");
	CHECK_EQ(burst(&win, 10, 1, 1, w, nb, 5, UNL), 0, "budget holds behind");
	CHECK_EQ(rl_window_start(&win.st.win, w), 1100, "still 1100");
	/* at 1400 bucket 1000 leaves: 2 free, not 3 */
	CHECK_EQ(burst(&win, 1400, 5, 1, w, nb, 5, UNL), 2, "bucket 1000 left");
	/* at 1500 bucket 1100 with its 3 leaves */
	CHECK_EQ(burst(&win, 1500, 5, 1, w, nb, 5, UNL), 3, "bucket 1100 left");
	window_consistent(&win, nb);
	/* the time before `start` in a signed sense: a clock 1 ns behind a
	 * start near 0 is a wrap backwards, not a huge jump forwards */
	memset(&win, 0, sizeof(win));
	CHECK_EQ(burst(&win, 5, 2, 1, w, nb, 3, UNL), 2, "at 5");
	CHECK_EQ(burst(&win, ~0ULL, 2, 1, w, nb, 3, UNL), 1, "at -1: same window");
	CHECK_EQ(rl_window_start(&win.st.win, w), 0, "start kept");
	/* behind an empty window: counted in its newest bucket too (the
	 * index never moves back: the history is tagged by index) */
	memset(&win, 0, sizeof(win));
	burst(&win, 5000, 1, 1, w, nb, 3, UNL);
	wroll(&win, 9000, w, nb);
	CHECK_EQ(burst(&win, 5010, 1, 1, w, nb, 3, UNL), 1, "behind an empty window");
	CHECK_EQ(rl_window_start(&win.st.win, w), 9000, "the newest bucket");
}

/* ---- random steps against the model ------------------------------------ */

struct wcfg {
	uint64_t width;
	uint32_t nb;
	uint64_t pb, bb;
	uint64_t minlen, maxlen;
};

static void random_cfg(uint64_t *s, struct wcfg *c)
{
	switch (rng_range(s, 0, 3)) {
	case 0:
		c->width = rng_range(s, 1, 20);			/* tiny */
		break;
	case 1:
		c->width = 1ULL << rng_range(s, 0, 30);		/* 2^k */
		break;
	case 2:
		c->width = rng_range(s, 1, 1000) * RL_NSEC_PER_MSEC;
		break;
	default:
		c->width = rng_range(s, 1, 1ULL << 32);
		break;
	}
	c->nb = (uint32_t)rng_range(s, 1, RL_MAX_BUCKETS);
	c->minlen = rng_range(s, 1, 64);
	c->maxlen = c->minlen + rng_range(s, 0, rng_range(s, 0, 1) ? 0 : 1500);
	c->pb = UNL;
	c->bb = UNL;
	switch (rng_range(s, 0, 3)) {
	case 0:
		c->pb = rng_range(s, 0, rng_range(s, 0, 1) ? 8 : 500);
		break;
	case 1:
		c->bb = rng_range(s, 0, 40 * c->maxlen);
		break;
	default:
		c->pb = rng_range(s, 1, 300);
		c->bb = rng_range(s, c->minlen, 100 * c->maxlen);
		break;
	}
}

/* A gap between packets: mostly a fraction of a bucket, sometimes a few
 * buckets, a window, a ring or more, rarely huge; sometimes backwards. */
static int64_t random_gap(uint64_t *s, const struct wcfg *c)
{
	uint64_t r = rng_range(s, 0, 999);
	uint64_t w = c->width, W = c->width * c->nb;

	if (r < 700)
		return (int64_t)rng_range(s, 0, w / 8 + 1);
	if (r < 900)
		return (int64_t)rng_range(s, 0, w);
	if (r < 960)
		return (int64_t)rng_range(s, 0, 3 * w);
	if (r < 975)
		return (int64_t)rng_range(s, W - w, W + w);
	if (r < 985)
		return (int64_t)rng_range(s, 0, 2 * RL_MAX_BUCKETS * w);
	if (r < 987)
		return (int64_t)rng_range(s, 0, 1ULL << 50);
	return -(int64_t)rng_range(s, 0, w + 1);	/* slightly backwards */
}

static bool model_run(uint64_t seed, uint64_t steps)
{
	uint64_t s = seed, done = 0, segs = 0, passed = 0, wraps = 0, back = 0;

	while (done < steps) {
		struct wcfg c;
		struct win1 win = { 0 };
		struct model m;
		uint64_t n = rng_range(&s, 100, 20000);
		u128 T;

		random_cfg(&s, &c);
		/* near the wrap when the grids agree, else anywhere sane (not
		 * for a width of 1 ns: its index itself wraps to 0, which
		 * reads as a state never used; no real width gets there) */
		if (!(c.width & (c.width - 1)) && c.width > 1 && rng_range(&s, 0, 3) == 0) {
			T = (u128)~0ULL - rng_range(&s, 0, 4 * c.width * c.nb);
			wraps++;
		} else
			T = rng_range(&s, 0, 1ULL << 62) + c.width * RL_MAX_BUCKETS;
		model_init(&m, c.width, c.nb, c.pb, c.bb);
		for (uint64_t i = 0; i < n; i++, done++) {
			int64_t gap = random_gap(&s, &c);
			uint64_t len = rng_range(&s, c.minlen, c.maxlen);
			int got, want;

			if (gap < 0 && (u128)(-gap) > T)
				gap = 0;
			back += gap < 0;
			T += gap;
			got = wjudge(&win, (uint64_t)T, len, c.width, c.nb, c.pb, c.bb);
			want = model_judge(&m, T, len);
			passed += got;
			if (got != want || wpkts(&win) != m.n || wbytes(&win) != m.bytes) {
				CHECK(false,
				      "seed %#" PRIx64 " segment %" PRIu64 " step %" PRIu64
				      ": width %" PRIu64 " nb %u pb %" PRIu64 " bb %" PRIu64
				      " t %" PRIu64 " len %" PRIu64 ": verdict %d (model %d),"
				      " window %" PRIu64 "/%" PRIu64 " (model %zu/%" PRIu64 ")",
				      seed, segs, i, c.width, c.nb, c.pb, c.bb,
				      (uint64_t)T, len, got, want, (uint64_t)wpkts(&win),
				      (uint64_t)wbytes(&win), m.n, m.bytes);
				model_free(&m);
				return false;
			}
			if ((i & 1023) == 0) {
				if (!window_consistent(&win, c.nb) ||
				    !usage_agrees(&win, (uint64_t)T + (uint64_t)random_gap(&s, &c),
						  c.width, c.nb)) {
					printf("    seed %#" PRIx64 " segment %" PRIu64 "\n",
					       seed, segs);
					model_free(&m);
					return false;
				}
			}
		}
		model_free(&m);
		segs++;
	}
	printf("    %" PRIu64 " steps, seed %#" PRIx64 ": %" PRIu64 " configs (%" PRIu64
	       " across the wrap), %" PRIu64 " passed, %" PRIu64 " dropped, %" PRIu64
	       " clock steps back\n", done, seed, segs, wraps, passed, done - passed, back);
	return true;
}

TEST(window_vs_model_random)
{
	uint64_t seed = rng_seed(0x5eed0001);

	model_run(seed, 5000000);
}
