/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Rule scopes on the command line (xdp-ratelimit(8), quota set --proto,
 * --dport, --syn): parsing, checking, the text and options they print as,
 * and the choice of an entry of the `scopes` map. Plain C, no maps: the
 * maps are rules.c's. What a scope matches is include/scope.h's.
 *
 * A rule set as userspace holds it (quota list, save, restore's plan, the
 * journal of rules_txn.h) names each rule's scope by its content, packed
 * into rl_rule.scope and .pad (rl_rule_scope_put): an index of `scopes`
 * differs between interfaces and moves as scopes are freed, so it cannot
 * say whether two rules are the same. rules.c turns the content into an
 * index when it writes a rule, and back when it reads one.
 */
#ifndef RL_SCOPE_OPTS_H
#define RL_SCOPE_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include "ratelimit.h"
/* include/scope.h for rl_scope_rank(); its parsers carry clang's
 * "#pragma unroll" for the verifier, which gcc does not know */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#include "scope.h"
#pragma GCC diagnostic pop

#define RL_PROTO_TCP	6
#define RL_PROTO_UDP	17
#define RL_PROTO_ICMP	1
#define RL_PROTO_ICMPV6	58

/* "tcp dport 1000-2000 syn" and the like fit. */
#define RL_SCOPE_STRLEN	48

/* A scope being built from options: `proto_set` when --proto was given.
 * rl_scope_check() turns it into a struct rl_scope. */
struct rl_scope_opts {
	bool proto_set, dport_set, syn;
	__u8 proto;
	__u16 dport_lo, dport_hi;
};

/* --proto: tcp, udp, icmp, icmpv6 or a number 0-255. 0, or -EINVAL with err. */
int rl_scope_parse_proto(const char *s, __u8 *proto, char *err, size_t len);
/* --dport: PORT or PORT-PORT, ports 1-65535, the first no higher. */
int rl_scope_parse_dport(const char *s, __u16 *lo, __u16 *hi, char *err,
			 size_t len);
/* The options together: --dport needs TCP or UDP, --syn needs TCP. Fills
 * `out` (rank 0: no scope option given, the rule is unscoped). */
int rl_scope_check(const struct rl_scope_opts *o, struct rl_scope *out,
		   char *err, size_t len);

/* The scope of protocol `proto` with flags RL_SCOPE_F_* ranked. */
struct rl_scope rl_scope_of(__u8 proto, __u8 flags, __u16 dport_lo,
			    __u16 dport_hi);

/* Is `s` a scope (not the "none" of an unscoped rule)? */
static inline bool rl_scope_any(const struct rl_scope *s)
{
	return s->rank != 0;
}

bool rl_scope_same(const struct rl_scope *a, const struct rl_scope *b);
/* "tcp", "udp", "icmp", "icmpv6", or NULL for another protocol. */
const char *rl_proto_name(__u8 proto);
/* "tcp syn", "udp dport 53", "proto 47"; "" for no scope. */
void rl_scope_text(const struct rl_scope *s, char *buf, size_t len);
/* The options that give it: " --proto tcp --dport 53 --syn"; "" for none. */
void rl_scope_opts_text(const struct rl_scope *s, char *buf, size_t len);
/* "80" or "1000-2000" (a scope with RL_SCOPE_F_DPORT). */
void rl_scope_dport_text(const struct rl_scope *s, char *buf, size_t len);

/* A userspace rule's scope, and setting it (see above). */
void rl_rule_scope_get(const struct rl_rule *r, struct rl_scope *s);
void rl_rule_scope_put(struct rl_rule *r, const struct rl_scope *s);

/*
 * The entry of `table` (the `scopes` map, RL_MAX_SCOPES) for `want`: the
 * one that already holds it, else the lowest one no rule uses (`used`).
 * An entry that holds it but no rule uses (left by a change cut short) is
 * taken too. The index, or -ENOSPC when every entry is used by others.
 */
int rl_scope_pick(const struct rl_scope *table, const bool *used,
		  const struct rl_scope *want);
/* config.scopes_used for the entries in use: 1 + the highest, 0: none. */
__u32 rl_scopes_used(const bool *used);
/* config.scope_skip for the entries of `table` in use (`used`; NULL: every
 * entry that holds a scope): the protocols none of them names
 * (rl_scope_skip_bit). */
__u8 rl_scope_skip(const struct rl_scope *table, const bool *used);

#endif /* RL_SCOPE_OPTS_H */
