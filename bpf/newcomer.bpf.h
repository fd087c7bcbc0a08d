/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Newcomers: the verdict of a rule's newcomer window (include/newcomer.h),
 * which the packets of unverified sources must fit (bpf/verified.bpf.h).
 */
#ifndef RL_NEWCOMER_BPF_H
#define RL_NEWCOMER_BPF_H

#include "maps.bpf.h"
#include "newcomer.h"
#include "judge.bpf.h"

/* Judge a packet against the newcomer window of budget slot `slot`. */
static __always_inline int newcomer_fits(const struct rl_budget *nb, __u32 slot,
					 __u64 now, __u64 len, __u32 gen)
{
	return judge_rule_window(rl_new_index(slot), nb, now, len, gen) == RL_FITS;
}

/*
 * The newcomer budget of the unscoped rule covering a source whose packet
 * a scoped rule judges, rule slot `cover` (include/scope.h), into `nb`;
 * the index of its window in `aggregates`. A global function: the
 * program's stack has no room for the rule's lookup.
 */
__noinline __u32 cover_budget(__u32 cover, struct rl_budget *nb)
{
	const struct rl_rule *u = bpf_map_lookup_elem(&rules, &cover);

	if (!u || !nb)
		return RL_AGGREGATE_ENTRIES;	/* cannot happen: none, fits */
	*nb = rl_newcomer_budget(u);
	return rl_new_index(rl_budget_slot(cover, u));
}

/* Count a packet that passed in that window (a function of its own: the
 * window's pointer, or its index, kept past the judging takes the
 * program's stack). */
__noinline int cover_commit(__u32 cover, __u64 len)
{
	struct rl_budget nb;
	__u32 idx = cover_budget(cover, &nb);
	struct rl_state *st = bpf_map_lookup_elem(&aggregates, &idx);

	if (st)
		rl_quota_commit(st, len);
	return 0;
}

#endif /* RL_NEWCOMER_BPF_H */
