/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One budget (a source's, or a rule's aggregate), counted per CPU, judged
 * against the whole: the cross-CPU part of the verdict. Plain C shared by
 * the XDP program and the host tests, like window.h.
 *
 * Each CPU passes packets on a *lease*: while its own window stays within
 * lease.allow_*, it decides alone (the fast path: one map value, no other
 * CPU read). When the lease runs out, or the bucket changes, it *refreshes*:
 * it reads every other CPU's state for the same budget and takes
 *
 *     lease = max(free / d, this packet)     free = budget - used by all
 *
 * where "used" counts each other CPU's lease in full (what it may still
 * pass), not just its passes. Because a lease only ever hands out a 1/d
 * share of what was free, d concurrent refreshers together hand out at most
 * `free`: the sum of all leases never exceeds the budget, except that each
 * of them may round its share up to one packet, so the worst excess per
 * window is ncpus-1 packets (or frames' bytes).
 *
 * d: a CPU with nothing in its window yet (a newcomer) takes d = ncpus, so
 * any number of CPUs starting together stay within the budget; a CPU
 * already passing takes d = (other CPUs active) + 2, capped at ncpus, so a
 * source on one CPU halves what is left per refresh instead of taking
 * 1/ncpus (on 2 CPUs both are 2). README "One quota across CPUs" has the
 * bound when newcomers join exactly while every active CPU refreshes.
 *
 * Within one bucket the others' usage only grows, so once the budget is
 * known to be full (free < packet), packets drop on the fast path too, and
 * a dropping flood costs what a passing one does: no cross-CPU reads until
 * the next bucket.
 */
#ifndef RL_QUOTA_H
#define RL_QUOTA_H

#include "window.h"

/* A budget per window; RL_UNLIMITED in a field means no limit of that kind. */
struct rl_budget {
	__u64 pkts;
	__u64 bytes;
};

/* What the other CPUs hold of a budget, summed by rl_usage_add(). */
struct rl_usage {
	__u64 pkts;
	__u64 bytes;
	__u32 active;	/* other CPUs with passes or a lease in the window */
};

enum rl_answer {
	RL_FITS,	/* pass; then rl_quota_commit() */
	RL_OVER,	/* drop */
	RL_ASK,		/* read the other CPUs, then rl_quota_refresh() */
};

RL_INLINE int rl_budget_limited(const struct rl_budget *b)
{
	return b->pkts != RL_UNLIMITED || b->bytes != RL_UNLIMITED;
}

RL_INLINE int rl_lease_valid(const struct rl_state *st, __u32 gen)
{
	return st->lease.valid && st->lease.start == st->win.start &&
	       st->lease.gen == gen;
}

/* Decide from this CPU's state alone, after rl_window_roll(). */
RL_INLINE int rl_quota_fast(const struct rl_state *st,
			    const struct rl_budget *b, __u64 len, __u32 gen)
{
	const struct rl_lease *l = &st->lease;
	int pkts_lim = b->pkts != RL_UNLIMITED;
	int bytes_lim = b->bytes != RL_UNLIMITED;

	if ((pkts_lim && b->pkts == 0) || (bytes_lim && b->bytes < len))
		return RL_OVER;
	if (!rl_lease_valid(st, gen))
		return RL_ASK;
	if ((!pkts_lim || st->win.pkts + 1 <= l->allow_pkts) &&
	    (!bytes_lim || st->win.bytes + len <= l->allow_bytes))
		return RL_FITS;
	if ((pkts_lim && l->free_pkts < 1) || (bytes_lim && l->free_bytes < len))
		return RL_OVER;
	return RL_ASK;
}

/*
 * Add another CPU's state to `u`, as seen at `now` by a CPU whose newest
 * bucket starts at `start`. A lease counts only while it is still live for
 * the current bucket (a CPU still behind refreshes before passing again).
 */
RL_INLINE void rl_usage_add(struct rl_usage *u, const struct rl_state *o,
			    __u64 now, __u64 start, __u64 width,
			    __u32 nbuckets, __u32 gen)
{
	__u64 p, b;

	rl_window_usage_at(&o->win, now, width, nbuckets, &p, &b);
	if (o->lease.valid && o->lease.gen == gen &&
	    o->lease.start == o->win.start &&
	    (__s64)(o->win.start - start) >= 0) {
		if (o->lease.allow_pkts != RL_UNLIMITED && o->lease.allow_pkts > p)
			p = o->lease.allow_pkts;
		if (o->lease.allow_bytes != RL_UNLIMITED && o->lease.allow_bytes > b)
			b = o->lease.allow_bytes;
	}
	if (p == 0 && b == 0)
		return;
	u->pkts += p;
	u->bytes += b;
	u->active++;
}

/* Free part of one dimension of a budget; RL_UNLIMITED stays unlimited. */
RL_INLINE __u64 rl_free(__u64 budget, __u64 others, __u64 mine)
{
	if (budget == RL_UNLIMITED)
		return RL_UNLIMITED;
	if (others >= budget || mine >= budget - others)
		return 0;
	return budget - others - mine;
}

/* One dimension's new allowance for this CPU's window total `mine`. */
RL_INLINE __u64 rl_allow(__u64 free, __u64 mine, __u64 cost, __u32 d)
{
	__u64 share;

	if (free == RL_UNLIMITED)
		return RL_UNLIMITED;
	share = free / d;
	if (share < cost)
		share = cost;
	return mine + share;
}

/* Take a new lease given what the other CPUs hold, and judge the packet. */
RL_INLINE int rl_quota_refresh(struct rl_state *st, const struct rl_budget *b,
			       const struct rl_usage *others, __u64 len,
			       __u32 gen, __u32 ncpus)
{
	struct rl_lease *l = &st->lease;
	__u32 d = st->win.pkts ? others->active + 2 : ncpus;

	if (d > ncpus)
		d = ncpus;
	if (d == 0)
		d = 1;
	l->start = st->win.start;
	l->gen = gen;
	l->valid = 1;
	l->free_pkts = rl_free(b->pkts, others->pkts, st->win.pkts);
	l->free_bytes = rl_free(b->bytes, others->bytes, st->win.bytes);
	if (l->free_pkts < 1 || l->free_bytes < len) {
		l->allow_pkts = st->win.pkts;
		l->allow_bytes = st->win.bytes;
		return RL_OVER;
	}
	l->allow_pkts = rl_allow(l->free_pkts, st->win.pkts, 1, d);
	l->allow_bytes = rl_allow(l->free_bytes, st->win.bytes, len, d);
	return RL_FITS;
}

/* Count a passed packet against the window and what the lease knew free. */
RL_INLINE void rl_quota_commit(struct rl_state *st, __u64 len)
{
	rl_window_add(&st->win, 1, len);
	if (st->lease.free_pkts != RL_UNLIMITED && st->lease.free_pkts)
		st->lease.free_pkts--;
	if (st->lease.free_bytes != RL_UNLIMITED)
		st->lease.free_bytes = st->lease.free_bytes > len ?
				       st->lease.free_bytes - len : 0;
}

#endif /* RL_QUOTA_H */
