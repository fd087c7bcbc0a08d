/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * History: a budget's window moved to the packet's time (the roll of
 * include/window.h), its past buckets flushed into the shared history.
 */
#ifndef RL_HISTORY_BPF_H
#define RL_HISTORY_BPF_H

#include "maps.bpf.h"
#include "window.h"

/* A source's history, created empty if it has none yet; created again
 * while this CPU's marker `st` is live, the one it flushed into was
 * evicted (rl_hist_lost). NULL: the roll keeps the bucket (fails closed). */
static __always_inline struct rl_history *source_history(const struct rl_key *key,
							 const struct rl_state *st,
							 void *map)
{
	struct rl_history *h = bpf_map_lookup_elem(map, key);
	int created;

	if (h)
		return h;
	created = !bpf_map_update_elem(map, key, &empty_history, BPF_NOEXIST);
	h = bpf_map_lookup_elem(map, key);
	if (h && created && rl_marker_live(st->flushed, st->win.bucket, settings.nbuckets))
		rl_hist_lost(h, rl_tag_index(st->flushed - 1, st->win.bucket));
	return h;
}

/*
 * A roll (include/window.h) as a global function: the verifier checks its
 * history compare-and-swap loops once, not at each call site. The history
 * is looked up only for a bucket that goes into it. `key`: the source's,
 * in table `idx` (RL_TABLE_*); NULL: the rule window `idx` of `aggregates`.
 */
__noinline int roll_apply(struct rl_state *st, const struct rl_key *key,
			  __u32 idx, int plan, __u64 to)
{
	struct rl_history *h = NULL;
	struct rl_key k;

	if (!st)
		return 0;	/* cannot happen: the callers' own pointer */
	if (plan & RL_ROLL_FLUSH) {
		if (key) {
			k = *key;
			if (idx == RL_TABLE_NEWCOMERS)
				h = source_history(&k, st, &new_history);
			else
				h = source_history(&k, st, &history);
		} else {
			h = bpf_map_lookup_elem(&agg_history, &idx);
		}
	}
	rl_roll_apply(st, h, plan, to);
	return 0;
}

/* Move a budget's per-CPU state to `now` (a roll only when the bucket
 * changed: the common case is one comparison). */
static __always_inline void roll(struct rl_state *st, __u64 now,
				 const struct rl_key *key, __u32 idx)
{
	__u64 to = 0;
	int plan = rl_roll_plan(st, now, settings.bucket_ns, settings.nbuckets, &to);

	if (plan)
		roll_apply(st, key, idx, plan, to);
}
#endif /* RL_HISTORY_BPF_H */
