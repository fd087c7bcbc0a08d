/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Rule scope (include/scope.h): the scoped rule that judges a packet
 * instead of its source's unscoped rule, if any.
 */
#ifndef RL_SCOPE_BPF_H
#define RL_SCOPE_BPF_H

#include "maps.bpf.h"
#include "scope.h"

/* scoped_rule()'s answer, beside the slot: an unverified packet pays the
 * unscoped rule's newcomer budget too (rl_scoped_pays_cover). */
#define RL_SCOPED_COVERED	(1U << 16)

/* The best scoped rule of scope `idx` covering the source (NULL: none),
 * its slot in `slot`. */
static __always_inline const struct rl_rule *
scoped_lookup(__u32 idx, const struct rl_key *key, int v6, __u32 *slot)
{
	const struct rl_rule *r;
	__u32 *id;

	if (v6) {
		struct rl_lpm_scoped_v6 k = { .prefixlen = 32 + 128, .scope = idx };

		__builtin_memcpy(k.addr, key->addr, 16);
		id = bpf_map_lookup_elem(&scoped_v6, &k);
	} else {
		struct rl_lpm_scoped_v4 k = { .prefixlen = 32 + 32, .scope = idx };

		__builtin_memcpy(k.addr, &key->addr[12], 4);
		id = bpf_map_lookup_elem(&scoped_v4, &k);
	}
	if (!id)
		return NULL;
	*slot = *id;
	r = bpf_map_lookup_elem(&rules, slot);
	if (!r || !(r->flags & RL_RULE_F_USED))
		return NULL;
	return r;
}

/* The walk of the scopes in use (a bpf_loop callback: the verifier
 * checks one scope, not RL_MAX_SCOPES of them): the best rule so far. */
struct scope_walk {
	struct rl_key key;
	struct rl_l4 l4;
	__u32 v6;
	__u32 min_plen;		/* rl_scoped_min_plen: shorter ones never judge */
	__u32 best;		/* slot, RL_NO_RULE: none yet */
	__u32 certain;		/* a rule that judges holds the packet for
				 * certain (rl_scope_certain) */
	struct rl_scope_cand cand;	/* the best's */
};

/*
 * Scoped rule `r` at `slot`, whose scope `s` the packet is in, against the
 * best so far. A global function: verified once, its branches are not
 * multiplied by the walk's and the parser's paths.
 */
__noinline int scope_consider(struct scope_walk *w, const struct rl_rule *r,
			      const struct rl_scope *s, __u32 slot)
{
	struct rl_scope_cand c;
	int unreadable;

	if (!w || !r || !s)
		return 0;	/* cannot happen: the caller's pointers */
	if (r->prefixlen < w->min_plen)
		return 0;
	unreadable = w->l4.known != RL_L4_FULL;
	if (unreadable && rl_scope_certain(s, &w->l4))
		w->certain = 1;
	c.strict = rl_rule_strictness(r);
	c.plen = r->prefixlen;
	c.rank = RL_READ(s->rank);
	c.lo = RL_READ(s->dport_lo);
	if (w->best != RL_NO_RULE && !rl_scoped_beats(&c, &w->cand, unreadable))
		return 0;
	w->best = slot;
	w->cand = c;
	return 0;
}

/* Scope `i` against the best so far. */
static __always_inline void scope_walk_test(__u32 i, struct scope_walk *w)
{
	const struct rl_scope *s = bpf_map_lookup_elem(&scopes, &i);
	const struct rl_rule *r;
	__u32 slot = RL_NO_RULE;

	if (!s || !rl_scope_matches(s, &w->l4))
		return;
	r = scoped_lookup(i, &w->key, w->v6, &slot);
	if (r)
		scope_consider(w, r, s, slot);
}

/* The scopes after the first (scoped_rule() tests that one itself). */
static long scope_walk_one(__u32 i, struct scope_walk *w)
{
	scope_walk_test(i + 1, w);
	return 0;
}

/*
 * The slot of the scoped rule that judges this packet instead of
 * `rule_id`, the unscoped rule covering its source (RL_NO_RULE: none),
 * with RL_SCOPED_COVERED when the packet pays that rule's newcomer budget
 * too; RL_NO_RULE when none does. Only called once a scope is in use. A
 * global function: the scopes are walked on its own stack, not the
 * program's, and verified once. It reads the Ethernet header again and
 * the unscoped rule itself: the caller handing the IP header's offset or
 * the rule's prefix keeps one more value live across xdp_ratelimit()'s
 * calls, on its stack, which the judging below it fills.
 */
__noinline __u32 scoped_rule(struct xdp_md *ctx, const struct rl_key *key,
			     __u32 rule_id, int v6)
{
	struct scope_walk w = { .best = RL_NO_RULE };
	const struct rl_rule *u = NULL;
	struct rl_config *cfg;
	__u32 zero = 0, n;

	if (!ctx || !key)
		return RL_NO_RULE;	/* cannot happen: the caller's pointers */
	/* a scoped window of an IPv6 source holds 96 bits (scope.h) */
	if (v6 && settings.v6_prefix > RL_SCOPED_MAX_V6_PREFIX)
		return RL_NO_RULE;
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cfg)
		return RL_NO_RULE;
	n = RL_READ(cfg->scopes_used);
	if (n > RL_MAX_SCOPES)
		n = RL_MAX_SCOPES;
	if (rule_id != RL_NO_RULE) {
		u = bpf_map_lookup_elem(&rules, &rule_id);
		if (u && !(u->flags & RL_RULE_F_USED))
			u = NULL;
	}
	w.key = *key;
	w.v6 = v6;
	w.min_plen = rl_scoped_min_plen(u);
	rl_parse_l4((void *)(long)ctx->data, (void *)(long)ctx->data_end, &w.l4);
	/* the first scope here, not by the callback: one scope is the
	 * common setup (a SYN limit), and the callback's call and return
	 * cost more than its test */
	if (n) {
		scope_walk_test(0, &w);
		bpf_loop(n - 1, scope_walk_one, &w, 0);
	}
	if (w.best == RL_NO_RULE)
		return RL_NO_RULE;
	/* a header it could not read: the unscoped rule is one of the rules
	 * it might fall under, unless a scope holds it for certain */
	if (w.l4.known != RL_L4_FULL && !w.certain &&
	    rl_rule_strictness(u) < w.cand.strict)
		return RL_NO_RULE;
	return w.best | (rl_scoped_pays_cover(u) ? RL_SCOPED_COVERED : 0);
}
#endif /* RL_SCOPE_BPF_H */
