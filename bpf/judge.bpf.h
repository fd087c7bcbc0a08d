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
#include "cpus.bpf.h"

/*
 * rl_usage_burst() as a global function: its branches are walked once,
 * and the refresh after it sees one state, not one per branch (inlined,
 * the program came within 1% of the verifier's 1,000,000 instructions).
 */
__noinline int usage_burst(struct rl_usage *u, const struct rl_budget *b)
{
	if (!u || !b)
		return 0;	/* cannot happen: the caller's own pointers */
	rl_usage_burst(u, b);
	return 0;
}

/*
 * The slow part of a judgment: read the other CPUs, take a lease, publish it,
 * read them again and confirm it (include/quota.h). `of_source`: a
 * constant, a source's budget (whose --burst applies) or a rule window's,
 * so that the verifier walks the paths of one kind only. `c` (on the stack of
 * the function that calls bpf_loop, as bpf_loop requires) holds the
 * packet's time, the rules generation, this CPU's newest bucket and the
 * budget's key.
 */
static __always_inline int refresh(struct rl_state *st, const struct rl_budget *b,
				   struct sum_ctx *c, __u64 len, int of_source)
{
	int ans;

	/* joined before the lease is published (include/cpus.h) */
	cpus_join(c->self);
	__builtin_memset(&c->acc, 0, sizeof(c->acc));
	rl_usage_self(&c->acc, st, c->bucket, settings.nbuckets);
	sum_others(c, of_source);
	if (of_source)
		usage_burst(&c->acc, b);
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
		sum_others(c, of_source);
		if (of_source)
			usage_burst(&c->acc, b);
	}
	return rl_quota_confirm(st, b, &c->acc, len);
}

/* What judge_source() hands judge_source_window(): less than a struct
 * sum_ctx, which is built on judge_source_window()'s stack, not the
 * program's. */
struct judge_args {
	__u64 now;
	__u64 len;
	__u32 gen;
	__u32 table;	/* RL_TABLE_* */
	struct rl_key key;
};

/*
 * Judge one packet against one budget held per CPU in `st`, after its roll,
 * on this CPU's state alone: the lease's fast path, then over on its own
 * passes. RL_ASK: only the other CPUs can tell (a refresh).
 */
static __always_inline int judge_alone(struct rl_state *st, const struct rl_budget *b,
				       __u64 len, __u32 gen)
{
	int ans = rl_quota_fast(st, b, len, gen);

	if (ans != RL_ASK)
		return ans;
	if (rl_quota_over_alone(st, b, len, gen, settings.nbuckets))
		return RL_OVER;
	return RL_ASK;
}

/*
 * Judge one packet of source a->key against its budget in `st`, its
 * per-CPU entry in table a->table (RL_TABLE_*): the roll, this CPU's
 * lease, the refresh. A global function: the verifier checks it once, not
 * on every path of the program that reaches it (the refresh inlined
 * there, the lease arithmetic's paths multiplied to 700,000 of the
 * 1,000,000 instructions it allows).
 */
__attribute__((noinline)) int judge_source_window(struct rl_state *st,
						  const struct rl_budget *b,
						  const struct judge_args *a)
{
	int ans;

	if (!st || !b || !a)
		return RL_OVER;	/* cannot happen: the callers' own pointers */
	roll(st, a->now, &a->key, a->table);
	ans = judge_alone(st, b, a->len, a->gen);
	if (ans != RL_ASK)
		return ans;
	{
		/* bpf_loop's context must be on this stack; built (zeroed
		 * first: 14 stores) only here, not on the lease's fast path */
		struct sum_ctx c = {
			.now = a->now,
			.gen = a->gen,
			.bucket = st->win.bucket,
			.self = bpf_get_smp_processor_id(),
			.source = a->table,
			.key = a->key,
		};

		c.slot = a->table == RL_TABLE_SOURCES ?
			 source_find(&a->key, 0, NULL) : RL_NO_SLOT;
		return refresh(st, b, &c, a->len, 1);
	}
}

/* Judge one packet of source `key` against its budget in `st`, its
 * per-CPU entry in table `table` (RL_TABLE_*). */
static __always_inline int judge_source(struct rl_state *st, const struct rl_budget *b,
					__u64 now, __u64 len, __u32 gen,
					const struct rl_key *key, __u32 table)
{
	struct judge_args a = {
		.now = now,
		.len = len,
		.gen = gen,
		.table = table,
		.key = *key,
	};

	return judge_source_window(st, b, &a);
}

/*
 * Judge one packet against a rule's window, entry `idx` of `aggregates`
 * (none: fits): a global function, so the verifier checks it once, not at
 * each of its call sites (inlined, the program exceeds the verifier's 1M
 * instructions). The refresh is inlined here, since a global function
 * called from it, with bpf_loop's callback, would nest the stack past 512
 * bytes. At most five arguments: the caller looks the window up again to
 * commit (an array lookup, inlined by the verifier).
 */
__noinline int judge_rule_window(__u32 idx, const struct rl_budget *b,
				 __u64 now, __u64 len, __u32 gen)
{
	struct rl_state *st = bpf_map_lookup_elem(&aggregates, &idx);
	int ans;

	if (!st || !b)
		return RL_FITS;
	roll(st, now, NULL, idx);
	ans = judge_alone(st, b, len, gen);
	if (ans != RL_ASK)
		return ans;
	{
		struct sum_ctx c = {
			.now = now,
			.gen = gen,
			.bucket = st->win.bucket,
			.self = bpf_get_smp_processor_id(),
			.rule_id = idx,
		};

		return refresh(st, b, &c, len, 0);	/* a rule window: no burst */
	}
}
#endif /* RL_JUDGE_BPF_H */
