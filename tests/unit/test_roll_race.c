// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A roll seen from another CPU (a "torn roll"): the cross-CPU sum
 * reads a window while its own CPU may be in the middle of rolling it. A
 * reader must then count at least what the window holds in the reader's
 * window, never less: an under-count lets the reader's CPU pass what the
 * other CPU already passed. window.h calls RL_ROLL_STEP after each store of
 * a roll; here it records the window after every store, and a reader is
 * replayed on every such state, and on every mix of them its loads could
 * see (the index from one state, the totals from the same or a later one,
 * the slots from the same or a later one still).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "ratelimit.h"

struct rl_window;
static void roll_step(const struct rl_window *w);
#define RL_ROLL_STEP(w) roll_step(w)
#include "window.h"
#include "model.h"
#include "harness.h"

#define MAX_STEPS (4 * RL_MAX_BUCKETS + 8)

static struct rl_window steps[MAX_STEPS];
static int nsteps, recording;

static void roll_step(const struct rl_window *w)
{
	if (recording && nsteps < MAX_STEPS)
		steps[nsteps++] = *w;
}

/* What a reader computes from the index of `a`, the totals of `b` and the
 * slots of `c` (its loads in that order: rl_window_usage_at). */
static void read_mixed(const struct rl_window *a, const struct rl_window *b,
		       const struct rl_window *c, uint64_t now, uint64_t width,
		       uint32_t nb, __u64 *p, __u64 *by)
{
	struct rl_window x = *c;

	x.bucket = a->bucket;
	x.pkts = b->pkts;
	x.bytes = b->bytes;
	rl_window_usage_at(&x, now, width, nb, p, by);
}

/* Fill a window with passes at random over a few windows' time; returns
 * the time of the last one. */
static uint64_t fill(struct rl_window *w, uint64_t *s, uint64_t t,
		     uint64_t width, uint32_t nb)
{
	uint64_t n = rng_range(s, 1, 200);

	for (uint64_t i = 0; i < n; i++) {
		t += rng_range(s, 0, rng_range(s, 0, 3) ? width / 4 : 2 * width);
		rl_window_roll(w, t, width, nb);
		rl_window_add(w, rng_range(s, 1, 3), rng_range(s, 60, 1500));
	}
	return t;
}

TEST(roll_seen_mid_way_never_undercounts)
{
	uint64_t seed = rng_seed(0x5eed0012), s = seed;
	uint64_t cases = 0, reads = 0, over = 0;

	for (int run = 0; run < 4000; run++) {
		uint32_t nb = (uint32_t)rng_range(&s, 1, RL_MAX_BUCKETS);
		uint64_t width = rng_range(&s, 0, 1) ? rng_range(&s, 1, 50) :
				 rng_range(&s, 1, 1000) * RL_NSEC_PER_MSEC;
		struct rl_window w = { 0 }, before;
		uint64_t t = fill(&w, &s, rng_range(&s, 1, 1ULL << 50) * width, width, nb);
		uint64_t tw, tr;

		/* the roll: a few buckets on (some slots leave), or a window
		 * or more (the ring empties at once) */
		tw = t + rng_range(&s, width, (nb + 2) * width);
		before = w;
		nsteps = 0;
		steps[nsteps++] = w;
		recording = 1;
		rl_window_roll(&w, tw, width, nb);
		recording = 0;
		cases++;
		/* a reader on another CPU whose clock reads the same or later */
		for (int k = 0; k < 4; k++) {
			tr = tw + (k ? rng_range(&s, 0, nb * width) : 0);
			__u64 want_p, want_b;

			rl_window_usage_at(&before, tr, width, nb, &want_p, &want_b);
			for (int a = 0; a < nsteps; a++)
				for (int b = a; b < nsteps; b++)
					for (int c = b; c < nsteps; c++) {
						__u64 p, by;

						read_mixed(&steps[a], &steps[b], &steps[c], tr,
							   width, nb, &p, &by);
						reads++;
						over += p > want_p;
						if (p < want_p || by < want_b) {
							CHECK(false,
							      "seed %#" PRIx64 " run %d: nb %u width %"
							      PRIu64 ", roll %" PRIu64 " buckets on, read"
							      " %" PRIu64 " ns later from stores %d/%d/%d"
							      " of %d: %" PRIu64 " packets / %" PRIu64
							      " bytes, the window holds %" PRIu64 " / %"
							      PRIu64, seed, run, nb, width,
							      (tw - t) / width, tr - tw, a, b, c,
							      nsteps - 1, (uint64_t)p, (uint64_t)by,
							      (uint64_t)want_p, (uint64_t)want_b);
							return;
						}
					}
		}
	}
	printf("    %" PRIu64 " rolls, %" PRIu64 " reads at every store and mix of"
	       " stores: none under, %" PRIu64 " over (seed %#" PRIx64 ")\n",
	       cases, reads, over, seed);
}
