// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A reading for stats (stats.h): per interface, the totals from the
 * per-CPU `counters`, the busiest sources from one pass over `sources`
 * (source_table.c), the rule of each shown (rules.c) and the bans that
 * hold (bans.c). Reads the pinned maps, never writes them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "lib/iface.h"
#include "lib/rule.h"
#include "lib/rule_store.h"
#include "lib/rule_lookup.h"
#include "cli/stats.h"
#include "lib/verified_map.h"
#include "lib/values.h"

/* --watch remembers more sources than it shows, so that one climbing into
 * the top N usually has a previous reading to compute its rate from. */
#define WATCH_KEEP_FACTOR	4
#define WATCH_KEEP_EXTRA	64

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

static int read_iface(const char *name, const struct rl_stats_opts *o,
		      struct rl_stats_read *r)
{
	struct rl_stats_iface *v = &r->view;
	struct rl_rule_cache rc = {};
	size_t keep = o->top, show;
	char err[RL_ERR_LEN];
	struct rl_iface ifc;
	int ret;

	memset(r, 0, sizeof(*r));
	if (rl_iface_open(name, &ifc, err, sizeof(err))) {
		rl_err("stats: %s", err);
		return RL_EXIT_FAIL;
	}
	if (o->watch && keep)
		keep = keep * WATCH_KEEP_FACTOR + WATCH_KEEP_EXTRA;
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
	ret = rl_source_top_read(&ifc.m, &v->set, ifc.cfg.rules_gen, v->now,
				 keep, &r->top);
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
	ret = rl_verified_count(&ifc.m, &v->set, v->now, &v->verified_sources);
	if (ret) {
		rl_err("stats: cannot read the verified sources of %s: %s", name,
		       strerror(-ret));
		goto fail;
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
	ret = read_bans(&ifc.m, v);
	if (ret) {
		rl_err("stats: cannot read the bans of %s: %s", name, strerror(-ret));
		free(v->src);
		free(v->bans);
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
		rl_source_top_free(&s->ifs[i].top);
	}
	s->n = 0;
}

int rl_stats_snapshot_read(const struct rl_stats_opts *o,
			   struct rl_stats_snapshot *s)
{
	char names[RL_MAX_IFACES][IF_NAMESIZE], err[RL_ERR_LEN];
	int n, status = RL_EXIT_OK;

	s->n = 0;
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
			       RL_PIN_ROOT, strerror(-n));
			return RL_EXIT_FAIL;
		}
		/* none attached: an empty report, as quota list and status
		 * give, unless the pins are hidden from us (its message
		 * says what to do) */
		if (n == 0 && rl_private_mount_ns() &&
		    rl_iface_resolve(NULL, names[0], err, sizeof(err))) {
			rl_err("stats: %s", err);
			return RL_EXIT_FAIL;
		}
	}
	for (int i = 0; i < n; i++) {
		if (read_iface(names[i], o, &s->ifs[s->n]))
			status = RL_EXIT_FAIL;
		else
			s->n++;
	}
	return status;
}
