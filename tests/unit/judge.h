/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A judgment of bpf/judge.bpf.h (judge_source_window(), judge_rule_window())
 * on the host, for the unit tests that drive one budget through it: roll,
 * the fast path, then (RL_ASK) the
 * other CPUs, the history and a fleet share read twice around the lease
 * (refresh, confirm). `all` holds every simulated CPU's state for the
 * budget, `self` is the CPU the packet runs on. Include after quota.h
 * (a test may hook its roll steps first: test_quota.c).
 */
#ifndef RL_TEST_JUDGE_H
#define RL_TEST_JUDGE_H

#include <stdint.h>
#include <string.h>
#include "quota.h"
#include "remote.h"

struct judge_stats {
	uint64_t asks;		/* refreshes: cross-CPU reads */
	uint64_t reads;		/* other CPUs' states read */
};

/* sum_others() of the XDP program: the other CPUs, then the history if a
 * marker says it holds part of the window, then the fleet's share
 * (`remote`, NULL: no agent). `js` may be NULL. */
static inline void sum_others(struct rl_usage *acc, struct rl_state *all,
			      struct rl_history *h,
			      const struct rl_remote *remote, uint32_t ncpus,
			      uint32_t self, uint64_t now, uint64_t width,
			      uint32_t nb, uint32_t gen, struct judge_stats *js)
{
	struct rl_state *st = &all[self];

	memset(acc, 0, sizeof(*acc));
	rl_usage_self(acc, st, st->win.bucket, nb);
	for (uint32_t c = 0; c < ncpus; c++) {
		if (c == self)
			continue;
		rl_usage_add(acc, &all[c], now, st->win.bucket, width, nb, gen);
		if (js)
			js->reads++;
	}
	if (acc->hist)
		rl_usage_history(acc, h, st->win.bucket, nb);
	if (remote)
		rl_remote_usage_add(acc, remote, st->win.bucket, nb);
}

/* judge() with a fleet share `remote` (NULL: none). */
static inline int judge_remote(struct rl_state *all, struct rl_history *h,
			       const struct rl_remote *remote, uint32_t ncpus,
			       uint32_t self, const struct rl_budget *b,
			       uint64_t now, uint64_t len, uint32_t gen,
			       uint64_t width, uint32_t nb, struct judge_stats *js)
{
	struct rl_state *st = &all[self];
	struct rl_usage acc = { 0 };
	int ans;

	rl_state_roll(st, h, now, width, nb);
	ans = rl_quota_fast(st, b, len, gen);
	if (ans != RL_ASK)
		return ans;
	if (rl_quota_over_alone(st, b, len, gen, nb))
		return RL_OVER;
	if (js)
		js->asks++;
	for (int pass = 0; pass < 2; pass++) {
		sum_others(&acc, all, h, remote, ncpus, self, now, width, nb,
			   gen, js);
		rl_usage_burst(&acc, b);	/* none: no change */
		if (pass == 0) {
			ans = rl_quota_refresh(st, b, &acc, len, gen, ncpus);
			if (ans != RL_FITS)
				return ans;
		}
	}
	return rl_quota_confirm(st, b, &acc, len);
}

static inline int judge(struct rl_state *all, struct rl_history *h,
			uint32_t ncpus, uint32_t self, const struct rl_budget *b,
			uint64_t now, uint64_t len, uint32_t gen, uint64_t width,
			uint32_t nb, struct judge_stats *js)
{
	return judge_remote(all, h, NULL, ncpus, self, b, now, len, gen, width,
			    nb, js);
}

#endif /* RL_TEST_JUDGE_H */
