// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The CPUs a refresh reads (include/cpus.h): the joined ones' bits and end,
 * and the one interleaving that the join's order exists for: a CPU that
 * joins while another's refresh is between its reads.
 */
#include <inttypes.h>
#include <string.h>
#include "ratelimit.h"
#include "quota.h"
#include "cpus.h"
#include "harness.h"

#define UNL RL_UNLIMITED

TEST(cpus_end_is_past_the_highest_joined)
{
	struct rl_cpus c = { 0 };
	static const struct {
		__u32 cpu, end;
	} steps[] = { { 0, 1 }, { 5, 6 }, { 2, 6 }, { 63, 64 }, { 64, 65 }, { 200, 201 },
		      { 255, 256 } };

	CHECK_EQ(rl_cpus_end(&c, 512), 0, "none joined: none to read");
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		rl_cpus_join(&c, steps[i].cpu);
		CHECK(rl_cpus_end(&c, 512) == steps[i].end, "end %u after CPU %u joined, want %u",
		      rl_cpus_end(&c, 512), steps[i].cpu, steps[i].end);
		CHECK_EQ(rl_cpus_end(&c, 100), steps[i].end < 100 ? steps[i].end : 100,
			 "end capped at the possible CPUs");
	}
	for (__u32 cpu = 0; cpu < RL_CPUS_BITS; cpu++) {
		int want = cpu == 0 || cpu == 2 || cpu == 5 || cpu == 63 || cpu == 64 ||
			   cpu == 200 || cpu == 255;

		if (!CHECK(rl_cpus_has(&c, cpu) == want, "CPU %u: joined %d, want %d", cpu,
			   rl_cpus_has(&c, cpu), want))
			break;
	}
	CHECK_EQ(rl_cpus_has(&c, RL_CPUS_BITS + 3), 0, "no CPU past the bits yet");
	rl_cpus_join(&c, RL_CPUS_BITS + 3);
	CHECK_EQ(rl_cpus_end(&c, 1024), 1024, "one past the bits: every CPU is read");
	CHECK_EQ(rl_cpus_has(&c, RL_CPUS_BITS + 9), 1, "past the bits: all read");
	CHECK_EQ(rl_cpus_has(&c, 7), 0, "a CPU below that never joined: still skipped");
}

TEST(cpus_join_is_idempotent)
{
	struct rl_cpus c = { 0 }, once;

	rl_cpus_join(&c, 70);
	once = c;
	rl_cpus_join(&c, 70);
	CHECK(!memcmp(&c, &once, sizeof(c)), "joining again changes nothing");
	CHECK_EQ(c.seen[1], 1ULL << 6, "CPU 70: bit 6 of word 1");
}

enum { NCPUS = 64, NB = 10 };
static const uint64_t width = 100 * RL_NSEC_PER_MSEC, now = 5000 * 100 * RL_NSEC_PER_MSEC + 7;

/* What the CPUs below `end` that joined hold of the budget, and this one's
 * own past (sum_others() of bpf/cpu_sum.bpf.h, without the history: one
 * bucket here). */
static void read_joined(struct rl_usage *acc, struct rl_state *all,
			const struct rl_cpus *cpus, __u32 end, __u32 self)
{
	memset(acc, 0, sizeof(*acc));
	rl_usage_self(acc, &all[self], all[self].win.bucket, NB);
	for (__u32 c = 0; c < end; c++)
		if (c != self && rl_cpus_has(cpus, c))
			rl_usage_add(acc, &all[c], now, all[self].win.bucket, width, NB, 1);
}

/* One packet on CPU `self`, judged as the program judges it: the roll
 * joins, the refresh joins before its lease, then reads the joined CPUs
 * again after it. */
static int judge_joined(struct rl_state *all, struct rl_history *h,
			struct rl_cpus *cpus, __u32 self, const struct rl_budget *b,
			uint64_t len)
{
	struct rl_state *st = &all[self];
	struct rl_usage acc;
	int ans;

	if (!st->win.bucket)
		rl_cpus_join(cpus, self);	/* its first write */
	rl_state_roll(st, h, now, width, NB);
	ans = rl_quota_fast(st, b, len, 1);
	if (ans != RL_ASK)
		return ans;
	if (rl_quota_over_alone(st, b, len, 1, NB))
		return RL_OVER;
	rl_cpus_join(cpus, self);
	read_joined(&acc, all, cpus, rl_cpus_end(cpus, NCPUS), self);
	ans = rl_quota_refresh(st, b, &acc, len, 1, NCPUS);
	if (ans != RL_FITS)
		return ans;
	read_joined(&acc, all, cpus, rl_cpus_end(cpus, NCPUS), self);
	return rl_quota_confirm(st, b, &acc, len);
}

/*
 * CPU 3 reads (only itself has joined) and is held up before its lease;
 * CPU 40 joins meanwhile and takes the whole budget. CPU 3's confirm reads
 * the CPUs joined *by then*, sees CPU 40's passes and trims its stale
 * lease: the window holds the budget. Confirmed against the CPUs of its
 * first read instead, the same interleaving passes more than the budget (the lease taken from
 * the stale reading, kept),
 * which the test also shows, so that it cannot pass by not interleaving.
 */
TEST(cpus_late_joiner_seen_by_confirm)
{
	static const uint64_t budgets[] = { 10, 100, 1000 };
	const uint64_t len = 64;

	for (size_t i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++) {
		struct rl_budget b = { budgets[i], UNL, 0 };
		uint64_t passed[2] = { 0, 0 };

		for (int stale = 0; stale < 2; stale++) {
			static struct rl_state all[NCPUS];
			struct rl_history h = { 0 };
			struct rl_cpus cpus = { 0 };
			struct rl_usage first, second;
			__u32 end1;

			memset(all, 0, sizeof(all));
			/* CPU 3: roll, ask, join, first read */
			rl_cpus_join(&cpus, 3);	/* its first write */
			rl_state_roll(&all[3], &h, now, width, NB);
			CHECK_EQ(rl_quota_fast(&all[3], &b, len, 1), RL_ASK, "CPU 3 asks");
			rl_cpus_join(&cpus, 3);
			end1 = rl_cpus_end(&cpus, NCPUS);
			CHECK_EQ(end1, 4, "CPU 3 reads up to itself");
			read_joined(&first, all, &cpus, end1, 3);
			/* CPU 40 floods while CPU 3 is held up */
			for (uint64_t k = 0; k < 3 * b.pkts; k++)
				if (judge_joined(all, &h, &cpus, 40, &b, len) == RL_FITS) {
					rl_quota_commit(&all[40], len);
					passed[stale]++;
				}
			CHECK_EQ(passed[stale], b.pkts, "CPU 40 alone passes the budget");
			/* CPU 3 resumes: its lease from the first read, confirmed
			 * against the CPUs joined now (or, stale, at first) */
			if (rl_quota_refresh(&all[3], &b, &first, len, 1, NCPUS) == RL_FITS) {
				read_joined(&second, all, &cpus,
					    stale ? end1 : rl_cpus_end(&cpus, NCPUS), 3);
				if (rl_quota_confirm(&all[3], &b, &second, len) == RL_FITS) {
					rl_quota_commit(&all[3], len);
					passed[stale]++;
				}
			}
			/* and it keeps sending on what its lease says */
			for (uint64_t k = 0; k < b.pkts; k++)
				if (rl_quota_fast(&all[3], &b, len, 1) == RL_FITS) {
					rl_quota_commit(&all[3], len);
					passed[stale]++;
				}
		}
		CHECK(passed[0] <= b.pkts, "budget %" PRIu64 ": %" PRIu64 " passed",
		      (uint64_t)b.pkts, passed[0]);
		CHECK(passed[1] > b.pkts, "budget %" PRIu64 ": a confirm that "
		      "read only the CPUs of its first read would pass %" PRIu64
		      " (the interleaving must bite)", (uint64_t)b.pkts, passed[1]);
	}
}
