/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One budget (a source's, or a rule's aggregate), counted per CPU, judged
 * against the whole: the cross-CPU part of the verdict. Plain C shared by
 * the XDP program and the host tests, like window.h.
 *
 * Each CPU passes packets on a *lease*: while its own newest bucket stays
 * within lease.allow_*, it decides alone (the fast path: one map value, no
 * other CPU read). When the lease runs out, or the bucket changes, it
 * *refreshes*: it reads every other CPU's state for the same budget, then
 * the budget's history (the past buckets of all CPUs, window.h) when a CPU's
 * marker says it holds any of the window, and takes
 *
 *     lease = max(free / d, this packet)     free = budget - used by all
 *
 * where "used" is the history plus each other CPU's newest bucket, or its
 * lease in full when larger (what it may still pass). Then it *confirms*: with its new lease
 * published (written to its own state, then a full barrier), it reads the
 * others again and trims its lease to what is still free (rl_quota_
 * confirm). Of any two refreshes that overlap, the one that reads last
 * sees the other's published lease (store, barrier, load on both sides),
 * so leases confirmed in the order of their second reads never add up to
 * more than the budget, however long a CPU is held up between its reads
 * and its write (an interrupt, a preempted vCPU): only clock races at a
 * bucket boundary remain (doc/design/cpus.md). The price is
 * the second read, once per refresh, and CPUs racing for the very last
 * packets of a window may both back off and leave up to ncpus-1 unused.
 *
 * d: a CPU with nothing in the window yet (a newcomer) takes d = ncpus, so
 * any number of CPUs starting together stay within the budget; a CPU
 * already passing takes d = (other CPUs active) + 2, capped at ncpus, so a
 * source on one CPU halves what is left per refresh instead of taking
 * 1/ncpus (on 2 CPUs both are 2).
 *
 * Within one bucket the others' usage only grows, so once the budget is
 * known to be full (free < packet), packets drop on the fast path too, and
 * a dropping flood costs what a passing one does: no cross-CPU reads until
 * the next bucket.
 */
#ifndef RL_QUOTA_H
#define RL_QUOTA_H

#include "window.h"

/*
 * A budget per window; RL_UNLIMITED in pkts or bytes means no limit of that
 * kind. `burst` (--burst; 0: none) caps the packets passed in one bucket,
 * all CPUs together, on a budget whose pkts is limited (rl_usage_burst).
 */
struct rl_budget {
	__u64 pkts;
	__u64 bytes;
	__u64 burst;
};

/* What the other CPUs hold of a budget, summed by rl_usage_add(). */
struct rl_usage {
	__u64 pkts;
	__u64 bytes;
	/* the part of pkts/bytes that is leases not yet confirmed: claimed,
	 * but perhaps about to be trimmed */
	__u64 pending_pkts;
	__u64 pending_bytes;
	__u32 active;	/* other CPUs with passes or a lease in the window */
	/* some CPU's history marker is inside the window: the history holds
	 * part of it (rl_usage_history) */
	__u8 hist;
	/* this CPU passed in a past bucket of the window */
	__u8 self_past;
	/* of pkts and pending_pkts: the other CPUs' leases of the newest
	 * bucket (for a burst cap; rl_usage_add) */
	__u64 bucket_pkts;
	__u64 bucket_pending;
};

/* rl_lease.state: 0 none; a lease granted but not yet confirmed; held */
#define RL_LEASE_PENDING	1
#define RL_LEASE_HELD		2

enum rl_answer {
	RL_FITS,	/* pass; then rl_quota_commit() */
	RL_OVER,	/* drop */
	RL_ASK,		/* read the other CPUs, then rl_quota_refresh() */
};

RL_INLINE int rl_budget_limited(const struct rl_budget *b)
{
	return b->pkts != RL_UNLIMITED || b->bytes != RL_UNLIMITED;
}

/* Does budget `b` refuse a packet of `len` bytes even in an empty window?
 * Then it is a block (--pps 0, or a --bps whose budget is below one frame):
 * its drops are the rule's doing, not the source's, and ban nobody. */
RL_INLINE int rl_budget_blocks(const struct rl_budget *b, __u64 len)
{
	return b->pkts == 0 || (b->bytes != RL_UNLIMITED && b->bytes < len);
}

/* A lease holds for the newest bucket of its window: a roll drops it. */
RL_INLINE int rl_lease_valid(const struct rl_state *st, __u32 gen)
{
	return st->lease.state && st->lease.gen == gen;
}

/*
 * A u64 figure of a budget as a lease field: every such figure is at most
 * RL_MAX_BUDGET, or RL_UNLIMITED, whose low half is RL_LEASE_UNLIMITED. No
 * branch (the verifier walks every path of the refresh). Compared the
 * other way, a lease field needs no conversion: RL_LEASE_UNLIMITED is above
 * every budget.
 */
#define rl_lease_u32(v)	((__u32)(v))

/* Decide from this CPU's state alone, after rl_state_roll(): its lease is
 * for its newest bucket. */
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
	if ((!pkts_lim || (__u64)st->win.pkts + 1 <= l->allow_pkts) &&
	    (!bytes_lim || st->win.bytes + len <= l->allow_bytes))
		return RL_FITS;
	if ((pkts_lim && l->free_pkts < 1) || (bytes_lim && l->free_bytes < len))
		return RL_OVER;
	return RL_ASK;
}

/* This CPU's own part of `u` beside its newest bucket: its `past` bucket,
 * and whether its marker says the history holds part of the window. */
RL_INLINE void rl_usage_self(struct rl_usage *u, const struct rl_state *st,
			     __u64 bucket, __u32 nbuckets)
{
	if (rl_past_usage(&st->past, bucket, nbuckets, &u->pkts, &u->bytes))
		u->self_past = 1;
	if (rl_marker_live(st->flushed, bucket, nbuckets)) {
		u->hist = 1;
		u->self_past = 1;
	}
}

/*
 * Add another CPU's state to `u`, as seen at `now` by a CPU whose newest
 * bucket is `bucket`. A lease counts only while it is still live for the
 * current bucket (a CPU still behind refreshes before passing again). Loads
 * in the reverse order of a roll's stores (window.h): lease, index, newest
 * counts, `past`, marker; the history is read after every CPU
 * (rl_usage_history).
 */
RL_INLINE void rl_usage_add(struct rl_usage *u, const struct rl_state *o,
			    __u64 now, __u64 bucket, __u64 width,
			    __u32 nbuckets, __u32 gen)
{
	__u32 state = RL_READ(o->lease.state), lgen = RL_READ(o->lease.gen);
	__u32 ap = RL_READ(o->lease.allow_pkts), ab = RL_READ(o->lease.allow_bytes);
	__u64 obucket = RL_READ(o->win.bucket);
	__u64 passed_p = RL_READ(o->win.pkts), passed_b = RL_READ(o->win.bytes);
	int past = rl_past_usage(&o->past, bucket, nbuckets, &u->pkts, &u->bytes);
	__u64 p, b;

	if (rl_marker_live(RL_READ(o->flushed), bucket, nbuckets)) {
		u->hist = 1;
		past = 1;
	}
	if (!rl_bucket_live(obucket, now, width, nbuckets))
		passed_p = passed_b = 0;
	p = passed_p;
	b = passed_b;
	/* compared as times: a window that rolled across a clock wrap and
	 * one anchored after it have indices far apart on one time line */
	if (state && lgen == gen && (__s64)(obucket * width - bucket * width) >= 0) {
		if (ap != RL_LEASE_UNLIMITED && ap > p)
			p = ap;
		if (ab != RL_LEASE_UNLIMITED && ab > b)
			b = ab;
		/* A CPU passes only on a lease of its newest bucket: one
		 * of ours (or a newer one, counted as ours, which we leave
		 * soon) is what it passed or may pass there, for a burst.
		 * Passes under an older rules generation are not seen. */
		u->bucket_pkts += p;
		if (state == RL_LEASE_PENDING) {
			u->pending_pkts += p - passed_p;
			u->pending_bytes += b - passed_b;
			u->bucket_pending += p - passed_p;
		}
	}
	u->pkts += p;
	u->bytes += b;
	if (p || b || past)
		u->active++;
}

/* Add the budget's history (the past buckets of every CPU) to `u`, for a
 * window whose newest bucket is `bucket`: after every rl_usage_add. h NULL:
 * a CPU's marker says the history holds part of the window, but it is gone
 * (evicted): fails closed, as if it held RL_COUNT_MAX (every budget spent)
 * until the markers leave the window. */
RL_INLINE void rl_usage_history(struct rl_usage *u, const struct rl_history *h,
				__u64 bucket, __u32 nbuckets)
{
	if (!h) {
		u->pkts += RL_COUNT_MAX;
		u->bytes += RL_COUNT_MAX;
		return;
	}
	rl_hist_usage(h, bucket, nbuckets, &u->pkts, &u->bytes);
}

/*
 * A burst cap (b->burst) as usage: after the others are summed into `u`,
 * what they used of the window is raised to what leaves this CPU no more
 * than the burst's free part of the newest bucket, so that the lease, its
 * free bounds and the fast path's drops (until the next bucket: a lease
 * is for one bucket) all take the lesser of the two. Only for a budget
 * whose pkts is limited (within_quota gives a burst-only rule the largest
 * budget).
 */
RL_INLINE void rl_usage_burst(struct rl_usage *u, const struct rl_budget *b)
{
	__u64 floor, floor_held, held;

	if (!b->burst || b->pkts == RL_UNLIMITED || b->pkts + u->bucket_pkts < b->burst)
		return;
	floor = b->pkts - b->burst + u->bucket_pkts;
	floor_held = floor > u->bucket_pending ? floor - u->bucket_pending : 0;
	held = u->pkts - u->pending_pkts;
	if (floor_held > held)
		held = floor_held;
	if (floor > u->pkts)
		u->pkts = floor;
	u->pending_pkts = u->pkts - held;
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

/*
 * What is free for this CPU given `others`: `claim` counting every lease
 * in full (what a new lease may take), and in lease.free_* an upper bound
 * that leaves out leases not yet confirmed, which may shrink: only when
 * that bound is exhausted does the fast path drop without asking again.
 */
RL_INLINE void rl_quota_free(struct rl_state *st, const struct rl_budget *b,
			     const struct rl_usage *others, __u64 *claim_pkts,
			     __u64 *claim_bytes)
{
	struct rl_lease *l = &st->lease;
	__u64 up = rl_free(b->pkts, others->pkts - others->pending_pkts, st->win.pkts);
	__u64 ub = rl_free(b->bytes, others->bytes - others->pending_bytes,
			   st->win.bytes);

	*claim_pkts = rl_free(b->pkts, others->pkts, st->win.pkts);
	*claim_bytes = rl_free(b->bytes, others->bytes, st->win.bytes);
	if (up < l->free_pkts)
		l->free_pkts = rl_lease_u32(up);
	if (ub < l->free_bytes)
		l->free_bytes = rl_lease_u32(ub);
}

/* Give up any claim beyond this CPU's passes: the packet is dropped. */
RL_INLINE int rl_lease_none(struct rl_lease *l, const struct rl_window *w)
{
	l->allow_pkts = w->pkts;
	l->allow_bytes = w->bytes;
	l->state = RL_LEASE_HELD;
	return RL_OVER;
}

/*
 * Before a refresh: is the packet over the budget on this CPU's own passes
 * alone (its newest and past buckets)? Then it drops without reading the
 * other CPUs, which can only add: a source over its quota on one CPU (a
 * flood on one RX queue, a million sources each over its frame a minute)
 * costs no cross-CPU read in a new bucket. The lease is then none, its
 * free bounds from this CPU alone (upper bounds, as free_* are).
 */
RL_INLINE int rl_quota_over_alone(struct rl_state *st, const struct rl_budget *b,
				  __u64 len, __u32 gen, __u32 nbuckets)
{
	struct rl_lease *l = &st->lease;
	__u64 p = st->win.pkts, by = st->win.bytes, fp, fb;

	rl_past_usage(&st->past, st->win.bucket, nbuckets, &p, &by);
	fp = rl_free(b->pkts, 0, p);
	fb = rl_free(b->bytes, 0, by);
	if (fp >= 1 && fb >= len)
		return 0;
	l->gen = gen;
	l->free_pkts = rl_lease_u32(fp);
	l->free_bytes = rl_lease_u32(fb);
	rl_lease_none(l, &st->win);
	return 1;
}

/*
 * Take a new lease given what the other CPUs hold, and judge the packet.
 * A lease granted (RL_FITS) is pending until rl_quota_confirm().
 */
RL_INLINE int rl_quota_refresh(struct rl_state *st, const struct rl_budget *b,
			       const struct rl_usage *others, __u64 len,
			       __u32 gen, __u32 ncpus)
{
	struct rl_lease *l = &st->lease;
	__u32 d = st->win.pkts || others->self_past ? others->active + 2 : ncpus;
	__u64 fp, fb;

	if (d > ncpus)
		d = ncpus;
	if (d == 0)
		d = 1;
	l->gen = gen;
	l->free_pkts = l->free_bytes = RL_LEASE_UNLIMITED;
	rl_quota_free(st, b, others, &fp, &fb);
	if (fp < 1 || fb < len)
		return rl_lease_none(l, &st->win);
	l->allow_pkts = rl_lease_u32(rl_allow(fp, st->win.pkts, 1, d));
	l->allow_bytes = rl_lease_u32(rl_allow(fb, st->win.bytes, len, d));
	l->state = RL_LEASE_PENDING;
	return RL_FITS;
}

/*
 * Second half of a refresh that granted a lease (RL_FITS): `others` read
 * again after the lease was published. Trim the lease to what is free now,
 * never widen it; judge the packet again.
 */
RL_INLINE int rl_quota_confirm(struct rl_state *st, const struct rl_budget *b,
			       const struct rl_usage *others, __u64 len)
{
	struct rl_lease *l = &st->lease;
	__u64 fp, fb;

	rl_quota_free(st, b, others, &fp, &fb);
	if (fp < 1 || fb < len)
		return rl_lease_none(l, &st->win);
	if (fp != RL_UNLIMITED && l->allow_pkts - st->win.pkts > fp)
		l->allow_pkts = rl_lease_u32(st->win.pkts + fp);
	if (fb != RL_UNLIMITED && l->allow_bytes - st->win.bytes > fb)
		l->allow_bytes = rl_lease_u32(st->win.bytes + fb);
	l->state = RL_LEASE_HELD;
	return RL_FITS;
}

/* Count a passed packet against the window and what the lease knew free. */
RL_INLINE void rl_quota_commit(struct rl_state *st, __u64 len)
{
	rl_window_add(&st->win, 1, len);
	if (st->lease.free_pkts != RL_LEASE_UNLIMITED && st->lease.free_pkts)
		st->lease.free_pkts--;
	if (st->lease.free_bytes != RL_LEASE_UNLIMITED)
		st->lease.free_bytes = st->lease.free_bytes > len ?
				       st->lease.free_bytes - (__u32)len : 0;
}

#endif /* RL_QUOTA_H */
