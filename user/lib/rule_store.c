// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The rules in the maps (rule_store.h): slots, the LPM tries, the scopes
 * table, the rules generation; quota set, del and list. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "newcomer.h"
#include "lib/rule_store.h"
#include "lib/scope_windows.h"
#include "lib/settings.h"

/* The LPM key of a prefix, in the tries of scope `sidx` (RL_NO_SCOPE: the
 * unscoped ones); returns the trie's fd. */
int rl_store_lpm_key(const struct rl_maps *m, const struct rl_prefix *p,
		   int sidx, rl_lpm_key_t *k)
{
	memset(k, 0, sizeof(*k));
	if (sidx != RL_NO_SCOPE && p->v6) {
		k->sv6.prefixlen = 32 + p->len;
		k->sv6.scope = (__u32)sidx;
		memcpy(k->sv6.addr, p->addr, 16);
		return m->scoped_v6;
	}
	if (sidx != RL_NO_SCOPE) {
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
int rl_store_map_scope(const struct rl_rule *r)
{
	return r->scope ? (int)r->scope - 1 : RL_NO_SCOPE;
}

/* Slot of the rule for exactly this prefix in scope `sidx`, or -ENOENT. */
int rl_store_find_exact(const struct rl_maps *m, const struct rl_prefix *p,
		      int sidx, struct rl_rule *rule)
{
	rl_lpm_key_t k;
	int fd = rl_store_lpm_key(m, p, sidx, &k);
	__u32 id;

	/* an LPM lookup returns the longest match: check it is this prefix */
	if (bpf_map_lookup_elem(fd, &k, &id))
		return -ENOENT;
	if (bpf_map_lookup_elem(m->rules, &id, rule))
		return -errno;
	if (!(rule->flags & RL_RULE_F_USED) || rule->prefixlen != p->len ||
	    !!(rule->flags & RL_RULE_F_V6) != p->v6 ||
	    memcmp(rule->addr, p->addr, p->v6 ? 16 : 4) ||
	    rl_store_map_scope(rule) != sidx)
		return -ENOENT;
	return (int)id;
}

/*
 * A slot is live when its prefix leads back to it. A change killed between
 * writing the slot and inserting the prefix leaves an orphan: it has no
 * effect, is not listed and is reused.
 */
bool rl_store_slot_live(const struct rl_maps *m, __u32 id, const struct rl_rule *r)
{
	struct rl_rule again;
	struct rl_prefix p;

	if (!(r->flags & RL_RULE_F_USED))
		return false;
	rl_rule_prefix(r, &p);
	return rl_store_find_exact(m, &p, rl_store_map_scope(r), &again) == (int)id;
}

/* After a scoped rule went: its windows go too (scoped_windows.h). */
int rl_store_drop_dead_windows(const struct rl_maps *m)
{
	bool live[RL_MAX_RULES];
	struct rl_rule r;
	long n;

	for (__u32 id = 0; id < RL_MAX_RULES; id++) {
		if (bpf_map_lookup_elem(m->rules, &id, &r))
			return -errno;
		live[id] = rl_store_slot_live(m, id, &r) && rl_store_map_scope(&r) != RL_NO_SCOPE;
	}
	n = rl_scoped_windows_drop(m, live);
	return n < 0 ? (int)n : 0;
}

/* ---- scopes: entries of `scopes`, shared by the rules of one scope ---- */

int rl_rule_scopes_read(const struct rl_maps *m, struct rl_scope *table)
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
		if (r.scope && r.scope <= RL_MAX_SCOPES && rl_store_slot_live(m, id, &r))
			used[r.scope - 1] = true;
	}
	return 0;
}

/* config's scopes_used and scope_skip as `n` and `skip` say. */
static int scopes_used_write(const struct rl_maps *m, __u32 n, __u8 skip)
{
	struct rl_config cfg;
	int err = rl_config_read(m, &cfg);

	if (err || (cfg.scopes_used == n && cfg.scope_skip == skip))
		return err;
	cfg.scopes_used = n;
	cfg.scope_skip = skip;
	return rl_config_write(m, &cfg);
}

/*
 * The entry of scope `want`, written (and counted in config.scopes_used,
 * its protocol out of config.scope_skip) before any trie entry refers to
 * it, so that the program never finds a scoped rule whose scope it does
 * not read, nor skips the walk for a packet it may hold. -EMLINK when all
 * RL_MAX_SCOPES entries hold other scopes in use.
 */
static int scope_acquire(const struct rl_maps *m, const struct rl_scope *want)
{
	struct rl_scope table[RL_MAX_SCOPES];
	bool used[RL_MAX_SCOPES];
	struct rl_config cfg;
	int idx, err;
	__u32 key;

	err = rl_rule_scopes_read(m, table);
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
	table[idx] = *want;
	err = rl_config_read(m, &cfg);
	if (!err)
		err = scopes_used_write(m, cfg.scopes_used > (__u32)idx + 1 ?
					   cfg.scopes_used : (__u32)idx + 1,
					rl_scope_skip(table, NULL));
	return err ? err : idx;
}

/* The entry of scope `want`, as it is: RL_NO_SCOPE when none holds it. */
static int scope_find(const struct rl_maps *m, const struct rl_scope *want)
{
	struct rl_scope table[RL_MAX_SCOPES];
	int err = rl_rule_scopes_read(m, table);

	if (err)
		return err;
	for (int i = 0; i < RL_MAX_SCOPES; i++)
		if (rl_scope_any(&table[i]) && rl_scope_same(&table[i], want))
			return i;
	return RL_NO_SCOPE;
}

/* Free the entries no rule uses any more, after their rules are gone
 * from the tries. */
int rl_store_scopes_collect(const struct rl_maps *m)
{
	static const struct rl_scope none;
	struct rl_scope table[RL_MAX_SCOPES];
	bool used[RL_MAX_SCOPES];
	int err = rl_rule_scopes_read(m, table);

	if (!err)
		err = scopes_in_use(m, used);
	/* the protocols of the scopes gone skip the walk from now on: their
	 * rules are out of the tries already */
	if (!err)
		err = scopes_used_write(m, rl_scopes_used(used),
					rl_scope_skip(table, used));
	for (__u32 i = 0; i < RL_MAX_SCOPES && !err; i++)
		if (!used[i] && rl_scope_any(&table[i]) &&
		    bpf_map_update_elem(m->scopes, &i, &none, BPF_ANY))
			err = -errno;
	return err;
}

/* A rule read from `rules` in the form userspace holds (scope_opts.h). */
void rl_rule_from_map(struct rl_rule *r, const struct rl_scope *table)
{
	int sidx = rl_store_map_scope(r);

	if (sidx == RL_NO_SCOPE || sidx >= RL_MAX_SCOPES) {
		rl_rule_scope_put(r, &(struct rl_scope){ 0 });
		return;
	}
	rl_rule_scope_put(r, &table[sidx]);
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
	err = rl_rule_scopes_read(m, table);
	if (err)
		return err;
	rl_rule_from_map(out, table);
	return 0;
}

static int free_slot(const struct rl_maps *m)
{
	struct rl_rule r;

	for (__u32 id = 0; id < RL_MAX_RULES; id++) {
		if (bpf_map_lookup_elem(m->rules, &id, &r))
			return -errno;
		if (!rl_store_slot_live(m, id, &r))
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
int rl_store_mark_change(const struct rl_maps *m, bool in_progress)
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

int rl_store_counters_reset(const struct rl_maps *m, __u32 slot)
{
	void *zero = rl_percpu_alloc(sizeof(struct rl_rule_counters));
	int err = 0;

	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(m->rule_counters, &slot, zero, BPF_ANY))
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

	return rl_store_find_exact(m, &other, RL_NO_SCOPE, &r) >= 0;
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
int rl_store_default_share(const struct rl_maps *m)
{
	struct rl_prefix p4 = { .v6 = false }, p6 = { .v6 = true };
	struct rl_rule r4, r6;
	int id4, id6, err;
	bool apart;

	id6 = rl_store_find_exact(m, &p6, RL_NO_SCOPE, &r6);
	if (id6 < 0)
		return id6 == -ENOENT ? 0 : id6;
	id4 = rl_store_find_exact(m, &p4, RL_NO_SCOPE, &r4);
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

/* A rule that bans (`bans`): the program looks every source up in `bans`
 * from now on, for good (bans outlive the rule). Before the rule, so that
 * no ban is imposed that is not enforced. */
int rl_store_note_bans(const struct rl_maps *m, bool bans)
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

/*
 * Write rule r to slot id, then the prefix that leads to it (a kill in
 * between leaves an unreachable slot, see slot_live). A fresh rule first
 * clears what an earlier rule left in its aggregate and newcomer windows,
 * except a half of the default while the other half is set: the halves
 * share their windows (rl_budget_slot).
 */
int rl_store_put(const struct rl_maps *m, const struct rl_rule *r,
		    __u32 id, bool fresh)
{
	struct rl_rule w = *r;	/* as the maps hold it: the scope's index */
	struct rl_scope scope;
	int fd, ret, sidx = RL_NO_SCOPE;
	struct rl_prefix p;
	rl_lpm_key_t k;

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
	fd = rl_store_lpm_key(m, &p, sidx, &k);
	if (bpf_map_update_elem(fd, &k, &id, BPF_ANY))
		return -errno;
	return 0;
}

/* The prefix first (the rule stops applying), then its slot. */
int rl_store_del(const struct rl_maps *m, const struct rl_prefix *p,
		    int sidx, __u32 id)
{
	struct rl_rule zero = {};
	rl_lpm_key_t k;

	if (bpf_map_delete_elem(rl_store_lpm_key(m, p, sidx, &k), &k))
		return -errno;
	if (bpf_map_update_elem(m->rules, &id, &zero, BPF_ANY))
		return -errno;
	return 0;
}

static int set_one(const struct rl_maps *m, const struct rl_settings *s,
		   const struct rl_prefix *p, const struct rl_scope *scope,
		   const struct rl_rule_change *c, char *err, size_t errlen)
{
	int id, ret, sidx = RL_NO_SCOPE;
	struct rl_rule rule;
	bool fresh;

	if (rl_scope_any(scope)) {
		sidx = scope_find(m, scope);
		if (sidx < RL_NO_SCOPE) {
			id = sidx;
			goto fail;
		}
	}
	id = sidx == RL_NO_SCOPE && rl_scope_any(scope) ? -ENOENT :
	     rl_store_find_exact(m, p, sidx, &rule);
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
		ret = id >= 0 ? rl_store_counters_reset(m, id) : 0;
		if (ret)
			id = ret;
	}
	if (id < 0)
		goto fail;
	rl_rule_scope_put(&rule, scope);	/* the form put_rule takes */
	rl_rule_apply(&rule, c, s->window_ns);
	ret = rl_store_put(m, &rule, id, fresh);
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
	ret = rl_store_note_bans(m, c->have_ban && c->ban_ns);
	if (!ret)
		ret = rl_store_mark_change(m, true);
	if (ret)
		goto fail;
	n = rl_prefix_expand(p, each);
	for (int i = 0; i < n; i++) {
		ret = set_one(m, s, &each[i], scope, c, err, errlen);
		if (ret) {
			/* reported; the change is over, as far as it got
			 * (should this fail too, status reports it cut short) */
			(void)rl_store_scopes_collect(m);
			(void)rl_store_mark_change(m, false);
			return ret;
		}
	}
	ret = p->len ? 0 : rl_store_default_share(m);
	if (!ret)
		ret = rl_store_mark_change(m, false);
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
	int n, id, found = 0, ret, sidx = RL_NO_SCOPE;
	struct rl_prefix each[2];
	struct rl_rule rule;

	ret = rl_store_mark_change(m, true);
	if (ret) {
		id = ret;
		goto fail;
	}
	if (scope && rl_scope_any(scope)) {
		sidx = scope_find(m, scope);
		if (sidx < RL_NO_SCOPE) {
			id = sidx;
			goto fail;
		}
	}
	n = rl_prefix_expand(p, each);
	for (int i = 0; i < n; i++) {
		if (sidx == RL_NO_SCOPE && scope && rl_scope_any(scope))
			break;	/* no entry holds the scope: no rule has it */
		id = rl_store_find_exact(m, &each[i], sidx, &rule);
		if (id == -ENOENT)
			continue;
		if (id < 0)
			goto fail;
		found++;
		ret = rl_store_del(m, &each[i], sidx, id);
		if (ret) {
			id = ret;
			goto fail;
		}
	}
	ret = p->len ? 0 : rl_store_default_share(m);
	if (!ret)
		ret = rl_store_scopes_collect(m);
	if (!ret)
		ret = rl_store_mark_change(m, false);	/* also when nothing was found */
	if (!ret && found && sidx != RL_NO_SCOPE)
		ret = rl_store_drop_dead_windows(m);
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
	(void)rl_store_mark_change(m, false);	/* as in rl_rule_set */
	snprintf(err, errlen, "cannot update the rule maps: %s",
		 strerror(-id));
	return id;
}

int rl_rule_counters_read(const struct rl_maps *m, const struct rl_rule *r,
			  struct rl_rule_counters *out)
{
	int sidx = RL_NO_SCOPE, id;
	struct rl_prefix p;
	struct rl_scope s;
	struct rl_rule found;

	rl_rule_prefix(r, &p);
	rl_rule_scope_get(r, &s);
	if (rl_scope_any(&s)) {
		sidx = scope_find(m, &s);
		if (sidx == RL_NO_SCOPE)
			return -ENOENT;
		if (sidx < RL_NO_SCOPE)
			return sidx;
	}
	id = rl_store_find_exact(m, &p, sidx, &found);
	if (id < 0)
		return id;
	return rl_rule_counters_sum(m, (__u32)id, out);
}

int rl_rule_list(const struct rl_maps *m, struct rl_rule *out, int max)
{
	struct rl_scope table[RL_MAX_SCOPES];
	int n = 0, err = rl_rule_scopes_read(m, table);
	struct rl_rule r;

	if (err)
		return err;
	for (__u32 id = 0; id < RL_MAX_RULES && n < max; id++) {
		if (bpf_map_lookup_elem(m->rules, &id, &r))
			return -errno;
		if (!rl_store_slot_live(m, id, &r))
			continue;
		rl_rule_from_map(&r, table);
		out[n++] = r;
	}
	qsort(out, n, sizeof(*out), rl_rule_cmp);
	return n;
}
