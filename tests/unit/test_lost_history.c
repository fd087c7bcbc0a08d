// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A past bucket that cannot go into the history fails closed (window.h
 * rl_roll_apply): the history could not be had (h NULL: the entry could
 * not be created), or its compare-and-swap gave up after RL_HIST_TRIES
 * (more CPUs than that flushing the same budget at a bucket edge). Then
 * the roll keeps the bucket's counts in `past`, tagged one bucket or more
 * younger: counted longer, never less. Before, the bucket was dropped: a
 * source passed 180 in a window of 100.
 *
 * One CPU passes at random, at most its budget by its own reading; after
 * every pass, a reader (rl_usage_add, rl_usage_history) must count at least
 * what the window truly holds: this CPU's passes in its buckets, and the
 * counts the other CPUs (the hook below) put in the history.
 */
#include <stdio.h>
#include <string.h>
#include "ratelimit.h"

static __u64 cas_hook(__u64 *p, __u64 old, __u64 new);
#define RL_CAS(p, old, new) cas_hook((p), (old), (new))
#include "quota.h"
#include "model.h"
#include "harness.h"

#define MAX_PASSES 100000

/* what the window truly holds: every count, with its bucket index */
static struct { uint64_t idx, pkts, bytes; } truth[MAX_PASSES];
static size_t ntruth;
static struct rl_history hist;
/* compare-and-swaps on a history slot to lose: each is another CPU that
 * adds its own count (1 packet, 100 bytes) of the same bucket in between */
static int steal;

static __u64 cas_hook(__u64 *p, __u64 old, __u64 new)
{
	if (steal > 0 && p != &hist.newest) {
		union rl_hist_count o = { .word = old }, n = { .word = new }, w;
		int pkts = ((uint64_t *)p - (uint64_t *)hist.slot) % 2 == 0;

		steal--;
		w.bucket = n.bucket;
		w.count = (o.count && o.bucket == n.bucket ? o.count : 0) + (pkts ? 1 : 100);
		*p = w.word;
		if (ntruth < MAX_PASSES) {
			truth[ntruth].idx = n.bucket;
			truth[ntruth].pkts = pkts;
			truth[ntruth++].bytes = pkts ? 0 : 100;
		}
	}
	return __sync_val_compare_and_swap(p, old, new);
}

static void window_truth(uint64_t e, uint32_t nb, __u64 *p, __u64 *b)
{
	*p = *b = 0;
	for (size_t i = 0; i < ntruth; i++) {
		if (truth[i].idx + nb > e && truth[i].idx <= e) {
			*p += truth[i].pkts;
			*b += truth[i].bytes;
		}
	}
}

/* What another CPU's refresh counts of `st` and the history at `now`. */
static void reader(const struct rl_state *st, uint64_t now, uint64_t width,
		   uint32_t nb, __u64 *p, __u64 *b)
{
	uint64_t bucket = rl_window_bucket_at(&st->win, now, width);
	struct rl_usage u = { 0 };

	rl_usage_add(&u, st, now, bucket, width, nb, 1);
	if (u.hist)
		rl_usage_history(&u, &hist, bucket, nb);
	*p = u.pkts;
	*b = u.bytes;
}

/*
 * `runs` random runs; in each roll the history is out of reach with
 * probability `lost_pct` (h NULL), or its compare-and-swaps are lost
 * RL_HIST_TRIES times or more with probability `steal_pct`. Returns the
 * rolls that lost their history.
 */
static uint64_t run(uint64_t seed, int runs, int lost_pct, int steal_pct)
{
	uint64_t s = seed, lost = 0;

	for (int r = 0; r < runs; r++) {
		uint32_t nb = (uint32_t)rng_range(&s, 3, RL_MAX_BUCKETS);
		uint64_t width = rng_range(&s, 1, 100) * 1000;
		uint64_t budget = rng_range(&s, 5, 60);
		uint64_t t = rng_range(&s, 1, 1 << 20) * width;
		struct rl_state st;

		memset(&st, 0, sizeof(st));
		memset(&hist, 0, sizeof(hist));
		ntruth = 0;
		for (int i = 0; i < 400 && ntruth < MAX_PASSES - 64; i++) {
			__u64 p, b, tp, tb;
			struct rl_history *h = &hist;

			t += rng_range(&s, 0, rng_range(&s, 0, 3) ? width / 2 : 3 * width);
			if ((int)rng_range(&s, 1, 100) <= lost_pct)
				h = NULL;
			steal = (int)rng_range(&s, 1, 100) <= steal_pct ?
				RL_HIST_TRIES + (int)rng_range(&s, 0, 4) : 0;
			{
				__u64 to = 0;
				int plan = rl_roll_plan(&st, t, width, nb, &to);

				lost += (plan & RL_ROLL_FLUSH) && (!h || steal);
				rl_roll_apply(&st, h, plan, to);
			}
			steal = 0;
			/* pass while this CPU's reading leaves room */
			reader(&st, t, width, nb, &p, &b);
			if (p < budget) {
				rl_window_add(&st.win, 1, 100);
				truth[ntruth].idx = st.win.bucket;
				truth[ntruth].pkts = 1;
				truth[ntruth++].bytes = 100;
			}
			reader(&st, t, width, nb, &p, &b);
			window_truth(st.win.bucket, nb, &tp, &tb);
			if (!CHECK(p >= tp && b >= tb,
				   "seed %#llx run %d step %d: read %llu pkts %llu B, "
				   "the window holds %llu pkts %llu B (nb %u)",
				   (unsigned long long)seed, r, i,
				   (unsigned long long)p, (unsigned long long)b,
				   (unsigned long long)tp, (unsigned long long)tb, nb))
				return lost;
		}
	}
	return lost;
}

TEST(lost_history_fails_closed)
{
	uint64_t lost = run(rng_seed(0x5eed0022), 300, 30, 0);

	printf("    %llu rolls without their history\n",
	       (unsigned long long)lost);
	CHECK(lost > 100, "the runs must lose the history: %llu", (unsigned long long)lost);
}

TEST(history_cas_exhausted_fails_closed)
{
	uint64_t lost = run(rng_seed(0x5eed0023), 300, 0, 30);

	printf("    %llu rolls whose compare-and-swap gave up\n",
	       (unsigned long long)lost);
	CHECK(lost > 100, "the runs must exhaust the compare-and-swap: %llu",
	      (unsigned long long)lost);
}
