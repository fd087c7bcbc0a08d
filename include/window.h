/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The sliding window of one budget (a source's, a rule's aggregate or
 * newcomer window), counted per CPU: each CPU keeps its newest bucket
 * (struct rl_window) and the one bucket before it that still counts
 * (struct rl_past) in its per-CPU state; older buckets of every CPU live
 * once, together, in the budget's history (struct rl_history, shared).
 * Plain C with no helpers and no libc: the XDP program and the host unit
 * tests compile the same code, and time is an argument.
 *
 * A CPU rolls when time enters a new bucket (rl_roll_plan, rl_roll_apply).
 * If its newest bucket holds passes still inside the window, it becomes
 * the CPU's `past` bucket; if `past` already held a bucket still inside the
 * window, that one goes to the history first: the CPU's marker `flushed` is
 * stored, then each dimension goes in with a compare-and-swap loop on its
 * slot (rl_hist_add). Then `past` is written, the newest counts zeroed and
 * the new index published, last. A bucket out of the window is dropped: a
 * source that passes in at most two buckets of a window never writes (or
 * reads) its history. The history's slot of bucket i is i % RL_MAX_BUCKETS,
 * tagged with the low 32 bits of i, and `newest` is the newest bucket
 * added: a slot holding an older bucket is taken over; a bucket a whole
 * ring older than `newest` left every window already.
 *
 * Another CPU (a refresh) reads this CPU's index, newest counts, `past` and
 * marker, and only then the history, and reads the history only if some
 * CPU's marker is inside the window. A roll between those reads is counted
 * twice, never missed: newest counts read as zero were zeroed after `past`
 * had them, and `past` is overwritten only after the history had it (the
 * compare-and-swap is a full barrier), its marker stored before that
 * (tests/unit/test_roll_race.c replays a reader at every store). Readers
 * rely on x86's order (TSO: stores seen in order, loads not reordered);
 * make and attach refuse other CPUs (doc/design/cpus.md).
 *
 * Time differences are taken modulo 2^64: a window that rolls across a
 * clock wrap stays continuous (its index keeps counting). 32-bit bucket
 * tags repeat every 2^32 buckets (50 days of 1 ms buckets): a bucket idle
 * that long can read as live again once, counted more, never less.
 */
#ifndef RL_WINDOW_H
#define RL_WINDOW_H

#include "ratelimit.h"

#include "compiler.h"

/* Slot of bucket index i in the history; the mask keeps the verifier sure
 * of the bound. Every slot is used in turn whatever nbuckets is: a slot is
 * not reused before RL_MAX_BUCKETS buckets, after its bucket left. */
#define RL_SLOT(i)	((__u32)(i) & (RL_MAX_BUCKETS - 1))

/* Called after each store of a roll: the host tests hook it to replay a
 * reader between any two stores. */
#ifndef RL_ROLL_STEP
#define RL_ROLL_STEP(st)	do { } while (0)
#endif

/* Tries of one history word's compare-and-swap. Each failed try is another
 * CPU's write of the same word in between (adding its own count of the
 * same bucket, once per CPU and bucket), so this many CPUs rolling one
 * budget out of one bucket at the same instant are all counted; beyond,
 * the roll keeps the bucket itself (rl_roll_apply: fails closed). */
#define RL_HIST_TRIES		16

/* Start (ns on the monotonic clock) of the CPU's newest bucket. */
RL_INLINE __u64 rl_window_start(const struct rl_window *w, __u64 width)
{
	return w->bucket * width;
}

/* Add, stopping at RL_COUNT_MAX (only a dimension without a budget gets
 * there: RL_MAX_BUDGET). */
RL_INLINE __u32 rl_sat_add(__u32 a, __u64 b)
{
	return b >= (__u64)(RL_COUNT_MAX - a) ? RL_COUNT_MAX : a + (__u32)b;
}

/* The newest bucket index `w` would have at `now`, had it rolled there. */
RL_INLINE __u64 rl_window_bucket_at(const struct rl_window *w, __u64 now,
				    __u64 width)
{
	__u64 elapsed = now - w->bucket * width;

	if ((__s64)elapsed < (__s64)width)
		return w->bucket;
	return w->bucket + elapsed / width;
}

/* Is bucket `b` inside the window that ends in the bucket holding `now`?
 * A bucket ahead of `now` (another CPU's clock, a clock behind) is. */
RL_INLINE int rl_bucket_live(__u64 b, __u64 now, __u64 width, __u32 nbuckets)
{
	__u64 elapsed = now - b * width;

	if ((__s64)elapsed < (__s64)width)
		return 1;
	return elapsed / width < nbuckets;
}

/* Is the bucket tagged `tag` (low 32 bits of its index) inside the window
 * whose newest bucket is `bucket`? Up to RL_MAX_BUCKETS ahead is (another
 * CPU whose clock read a later bucket: counted more, never less). */
RL_INLINE int rl_tag_live(__u32 tag, __u64 bucket, __u32 nbuckets)
{
	__u32 back = (__u32)bucket - tag;

	return back < nbuckets || -back <= RL_MAX_BUCKETS;
}

/* Is a `flushed` marker (1 + a bucket tag, 0: none) inside that window? */
RL_INLINE int rl_marker_live(__u32 flushed, __u64 bucket, __u32 nbuckets)
{
	return flushed && rl_tag_live(flushed - 1, bucket, nbuckets);
}

/* The marker of bucket `b` (never 0, which means none: a tag of ~0 reads
 * as one bucket younger, so its history is read a bucket longer). */
RL_INLINE __u32 rl_marker(__u64 b)
{
	__u32 m = (__u32)b + 1;

	return m ? m : 1;
}

/* Does `past` hold passes of a bucket inside the window whose newest
 * bucket is `bucket`? */
RL_INLINE int rl_past_live(const struct rl_past *p, __u64 bucket, __u32 nbuckets)
{
	return (p->pkts || p->bytes) && rl_tag_live(p->bucket, bucket, nbuckets);
}

/* rl_roll_plan(): the index moves; the newest bucket becomes `past` (it
 * holds passes still inside the window); `past` goes to the history first
 * (it too is still inside the window) */
#define RL_ROLL_MOVE	1
#define RL_ROLL_KEEP	2
#define RL_ROLL_FLUSH	4

/*
 * What rolling `st` to `now` takes (RL_ROLL_*, 0: nothing) and the new
 * index in *to. A state never used is anchored on the global grid
 * (multiples of width), so the windows of every CPU share bucket
 * boundaries; after that the index moves by whole buckets. A clock behind
 * the newest bucket counts into the newest bucket.
 */
RL_INLINE int rl_roll_plan(const struct rl_state *st, __u64 now, __u64 width,
			   __u32 nbuckets, __u64 *to)
{
	const struct rl_window *w = &st->win;
	__u64 elapsed, d;
	int plan = RL_ROLL_MOVE;

	if (w->bucket == 0 && w->pkts == 0 && st->flushed == 0 &&
	    st->past.pkts == 0) {
		*to = now / width;
		return *to != 0 ? RL_ROLL_MOVE : 0;
	}
	elapsed = now - w->bucket * width;
	if ((__s64)elapsed < (__s64)width)
		return 0;		/* same bucket, or clock behind: newest */
	d = elapsed / width;
	*to = w->bucket + d;
	if ((w->pkts || w->bytes) && d < nbuckets) {
		plan |= RL_ROLL_KEEP;
		if (rl_past_live(&st->past, *to, nbuckets))
			plan |= RL_ROLL_FLUSH;
	}
	return plan;
}

/* Move h->newest up to bucket `b` (it only moves forward); 0 when the
 * compare-and-swap gave up. */
RL_INLINE int rl_hist_newest(struct rl_history *h, __u64 b)
{
	__u64 n = RL_READ(h->newest), cur;
	__u32 i;

	for (i = 0; i < RL_HIST_TRIES; i++) {
		if (n && (__s64)(n - 1 - b) >= 0)
			return 1;
		cur = RL_CAS(&h->newest, n, b + 1);
		if (cur == n)
			return 1;
		n = cur;
	}
	return 0;
}

/*
 * Add `count` of bucket `b` to one word of its slot. The slot holds bucket
 * b (added to), an older one (replaced), or nothing; never a newer one
 * unless b is a whole ring older than h->newest, when it left every window
 * and is dropped (newest moves before any slot, and is read after it).
 * 0 when the compare-and-swap gave up (the count is not in).
 */
RL_INLINE int rl_hist_put(struct rl_history *h, union rl_hist_count *slot,
			  __u64 b, __u32 count)
{
	union rl_hist_count old, upd;
	__u64 cur, n;
	__u32 i;

	if (!count)
		return 1;
	old.word = RL_READ(slot->word);
	for (i = 0; i < RL_HIST_TRIES; i++) {
		n = RL_READ(h->newest);
		if ((__s64)(n - 1 - b) >= RL_MAX_BUCKETS)
			return 1;
		upd.count = old.count && old.bucket == (__u32)b ?
			    rl_sat_add(old.count, count) : count;
		upd.bucket = (__u32)b;
		cur = RL_CAS(&slot->word, old.word, upd.word);
		if (cur == old.word)
			return 1;
		old.word = cur;	/* another CPU wrote it meanwhile */
	}
	return 0;
}

/* Add bucket `b` of a CPU (its counts) to the history; 0 when a
 * compare-and-swap gave up (part of it may be in: counted twice then). */
RL_INLINE int rl_hist_add(struct rl_history *h, __u64 b, __u32 pkts,
			  __u32 bytes)
{
	int ok = rl_hist_newest(h, b);

	ok &= rl_hist_put(h, &h->slot[RL_SLOT(b)].pkts, b, pkts);
	ok &= rl_hist_put(h, &h->slot[RL_SLOT(b)].bytes, b, bytes);
	return ok;
}

/* A history created again while bucket `b` of a CPU, flushed into the one
 * it replaces (evicted), is still inside the window: what went in is
 * lost, so bucket `b` is taken as full (RL_COUNT_MAX: every budget spent)
 * until it leaves the window. Fails closed. */
RL_INLINE void rl_hist_lost(struct rl_history *h, __u64 b)
{
	rl_hist_add(h, b, RL_COUNT_MAX, RL_COUNT_MAX);
}

/* Is a history word inside the window whose newest bucket is `bucket`,
 * `newest` being h->newest? Its bucket is within a ring below the newest
 * added (else it is 2^32 buckets older, or added after `newest` was read:
 * then also counted from its CPU's own state, read before). */
RL_INLINE int rl_hist_live(union rl_hist_count w, __u64 newest, __u64 bucket,
			   __u32 nbuckets)
{
	__u32 back = (__u32)(newest - 1) - w.bucket;

	return w.count && back < RL_MAX_BUCKETS &&
	       (__s64)(bucket - (newest - 1 - back)) < (__s64)nbuckets;
}

/* Add what the history holds of the window whose newest bucket is `bucket`
 * (that bucket included: a CPU that already rolled past it) to *pkts and
 * *bytes. */
RL_INLINE void rl_hist_usage(const struct rl_history *h, __u64 bucket,
			     __u32 nbuckets, __u64 *pkts, __u64 *bytes)
{
	__u64 newest = RL_READ(h->newest);
	union rl_hist_count p, b;
	__u32 i;

	if (!newest)
		return;
	for (i = 0; i < RL_MAX_BUCKETS; i++) {
		p.word = RL_READ(h->slot[i].pkts.word);
		b.word = RL_READ(h->slot[i].bytes.word);
		if (rl_hist_live(p, newest, bucket, nbuckets))
			*pkts += p.count;
		if (rl_hist_live(b, newest, bucket, nbuckets))
			*bytes += b.count;
	}
}

/* The full index of the bucket tagged `tag`, at or before bucket `b`. */
RL_INLINE __u64 rl_tag_index(__u32 tag, __u64 b)
{
	return b - (__u32)((__u32)b - tag);
}

/*
 * Roll `st` as rl_roll_plan() said (`plan`, `to`), adding its `past`
 * bucket to `h` first when the plan says so. When it cannot go there (h
 * NULL: the history could not be had; or a compare-and-swap gave up), the
 * roll fails closed: `past` keeps its counts, added to the newest
 * bucket's and tagged with the newest bucket, so they count a bucket or
 * more longer than they should, never less. Stores in the order the top of
 * this file gives; the lease goes last (a CPU that reads the new bucket
 * with the old lease still live counts too much, never too little).
 */
RL_INLINE void rl_roll_apply(struct rl_state *st, struct rl_history *h,
			     int plan, __u64 to)
{
	__u64 b = st->win.bucket, pb;
	__u32 keep_pkts = 0, keep_bytes = 0;

	if (!plan)
		return;
	if (plan & RL_ROLL_FLUSH) {
		int in = 0;

		if (h) {
			pb = rl_tag_index(st->past.bucket, b);
			RL_WRITE(st->flushed, rl_marker(pb));
			RL_ROLL_STEP(st);
			in = rl_hist_add(h, pb, st->past.pkts, st->past.bytes);
			RL_ROLL_STEP(st);
		}
		if (!in) {
			keep_pkts = st->past.pkts;
			keep_bytes = st->past.bytes;
		}
	}
	if (plan & RL_ROLL_KEEP) {
		RL_WRITE(st->past.bucket, (__u32)b);
		RL_ROLL_STEP(st);
		RL_WRITE(st->past.pkts, rl_sat_add(keep_pkts, st->win.pkts));
		RL_ROLL_STEP(st);
		RL_WRITE(st->past.bytes, rl_sat_add(keep_bytes, st->win.bytes));
		RL_ROLL_STEP(st);
	}
	RL_WRITE(st->win.pkts, 0);
	RL_WRITE(st->win.bytes, 0);
	RL_ROLL_STEP(st);
	RL_WRITE(st->win.bucket, to);
	RL_ROLL_STEP(st);
	RL_WRITE(st->lease.state, 0);
	RL_ROLL_STEP(st);
}

/* Roll `st` to `now` with its history at hand (host tests; the program
 * looks the history up only when rl_roll_plan() asks for it). Returns
 * whether the newest bucket changed. */
RL_INLINE int rl_state_roll(struct rl_state *st, struct rl_history *h,
			    __u64 now, __u64 width, __u32 nbuckets)
{
	__u64 to = 0;
	int plan = rl_roll_plan(st, now, width, nbuckets, &to);

	rl_roll_apply(st, h, plan, to);
	return plan != 0;
}

/* Count a passed packet (or several) in the newest bucket. */
RL_INLINE void rl_window_add(struct rl_window *w, __u64 pkts, __u64 bytes)
{
	w->pkts = rl_sat_add(w->pkts, pkts);
	w->bytes = rl_sat_add(w->bytes, bytes);
}

/* What a CPU's newest bucket adds to the window that ends in the bucket
 * containing `now`: all of it while inside, nothing after. */
RL_INLINE void rl_window_usage_at(const struct rl_window *w, __u64 now,
				  __u64 width, __u32 nbuckets,
				  __u64 *pkts, __u64 *bytes)
{
	__u64 bucket = RL_READ(w->bucket);

	*pkts = RL_READ(w->pkts);
	*bytes = RL_READ(w->bytes);
	if (!rl_bucket_live(bucket, now, width, nbuckets))
		*pkts = *bytes = 0;
}

/* Add what a CPU's `past` bucket holds of the window whose newest bucket
 * is `bucket` to *pkts, *bytes; whether it held any. */
RL_INLINE int rl_past_usage(const struct rl_past *p, __u64 bucket,
			    __u32 nbuckets, __u64 *pkts, __u64 *bytes)
{
	struct rl_past c;

	c.bucket = RL_READ(p->bucket);
	c.pkts = RL_READ(p->pkts);
	c.bytes = RL_READ(p->bytes);
	if (!rl_past_live(&c, bucket, nbuckets))
		return 0;
	*pkts += c.pkts;
	*bytes += c.bytes;
	return 1;
}

#endif /* RL_WINDOW_H */
