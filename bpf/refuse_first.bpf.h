/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Refusal before any per-source lookup: while a rule's newcomer or
 * aggregate budget is full, a packet of a source never verified here that
 * the rule judges is refused on the parse, the rule, the Bloom filter and
 * the budget's own per-CPU state, without the `sources` and `bans` lookups
 * a spoofed flood would otherwise miss in on every packet (xdp-ratelimit(8)
 * SEMANTICS).
 *
 * The verdict is the one the usual path gives: a source the Bloom filter
 * has never seen is not verified (its `sources` entry, if any, cannot
 * hold a verification it never read), so it cannot be banned either (a
 * ban needs packets of a verified source); whatever its own window says,
 * a packet the newcomer or the aggregate budget refuses drops (and bans
 * nobody: it was not proven); and the budget's state is read as
 * judge_rule_window() reads it: no roll due, then the lease's fast path
 * (include/quota.h), which says RL_OVER only once the budget is known
 * full in its bucket. Anything else goes the usual way.
 */
#ifndef RL_REFUSE_FIRST_BPF_H
#define RL_REFUSE_FIRST_BPF_H

#include "maps.bpf.h"
#include "newcomer.h"
#include "quota.h"
#include "rule.bpf.h"

/*
 * The end of the bucket in which some CPU's newcomer or aggregate window
 * last refused a packet (the program's clock, 0: none yet): until then a packet asks
 * refuse_first() before its source is looked up. A hint only, shared and
 * written once a bucket (refusing_from): refuse_first() reads the window
 * itself, so a stale hint costs its lookups, never a verdict. Not pinned:
 * a new program starts without it.
 */
__u64 refusing_until;

/* Is some newcomer budget refusing now (the hint)? */
static __always_inline int refusing(__u64 now)
{
	return now < RL_READ(refusing_until);
}

/* A newcomer or aggregate budget refused a packet at `now`: the hint
 * holds until the end of its bucket (a division, on this refusal only). */
static __always_inline void refusing_from(__u64 now)
{
	__u64 until = (now / settings.bucket_ns + 1) * settings.bucket_ns;

	if (RL_READ(refusing_until) != until)
		RL_WRITE(refusing_until, until);
}

/* Is rule window `idx` of `aggregates` under budget `b` known full for a
 * packet of `len` bytes at `now`: no roll due, the fast path's RL_OVER. */
static __always_inline int window_refuses(__u32 idx, const struct rl_budget *b,
					  __u64 now, __u64 len, __u32 gen)
{
	struct rl_state *st = bpf_map_lookup_elem(&aggregates, &idx);
	__u64 to;

	return st &&
	       !rl_roll_plan(st, now, settings.bucket_ns, settings.nbuckets, &to) &&
	       rl_quota_fast(st, b, len, gen) == RL_OVER;
}

/*
 * The slot of the rule (unscoped: the caller checks scopes_used) whose
 * full newcomer or aggregate budget refuses this packet of `len` bytes from source
 * `key` (an address of family `kind`) at `now`, rules generation `gen`,
 * if the source was never verified here; RL_NO_RULE: ask the usual path.
 * The caller still answers a cookie rule's SYN or ACK (cookie_first) and
 * looks for the ACK that proves the source (prove_source): only a packet
 * neither passes nor proves is refused. A global function: its keys stay
 * off the program's stack.
 */
__noinline __u32 refuse_first(const struct rl_key *key, int kind, __u64 now,
			      __u32 gen, __u64 len)
{
	const struct rl_rule *rule;
	struct rl_budget b;
	struct rl_key k;
	__u32 id, slot;

	if (!key)
		return RL_NO_RULE;	/* cannot happen: the caller's key */
	k = *key;	/* 6.1: a map key on this stack, not an argument */
	/* "maybe verified": the usual path reads `verified` (and its
	 * source's cached answer) */
	if (!bpf_map_peek_elem(&verified_bloom, &k))
		return RL_NO_RULE;
	id = find_rule(NULL, &k, kind, gen);
	rule = bpf_map_lookup_elem(&rules, &id);
	if (!rule || !(rule->flags & RL_RULE_F_USED))
		return RL_NO_RULE;
	slot = rl_budget_slot(id, rule);
	b = rl_newcomer_budget(rule);
	if (rl_budget_limited(&b) && window_refuses(rl_new_index(slot), &b, now, len, gen))
		return id;
	agg_budget(&b, rule);
	if (rl_budget_limited(&b) && window_refuses(rl_agg_index(slot), &b, now, len, gen))
		return id;
	return RL_NO_RULE;
}
#endif /* RL_REFUSE_FIRST_BPF_H */
