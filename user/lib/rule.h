/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Quota rules (xdp-ratelimit(8), quota): the model. A rule's limits as
 * `quota set` changes them, checked against an interface's settings, its
 * prefix and scope, its text and order. The rules in the maps are
 * rule_store.h, a whole set in one change rule_replace.h, the rule of a
 * source rule_lookup.h. Errors name no command: callers add their context.
 */
#ifndef RL_RULE_H
#define RL_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/maps.h"
#include "lib/scope_opts.h"
#include "lib/values.h"

/* Fields of `quota set`: only those with have_* are changed. A value of
 * RL_UNLIMITED removes that limit. */
struct rl_rule_change {
	bool have_pps, have_bps, have_agg_pps, have_agg_bps;
	__u64 pps, bps, agg_pps, agg_bps;
	/* newcomer budget and ban (ban_ns 0: no bans) */
	bool have_new_pps, have_new_bps, have_ban;
	__u64 new_pps, new_bps, ban_ns;
	/* --burst: packets per bucket, 0 for none */
	bool have_burst;
	__u64 burst;
	/* --syn-cookies on|off (RL_RULE_F_COOKIES) */
	bool have_cookies, cookies;
};

/* Does the change name any field? */
bool rl_rule_change_any(const struct rl_rule_change *c);

/* The default rule that attach --default-pps/--default-bps sets, as a
 * change (RL_UNLIMITED: not given). False when it names no limit. */
bool rl_rule_change_default(struct rl_rule_change *c, __u64 pps, __u64 bps);

/*
 * Each limit of a rule as the `quota set` option that sets it, for save:
 * a rule prints as one option per row whose value differs from `unset`.
 * A new option of quota set is one more row (the unit tests check that
 * every option of quota set has one).
 */
enum rl_rule_opt_kind {
	RL_RULE_OPT_RATE,	/* RATE|unlimited; unset: RL_UNLIMITED */
	RL_RULE_OPT_DURATION,	/* DURATION|0; unset: 0 */
	RL_RULE_OPT_COUNT,	/* N|unlimited; unset: 0 */
	RL_RULE_OPT_SWITCH,	/* on|off, a bit of flags; unset: off (0) */
};

struct rl_rule_opt {
	const char *name;		/* "aggregate-pps" */
	size_t offset;			/* of its __u64 in struct rl_rule */
	enum rl_rule_opt_kind kind;
	__u32 bit;			/* SWITCH: its RL_RULE_F_* (offset: none) */
};

extern const struct rl_rule_opt rl_rule_opts[];	/* ends with { NULL } */
/* The options of quota set that give a rule's scope rather than a limit
 * (ends with NULL): save writes them with rl_scope_opts_text(). */
extern const char *const rl_rule_scope_opts[];

/* A rule's value for an option, and whether the option would be given. */
__u64 rl_rule_opt_value(const struct rl_rule *r, const struct rl_rule_opt *o);
bool rl_rule_opt_set(const struct rl_rule *r, const struct rl_rule_opt *o);

/* The rule `quota set` makes of a prefix that has none: no limit yet. */
void rl_rule_init(struct rl_rule *r, const struct rl_prefix *p);
/* Apply a change to a rule as `quota set` does, budgets for window_ns. */
void rl_rule_apply(struct rl_rule *r, const struct rl_rule_change *c,
		   __u64 window_ns);
/* Whether `p` may have a rule of `scope` (NULL: none) changed by `c` on an
 * interface with settings `s` (its budgets fit the window's counters, an
 * IPv6 prefix is no longer than the tracking prefix, a scope covering IPv6
 * has room for its sources in a scoped window's key): 0 or -EINVAL with
 * what to do in err. */
int rl_rule_check(const struct rl_settings *s, const struct rl_prefix *p,
		  const struct rl_scope *scope, const struct rl_rule_change *c,
		  char *err, size_t errlen);
/* The prefixes a PREFIX stands for: itself, or default's 0.0.0.0/0 and
 * ::/0. Returns how many (1 or 2). */
int rl_prefix_expand(const struct rl_prefix *p, struct rl_prefix out[2]);
/* Do two rules have the same prefix? And the same prefix and scope (two
 * rules as userspace holds them: rule_scope.h), which names a rule? */
bool rl_rule_same_prefix(const struct rl_rule *a, const struct rl_rule *b);
bool rl_rule_same_key(const struct rl_rule *a, const struct rl_rule *b);
/* The order of rl_rule_list: IPv4 first, then prefix length, address,
 * scope (unscoped first). */
int rl_rule_cmp(const void *a, const void *b);

/* How views name a rule (userspace form): its prefix, then its scope
 * ("0.0.0.0/0 tcp syn"). */
#define RL_RULE_STRLEN	(RL_PREFIX_STRLEN + RL_SCOPE_STRLEN)
void rl_rule_text(const struct rl_rule *r, char *buf, size_t len);

/* A rule's prefix in rl_prefix form. */
void rl_rule_prefix(const struct rl_rule *r, struct rl_prefix *p);

/* True when a tracked key is IPv4 (::ffff:a.b.c.d). */
bool rl_key_is_v4(const struct rl_key *key);

/* 0 if every rate in `c` makes a budget the window counts exactly
 * (RL_MAX_BUDGET per window), else -ERANGE and the allowed range, naming
 * the option as --<opt_prefix>pps ("" for quota set, "default-" for
 * attach). */
int rl_budgets_fit(const struct rl_rule_change *c, __u64 window_ns,
		   const char *opt_prefix, char *err, size_t errlen);

#endif /* RL_RULE_H */
