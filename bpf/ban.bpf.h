/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Bans: a source's ban, its end reported, and a ban for a drop by its own
 * quota.
 */
#ifndef RL_BAN_BPF_H
#define RL_BAN_BPF_H

#include "maps.bpf.h"
#include "ban.h"
#include "scope.h"
#include "events.bpf.h"

/* The source's ban entry (NULL: none); rl_ban_holds() says whether it
 * holds. */
static __always_inline struct rl_ban *source_ban(const struct rl_key *key)
{
	return bpf_map_lookup_elem(&bans, key);
}

/* Ban `b` of the source no longer holds: the first packet after it ended
 * reports `unbanned` (one CPU does: rl_ban_claim_end). */
static __always_inline void ban_ended(struct rl_ban *b, const struct rl_key *key,
				      __u64 now)
{
	__u64 until;

	if (!no_events && rl_ban_claim_end(b, now, &until))
		report_ban(RL_EVENT_UNBANNED, key, b, now, until);
}

/* A drop for the source's own quota: banned on every CPU, if the rule
 * bans. A ban that cannot be stored leaves the source to its quota. A
 * global function: the ban is built on its own stack, not the program's. */
__noinline int ban_source(const struct rl_rule *rule, const struct rl_key *key,
			  __u64 now)
{
	struct rl_key k;
	struct rl_ban b;

	if (!rule || !key || !rule->ban_ns)
		return 0;
	k = *key;	/* 6.1: a map key on this stack, not an argument */
	if (rl_key_scoped(&k))	/* a scoped rule's window: its source */
		rl_scoped_source(&k, &k);
	rl_ban_make(&b, rule, now);
	if (bpf_map_update_elem(&bans, &k, &b, BPF_ANY))
		return 0;
	if (!no_events)
		report_ban(RL_EVENT_BANNED, &k, &b, now, b.until_ns);
	return 1;
}
#endif /* RL_BAN_BPF_H */
