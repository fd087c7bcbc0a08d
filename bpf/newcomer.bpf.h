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

/* Judge a packet against the newcomer window of budget slot `slot`;
 * the window to commit to when it fits (NULL: the map has no entry). */
static __always_inline int newcomer_fits(const struct rl_budget *nb, __u32 slot,
					 __u64 now, __u64 len, __u32 gen,
					 struct rl_state **win)
{
	__u32 idx = rl_new_index(slot);

	*win = bpf_map_lookup_elem(&aggregates, &idx);
	return judge_rule_window(idx, nb, now, len, gen) == RL_FITS;
}
#endif /* RL_NEWCOMER_BPF_H */
