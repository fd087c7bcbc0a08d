/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A whole rule set in one change: what restore applies. */
#ifndef RL_RULE_REPLACE_H
#define RL_RULE_REPLACE_H

#include "lib/rule.h"

/* How one rule set differs from another, by rule. */
struct rl_rule_diff {
	int added, deleted, changed;
};

/* The rule of rules[n] with the prefix and scope of r, or -ENOENT. */
int rl_rule_find(const struct rl_rule *rules, int n, const struct rl_rule *r);

/*
 * How `want` differs from `have` (rule sets as userspace holds them, each
 * prefix and scope once): match[i] is the rule of `have` with the key of
 * want[i] (-ENOENT: want[i] is added; changed when they differ), kept[j] whether
 * want keeps have[j]'s key (false: deleted). restore prints it,
 * rl_rule_replace applies it.
 */
void rl_rule_diff(const struct rl_rule *have, int nhave,
		  const struct rl_rule *want, int nwant, int *match,
		  bool *kept, struct rl_rule_diff *d);

/*
 * Make the rules exactly `want` (n rules as userspace holds them, any
 * order, each prefix and scope once) in
 * one change: rules absent from it are deleted, changed ones rewritten in
 * their slot (keeping their aggregate and newcomer windows; the default's
 * shared windows stay while either half of it was set), new ones added; a
 * rule that is already as wanted is not touched, and when none differs
 * nothing is written at all (not even the generation, unless a change cut
 * short left it odd: that is completed). Bans are never lifted. Returns how
 * many rules it added, changed or deleted, or a negative errno with err
 * set.
 */
int rl_rule_replace(const struct rl_maps *m, const struct rl_rule *want,
		    int n, char *err, size_t errlen);

#endif /* RL_RULE_REPLACE_H */
