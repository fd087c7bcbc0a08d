// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "newcomer.h"
#include "lib/scope_opts.h"
#include "lib/rule.h"
#include "lib/scope_windows.h"
#include "lib/settings.h"

static const __u8 v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

bool rl_key_is_v4(const struct rl_key *key)
{
	return !memcmp(key->addr, v4_mapped, sizeof(v4_mapped));
}

void rl_rule_prefix(const struct rl_rule *r, struct rl_prefix *p)
{
	memset(p, 0, sizeof(*p));
	p->v6 = r->flags & RL_RULE_F_V6;
	p->len = r->prefixlen;
	memcpy(p->addr, r->addr, sizeof(p->addr));
}

typedef union {
	struct rl_lpm_v4 v4;
	struct rl_lpm_v6 v6;
	struct rl_lpm_scoped_v4 sv4;
	struct rl_lpm_scoped_v6 sv6;
} lpm_key_t;

/* No scope: the index an unscoped rule's lookups pass. */
#define NO_SCOPE	(-1)

/* The LPM key of a prefix, in the tries of scope `sidx` (NO_SCOPE: the
 * unscoped ones); returns the trie's fd. */
static int lpm_key(const struct rl_maps *m, const struct rl_prefix *p,
		   int sidx, lpm_key_t *k)
{
	memset(k, 0, sizeof(*k));
	if (sidx != NO_SCOPE && p->v6) {
		k->sv6.prefixlen = 32 + p->len;
		k->sv6.scope = (__u32)sidx;
		memcpy(k->sv6.addr, p->addr, 16);
		return m->scoped_v6;
	}
	if (sidx != NO_SCOPE) {
		k->sv4.prefixlen = 32 + p->len;
		k->sv4.scope = (__u32)sidx;
		memcpy(k->sv4.addr, p->addr, 4);
		return m->scoped_v4;
	}
	if (p->v6) {
		k->v6.prefixlen = p->len;
		memcpy(k->v6.addr, p->addr, 16);
		return m->rules_v6;
	}
	k->v4.prefixlen = p->len;
	memcpy(k->v4.addr, p->addr, 4);
	return m->rules_v4;
}

/* The scope index of a rule as the maps hold it (rl_rule.scope: 1 + it). */
static int map_scope(const struct rl_rule *r)
{
	return r->scope ? (int)r->scope - 1 : NO_SCOPE;
}

/* Slot of the rule for exactly this prefix in scope `sidx`, or -ENOENT. */
static int find_exact(const struct rl_maps *m, const struct rl_prefix *p,
		      int sidx, struct rl_rule *rule)
{
	lpm_key_t k;
	int fd = lpm_key(m, p, sidx, &k);
	__u32 id;

	/* an LPM lookup returns the longest match: check it is this prefix */
	if (bpf_map_lookup_elem(fd, &k, &id))
		return -ENOENT;
	if (bpf_map_lookup_elem(m->rules, &id, rule))
		return -errno;
	if (!(rule->flags & RL_RULE_F_USED) || rule->prefixlen != p->len ||
	    !!(rule->flags & RL_RULE_F_V6) != p->v6 ||
	    memcmp(rule->addr, p->addr, p->v6 ? 16 : 4) ||
	    map_scope(rule) != sidx)
		return -ENOENT;
	return (int)id;
}

/*
 * A slot is live when its prefix leads back to it. A change killed between
 * writing the slot and inserting the prefix leaves an orphan: it has no
 * effect, is not listed and is reused.
 */
static bool slot_live(const struct rl_maps *m, __u32 id, const struct rl_rule *r)
{
	struct rl_rule again;
	struct rl_prefix p;

	if (!(r->flags & RL_RULE_F_USED))
		return false;
	rl_rule_prefix(r, &p);
	return find_exact(m, &p, map_scope(r), &again) == (int)id;
}

/* After a scoped rule went: its windows go too (scoped_windows.h). */
static int drop_dead_windows(const struct rl_maps *m)
{
	bool live[RL_MAX_RULES];
	struct rl_rule r;
	long n;

	for (__u32 id = 0; id < RL_MAX_RULES; id++) {
		if (bpf_map_lookup_elem(m->rules, &id, &r))
			return -errno;
		live[id] = slot_live(m, id, &r) && map_scope(&r) != NO_SCOPE;
	}
	n = rl_scoped_windows_drop(m, live);
	return n < 0 ? (int)n : 0;
}

/* ---- scopes: entries of `scopes`, shared by the rules of one scope ---- */

static int scopes_read(const struct rl_maps *m, struct rl_scope *table)
{
	for (__u32 i = 0; i < RL_MAX_SCOPES; i++)
		if (bpf_map_lookup_elem(m->scopes, &i, &table[i]))
			return -errno;
	return 0;
}

/* Which entries of `scopes` the live rules use. */
static int scopes_in_use(const struct rl_maps *m, bool *used)
{
	struct rl_rule r;

	memset(used, 0, RL_MAX_SCOPES * sizeof(*used));
	for (__u32 id = 0; id < RL_MAX_RULES; id++) {
		if (bpf_map_lookup_elem(m->rules, &id, &r))
			return -errno;
		if (r.scope && r.scope <= RL_MAX_SCOPES && slot_live(m, id, &r))
			used[r.scope - 1] = true;
	}
	return 0;
}

static int scopes_used_write(const struct rl_maps *m, __u32 n)
{
	struct rl_config cfg;
	int err = rl_config_read(m, &cfg);

	if (err || cfg.scopes_used == n)
		return err;
	cfg.scopes_used = n;
	return rl_config_write(m, &cfg);
}

/*
 * The entry of scope `want`, written (and counted in config.scopes_used)
 * before any trie entry refers to it, so that the program never finds a
 * scoped rule whose scope it does not read. -EMLINK when all
 * RL_MAX_SCOPES entries hold other scopes in use.
 */
static int scope_acquire(const struct rl_maps *m, const struct rl_scope *want)
{
	struct rl_scope table[RL_MAX_SCOPES];
	bool used[RL_MAX_SCOPES];
	struct rl_config cfg;
	int idx, err;
	__u32 key;

	err = scopes_read(m, table);
	if (err)
		return err;
	/* an entry that holds it already, without the scan of every rule
	 * that finding a free one takes (a restore writes many rules) */
	for (idx = 0; idx < RL_MAX_SCOPES; idx++)
		if (rl_scope_any(&table[idx]) && rl_scope_same(&table[idx], want))
			break;
	if (idx == RL_MAX_SCOPES) {
		err = scopes_in_use(m, used);
		if (err)
			return err;
		idx = rl_scope_pick(table, used, want);
		if (idx < 0)
			return -EMLINK;
		key = (__u32)idx;
		if (bpf_map_update_elem(m->scopes, &key, want, BPF_ANY))
			return -errno;
	}
	err = rl_config_read(m, &cfg);
	if (!err && cfg.scopes_used < (__u32)idx + 1) {
		cfg.scopes_used = (__u32)idx + 1;
		err = rl_config_write(m, &cfg);
	}
	return err ? err : idx;
}

/* The entry of scope `want`, as it is: NO_SCOPE when none holds it. */
static int scope_find(const struct rl_maps *m, const struct rl_scope *want)
{
	struct rl_scope table[RL_MAX_SCOPES];
	int err = scopes_read(m, table);

	if (err)
		return err;
	for (int i = 0; i < RL_MAX_SCOPES; i++)
		if (rl_scope_any(&table[i]) && rl_scope_same(&table[i], want))
			return i;
	return NO_SCOPE;
}

/* Free the entries no rule uses any more, after their rules are gone
 * from the tries. */
static int scopes_collect(const struct rl_maps *m)
{
	static const struct rl_scope none;
	struct rl_scope table[RL_MAX_SCOPES];
	bool used[RL_MAX_SCOPES];
	int err = scopes_read(m, table);

	if (!err)
		err = scopes_in_use(m, used);
	if (!err)
		err = scopes_used_write(m, rl_scopes_used(used));
	for (__u32 i = 0; i < RL_MAX_SCOPES && !err; i++)
		if (!used[i] && rl_scope_any(&table[i]) &&
		    bpf_map_update_elem(m->scopes, &i, &none, BPF_ANY))
			err = -errno;
	return err;
}

/* A rule read from `rules` in the form userspace holds (rule_scope.h). */
static void rule_from_map(struct rl_rule *r, const struct rl_scope *table)
{
	int sidx = map_scope(r);

	if (sidx == NO_SCOPE || sidx >= RL_MAX_SCOPES) {
		rl_rule_scope_put(r, &(struct rl_scope){ 0 });
		return;
	}
	rl_rule_scope_put(r, &table[sidx]);
}

int rl_rule_scopes_read(const struct rl_maps *m, struct rl_scope *table)
{
	return scopes_read(m, table);
}

void rl_rule_from_map(struct rl_rule *r, const struct rl_scope *table)
{
	rule_from_map(r, table);
}

int rl_rule_read_slot(const struct rl_maps *m, __u32 slot, struct rl_rule *out)
{
	struct rl_scope table[RL_MAX_SCOPES];
	int err;

	if (slot >= RL_MAX_RULES)
		return -ENOENT;
	if (bpf_map_lookup_elem(m->rules, &slot, out))
		return -errno;
	if (!(out->flags & RL_RULE_F_USED))
		return -ENOENT;
	err = scopes_read(m, table);
	if (err)
		return err;
	rule_from_map(out, table);
	return 0;
}

void rl_rule_text(const struct rl_rule *r, char *buf, size_t len)
{
	char pfx[RL_PREFIX_STRLEN], scope[RL_SCOPE_STRLEN];
	struct rl_prefix p;
	struct rl_scope s;

	rl_rule_prefix(r, &p);
	rl_format_prefix(&p, pfx, sizeof(pfx));
	rl_rule_scope_get(r, &s);
	rl_scope_text(&s, scope, sizeof(scope));
	snprintf(buf, len, "%s%s%s", pfx, scope[0] ? " " : "", scope);
}

static int free_slot(const struct rl_maps *m)
{
	struct rl_rule r;

	for (__u32 id = 0; id < RL_MAX_RULES; id++) {
		if (bpf_map_lookup_elem(m->rules, &id, &r))
			return -errno;
		if (!slot_live(m, id, &r))
			return (int)id;
	}
	return -ENOSPC;
}

/*
 * Sources cache their rule under the rules generation. A change makes it
 * odd before it touches a rule and even again when done; while it is odd
 * the program looks the rule up on every packet (see find_rule). So a
 * change killed half way is enforced as far as it got, as `quota list`
 * shows it, and `status` reports it until the next change completes it.
 */
static int mark_change(const struct rl_maps *m, bool in_progress)
{
	struct rl_config cfg;
	int err = rl_config_read(m, &cfg);

	if (err)
		return err;
	if (RL_RULES_CHANGING(cfg.rules_gen) == in_progress)
		return 0;	/* odd already: an interrupted change */
	cfg.rules_gen++;
	if (cfg.rules_gen == 0)	/* 0 is what a new source holds */
		cfg.rules_gen = 2;
	return rl_config_write(m, &cfg);
}

/* A reused slot's aggregate and newcomer windows must not carry an old
 * rule's passes. */
static int reset_aggregate(const struct rl_maps *m, __u32 slot)
{
	void *zero = rl_percpu_alloc(sizeof(struct rl_state));
	static const struct rl_history empty;
	__u32 idx[2] = { rl_agg_index(slot), rl_new_index(slot) };
	int err = 0;

	if (!zero)
		return -ENOMEM;
	for (int i = 0; i < 2 && !err; i++)
		if (bpf_map_update_elem(m->aggregates, &idx[i], zero, BPF_ANY) ||
		    bpf_map_update_elem(m->agg_history, &idx[i], &empty, BPF_ANY))
			err = -errno;
	free(zero);
	return err;
}

/* Is the other half of the default rule (the /0 of the other family) set?
 * Then the windows both share are in use. */
static bool other_default_set(const struct rl_maps *m, const struct rl_prefix *p)
{
	struct rl_prefix other = { .v6 = !p->v6 };
	struct rl_rule r;

	return find_exact(m, &other, NO_SCOPE, &r) >= 0;
}

/* Do two rules have the same aggregate and newcomer budgets? */
static bool same_budgets(const struct rl_rule *a, const struct rl_rule *b)
{
	return a->agg_pkt_budget == b->agg_pkt_budget &&
	       a->agg_byte_budget == b->agg_byte_budget &&
	       a->new_pkt_budget == b->new_pkt_budget &&
	       a->new_byte_budget == b->new_byte_budget;
}

/*
 * The halves of the default share their aggregate and newcomer windows
 * while their budgets are the same. Set apart, the IPv6 half judges in
 * windows of its own (RL_RULE_F_APART), empty when it moves there: a lease
 * sized for one half's budget must never be spent on the other's packets.
 * Back together, it joins the IPv4 half's windows (emptied first when no
 * IPv4 half uses them). Called within a change, after its rules are set.
 */
static int default_share(const struct rl_maps *m)
{
	struct rl_prefix p4 = { .v6 = false }, p6 = { .v6 = true };
	struct rl_rule r4, r6;
	int id4, id6, err;
	bool apart;

	id6 = find_exact(m, &p6, NO_SCOPE, &r6);
	if (id6 < 0)
		return id6 == -ENOENT ? 0 : id6;
	id4 = find_exact(m, &p4, NO_SCOPE, &r4);
	if (id4 < 0 && id4 != -ENOENT)
		return id4;
	apart = id4 >= 0 && !same_budgets(&r4, &r6);
	if (apart == !!(r6.flags & RL_RULE_F_APART))
		return 0;
	if (apart || id4 < 0) {
		err = reset_aggregate(m, apart ? (__u32)id6 : RL_BUDGET_DEFAULT);
		if (err)
			return err;
	}
	r6.flags ^= RL_RULE_F_APART;
	return bpf_map_update_elem(m->rules, &id6, &r6, BPF_ANY) ? -errno : 0;
}

bool rl_rule_change_any(const struct rl_rule_change *c)
{
	return c->have_pps || c->have_bps || c->have_agg_pps || c->have_agg_bps ||
	       c->have_new_pps || c->have_new_bps || c->have_ban ||
	       c->have_burst;
}

/* A rule that bans (`bans`): the program looks every source up in `bans`
 * from now on, for good (bans outlive the rule). Before the rule, so that
 * no ban is imposed that is not enforced. */
static int note_bans(const struct rl_maps *m, bool bans)
{
	struct rl_config cfg;
	int err;

	if (!bans)
		return 0;
	err = rl_config_read(m, &cfg);
	if (err || cfg.bans_used)
		return err;
	cfg.bans_used = 1;
	return rl_config_write(m, &cfg);
}

bool rl_rule_change_default(struct rl_rule_change *c, __u64 pps, __u64 bps)
{
	*c = (struct rl_rule_change){
		.have_pps = pps != RL_UNLIMITED, .pps = pps,
		.have_bps = bps != RL_UNLIMITED, .bps = bps,
	};
	return rl_rule_change_any(c);
}

#define RULE_OPT(opt, field, kind) \
	{ opt, offsetof(struct rl_rule, field), RL_RULE_OPT_##kind }

const struct rl_rule_opt rl_rule_opts[] = {
	RULE_OPT("pps", pps, RATE),
	RULE_OPT("bps", bps, RATE),
	RULE_OPT("aggregate-pps", agg_pps, RATE),
	RULE_OPT("aggregate-bps", agg_bps, RATE),
	RULE_OPT("new-pps", new_pps, RATE),
	RULE_OPT("new-bps", new_bps, RATE),
	RULE_OPT("ban", ban_ns, DURATION),
	RULE_OPT("burst", burst, COUNT),
	{ NULL }
};

/* The scope is part of what names a rule, not a limit: save writes it as
 * rl_scope_opts_text() gives it. */
const char *const rl_rule_scope_opts[] = { "proto", "dport", "syn", NULL };

static __u64 *opt_field(struct rl_rule *r, const struct rl_rule_opt *o)
{
	return (__u64 *)((char *)r + o->offset);
}

__u64 rl_rule_opt_value(const struct rl_rule *r, const struct rl_rule_opt *o)
{
	return *opt_field((struct rl_rule *)r, o);
}

static __u64 opt_unset(const struct rl_rule_opt *o)
{
	return o->kind == RL_RULE_OPT_RATE ? RL_UNLIMITED : 0;	/* COUNT too */
}

bool rl_rule_opt_set(const struct rl_rule *r, const struct rl_rule_opt *o)
{
	return rl_rule_opt_value(r, o) != opt_unset(o);
}

void rl_rule_init(struct rl_rule *r, const struct rl_prefix *p)
{
	memset(r, 0, sizeof(*r));
	for (const struct rl_rule_opt *o = rl_rule_opts; o->name; o++)
		*opt_field(r, o) = opt_unset(o);
	r->flags = RL_RULE_F_USED | (p->v6 ? RL_RULE_F_V6 : 0);
	r->prefixlen = p->len;
	memcpy(r->addr, p->addr, p->v6 ? 16 : 4);
}

void rl_rule_apply(struct rl_rule *r, const struct rl_rule_change *c,
		   __u64 window_ns)
{
	if (c->have_pps)
		r->pps = c->pps;
	if (c->have_bps)
		r->bps = c->bps;
	if (c->have_agg_pps)
		r->agg_pps = c->agg_pps;
	if (c->have_agg_bps)
		r->agg_bps = c->agg_bps;
	if (c->have_new_pps)
		r->new_pps = c->new_pps;
	if (c->have_new_bps)
		r->new_bps = c->new_bps;
	if (c->have_ban)
		r->ban_ns = c->ban_ns;
	if (c->have_burst)
		r->burst = c->burst;
	r->new_pkt_budget = rl_budget(r->new_pps, window_ns);
	r->new_byte_budget = rl_budget(r->new_bps, window_ns);
	r->pkt_budget = rl_budget(r->pps, window_ns);
	/* a burst caps a window budget (quota.h rl_usage_burst): --burst
	 * alone gets the largest */
	if (r->burst && r->pkt_budget == RL_UNLIMITED)
		r->pkt_budget = RL_MAX_BUDGET;
	r->byte_budget = rl_budget(r->bps, window_ns);
	r->agg_pkt_budget = rl_budget(r->agg_pps, window_ns);
	r->agg_byte_budget = rl_budget(r->agg_bps, window_ns);
}

/*
 * Write rule r to slot id, then the prefix that leads to it (a kill in
 * between leaves an unreachable slot, see slot_live). A fresh rule first
 * clears what an earlier rule left in its aggregate and newcomer windows,
 * except a half of the default while the other half is set: the halves
 * share their windows (rl_budget_slot).
 */
static int put_rule(const struct rl_maps *m, const struct rl_rule *r,
		    __u32 id, bool fresh)
{
	struct rl_rule w = *r;	/* as the maps hold it: the scope's index */
	struct rl_scope scope;
	int fd, ret, sidx = NO_SCOPE;
	struct rl_prefix p;
	lpm_key_t k;

	rl_rule_prefix(r, &p);
	rl_rule_scope_get(r, &scope);
	w.scope = 0;
	w.pad = 0;
	if (rl_scope_any(&scope)) {
		sidx = scope_acquire(m, &scope);
		if (sidx < 0)
			return sidx;
		w.scope = (__u32)sidx + 1;
	}
	if (fresh && (p.len || w.scope || !other_default_set(m, &p))) {
		ret = reset_aggregate(m, rl_budget_slot(id, &w));
		if (ret)
			return ret;
	}
	if (bpf_map_update_elem(m->rules, &id, &w, BPF_ANY))
		return -errno;
	fd = lpm_key(m, &p, sidx, &k);
	if (bpf_map_update_elem(fd, &k, &id, BPF_ANY))
		return -errno;
	return 0;
}

/* The prefix first (the rule stops applying), then its slot. */
static int del_rule(const struct rl_maps *m, const struct rl_prefix *p,
		    int sidx, __u32 id)
{
	struct rl_rule zero = {};
	lpm_key_t k;

	if (bpf_map_delete_elem(lpm_key(m, p, sidx, &k), &k))
		return -errno;
	if (bpf_map_update_elem(m->rules, &id, &zero, BPF_ANY))
		return -errno;
	return 0;
}

static int set_one(const struct rl_maps *m, const struct rl_settings *s,
		   const struct rl_prefix *p, const struct rl_scope *scope,
		   const struct rl_rule_change *c, char *err, size_t errlen)
{
	int id, ret, sidx = NO_SCOPE;
	struct rl_rule rule;
	bool fresh;

	if (rl_scope_any(scope)) {
		sidx = scope_find(m, scope);
		if (sidx < NO_SCOPE) {
			id = sidx;
			goto fail;
		}
	}
	id = sidx == NO_SCOPE && rl_scope_any(scope) ? -ENOENT :
	     find_exact(m, p, sidx, &rule);
	fresh = id == -ENOENT;
	if (fresh) {
		if (!rl_rule_change_any(c)) {
			snprintf(err, errlen,
				 "nothing to set: a new rule needs at least one limit, budget or ban");
			return -EINVAL;
		}
		id = free_slot(m);
		if (id == -ENOSPC) {
			snprintf(err, errlen,
				 "all %u rule slots are in use: delete a rule with 'xdp-ratelimit quota del PREFIX'",
				 RL_MAX_RULES);
			return id;
		}
		rl_rule_init(&rule, p);
	}
	if (id < 0)
		goto fail;
	rl_rule_scope_put(&rule, scope);	/* the form put_rule takes */
	rl_rule_apply(&rule, c, s->window_ns);
	ret = put_rule(m, &rule, id, fresh);
	if (ret == -EMLINK) {
		snprintf(err, errlen,
			 "all %u scopes are in use (a scope is a --proto with its --dport and --syn): delete the rules of a scope, or scope this rule as an existing one",
			 RL_MAX_SCOPES);
		return ret;
	}
	if (ret) {
		id = ret;
		goto fail;
	}
	return 0;
fail:
	snprintf(err, errlen, "cannot update the rule maps: %s",
		 strerror(-id));
	return id;
}

int rl_prefix_expand(const struct rl_prefix *p, struct rl_prefix out[2])
{
	if (!p->is_default) {
		out[0] = *p;
		return 1;
	}
	memset(out, 0, 2 * sizeof(*out));
	out[1].v6 = true;
	return 2;
}

int rl_rule_check(const struct rl_settings *s, const struct rl_prefix *p,
		  const struct rl_scope *scope, const struct rl_rule_change *c,
		  char *err, size_t errlen)
{
	char buf[RL_PREFIX_STRLEN];
	int ret;

	ret = rl_budgets_fit(c, s->window_ns, "", err, errlen);
	if (ret)
		return ret;
	/* a scoped window's key holds 96 bits of an IPv6 source
	 * (include/scope.h rl_scoped_key) */
	if (scope && rl_scope_any(scope) && (p->v6 || p->is_default) &&
	    s->v6_prefix > RL_SCOPED_MAX_V6_PREFIX) {
		rl_format_prefix(p, buf, sizeof(buf));
		snprintf(err, errlen,
			 "a scoped rule for %s covers IPv6 sources, which this interface tracks by /%u: scoped rules need --ipv6-prefix %u or shorter (detach and attach again with it), or scope an IPv4 prefix only",
			 buf, s->v6_prefix, RL_SCOPED_MAX_V6_PREFIX);
		return -EINVAL;
	}
	if (!p->v6 || p->len <= s->v6_prefix)
		return 0;
	rl_format_prefix(p, buf, sizeof(buf));
	snprintf(err, errlen,
		 "%s is longer than the /%u that IPv6 sources are tracked by on this interface: use a /%u or shorter prefix, or attach with --ipv6-prefix %u",
		 buf, s->v6_prefix, s->v6_prefix, p->len);
	return -EINVAL;
}

int rl_rule_set(const struct rl_maps *m, const struct rl_settings *s,
		const struct rl_prefix *p, const struct rl_rule_change *c,
		char *err, size_t errlen)
{
	return rl_rule_set_scoped(m, s, p, NULL, c, err, errlen);
}

int rl_rule_del(const struct rl_maps *m, const struct rl_prefix *p,
		char *err, size_t errlen)
{
	return rl_rule_del_scoped(m, p, NULL, err, errlen);
}

int rl_rule_set_scoped(const struct rl_maps *m, const struct rl_settings *s,
		       const struct rl_prefix *p, const struct rl_scope *scope,
		       const struct rl_rule_change *c, char *err, size_t errlen)
{
	static const struct rl_scope none;
	struct rl_prefix each[2];
	int n, ret;

	if (!scope)
		scope = &none;
	ret = rl_rule_check(s, p, scope, c, err, errlen);
	if (ret)
		return ret;
	ret = note_bans(m, c->have_ban && c->ban_ns);
	if (!ret)
		ret = mark_change(m, true);
	if (ret)
		goto fail;
	n = rl_prefix_expand(p, each);
	for (int i = 0; i < n; i++) {
		ret = set_one(m, s, &each[i], scope, c, err, errlen);
		if (ret) {
			/* reported; the change is over, as far as it got
			 * (should this fail too, status reports it cut short) */
			(void)scopes_collect(m);
			(void)mark_change(m, false);
			return ret;
		}
	}
	ret = p->len ? 0 : default_share(m);
	if (!ret)
		ret = mark_change(m, false);
	if (ret)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "cannot update the config map: %s",
		 strerror(-ret));
	return ret;
}

int rl_rule_del_scoped(const struct rl_maps *m, const struct rl_prefix *p,
		       const struct rl_scope *scope, char *err, size_t errlen)
{
	char buf[RL_PREFIX_STRLEN], text[RL_SCOPE_STRLEN] = "";
	int n, id, found = 0, ret, sidx = NO_SCOPE;
	struct rl_prefix each[2];
	struct rl_rule rule;

	ret = mark_change(m, true);
	if (ret) {
		id = ret;
		goto fail;
	}
	if (scope && rl_scope_any(scope)) {
		sidx = scope_find(m, scope);
		if (sidx < NO_SCOPE) {
			id = sidx;
			goto fail;
		}
	}
	n = rl_prefix_expand(p, each);
	for (int i = 0; i < n; i++) {
		if (sidx == NO_SCOPE && scope && rl_scope_any(scope))
			break;	/* no entry holds the scope: no rule has it */
		id = find_exact(m, &each[i], sidx, &rule);
		if (id == -ENOENT)
			continue;
		if (id < 0)
			goto fail;
		found++;
		ret = del_rule(m, &each[i], sidx, id);
		if (ret) {
			id = ret;
			goto fail;
		}
	}
	ret = p->len ? 0 : default_share(m);
	if (!ret)
		ret = scopes_collect(m);
	if (!ret)
		ret = mark_change(m, false);	/* also when nothing was found */
	if (!ret && found && sidx != NO_SCOPE)
		ret = drop_dead_windows(m);
	if (ret) {
		id = ret;
		goto fail;
	}
	if (!found) {
		rl_format_prefix(p, buf, sizeof(buf));
		if (scope && rl_scope_any(scope)) {
			text[0] = ' ';
			rl_scope_text(scope, text + 1, sizeof(text) - 1);
		}
		snprintf(err, errlen,
			 "no rule for %s%s (see 'xdp-ratelimit quota list')",
			 buf, text);
		return -ENOENT;
	}
	return 0;
fail:
	(void)mark_change(m, false);	/* as in rl_rule_set */
	snprintf(err, errlen, "cannot update the rule maps: %s",
		 strerror(-id));
	return id;
}

bool rl_rule_same_prefix(const struct rl_rule *a, const struct rl_rule *b)
{
	return !((a->flags ^ b->flags) & RL_RULE_F_V6) &&
	       a->prefixlen == b->prefixlen &&
	       !memcmp(a->addr, b->addr, sizeof(a->addr));
}

bool rl_rule_same_key(const struct rl_rule *a, const struct rl_rule *b)
{
	return rl_rule_same_prefix(a, b) && a->scope == b->scope &&
	       a->pad == b->pad;
}

/* A live rule and its slot. */
struct live_rule {
	struct rl_rule r;	/* as userspace holds it (rule_scope.h) */
	__u32 id;
	int sidx;		/* its scope's index in the maps */
	bool kept;		/* wanted as it is, or rewritten in place */
};

static int find_live(const struct live_rule *live, int n,
		     const struct rl_rule *r)
{
	for (int i = 0; i < n; i++)
		if (rl_rule_same_key(&live[i].r, r))
			return i;
	return -1;
}

/* Apply the plan: deletions first, which free slots for the new rules. */
static int replace_apply(const struct rl_maps *m, struct live_rule *live,
			 int nlive, bool *used, const struct rl_rule *want,
			 int n)
{
	bool had_default = false;
	struct rl_prefix p;
	__u32 next = 0;
	int ret;

	/* the default's windows stay while any half of it was set, even
	 * one deleted below */
	for (int i = 0; i < nlive; i++)
		had_default |= !live[i].r.prefixlen && !live[i].r.scope;
	for (int i = 0; i < nlive; i++) {
		if (live[i].kept)
			continue;
		rl_rule_prefix(&live[i].r, &p);
		ret = del_rule(m, &p, live[i].sidx, live[i].id);
		if (ret)
			return ret;
		used[live[i].id] = false;
	}
	for (int i = 0; i < n; i++) {
		int k = find_live(live, nlive, &want[i]);

		if (k >= 0 && !memcmp(&live[k].r, &want[i], sizeof(want[i])))
			continue;
		if (k >= 0) {
			ret = put_rule(m, &want[i], live[k].id, false);
		} else {
			while (next < RL_MAX_RULES && used[next])
				next++;
			if (next == RL_MAX_RULES)
				return -ENOSPC;
			used[next] = true;
			ret = put_rule(m, &want[i], next,
				       want[i].prefixlen || want[i].scope ||
				       !had_default);
		}
		if (ret)
			return ret;
	}
	return 0;
}

static bool any_bans(const struct rl_rule *r, int n)
{
	for (int i = 0; i < n; i++)
		if (r[i].ban_ns)
			return true;
	return false;
}

int rl_rule_replace(const struct rl_maps *m, const struct rl_rule *want,
		    int n, char *err, size_t errlen)
{
	struct live_rule *live = calloc(RL_MAX_RULES, sizeof(*live));
	bool *used = calloc(RL_MAX_RULES, sizeof(*used));
	int nlive = 0, changes = 0, ret = -ENOMEM;
	struct rl_scope table[RL_MAX_SCOPES];
	struct rl_rule r;
	int sidx;

	if (!live || !used)
		goto out;
	ret = scopes_read(m, table);
	if (ret)
		goto out;
	for (__u32 id = 0; id < RL_MAX_RULES; id++) {
		if (bpf_map_lookup_elem(m->rules, &id, &r)) {
			ret = -errno;
			goto out;
		}
		if (!slot_live(m, id, &r))
			continue;
		/* compared with the wanted rules without the flag that
		 * default_share() keeps */
		r.flags &= ~RL_RULE_F_APART;
		sidx = map_scope(&r);
		rule_from_map(&r, table);
		live[nlive++] = (struct live_rule){ .r = r, .id = id,
						    .sidx = sidx };
		used[id] = true;
	}
	for (int i = 0; i < n; i++) {
		int k = find_live(live, nlive, &want[i]);

		if (k >= 0)
			live[k].kept = true;
		if (k < 0 || memcmp(&live[k].r, &want[i], sizeof(want[i])))
			changes++;
	}
	for (int i = 0; i < nlive; i++)
		changes += !live[i].kept;
	ret = 0;
	if (!changes) {
		/* no write, unless a change was cut short after its last
		 * rule: then the generation is odd, and this completes it */
		ret = mark_change(m, false);
		goto out;
	}
	ret = note_bans(m, any_bans(want, n));
	if (!ret)
		ret = mark_change(m, true);
	if (!ret)
		ret = replace_apply(m, live, nlive, used, want, n);
	if (!ret)
		ret = default_share(m);
	if (!ret || ret == -EMLINK || ret == -ENOSPC)
		(void)scopes_collect(m);
	/* over, as far as it got (as in rl_rule_set) */
	if (mark_change(m, false) && !ret)
		ret = -EIO;
	for (int i = 0; i < nlive && !ret; i++)
		if (!live[i].kept && live[i].sidx != NO_SCOPE) {
			ret = drop_dead_windows(m);
			break;
		}
out:
	if (ret == -ENOSPC)
		snprintf(err, errlen, "more than %u rules: the rule slots are full",
			 RL_MAX_RULES);
	else if (ret == -EMLINK)
		snprintf(err, errlen, "more than %u scopes: rules may have %u different scopes (--proto with its --dport and --syn) at most",
			 RL_MAX_SCOPES, RL_MAX_SCOPES);
	else if (ret < 0)
		snprintf(err, errlen, "cannot update the rule maps: %s",
			 strerror(-ret));
	free(live);
	free(used);
	return ret < 0 ? ret : changes;
}

int rl_rule_cmp(const void *a, const void *b)
{
	const struct rl_rule *x = a, *y = b;
	int xv6 = !!(x->flags & RL_RULE_F_V6), yv6 = !!(y->flags & RL_RULE_F_V6);
	int c;

	if (xv6 != yv6)
		return xv6 - yv6;
	if (x->prefixlen != y->prefixlen)
		return x->prefixlen < y->prefixlen ? -1 : 1;
	c = memcmp(x->addr, y->addr, sizeof(x->addr));
	if (c)
		return c;
	/* unscoped first, then by scope (packed: rule_scope.h) */
	if (x->scope != y->scope)
		return x->scope < y->scope ? -1 : 1;
	return x->pad < y->pad ? -1 : x->pad > y->pad;
}

int rl_rule_list(const struct rl_maps *m, struct rl_rule *out, int max)
{
	struct rl_scope table[RL_MAX_SCOPES];
	int n = 0, err = scopes_read(m, table);
	struct rl_rule r;

	if (err)
		return err;
	for (__u32 id = 0; id < RL_MAX_RULES && n < max; id++) {
		if (bpf_map_lookup_elem(m->rules, &id, &r))
			return -errno;
		if (!slot_live(m, id, &r))
			continue;
		rule_from_map(&r, table);
		out[n++] = r;
	}
	qsort(out, n, sizeof(*out), rl_rule_cmp);
	return n;
}

int rl_rule_lookup(const struct rl_maps *m, const struct rl_key *key,
		   bool v6, struct rl_rule *out)
{
	struct rl_prefix p = { .v6 = v6, .len = v6 ? 128 : 32 };
	lpm_key_t k;
	__u32 id;

	memcpy(p.addr, v6 ? key->addr : key->addr + 12, v6 ? 16 : 4);
	if (bpf_map_lookup_elem(lpm_key(m, &p, NO_SCOPE, &k), &k, &id))
		return -ENOENT;
	if (bpf_map_lookup_elem(m->rules, &id, out))
		return -errno;
	return (out->flags & RL_RULE_F_USED) ? 0 : -ENOENT;
}

static const struct rl_rule *cached_rule(const struct rl_maps *m,
					 struct rl_rule_cache *rc, __u32 id)
{
	if (id >= RL_MAX_RULES)
		return NULL;
	if (!rc->rules) {
		rc->rules = calloc(RL_MAX_RULES, sizeof(*rc->rules));
		rc->state = calloc(RL_MAX_RULES, sizeof(*rc->state));
		if (!rc->rules || !rc->state)
			return NULL;
	}
	if (rc->state[id] == RL_SLOT_UNREAD)
		rc->state[id] = !bpf_map_lookup_elem(m->rules, &id, &rc->rules[id]) &&
				(rc->rules[id].flags & RL_RULE_F_USED) ?
				RL_SLOT_USED : RL_SLOT_UNUSABLE;
	return rc->state[id] == RL_SLOT_USED ? &rc->rules[id] : NULL;
}

void rl_rule_cache_free(struct rl_rule_cache *rc)
{
	free(rc->rules);
	free(rc->state);
	rc->rules = NULL;
	rc->state = NULL;
}

const struct rl_rule *rl_rule_of_source(const struct rl_maps *m,
					struct rl_rule_cache *rc,
					const struct rl_key *key,
					bool rule_cached, __u32 rule_id,
					struct rl_rule *found)
{
	const struct rl_rule *rule = NULL;

	if (rule_cached && rule_id == RL_NO_RULE)
		return NULL;
	if (rule_cached)
		rule = cached_rule(m, rc, rule_id);
	if (!rule && !rl_rule_lookup(m, key, !rl_key_is_v4(key), found))
		rule = found;
	return rule;
}

int rl_budgets_fit(const struct rl_rule_change *c, __u64 window_ns,
		   const char *opt_prefix, char *err, size_t errlen)
{
	const struct {
		bool have;
		__u64 rate;
		const char *opt, *unit;
	} r[] = {
		{ c->have_pps, c->pps, "pps", "packets" },
		{ c->have_bps, c->bps, "bps", "bytes" },
		{ c->have_agg_pps, c->agg_pps, "aggregate-pps", "packets" },
		{ c->have_agg_bps, c->agg_bps, "aggregate-bps", "bytes" },
		{ c->have_new_pps, c->new_pps, "new-pps", "packets" },
		{ c->have_new_bps, c->new_bps, "new-bps", "bytes" },
	};
	char w[32];

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		__u64 b = rl_budget(r[i].rate, window_ns);

		if (!r[i].have || b == RL_UNLIMITED || b <= RL_MAX_BUDGET)
			continue;
		rl_format_duration(window_ns, w, sizeof(w));
		snprintf(err, errlen,
			 "--%s%s %llu makes %llu %s per window of %s: the window counts at most %llu exactly; use --%s%s %llu or less, a shorter --window, or 'unlimited'",
			 opt_prefix, r[i].opt, (unsigned long long)r[i].rate,
			 (unsigned long long)b, r[i].unit, w,
			 (unsigned long long)RL_MAX_BUDGET, opt_prefix, r[i].opt,
			 (unsigned long long)((unsigned __int128)RL_MAX_BUDGET *
					      RL_NSEC_PER_SEC / window_ns));
		return -ERANGE;
	}
	return 0;
}
