/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Newcomer budgets (xdp-ratelimit(8), "Newcomer budget"): what is new,
 * where a rule's budget windows live. Plain C shared
 * by the XDP program and the host tests, like window.h and quota.h; the
 * budgets themselves are judged with quota.h like any other.
 *
 * New means unverified (include/verified.h): the host has not answered the
 * source within --verified-ttl. How long a source has been seen earns
 * nothing, so a spoofed flood whose addresses repeat stays new however
 * long it lasts. A verified source never touches the newcomer window; an
 * unverified one admitted by it is kept in a table of its own
 * (`newcomers`), so it never pushes a verified source's state out of
 * `sources`; one the budget refuses takes no entry at all.
 */
#ifndef RL_NEWCOMER_H
#define RL_NEWCOMER_H

#include "quota.h"

/* The slot of the budget windows of rule `r` (at `rule_id`): the default
 * rule's two halves (the /0 of each family) share RL_BUDGET_DEFAULT, but
 * for an IPv6 half set apart (RL_RULE_F_APART: its budgets differ). */
RL_INLINE __u32 rl_budget_slot(__u32 rule_id, const struct rl_rule *r)
{
	if (r->prefixlen || (r->flags & RL_RULE_F_APART) || r->scope)
		return rule_id;
	return RL_BUDGET_DEFAULT;
}

/* Index in `aggregates` of a budget slot's aggregate and newcomer windows. */
RL_INLINE __u32 rl_agg_index(__u32 slot)
{
	return slot;
}

RL_INLINE __u32 rl_new_index(__u32 slot)
{
	return RL_BUDGET_SLOTS + slot;
}

/* A rule's newcomer budget per window. */
RL_INLINE struct rl_budget rl_newcomer_budget(const struct rl_rule *r)
{
	struct rl_budget b = { r->new_pkt_budget, r->new_byte_budget, 0 };

	return b;
}

/* Must this packet fit the newcomer budget `nb`? Only when one is set and
 * the source is not verified. */
RL_INLINE int rl_newcomer_applies(const struct rl_budget *nb, int verified)
{
	return rl_budget_limited(nb) && !verified;
}

#endif /* RL_NEWCOMER_H */
