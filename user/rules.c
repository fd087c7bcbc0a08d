// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "newcomer.h"
#include "rules.h"
#include "settings.h"

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
} lpm_key_t;

/* The LPM key of a prefix; returns the trie's fd. */
static int lpm_key(const struct rl_maps *m, const struct rl_prefix *p,
		   lpm_key_t *k)
{
	memset(k, 0, sizeof(*k));
	if (p->v6) {
		k->v6.prefixlen = p->len;
		memcpy(k->v6.addr, p->addr, 16);
		return m->rules_v6;
	}
	k->v4.prefixlen = p->len;
	memcpy(k->v4.addr, p->addr, 4);
	return m->rules_v4;
}

/* Slot of the rule for exactly this prefix, or -ENOENT. */
static int find_exact(const struct rl_maps *m, const struct rl_prefix *p,
		      struct rl_rule *rule)
{
	lpm_key_t k;
	int fd = lpm_key(m, p, &k);
	__u32 id;

	/* an LPM lookup returns the longest match: check it is this prefix */
	if (bpf_map_lookup_elem(fd, &k, &id))
		return -ENOENT;
	if (bpf_map_lookup_elem(m->rules, &id, rule))
		return -errno;
	if (!(rule->flags & RL_RULE_F_USED) || rule->prefixlen != p->len ||
	    !!(rule->flags & RL_RULE_F_V6) != p->v6 ||
	    memcmp(rule->addr, p->addr, p->v6 ? 16 : 4))
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
	return find_exact(m, &p, &again) == (int)id;
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
	__u32 idx[2] = { rl_agg_index(slot), rl_new_index(slot) };
	int err = 0;

	if (!zero)
		return -ENOMEM;
	for (int i = 0; i < 2 && !err; i++)
		if (bpf_map_update_elem(m->aggregates, &idx[i], zero, BPF_ANY))
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

	return find_exact(m, &other, &r) >= 0;
}

bool rl_rule_change_any(const struct rl_rule_change *c)
{
	return c->have_pps || c->have_bps || c->have_agg_pps || c->have_agg_bps ||
	       c->have_new_pps || c->have_new_bps || c->have_ban;
}

/* A rule that bans: the program looks every source up in `bans` from now
 * on, for good (bans outlive the rule). Before the rule, so that no ban
 * is imposed that is not enforced. */
static int note_bans(const struct rl_maps *m, const struct rl_rule_change *c)
{
	struct rl_config cfg;
	int err;

	if (!c->have_ban || !c->ban_ns)
		return 0;
	err = rl_config_read(m, &cfg);
	if (err || cfg.bans_used)
		return err;
	cfg.bans_used = 1;
	return rl_config_write(m, &cfg);
}

static void apply_change(struct rl_rule *r, const struct rl_rule_change *c,
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
	r->new_pkt_budget = rl_budget(r->new_pps, window_ns);
	r->new_byte_budget = rl_budget(r->new_bps, window_ns);
	r->pkt_budget = rl_budget(r->pps, window_ns);
	r->byte_budget = rl_budget(r->bps, window_ns);
	r->agg_pkt_budget = rl_budget(r->agg_pps, window_ns);
	r->agg_byte_budget = rl_budget(r->agg_bps, window_ns);
}

static int set_one(const struct rl_maps *m, const struct rl_settings *s,
		   const struct rl_prefix *p, const struct rl_rule_change *c,
		   char *err, size_t errlen)
{
	struct rl_rule rule;
	lpm_key_t k;
	int fd, id, ret;

	id = find_exact(m, p, &rule);
	if (id == -ENOENT) {
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
		if (id < 0)
			goto fail;
		memset(&rule, 0, sizeof(rule));
		rule.pps = rule.bps = rule.agg_pps = rule.agg_bps = RL_UNLIMITED;
		rule.new_pps = rule.new_bps = RL_UNLIMITED;
		rule.flags = RL_RULE_F_USED | (p->v6 ? RL_RULE_F_V6 : 0);
		rule.prefixlen = p->len;
		memcpy(rule.addr, p->addr, p->v6 ? 16 : 4);
		/* the default's halves share their windows: keep them
		 * while the other half uses them */
		ret = p->len || !other_default_set(m, p) ?
		      reset_aggregate(m, rl_budget_slot(id, p->len)) : 0;
		if (ret) {
			id = ret;
			goto fail;
		}
	} else if (id < 0) {
		goto fail;
	}
	apply_change(&rule, c, s->window_ns);
	/* the slot first, then the prefix that points to it */
	if (bpf_map_update_elem(m->rules, &(__u32){ id }, &rule, BPF_ANY)) {
		id = -errno;
		goto fail;
	}
	fd = lpm_key(m, p, &k);
	if (bpf_map_update_elem(fd, &k, &(__u32){ id }, BPF_ANY)) {
		id = -errno;
		goto fail;
	}
	return 0;
fail:
	snprintf(err, errlen, "cannot update the rule maps: %s",
		 strerror(-id));
	return id;
}

static void expand_default(const struct rl_prefix *p, struct rl_prefix out[2],
			   int *n)
{
	if (!p->is_default) {
		out[0] = *p;
		*n = 1;
		return;
	}
	memset(out, 0, 2 * sizeof(*out));
	out[1].v6 = true;
	*n = 2;
}

int rl_rule_set(const struct rl_maps *m, const struct rl_settings *s,
		const struct rl_prefix *p, const struct rl_rule_change *c,
		char *err, size_t errlen)
{
	struct rl_prefix each[2];
	char buf[RL_PREFIX_STRLEN];
	int n, ret;

	ret = rl_budgets_fit(c, s->window_ns, "", err, errlen);
	if (ret)
		return ret;
	if (p->v6 && p->len > s->v6_prefix) {
		rl_format_prefix(p, buf, sizeof(buf));
		snprintf(err, errlen,
			 "%s is longer than the /%u that IPv6 sources are tracked by on this interface: use a /%u or shorter prefix, or attach with --ipv6-prefix %u",
			 buf, s->v6_prefix, s->v6_prefix, p->len);
		return -EINVAL;
	}
	ret = note_bans(m, c);
	if (!ret)
		ret = mark_change(m, true);
	if (ret)
		goto fail;
	expand_default(p, each, &n);
	for (int i = 0; i < n; i++) {
		ret = set_one(m, s, &each[i], c, err, errlen);
		if (ret) {
			/* reported; the change is over, as far as it got
			 * (should this fail too, status reports it cut short) */
			(void)mark_change(m, false);
			return ret;
		}
	}
	ret = mark_change(m, false);
	if (ret)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "cannot update the config map: %s",
		 strerror(-ret));
	return ret;
}

int rl_rule_del(const struct rl_maps *m, const struct rl_prefix *p,
		char *err, size_t errlen)
{
	struct rl_prefix each[2];
	char buf[RL_PREFIX_STRLEN];
	struct rl_rule rule;
	int n, id, found = 0, ret;
	lpm_key_t k;

	ret = mark_change(m, true);
	if (ret) {
		id = ret;
		goto fail;
	}
	expand_default(p, each, &n);
	for (int i = 0; i < n; i++) {
		id = find_exact(m, &each[i], &rule);
		if (id == -ENOENT)
			continue;
		if (id < 0)
			goto fail;
		found++;
		if (bpf_map_delete_elem(lpm_key(m, &each[i], &k), &k)) {
			id = -errno;
			goto fail;
		}
		memset(&rule, 0, sizeof(rule));
		if (bpf_map_update_elem(m->rules, &(__u32){ id }, &rule, BPF_ANY)) {
			id = -errno;
			goto fail;
		}
	}
	ret = mark_change(m, false);	/* also when nothing was found */
	if (ret) {
		id = ret;
		goto fail;
	}
	if (!found) {
		if (p->is_default)
			snprintf(buf, sizeof(buf), "default");
		else
			rl_format_prefix(p, buf, sizeof(buf));
		snprintf(err, errlen,
			 "no rule for %s (see 'xdp-ratelimit quota list')",
			 buf);
		return -ENOENT;
	}
	return 0;
fail:
	(void)mark_change(m, false);	/* as in rl_rule_set */
	snprintf(err, errlen, "cannot update the rule maps: %s",
		 strerror(-id));
	return id;
}

static int rule_cmp(const void *a, const void *b)
{
	const struct rl_rule *x = a, *y = b;
	int xv6 = !!(x->flags & RL_RULE_F_V6), yv6 = !!(y->flags & RL_RULE_F_V6);

	if (xv6 != yv6)
		return xv6 - yv6;
	if (x->prefixlen != y->prefixlen)
		return x->prefixlen < y->prefixlen ? -1 : 1;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

int rl_rule_list(const struct rl_maps *m, struct rl_rule *out, int max)
{
	struct rl_rule r;
	int n = 0;

	for (__u32 id = 0; id < RL_MAX_RULES && n < max; id++) {
		if (bpf_map_lookup_elem(m->rules, &id, &r))
			return -errno;
		if (slot_live(m, id, &r))
			out[n++] = r;
	}
	qsort(out, n, sizeof(*out), rule_cmp);
	return n;
}

int rl_rule_lookup(const struct rl_maps *m, const struct rl_key *key,
		   bool v6, struct rl_rule *out)
{
	struct rl_prefix p = { .v6 = v6, .len = v6 ? 128 : 32 };
	lpm_key_t k;
	__u32 id;

	memcpy(p.addr, v6 ? key->addr : key->addr + 12, v6 ? 16 : 4);
	if (bpf_map_lookup_elem(lpm_key(m, &p, &k), &k, &id))
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
