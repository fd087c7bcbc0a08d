/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The sliding window of one CPU: a ring of RL_MAX_BUCKETS buckets of which
 * `nbuckets` are used, each `width` ns wide, plus running totals of the
 * live buckets. Plain C with no helpers and no libc: the XDP program and the
 * host unit tests compile the same code, and time is an argument.
 *
 * Invariant: win->pkts and win->bytes equal the sums of every bucket; a
 * bucket that left the window is zeroed when the ring rolls past it, so the
 * totals never need re-summing (FireflySoft's lesson) and nothing allocates.
 *
 * Stale buckets are found by the elapsed bucket count since the newest one
 * (go-zero's approach): at most nbuckets-1 are reset one by one; a gap of a
 * whole window or more resets the ring at once. Time differences are taken
 * modulo 2^64, so a clock that wraps keeps a continuous window.
 *
 * Other CPUs read a window while its CPU rolls it (the cross-CPU sum). A
 * roll therefore publishes itself with one store, the bucket index, after
 * everything it depends on: the leaving slots are emptied first, then the
 * totals lowered, then the index moved, with a full barrier between the
 * three (RL_FENCE, once per roll). A reader loads in the opposite order
 * (index, totals, slots; its caller fences after the index), so whatever
 * it sees of a roll in progress it counts at least what the window held:
 * never less (tests/unit/test_roll_race.c replays a reader at every store).
 */
#ifndef RL_WINDOW_H
#define RL_WINDOW_H

#include "ratelimit.h"

#define RL_INLINE static inline __attribute__((always_inline))

/* Slot of bucket index i in the ring; the mask keeps the verifier sure of
 * the bound. Every slot is used in turn whatever nbuckets is: a bucket's
 * slot is not reused before RL_MAX_BUCKETS buckets, long after it left. */
#define RL_SLOT(i)	((__u32)(i) & (RL_MAX_BUCKETS - 1))

/* Loads and stores another CPU may see: neither torn nor reordered by the
 * compiler. */
#define RL_READ(x)	(*(volatile __typeof__(x) *)&(x))
#define RL_WRITE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))

/* A full barrier. In BPF, a fetching atomic on a map value (the only
 * barrier the ISA has); `p` is a __u64 of the value being written. */
#ifdef __bpf__
#define RL_FENCE(p)	((void)__sync_fetch_and_add((p), 0))
#else
#define RL_FENCE(p)	__sync_synchronize()
#endif

/* Called after each store of a roll: the host tests hook it to replay a
 * reader between any two stores. */
#ifndef RL_ROLL_STEP
#define RL_ROLL_STEP(w)	do { } while (0)
#endif

/* Start (ns on the monotonic clock) of the window's newest bucket. */
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

RL_INLINE void rl_window_clear(struct rl_window *w)
{
	__builtin_memset(w->ring, 0, sizeof(w->ring));
	w->pkts = 0;
	w->bytes = 0;
}

/*
 * Move the window to `now`: buckets that fell out of it are emptied and
 * their counts leave the totals. An empty window is (re)anchored on the
 * global grid (multiples of width), so windows of every CPU share bucket
 * boundaries and can be compared. A clock behind the newest bucket counts
 * into the newest bucket. Returns whether the newest bucket changed.
 */
RL_INLINE int rl_window_roll(struct rl_window *w, __u64 now, __u64 width,
			     __u32 nbuckets)
{
	__u64 elapsed = now - w->bucket * width, d, lp = 0, lb = 0;
	__u32 i, s;

	if (w->pkts == 0) {
		/* nothing counted: every slot is empty, the index alone moves
		 * (to the u64 grid, which a window that rolled across a
		 * clock wrap may have left) */
		d = now / width;
		if (d == w->bucket)
			return 0;
		RL_WRITE(w->bucket, d);
		RL_ROLL_STEP(w);
		return 1;
	}
	if ((__s64)elapsed < (__s64)width)
		return 0;		/* same bucket, or clock behind: newest */
	d = elapsed / width;
	if (d >= nbuckets) {
		for (i = 0; i < RL_MAX_BUCKETS; i++) {
			RL_WRITE(w->ring[i].pkts, 0);
			RL_WRITE(w->ring[i].bytes, 0);
			RL_ROLL_STEP(w);
		}
		RL_FENCE(&w->bucket);
		RL_WRITE(w->pkts, 0);
		RL_ROLL_STEP(w);
		RL_WRITE(w->bytes, 0);
		RL_ROLL_STEP(w);
	} else {
		/* the d oldest buckets leave: bucket - nbuckets + 1 on */
		for (i = 1; i < RL_MAX_BUCKETS; i++) {
			if (i > d)
				break;
			s = RL_SLOT(w->bucket - nbuckets + i);
			lp += w->ring[s].pkts;
			lb += w->ring[s].bytes;
			RL_WRITE(w->ring[s].pkts, 0);
			RL_ROLL_STEP(w);
			RL_WRITE(w->ring[s].bytes, 0);
			RL_ROLL_STEP(w);
		}
		RL_FENCE(&w->bucket);
		RL_WRITE(w->pkts, w->pkts - (__u32)lp);
		RL_ROLL_STEP(w);
		RL_WRITE(w->bytes, w->bytes - (__u32)lb);
		RL_ROLL_STEP(w);
	}
	RL_FENCE(&w->bucket);
	RL_WRITE(w->bucket, w->bucket + d);
	RL_ROLL_STEP(w);
	return 1;
}

/* Count a passed packet (or several) in the newest bucket. */
RL_INLINE void rl_window_add(struct rl_window *w, __u64 pkts, __u64 bytes)
{
	struct rl_bucket *b = &w->ring[RL_SLOT(w->bucket)];
	__u32 np = rl_sat_add(w->pkts, pkts), nb = rl_sat_add(w->bytes, bytes);

	/* a slot never holds more than the totals: what they could not
	 * take is not counted in either */
	b->pkts += np - w->pkts;
	b->bytes += nb - w->bytes;
	w->pkts = np;
	w->bytes = nb;
}

/*
 * What `w` holds in the window that ends in the bucket containing `now`,
 * without modifying it: how another CPU's window, or a window last touched
 * a while ago, is read. A window ahead of `now` counts whole. Loads in the
 * order a roll publishes in reverse (see the top of this file); a value
 * read in the middle of a roll may count more than the window holds,
 * never less.
 */
RL_INLINE void rl_window_usage_at(const struct rl_window *w, __u64 now,
				  __u64 width, __u32 nbuckets,
				  __u64 *pkts, __u64 *bytes)
{
	__u64 bucket = RL_READ(w->bucket);
	__u64 elapsed = now - bucket * width, d;
	__u64 p = RL_READ(w->pkts), b = RL_READ(w->bytes);
	__u32 i, s;

	if (p == 0 || (__s64)elapsed < (__s64)width) {
		*pkts = p;
		*bytes = b;
		return;
	}
	d = elapsed / width;
	if (d >= nbuckets) {
		*pkts = 0;
		*bytes = 0;
		return;
	}
	for (i = 1; i < RL_MAX_BUCKETS; i++) {
		if (i > d)
			break;
		/* slots are read after the totals, and a roll empties them
		 * before it lowers the totals: no slot read here is larger
		 * than its part of the totals read */
		s = RL_SLOT(bucket - nbuckets + i);
		p -= RL_READ(w->ring[s].pkts);
		b -= RL_READ(w->ring[s].bytes);
	}
	*pkts = p;
	*bytes = b;
}

#endif /* RL_WINDOW_H */
