// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * --burst (include/quota.h rl_usage_burst) on simulated CPUs and a
 * simulated clock, judged as the program judges a source (judge.h): no
 * bucket ever passes more than the burst, all CPUs together, nor any
 * window more than the budget; a source that sends steadily still gets
 * the burst in every bucket (one CPU: exactly).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "judge.h"
#include "model.h"
#include "harness.h"

#define NB	10
#define WIDTH	(100 * RL_NSEC_PER_MSEC)
#define GEN	2

struct burst_run {
	uint64_t per_bucket[400];
	uint64_t passed;
};

/* `per` packets a bucket for `buckets` buckets, on CPUs picked at random
 * among `ncpus`, at random times inside each bucket. */
static void run(uint64_t seed, uint32_t ncpus, const struct rl_budget *b,
		int buckets, int per, struct burst_run *r)
{
	struct rl_state all[8];
	struct rl_history h;
	uint64_t s = seed, t0 = 5000 * WIDTH;

	memset(all, 0, sizeof(all));
	memset(&h, 0, sizeof(h));
	memset(r, 0, sizeof(*r));
	for (int k = 0; k < buckets; k++) {
		uint64_t t = t0 + k * WIDTH;

		for (int i = 0; i < per; i++) {
			uint32_t self = (uint32_t)rng_range(&s, 0, ncpus - 1);

			t += rng_range(&s, 0, WIDTH / (2 * per));
			if (judge(all, &h, ncpus, self, b, t, 100, GEN, WIDTH, NB,
				  NULL) == RL_FITS) {
				rl_quota_commit(&all[self], 100);
				r->per_bucket[k]++;
				r->passed++;
			}
		}
	}
}

TEST(burst_one_cpu_exact)
{
	struct rl_budget b = { 30, RL_UNLIMITED, 4 };
	struct burst_run r;

	run(1, 1, &b, 40, 12, &r);
	for (int k = 0; k < 40; k++) {
		/* 4 a bucket while the window holds 30: 7 buckets of 4, then
		 * 2, then what the window frees as buckets leave it */
		uint64_t want = k % 10 < 7 ? 4 : k % 10 == 7 ? 2 : 0;

		if (!CHECK_EQ(r.per_bucket[k], want, "bucket"))
			printf("    bucket %d\n", k);
	}
}

/* A burst alone (quota set --burst without --pps: the largest budget). */
TEST(burst_alone_every_bucket)
{
	struct rl_budget b = { RL_MAX_BUDGET, RL_UNLIMITED, 3 };
	struct burst_run r;

	run(2, 1, &b, 100, 20, &r);
	for (int k = 0; k < 100; k++)
		CHECK_EQ(r.per_bucket[k], 3, "bucket");
}

TEST(burst_many_cpus_bound)
{
	uint64_t s = 0xb0257;

	for (int i = 0; i < 300; i++) {
		uint32_t ncpus = (uint32_t)rng_range(&s, 2, 8);
		__u64 burst = rng_range(&s, 1, 40);
		__u64 pkts = rng_range(&s, burst, 400);
		struct rl_budget b = { pkts, RL_UNLIMITED, burst };
		int per = (int)rng_range(&s, 1, 3 * (int)burst);
		struct burst_run r;
		uint64_t low = 0;

		run(rng_next(&s), ncpus, &b, 200, per, &r);
		for (int k = 0; k < 200; k++) {
			uint64_t win = 0;

			if (!CHECK(r.per_bucket[k] <= burst,
				   "ncpus %u burst %llu: bucket %d passed %" PRIu64,
				   ncpus, (unsigned long long)burst, k, r.per_bucket[k]))
				return;
			for (int j = k >= NB - 1 ? k - NB + 1 : 0; j <= k; j++)
				win += r.per_bucket[j];
			if (!CHECK(win <= pkts, "window %d passed %" PRIu64 " of %llu",
				   k, win, (unsigned long long)pkts))
				return;
			/* a sender under the burst and the budget loses
			 * (almost) nothing to the cap: what another CPU
			 * leased and left unused is freed only when it
			 * asks again or the bucket ends: at most 5% */
			if ((__u64)per <= burst && (__u64)per * NB <= pkts)
				low += (uint64_t)per - r.per_bucket[k];
		}
		if (!CHECK(low * 20 <= (uint64_t)per * 200, "ncpus %u burst %llu per %d: %"
			   PRIu64 " packets short of a sender under the cap",
			   ncpus, (unsigned long long)burst, per, low))
			return;
		if (low)
			printf("    ncpus %u burst %llu per %d: %" PRIu64 " of %d short\n",
			       ncpus, (unsigned long long)burst, per, low, per * 200);
	}
}
