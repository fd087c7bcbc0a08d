/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Judging one packet against one budget held per CPU: the fast path on this
 * CPU's own lease, the refresh that reads the others (include/quota.h).
 */
#ifndef RL_JUDGE_BPF_H
#define RL_JUDGE_BPF_H

#include "maps.bpf.h"
#include "quota.h"
#include "cpu_sum.bpf.h"
#include "history.bpf.h"

/*
 * The slow part of judge(): read the other CPUs, take a lease, publish it,
 * read them again and confirm it (include/quota.h). `c` (on the stack of
 * the function that calls bpf_loop, as bpf_loop requires) holds the
 * packet's time, the rules generation, this CPU's newest bucket and the
 * budget's key.
 */
static __always_inline int refresh(struct rl_state *st, const struct rl_budget *b,
				   struct sum_ctx *c, __u64 len)
{
	int ans;

	__builtin_memset(&c->acc, 0, sizeof(c->acc));
	rl_usage_self(&c->acc, st, c->bucket, settings.nbuckets);
	sum_others(c, c->source);
	ans = rl_quota_refresh(st, b, &c->acc, len, c->gen, settings.ncpus);
	if (ans != RL_FITS)
		return ans;
	if (settings.ncpus > 1) {
		/* The lease is written; a full barrier (a fetching atomic)
		 * makes it visible before the others are read again. */
		if (__sync_fetch_and_add(&st->win.bucket, 0) != c->bucket)
			return RL_OVER;	/* cannot happen: only we write it */
		__builtin_memset(&c->acc, 0, sizeof(c->acc));
		rl_usage_self(&c->acc, st, c->bucket, settings.nbuckets);
		sum_others(c, c->source);
	}
	return rl_quota_confirm(st, b, &c->acc, len);
}

/*
 * refresh() of a source's budget as a global function: the verifier checks
 * it once, not at each of its call sites (inlined there, the lease
 * arithmetic's paths multiplied to 700,000 of the 1,000,000 instructions it
 * allows).
 */
__attribute__((noinline)) int judge_refresh(struct rl_state *st,
					    const struct rl_budget *b,
					    const struct sum_ctx *in, __u64 len)
{
	struct sum_ctx c;

	if (!st || !b || !in)
		return RL_OVER;	/* cannot happen: the callers' own pointers */
	c = *in;	/* bpf_loop's context must be on this stack */
	return refresh(st, b, &c, len);
}

/*
 * Judge one packet against one budget held per CPU in `st`. `key` is the
 * source's key (for the source budget, in table `rule_id`: RL_TABLE_*) or
 * NULL (for rule_id's window in
 * `aggregates`, judged only inside judge_rule_window, itself a global
 * function: the refresh is inlined there, since a global function called
 * from it, with bpf_loop's callback, would nest the stack past 512 bytes).
 */
static __always_inline int judge(struct rl_state *st, const struct rl_budget *b,
				 __u64 now, __u64 len, __u32 gen,
				 const struct rl_key *key, __u32 rule_id)
{
	struct sum_ctx c = {
		.now = now,
		.gen = gen,
	};
	int ans;

	roll(st, now, key, rule_id);
	ans = rl_quota_fast(st, b, len, gen);
	if (ans != RL_ASK)
		return ans;
	if (rl_quota_over_alone(st, b, len, gen, settings.nbuckets))
		return RL_OVER;
	c.bucket = st->win.bucket;
	c.self = bpf_get_smp_processor_id();
	c.source = key ? rule_id : 0;
	if (!key) {
		c.rule_id = rule_id;
		return refresh(st, b, &c, len);
	}
	c.key = *key;
	return judge_refresh(st, b, &c, len);
}

/*
 * judge() for a rule's window (`aggregates` entry idx; none: fits): a
 * global function, so the verifier checks it once, not at each of its
 * four call sites (inlined, the program exceeds the verifier's 1M
 * instructions). At most five arguments: the caller looks the window up
 * again to commit (an array lookup, inlined by the verifier).
 */
__noinline int judge_rule_window(__u32 idx, const struct rl_budget *b,
				 __u64 now, __u64 len, __u32 gen)
{
	struct rl_state *st = bpf_map_lookup_elem(&aggregates, &idx);

	if (!st || !b)
		return RL_FITS;
	return judge(st, b, now, len, gen, NULL, idx);
}
#endif /* RL_JUDGE_BPF_H */
