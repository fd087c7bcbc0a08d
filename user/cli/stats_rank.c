// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The order of stats' sources (--sort) and the previous reading (stats.h):
 * every source's counters as last read, so that rates, and the orders by
 * rate, cover each source, not only those shown. A source missing from
 * the previous reading is new since: it counts from zero.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli/stats.h"

/* A source's counters as one reading saw them. */
struct seen {
	struct rl_key key;
	__u64 passed_pkts, passed_bytes, dropped_pkts, dropped_bytes;
};

struct rl_stats_prev_iface {
	char name[IF_NAMESIZE];
	bool valid;		/* old holds a reading taken at `now` */
	__u64 now;
	struct rl_counters tot;
	struct seen *old;	/* sorted by key */
	size_t nold;
	struct seen *cur;	/* the reading under way, as read */
	size_t ncur, alloc;
};

struct rl_stats_prev {
	struct rl_stats_prev_iface ifs[RL_MAX_IFACES];
};

struct rl_stats_prev *rl_stats_prev_new(void)
{
	return calloc(1, sizeof(struct rl_stats_prev));
}

static void iface_reset(struct rl_stats_prev_iface *pi)
{
	free(pi->old);
	free(pi->cur);
	memset(pi, 0, sizeof(*pi));
}

void rl_stats_prev_free(struct rl_stats_prev *p)
{
	if (!p)
		return;
	for (int i = 0; i < RL_MAX_IFACES; i++)
		iface_reset(&p->ifs[i]);
	free(p);
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct rl_key));
}

/* The entry of `name`, or a free one for it (NULL: none left). */
static struct rl_stats_prev_iface *iface_of(struct rl_stats_prev *p,
					    const char *name, bool make)
{
	struct rl_stats_prev_iface *free_one = NULL;

	for (int i = 0; i < RL_MAX_IFACES; i++) {
		struct rl_stats_prev_iface *pi = &p->ifs[i];

		if (pi->name[0] && !strcmp(pi->name, name))
			return pi;
		if (!pi->name[0] && !free_one)
			free_one = pi;
	}
	if (!make || !free_one)
		return NULL;
	snprintf(free_one->name, sizeof(free_one->name), "%s", name);
	return free_one;
}

static const struct seen *was_seen(const struct rl_stats_prev_iface *pi,
				   const struct rl_key *key)
{
	if (!pi || !pi->valid || !pi->nold)
		return NULL;
	return bsearch(key, pi->old, pi->nold, sizeof(*pi->old), key_cmp);
}

static int remember(struct rl_stats_prev_iface *pi, const struct rl_source_sum *c)
{
	if (pi->ncur == pi->alloc) {
		size_t alloc = pi->alloc ? 2 * pi->alloc : 1024;
		struct seen *grown = realloc(pi->cur, alloc * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		pi->cur = grown;
		pi->alloc = alloc;
	}
	pi->cur[pi->ncur++] = (struct seen){
		c->key, c->passed_pkts, c->passed_bytes, c->dropped_pkts,
		c->dropped_bytes,
	};
	return 0;
}

/* A counter that went backwards belongs to a source evicted and created
 * again (or an interface attached again): count it from zero. */
static __u64 delta(__u64 cur, __u64 prev)
{
	return cur >= prev ? cur - prev : cur;
}

static int rank_row(void *ctx, struct rl_source_row *row)
{
	const struct rl_stats_rank *rk = ctx;
	const struct rl_source_sum *c = &row->sum;
	__u64 dp = c->dropped_pkts, pp = c->passed_pkts;
	const struct seen *was;
	int err;

	if (rk->pi) {
		err = remember(rk->pi, c);
		if (err)
			return err;
		was = was_seen(rk->pi, &c->key);
		if (was) {
			dp = delta(dp, was->dropped_pkts);
			pp = delta(pp, was->passed_pkts);
		}
	}
	switch (rk->sort) {
	case RL_SORT_PASSED:
		row->rank[0] = c->passed_pkts;
		row->rank[1] = c->dropped_pkts;
		break;
	case RL_SORT_DROPPED_RATE:
		row->rank[0] = dp;
		row->rank[1] = dp + pp;
		break;
	case RL_SORT_RATE:
		row->rank[0] = dp + pp;
		row->rank[1] = dp;
		break;
	default:	/* RL_SORT_DROPPED */
		row->rank[0] = c->dropped_pkts;
		row->rank[1] = c->passed_pkts;
	}
	return 0;
}

void rl_stats_order(struct rl_stats_prev *p, const struct rl_stats_opts *o,
		    const char *ifname, struct rl_stats_rank *rank,
		    struct rl_source_order *ord)
{
	rank->sort = o->sort;
	rank->pi = p ? iface_of(p, ifname, true) : NULL;
	if (rank->pi)
		rank->pi->ncur = 0;
	ord->rank = rank_row;
	ord->ctx = rank;
}

static double per_sec(__u64 cur, __u64 prev, __u64 ns)
{
	return (double)delta(cur, prev) * RL_NSEC_PER_SEC / ns;
}

static void rates_of(struct rl_rates *r, __u64 ns, __u64 pp, __u64 pb,
		     __u64 dp, __u64 db, __u64 opp, __u64 opb, __u64 odp,
		     __u64 odb)
{
	r->valid = true;
	r->passed_pps = per_sec(pp, opp, ns);
	r->passed_bps = per_sec(pb, opb, ns);
	r->dropped_pps = per_sec(dp, odp, ns);
	r->dropped_bps = per_sec(db, odb, ns);
}

static void iface_rates(struct rl_stats_iface *v, const struct rl_stats_prev_iface *pi)
{
	static const struct seen none;
	__u64 ns = v->now - pi->now;

	v->rates_ns = ns;
	rates_of(&v->rates, ns, v->tot.passed_pkts, v->tot.passed_bytes,
		 v->tot.dropped_pkts, v->tot.dropped_bytes, pi->tot.passed_pkts,
		 pi->tot.passed_bytes, pi->tot.dropped_pkts, pi->tot.dropped_bytes);
	for (size_t k = 0; k < v->nsrc; k++) {
		const struct rl_source_sum *c = &v->src[k].sum;
		const struct seen *was = was_seen(pi, &c->key);

		if (!was)	/* new since the previous reading */
			was = &none;
		rates_of(&v->src[k].rates, ns, c->passed_pkts, c->passed_bytes,
			 c->dropped_pkts, c->dropped_bytes, was->passed_pkts,
			 was->passed_bytes, was->dropped_pkts, was->dropped_bytes);
	}
}

/* The reading under way becomes the previous one: sorted, one entry a key
 * (a walk restarted by an eviction may meet a key twice). */
static void iface_commit(struct rl_stats_prev_iface *pi, const struct rl_stats_iface *v)
{
	size_t out = 0;

	if (pi->ncur)
		qsort(pi->cur, pi->ncur, sizeof(*pi->cur), key_cmp);
	for (size_t i = 0; i < pi->ncur; i++)
		if (!out || key_cmp(&pi->cur[i], &pi->cur[out - 1]))
			pi->cur[out++] = pi->cur[i];
	free(pi->old);
	pi->old = pi->cur;
	pi->nold = out;
	pi->cur = NULL;
	pi->alloc = pi->ncur = 0;
	pi->valid = true;
	pi->now = v->now;
	pi->tot = v->tot;
}

void rl_stats_rates(struct rl_stats_prev *p, struct rl_stats_snapshot *s)
{
	bool read[RL_MAX_IFACES] = { false };

	for (size_t i = 0; i < s->n; i++) {
		struct rl_stats_iface *v = &s->ifs[i].view;
		struct rl_stats_prev_iface *pi = iface_of(p, v->name, false);

		if (!pi)
			continue;
		if (pi->valid && v->now > pi->now)
			iface_rates(v, pi);
		iface_commit(pi, v);
		read[pi - p->ifs] = true;
	}
	/* an interface not read this time starts afresh when it is again */
	for (int i = 0; i < RL_MAX_IFACES; i++)
		if (!read[i])
			iface_reset(&p->ifs[i]);
}
