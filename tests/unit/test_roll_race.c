// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A roll seen from another CPU (a "torn roll"): the cross-CPU sum reads a
 * CPU's state while that CPU may be in the middle of rolling it, adding its
 * newest bucket to the shared history. A reader must then count at least
 * what the window holds in the reader's window, never less: an under-count
 * lets the reader's CPU pass what the other CPU already passed. window.h
 * calls RL_ROLL_STEP after each store of a roll (and after each
 * compare-and-swap on the history); here it records the state and the
 * history after every one, and a reader is replayed on every mix of them
 * its loads could see: the index from one state, the counts from the same
 * or a later one, the marker from the same or a later one still, and the
 * history after that (rl_usage_add, then rl_usage_history).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "ratelimit.h"

struct rl_state;
static void roll_step(const struct rl_state *st);
#define RL_ROLL_STEP(st) roll_step(st)
#include "quota.h"
#include "model.h"
#include "harness.h"

#define MAX_STEPS 12

static struct rl_state steps[MAX_STEPS];
static struct rl_history hsteps[MAX_STEPS];
static struct rl_history hist;
static int nsteps, recording;

static void roll_step(const struct rl_state *st)
{
	if (recording && nsteps < MAX_STEPS) {
		steps[nsteps] = *st;
		hsteps[nsteps++] = hist;
	}
}

/* What the window truly holds at `at` (every live history slot, the
 * newest bucket if live). */
static void holds(const struct rl_state *st, const struct rl_history *h,
		  uint64_t at, uint64_t width, uint32_t nb, __u64 *p, __u64 *b)
{
	uint64_t bucket = rl_window_bucket_at(&st->win, at, width);

	rl_window_usage_at(&st->win, at, width, nb, p, b);
	rl_past_usage(&st->past, bucket, nb, p, b);
	rl_hist_usage(h, bucket, nb, p, b);
}

/* What a reader computes from the index of `a`, the newest counts of `b`,
 * the past bucket of `c` (tag and counts from `c` and `c2`: three loads),
 * the marker of `d` and the history `h` (its loads in that order). */
static void read_mixed(const struct rl_state *a, const struct rl_state *b,
		       const struct rl_state *c, const struct rl_state *c2,
		       const struct rl_state *d, const struct rl_history *h,
		       uint64_t rbucket, uint64_t now, uint64_t width,
		       uint32_t nb, __u64 *p, __u64 *by)
{
	struct rl_state x = *d;
	struct rl_usage u = { 0 };

	x.lease.state = 0;	/* leases are not what this test is about */
	x.win.bucket = a->win.bucket;
	x.win.pkts = b->win.pkts;
	x.win.bytes = b->win.bytes;
	x.past.bucket = c->past.bucket;
	x.past.pkts = c->past.pkts;
	x.past.bytes = c2->past.bytes;
	rl_usage_add(&u, &x, now, rbucket, width, nb, 1);
	if (u.hist)
		rl_usage_history(&u, h, rbucket, nb);
	*p = u.pkts;
	*by = u.bytes;
}

/* Fill a window with passes at random over a few windows' time; returns
 * the time of the last one. */
static uint64_t fill(struct rl_state *st, uint64_t *s, uint64_t t,
		     uint64_t width, uint32_t nb)
{
	uint64_t n = rng_range(s, 1, 200);

	for (uint64_t i = 0; i < n; i++) {
		t += rng_range(s, 0, rng_range(s, 0, 3) ? width / 4 : 2 * width);
		rl_state_roll(st, &hist, t, width, nb);
		rl_window_add(&st->win, rng_range(s, 1, 3), rng_range(s, 60, 1500));
	}
	return t;
}

TEST(roll_seen_mid_way_never_undercounts)
{
	uint64_t seed = rng_seed(0x5eed0012), s = seed;
	uint64_t cases = 0, reads = 0, over = 0, flushes = 0;

	for (int run = 0; run < 1500; run++) {
		uint32_t nb = (uint32_t)rng_range(&s, 1, RL_MAX_BUCKETS);
		uint64_t width = rng_range(&s, 0, 1) ? rng_range(&s, 1, 50) :
				 rng_range(&s, 1, 1000) * RL_NSEC_PER_MSEC;
		struct rl_state st, before;
		struct rl_history hbefore;
		uint64_t t, tw, tr;

		memset(&st, 0, sizeof(st));
		memset(&hist, 0, sizeof(hist));
		t = fill(&st, &s, rng_range(&s, 1, 1ULL << 30) * width, width, nb);
		/* the roll: a bucket or a few on (the newest goes to the
		 * history), or a window or more (it is dropped) */
		tw = t + rng_range(&s, width, (nb + 2) * width);
		before = st;
		hbefore = hist;
		nsteps = 0;
		steps[nsteps] = st;
		hsteps[nsteps++] = hist;
		recording = 1;
		rl_state_roll(&st, &hist, tw, width, nb);
		recording = 0;
		cases++;
		flushes += st.flushed != before.flushed;
		/* a reader on another CPU whose clock reads the same or later */
		for (int k = 0; k < 4; k++) {
			tr = tw + (k ? rng_range(&s, 0, nb * width) : 0);
			uint64_t rb = rl_window_bucket_at(&before.win, tr, width);
			__u64 want_p, want_b;

			holds(&before, &hbefore, tr, width, nb, &want_p, &want_b);
			for (int a = 0; a < nsteps; a++)
			for (int b = a; b < nsteps; b++)
			for (int c = b; c < nsteps; c++)
			for (int c2 = c; c2 < nsteps; c2++)
			for (int d = c2; d < nsteps; d++)
			for (int e = d; e < nsteps; e++) {
				__u64 p, by;

				read_mixed(&steps[a], &steps[b], &steps[c], &steps[c2],
					   &steps[d], &hsteps[e], rb, tr, width, nb, &p, &by);
				reads++;
				over += p > want_p;
				if (p < want_p || by < want_b) {
					CHECK(false,
					      "seed %#" PRIx64 " run %d: nb %u width %"
					      PRIu64 ", roll %" PRIu64 " buckets on, read"
					      " %" PRIu64 " ns later from stores %d/%d/%d/%d/%d/%d"
					      " of %d: %" PRIu64 " packets / %" PRIu64
					      " bytes, the window holds %" PRIu64 " / %"
					      PRIu64, seed, run, nb, width,
					      (tw - t) / width, tr - tw, a, b, c, c2, d, e,
					      nsteps - 1, (uint64_t)p, (uint64_t)by,
					      (uint64_t)want_p, (uint64_t)want_b);
					return;
				}
			}
		}
	}
	printf("    %" PRIu64 " rolls (%" PRIu64 " into the history), %" PRIu64
	       " reads at every store and mix of stores: none under, %" PRIu64
	       " over (seed %#" PRIx64 ")\n", cases, flushes, reads, over, seed);
	CHECK(flushes > cases / 4, "rolls into the history were tried");
}
