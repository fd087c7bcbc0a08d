// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A reading for stats (stats.h): per interface, the totals from the
 * per-CPU `counters`, the busiest sources from one pass over `sources`
 * (source_table.c), the rule of each shown (rules.c) and the bans that
 * hold (bans.c). Reads the pinned maps through read-only fds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "lib/attached_state.h"
#include "lib/iface.h"
#include "lib/rule.h"
#include "lib/rule_store.h"
#include "lib/rule_lookup.h"
#include "lib/rule_txn.h"
#include "cli/stats.h"
#include "lib/sync_status.h"
#include "lib/verified_map.h"
#include "lib/values.h"

static void source_rule(const struct rl_maps *m, struct rl_rule_cache *rc,
			const struct rl_source_row *row,
			struct rl_stats_source *src)
{
	const struct rl_rule *rule;
	struct rl_rule found;
	struct rl_prefix p;
	struct rl_key source;
	struct rl_scope s;

	if (rl_key_scoped(&row->sum.key)) {
		/* a scoped rule's window: the rule is in the key */
		if (rl_rule_read_slot(m, rl_scoped_source(&row->sum.key, &source),
				      &found))
			return;
		rl_rule_scope_get(&found, &s);
		rl_scope_text(&s, src->scope, sizeof(src->scope));
		rule = &found;
	} else {
		rule = rl_rule_of_source(m, rc, &row->sum.key, row->rule_cached,
					 row->rule_id, &found);
	}
	if (!rule)
		return;
	src->has_rule = true;
	rl_rule_prefix(rule, &p);
	rl_format_prefix(&p, src->rule, sizeof(src->rule));
}

static int ban_key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct rl_key));
}

/* The bans that hold, and which shown sources they cover. */
static int read_bans(const struct rl_maps *m, struct rl_stats_iface *v)
{
	struct rl_ban_row *by_key;
	int ret = rl_bans_read(m, v->now, &v->bans, &v->nbans);

	if (ret || !v->nbans)
		return ret;
	by_key = malloc(v->nbans * sizeof(*by_key));
	if (!by_key)
		return -ENOMEM;
	memcpy(by_key, v->bans, v->nbans * sizeof(*by_key));
	qsort(by_key, v->nbans, sizeof(*by_key), ban_key_cmp);
	for (size_t i = 0; i < v->nsrc; i++) {
		const struct rl_ban_row *b = bsearch(&v->src[i].sum.key, by_key,
						     v->nbans, sizeof(*by_key),
						     ban_key_cmp);

		v->src[i].banned = b != NULL;
		v->src[i].ban_ms_left = b ? b->ns_left / RL_NSEC_PER_MSEC : 0;
	}
	free(by_key);
	return 0;
}

/* A key as the source a scoped window's key names (include/scope.h):
 * IPv6 by its first 96 bits. */
static void source_of(const struct rl_key *k, struct rl_key *out)
{
	*out = *k;
	if (rl_key_scoped(k))
		(void)rl_scoped_source(k, out);
	else if (!rl_key_is_v4(k))
		memset(out->addr + 12, 0, 4);
}

static bool same_source(const struct rl_key *a, const struct rl_key *b)
{
	struct rl_key x, y;

	source_of(a, &x);
	source_of(b, &y);
	return !memcmp(&x, &y, sizeof(x));
}

/*
 * A source's scoped windows right under its own row, when that is shown:
 * a group goes where its busiest row would, the source's row first. A
 * scoped window whose source's row is not shown stays where it is.
 */
static int group_scoped(struct rl_stats_iface *v)
{
	struct rl_stats_source *out;
	bool *placed;
	size_t n = 0;

	if (!v->scoped_windows || v->nsrc < 2)
		return 0;
	out = calloc(v->nsrc, sizeof(*out));
	placed = calloc(v->nsrc, sizeof(*placed));
	if (!out || !placed) {
		free(out);
		free(placed);
		return -ENOMEM;
	}
	for (size_t i = 0; i < v->nsrc; i++) {
		size_t head = i;

		if (placed[i])
			continue;
		/* the group's own row, wherever it is ranked */
		for (size_t k = 0; k < v->nsrc; k++)
			if (!placed[k] && !rl_key_scoped(&v->src[k].sum.key) &&
			    same_source(&v->src[k].sum.key, &v->src[i].sum.key))
				head = k;
		if (rl_key_scoped(&v->src[head].sum.key)) {
			placed[head] = true;	/* alone: its source not shown */
			out[n++] = v->src[head];
			continue;
		}
		placed[head] = true;
		out[n++] = v->src[head];
		for (size_t k = 0; k < v->nsrc; k++)
			if (!placed[k] && same_source(&v->src[k].sum.key,
						      &v->src[head].sum.key)) {
				placed[k] = true;
				out[n] = v->src[k];
				out[n++].nested = true;
			}
	}
	memcpy(v->src, out, n * sizeof(*out));
	free(out);
	free(placed);
	return 0;
}

/* Every rule and what it judged (a rule no slot holds yet, in a restore
 * under way, is left out). */
static int read_rules(const struct rl_iface *ifc, struct rl_stats_iface *v)
{
	struct rl_rule *rules = calloc(RL_MAX_RULES, sizeof(*rules));
	int n = rules ? rl_rules_read(ifc, rules, RL_MAX_RULES) : -ENOMEM;
	int ret = n < 0 ? n : 0;

	v->rules = n > 0 ? calloc((size_t)n, sizeof(*v->rules)) : NULL;
	if (n > 0 && !v->rules)
		ret = -ENOMEM;
	for (int i = 0; i < n && !ret; i++) {
		struct rl_stats_rule *r = &v->rules[v->nrules];
		struct rl_prefix p;
		struct rl_scope sc;

		ret = rl_rule_counters_read(&ifc->m, &rules[i], &r->c);
		if (ret == -ENOENT) {
			ret = 0;
			continue;
		}
		rl_rule_prefix(&rules[i], &p);
		rl_format_prefix(&p, r->prefix, sizeof(r->prefix));
		rl_rule_scope_get(&rules[i], &sc);
		rl_scope_text(&sc, r->scope, sizeof(r->scope));
		v->nrules++;
	}
	free(rules);
	return ret;
}

/* One interface's reading; with `state`, also what status would say of it
 * (xdp_ratelimit_attached), from the same opened pins. */
static int read_iface(const char *name, const struct rl_stats_opts *o,
		      struct rl_stats_prev *p, struct rl_stats_read *r,
		      enum rl_attached_state *state)
{
	struct rl_stats_iface *v = &r->view;
	struct rl_rule_cache rc = {};
	struct rl_stats_rank rank;
	struct rl_source_order ord;
	size_t show;
	char err[RL_ERR_LEN];
	struct rl_iface ifc;
	int ret;

	memset(r, 0, sizeof(*r));
	if (rl_iface_open_read_only(name, &ifc, err, sizeof(err))) {
		rl_err("stats: %s", err);
		return RL_EXIT_FAIL;
	}
	if (state)
		*state = rl_attached_state_of(name, &ifc, err, sizeof(err));
	snprintf(v->name, sizeof(v->name), "%s", ifc.name);
	v->set = ifc.cfg.set;
	/* as given at attach; the LRU map itself may be sized larger */
	v->max_sources = ifc.cfg.set.max_sources;
	ret = rl_counters_sum(&ifc.m, &v->tot);
	if (ret) {
		rl_err("stats: cannot read the counters of %s: %s", name,
		       strerror(-ret));
		goto fail;
	}
	v->now = rl_prog_now_ns(&ifc.cfg.set);
	rl_stats_order(p, o, ifc.name, &rank, &ord);
	ret = rl_source_top_read_by(&ifc.m, &v->set, ifc.cfg.rules_gen, v->now,
				    o->top, &ord, &r->top);
	if (ret) {
		rl_err("stats: cannot read the sources of %s: %s", name,
		       strerror(-ret));
		goto fail;
	}
	v->tracked = r->top.tracked;
	v->scoped_windows = r->top.scoped_windows;
	v->refused_only = r->top.refused_only;
	v->refused = r->top.refused;
	v->refused_max = RL_REFUSED_ENTRIES;
	ret = rl_verified_count(&ifc.m, &v->set, v->now, &v->verified_sources,
				&v->verified_entries);
	v->verified_evicted = rl_verified_evicted(v->tot.verified_inserts,
						  v->verified_entries);
	if (ret) {
		rl_err("stats: cannot read the verified sources of %s: %s", name,
		       strerror(-ret));
		goto fail;
	}
	{	/* the sync agent's counts (Prometheus), zero without one */
		struct rl_sync_state st;
		bool alive;

		if (rl_sync_state_read(&ifc.m, &st, &alive) == 1) {
			memcpy(v->sync_rejected, st.rejected, sizeof(v->sync_rejected));
			v->sync_key_errors = st.key_errors;
		}
	}
	show = o->top && o->top < r->top.n ? o->top : r->top.n;
	v->src = calloc(show ? show : 1, sizeof(*v->src));
	if (!v->src) {
		rl_err("stats: out of memory");
		goto fail;
	}
	for (size_t i = 0; i < show; i++) {
		v->src[i].sum = r->top.rows[i].sum;
		v->src[i].tracked = r->top.rows[i].tracked;
		v->src[i].verified = rl_source_is_verified(&ifc.m, &v->set,
							   &v->src[i].sum.key, v->now);
		source_rule(&ifc.m, &rc, &r->top.rows[i], &v->src[i]);
	}
	v->nsrc = show;
	ret = group_scoped(v);
	if (ret) {
		rl_err("stats: out of memory");
		free(v->src);
		goto fail;
	}
	ret = read_bans(&ifc.m, v);
	if (ret) {
		rl_err("stats: cannot read the bans of %s: %s", name, strerror(-ret));
		free(v->src);
		free(v->bans);
		goto fail;
	}
	ret = o->prometheus ? read_rules(&ifc, v) : 0;
	if (ret) {
		rl_err("stats: cannot read the rules of %s: %s", name, strerror(-ret));
		free(v->src);
		free(v->bans);
		free(v->rules);
		goto fail;
	}
	rl_rule_cache_free(&rc);
	rl_iface_close(&ifc);
	return RL_EXIT_OK;
fail:
	rl_rule_cache_free(&rc);
	rl_iface_close(&ifc);
	rl_source_top_free(&r->top);
	return RL_EXIT_FAIL;
}

void rl_stats_snapshot_free(struct rl_stats_snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->ifs[i].view.src);
		free(s->ifs[i].view.bans);
		free(s->ifs[i].view.rules);
		rl_source_top_free(&s->ifs[i].top);
	}
	s->n = 0;
}

int rl_stats_snapshot_read(const struct rl_stats_opts *o,
			   struct rl_stats_prev *p,
			   struct rl_stats_snapshot *s)
{
	char names[RL_MAX_IFACES][IF_NAMESIZE], err[RL_ERR_LEN];
	int n, status = RL_EXIT_OK;

	s->n = s->nattached = 0;
	if (o->iface) {
		if (rl_iface_resolve(o->iface, names[0], err, sizeof(err))) {
			rl_err("stats: %s", err);
			return RL_EXIT_FAIL;
		}
		n = 1;
	} else {
		n = rl_ifaces_list(names, RL_MAX_IFACES);
		if (n < 0) {
			rl_err("stats: cannot list the attached interfaces in %s: %s",
			       rl_pin_root(), strerror(-n));
			return RL_EXIT_FAIL;
		}
		/* none attached: an empty report, as quota list and status
		 * give (a private mount namespace, which hides the pins,
		 * was refused before: cmd.c) */
	}
	for (int i = 0; i < n; i++) {
		/* Prometheus: every interface's state, also one not read */
		struct rl_stats_attached *a = o->prometheus ? &s->attached[s->nattached++] : NULL;

		if (a) {
			snprintf(a->name, sizeof(a->name), "%.*s", IF_NAMESIZE - 1, names[i]);
			a->state = RL_ATTACHED_BROKEN;
		}
		if (read_iface(names[i], o, p, &s->ifs[s->n], a ? &a->state : NULL))
			status = RL_EXIT_FAIL;
		else
			s->n++;
	}
	return status;
}
