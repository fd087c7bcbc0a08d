/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The rule of a tracked source, as the program finds it: for the views. */
#ifndef RL_RULE_LOOKUP_H
#define RL_RULE_LOOKUP_H

#include "lib/rule.h"

/* The rule that covers a tracked source (longest prefix), or -ENOENT. */
int rl_rule_lookup(const struct rl_maps *m, const struct rl_key *key,
		   bool v6, struct rl_rule *out);

/*
 * Rule slots read so far, so that finding the rule of every one of a
 * million sources costs one read per rule rather than an LPM lookup per
 * source. Zero-initialised; rl_rule_cache_free() when done.
 */
struct rl_rule_cache {
	struct rl_rule *rules;		/* RL_MAX_RULES, allocated on first use */
	__u8 *state;			/* RL_SLOT_* */
};

enum { RL_SLOT_UNREAD, RL_SLOT_USED, RL_SLOT_UNUSABLE };

void rl_rule_cache_free(struct rl_rule_cache *rc);

/*
 * The rule covering a source: the one its CPUs resolved in the current
 * rules generation (rule_cached; rule_id RL_NO_RULE when none covers it),
 * else an LPM lookup as the program would make. NULL when no rule covers
 * it; `found` is room for a rule looked up.
 */
const struct rl_rule *rl_rule_of_source(const struct rl_maps *m,
					struct rl_rule_cache *rc,
					const struct rl_key *key,
					bool rule_cached, __u32 rule_id,
					struct rl_rule *found);

#endif /* RL_RULE_LOOKUP_H */
