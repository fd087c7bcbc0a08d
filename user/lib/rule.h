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

/*
 * Every limit of a rule that `quota set` sets, one row each:
 * X(id, option, field, kind, bit, JSON name, column, help). `field` is the
 * __u64 of struct rl_rule_change that holds it, and of struct rl_rule but
 * for a SWITCH, which is `bit` (an RL_RULE_F_*; 0 for the other kinds) of
 * rl_rule.flags; `kind` says how it parses, prints and what "unset" is
 * (enum rl_rule_opt_kind). The change struct, rl_rule_apply(), the
 * options of quota set and their help, the JSON and the table of quota
 * list, save and restore are all made from this list: a new knob is one
 * row here plus what the program does with it.
 */
#define RL_RULE_FIELDS(X) \
	RL_RULE_RATES(X, , "", "", "", "each source in PREFIX may pass") \
	RL_RULE_RATES(X, agg_, "aggregate-", "aggregate_", "AGGREGATE_", \
		      "all of PREFIX may pass together") \
	RL_RULE_RATES(X, new_, "new-", "new_", "NEW_", \
		      "the new sources of PREFIX may pass together") \
	X(ban, "ban", ban_ns, DURATION, 0, "ban_ms", "BAN", \
	  "ban a source whose in-window packets of connections the host " \
	  "established exceed its own --pps/--bps, for DURATION " \
	  "(1ms to 24h; 0: no bans)") \
	X(burst, "burst", burst, COUNT, 0, "burst", "BURST", \
	  "packets a source may pass in one bucket of the window at most") \
	X(cookies, "syn-cookies", cookies, SWITCH, RL_RULE_F_COOKIES, \
	  "syn_cookies", "SYN_COOKIES", \
	  "answer a refused SYN of an unverified source with a SYN cookie " \
	  "(default off)")

/* The rows of a budget's two rates, packets and bytes per second: id and
 * field PFXpps and PFXbps, the option OPTpps, ... */
#define RL_RULE_RATES(X, pfx, opt, json, column, whose) \
	X(pfx##pps, opt "pps", pfx##pps, RATE, 0, json "pps", column "PPS", \
	  "packets per second " whose) \
	X(pfx##bps, opt "bps", pfx##bps, RATE, 0, json "bps", column "BPS", \
	  "bytes per second " whose)

/* Each kind of rule field: what it parses (the option's ARG, as help shows
 * it; quota set parses it as a typed option of the CLI) and its unset
 * value. */
#define RL_RULE_ARG_RATE	"RATE|unlimited"
#define RL_RULE_ARG_DURATION	"DURATION|0"
#define RL_RULE_ARG_COUNT	"N|unlimited"
#define RL_RULE_ARG_SWITCH	"on|off"
enum rl_rule_opt_kind {
	RL_RULE_OPT_RATE,	/* RATE|unlimited; unset: RL_UNLIMITED */
	RL_RULE_OPT_DURATION,	/* DURATION|0 (at most a day); unset: 0 */
	RL_RULE_OPT_COUNT,	/* N|unlimited; unset: 0 */
	RL_RULE_OPT_SWITCH,	/* on|off (1|0), a bit of flags; unset: off */
};

/* The fields, numbered in the list's order. */
#define RL_RULE_FIELD_ENUM(id, ...) RL_RULE_FIELD_##id,
enum rl_rule_field { RL_RULE_FIELDS(RL_RULE_FIELD_ENUM) RL_RULE_NFIELDS };
#undef RL_RULE_FIELD_ENUM

/* Fields of `quota set`: only those with have_* are changed. A rate of
 * RL_UNLIMITED removes that limit; a ban of 0 ends bans; a burst of 0 is
 * none; a switch of 0 is off. */
#define RL_RULE_CHANGE_FIELD(id, opt, field, ...) bool have_##id; __u64 field;
struct rl_rule_change {
	RL_RULE_FIELDS(RL_RULE_CHANGE_FIELD)
};
#undef RL_RULE_CHANGE_FIELD

/* Does the change name any field? */
bool rl_rule_change_any(const struct rl_rule_change *c);

/* The default rule that attach --default-pps/--default-bps sets, as a
 * change (RL_UNLIMITED: not given). False when it names no limit. */
bool rl_rule_change_default(struct rl_rule_change *c, __u64 pps, __u64 bps);

/* A rule field as the `quota set` option that sets it (from the list). */
struct rl_rule_opt {
	const char *name;		/* "aggregate-pps" */
	size_t offset;			/* of its __u64 in struct rl_rule (SWITCH: flags) */
	size_t change_offset;		/* and in struct rl_rule_change */
	size_t have_offset;		/* of its have_* in struct rl_rule_change */
	enum rl_rule_opt_kind kind;
	__u32 bit;			/* SWITCH: its RL_RULE_F_* (offset: none) */
	const char *json;		/* "aggregate_pps" */
	const char *column;		/* "AGGREGATE_PPS" */
	const char *help;
};

/* RL_RULE_NFIELDS rows, then { NULL }: what save writes (a rule prints
 * as one option per row whose value differs from unset). */
extern const struct rl_rule_opt rl_rule_opts[];
/* The options of quota set that give a rule's scope rather than a limit
 * (ends with NULL): save writes them with rl_scope_opts_text(). */
extern const char *const rl_rule_scope_opts[];

/* A rule's value for an option, and whether the option would be given. */
__u64 rl_rule_opt_value(const struct rl_rule *r, const struct rl_rule_opt *o);
bool rl_rule_opt_set(const struct rl_rule *r, const struct rl_rule_opt *o);
/* A rule's value of `o` as quota list shows it ("-" when unset; a
 * switch "on" or "off"). */
void rl_rule_opt_text(const struct rl_rule *r, const struct rl_rule_opt *o,
		      char *buf, size_t len);

/* The rule `quota set` makes of a prefix that has none: no limit yet. */
void rl_rule_init(struct rl_rule *r, const struct rl_prefix *p);
/* Apply a change to a rule as `quota set` does, budgets for window_ns. */
void rl_rule_apply(struct rl_rule *r, const struct rl_rule_change *c,
		   __u64 window_ns);
/* Whether `p` may have a rule of `scope` (NULL: none) changed by `c` on an
 * interface with settings `s` (its budgets fit the window's counters, an
 * IPv6 prefix is no longer than the tracking prefix, a scope covering IPv6
 * has room for its sources in a scoped window's key): 0, -ERANGE when a
 * budget is out of range (rl_budgets_fit: the CLI's bad usage) or -EINVAL,
 * with what to do in err. */
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
