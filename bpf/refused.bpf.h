/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Refused sources: a packet of a source without an entry that the verdict
 * drops takes none (a spoofed flood against a blocked prefix or a full
 * budget cannot evict the sources that keep sending); its drops are kept
 * in the small `refused` table.
 */
#ifndef RL_REFUSED_BPF_H
#define RL_REFUSED_BPF_H

#include "maps.bpf.h"

/* May this CPU add an entry to `refused` now? (its share of
 * RL_REFUSED_NEW_PER_PERIOD) */
static __always_inline int refused_insert_ok(struct rl_counters *cnt, __u64 now)
{
	return rl_period_take(&cnt->refused_period, &cnt->refused_inserts, now,
			      RL_REFUSED_PERIOD_NS,
			      rl_per_cpu_share(RL_REFUSED_NEW_PER_PERIOD,
					       settings.ncpus)) != 0;
}

/* Count a refused newcomer's drop against its address (xdp-ratelimit(8):
 * a dropped packet counts as dropped for its source). Shared entries, so
 * atomic. A global function: the refused path's locals stay off the
 * program's stack, which the cross-CPU sum fills. */
__noinline int count_refused(const struct rl_key *key, __u64 len, __u64 now)
{
	struct rl_refused first = { 1, len }, *r;
	struct rl_counters *cnt;
	struct rl_key k;
	__u32 zero = 0;

	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!key || !cnt)
		return 0;	/* cannot happen: the caller's key, an array */
	k = *key;	/* 6.1: a map key on this stack, not an argument */
	key = &k;
	r = bpf_map_lookup_elem(&refused, key);
	if (!r) {
		if (!refused_insert_ok(cnt, now)) {
			cnt->refused_unlisted_pkts++;
			return 0;
		}
		if (!bpf_map_update_elem(&refused, key, &first, BPF_NOEXIST))
			return 1;
		/* another CPU inserted it first */
		r = bpf_map_lookup_elem(&refused, key);
		if (!r) {
			cnt->refused_unlisted_pkts++;
			return 0;
		}
	}
	__sync_fetch_and_add(&r->dropped_pkts, 1);
	__sync_fetch_and_add(&r->dropped_bytes, len);
	return 1;
}
#endif /* RL_REFUSED_BPF_H */
