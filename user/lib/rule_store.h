/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Quota rules in the running program's maps. A rule lives in a slot of
 * `rules`; rules_v4/rules_v6 (and the scoped tries) map its prefix to the
 * slot; a scoped rule's scope is an entry of `scopes`. Every change bumps
 * config.rules_gen so sources re-resolve their rule on their next packet,
 * keeping their counters. Callers hold the interface lock.
 */
#ifndef RL_RULE_STORE_H
#define RL_RULE_STORE_H

#include "lib/rule.h"

/* quota set and del of the unscoped rule of `p`: 0, or a negative errno
 * with what to do in err (set: -ERANGE for a budget out of range, as
 * rl_rule_check says). */
int rl_rule_set(const struct rl_maps *m, const struct rl_settings *s,
		const struct rl_prefix *p, const struct rl_rule_change *c,
		char *err, size_t errlen);
int rl_rule_del(const struct rl_maps *m, const struct rl_prefix *p,
		char *err, size_t errlen);
/* The same for the rule of `p` and `scope` (NULL or rank 0: unscoped). A
 * scope is given an entry of `scopes` with its first rule and freed with
 * its last. */
int rl_rule_set_scoped(const struct rl_maps *m, const struct rl_settings *s,
		       const struct rl_prefix *p, const struct rl_scope *scope,
		       const struct rl_rule_change *c, char *err, size_t errlen);
int rl_rule_del_scoped(const struct rl_maps *m, const struct rl_prefix *p,
		       const struct rl_scope *scope, char *err, size_t errlen);

/* All rules as userspace holds them (rule_scope.h), IPv4 first, then by
 * prefix length, address and scope. Returns the count (at most max) or a
 * negative errno. */
int rl_rule_list(const struct rl_maps *m, struct rl_rule *out, int max);

/* What rule `r` (as rl_rule_list gives it) judged, summed over CPUs
 * (struct rl_rule_counters): 0, -ENOENT when no slot holds the rule (a
 * change in progress), or -errno. */
int rl_rule_counters_read(const struct rl_maps *m, const struct rl_rule *r,
			  struct rl_rule_counters *out);

/* The `scopes` map (RL_MAX_SCOPES entries), and a rule read from `rules`
 * turned into the form userspace holds (its scope's content). */
int rl_rule_scopes_read(const struct rl_maps *m, struct rl_scope *table);
void rl_rule_from_map(struct rl_rule *r, const struct rl_scope *table);

/* The rule in slot `slot` as userspace holds it (the rule of a scoped
 * window: rl_scoped_source), or -ENOENT when the slot holds none. */
int rl_rule_read_slot(const struct rl_maps *m, __u32 slot, struct rl_rule *out);

/* ---- the store's steps, for rule_replace.c and rule_lookup.c ---- */

/* The key of a prefix in any of the tries. */
typedef union {
	struct rl_lpm_v4 v4;
	struct rl_lpm_v6 v6;
	struct rl_lpm_scoped_v4 sv4;
	struct rl_lpm_scoped_v6 sv6;
} rl_lpm_key_t;

/* No scope: the index an unscoped rule's lookups pass. */
#define RL_NO_SCOPE	(-1)

/* The LPM key of a prefix in the tries of scope `sidx` (RL_NO_SCOPE: the
 * unscoped ones); returns the trie's fd. */
int rl_store_lpm_key(const struct rl_maps *m, const struct rl_prefix *p,
		     int sidx, rl_lpm_key_t *k);
/* The scope index of a rule as the maps hold it (rl_rule.scope: 1 + it). */
int rl_store_map_scope(const struct rl_rule *r);
/* Slot of the rule for exactly this prefix in scope `sidx`, or -ENOENT. */
int rl_store_find_exact(const struct rl_maps *m, const struct rl_prefix *p,
			int sidx, struct rl_rule *rule);
/* Whether slot id holds a rule its prefix leads back to. */
bool rl_store_slot_live(const struct rl_maps *m, __u32 id, const struct rl_rule *r);
/* Write rule r (userspace form) to slot id, then its prefix; `fresh`
 * clears what an earlier rule left in the slot's budget windows. */
int rl_store_put(const struct rl_maps *m, const struct rl_rule *r, __u32 id,
		 bool fresh);
/* Zero the counters of slot id (rule_counters): a new rule's start from
 * nothing, however the slot was used before. */
int rl_store_counters_reset(const struct rl_maps *m, __u32 slot);
/* Remove the prefix of scope `sidx`, then clear slot id. */
int rl_store_del(const struct rl_maps *m, const struct rl_prefix *p, int sidx,
		 __u32 id);
/* Begin (in_progress) or end a change: the rules generation odd, then even. */
int rl_store_mark_change(const struct rl_maps *m, bool in_progress);
/* Before a rule that bans: the program reads `bans` from now on. */
int rl_store_note_bans(const struct rl_maps *m, bool bans);
/* The default's halves share their budget windows while their budgets agree. */
int rl_store_default_share(const struct rl_maps *m);
/* Free the `scopes` entries no rule uses any more. */
int rl_store_scopes_collect(const struct rl_maps *m);
/* Sweep the windows of scoped rules that are gone (scope_windows.h). */
int rl_store_drop_dead_windows(const struct rl_maps *m);

#endif /* RL_RULE_STORE_H */
