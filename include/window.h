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
 * Stale buckets are found by the elapsed bucket count since `start`
 * (go-zero's approach): at most nbuckets-1 are reset one by one; a gap of a
 * whole window or more resets the ring at once. Time differences are taken
 * modulo 2^64, so a clock that wraps keeps a continuous window.
 */
#ifndef RL_WINDOW_H
#define RL_WINDOW_H

#include "ratelimit.h"

#define RL_INLINE static inline __attribute__((always_inline))

/* Slot of the ring; the mask keeps the verifier sure of the bound. */
#define RL_SLOT(i)	((i) & (RL_MAX_BUCKETS - 1))

RL_INLINE void rl_window_clear(struct rl_window *w)
{
	__builtin_memset(w->bucket_pkts, 0, sizeof(w->bucket_pkts));
	__builtin_memset(w->bucket_bytes, 0, sizeof(w->bucket_bytes));
	w->pkts = 0;
	w->bytes = 0;
	w->head = 0;
}

/*
 * Move the window to `now`: buckets that fell out of it are emptied and
 * their counts leave the totals. An empty window is (re)anchored on the
 * global grid (multiples of width), so windows of every CPU share bucket
 * boundaries and can be compared. A clock behind `start` counts into the
 * newest bucket.
 */
RL_INLINE void rl_window_roll(struct rl_window *w, __u64 now, __u64 width,
			      __u32 nbuckets)
{
	__u64 elapsed, d;
	__u32 i, head;

	if (w->pkts == 0) {
		w->start = now - now % width;
		w->head = 0;
		return;
	}
	elapsed = now - w->start;
	if ((__s64)elapsed < (__s64)width)
		return;
	d = elapsed / width;
	if (d >= nbuckets) {
		rl_window_clear(w);
		w->start = now - elapsed % width;
		return;
	}
	head = w->head;
	for (i = 1; i < RL_MAX_BUCKETS; i++) {
		if (i > d)
			break;
		head = head + 1 >= nbuckets ? 0 : head + 1;
		w->pkts -= w->bucket_pkts[RL_SLOT(head)];
		w->bytes -= w->bucket_bytes[RL_SLOT(head)];
		w->bucket_pkts[RL_SLOT(head)] = 0;
		w->bucket_bytes[RL_SLOT(head)] = 0;
	}
	w->head = head;
	w->start += d * width;
}

/* Count a passed packet (or several) in the newest bucket. */
RL_INLINE void rl_window_add(struct rl_window *w, __u64 pkts, __u64 bytes)
{
	__u32 h = RL_SLOT(w->head);

	w->bucket_pkts[h] += (__u32)pkts;
	w->bucket_bytes[h] += bytes;
	w->pkts += pkts;
	w->bytes += bytes;
}

/*
 * What `w` holds in the window that ends in the bucket containing `now`,
 * without modifying it: how another CPU's window, or a window last touched
 * a while ago, is read. A window ahead of `now` counts whole.
 */
RL_INLINE void rl_window_usage_at(const struct rl_window *w, __u64 now,
				  __u64 width, __u32 nbuckets,
				  __u64 *pkts, __u64 *bytes)
{
	__u64 elapsed = now - w->start, d;
	__u64 p = w->pkts, b = w->bytes;
	__u32 i, slot;

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
	/* the d oldest buckets follow head in the ring */
	slot = w->head;
	for (i = 1; i < RL_MAX_BUCKETS; i++) {
		if (i > d)
			break;
		slot = slot + 1 >= nbuckets ? 0 : slot + 1;
		p -= w->bucket_pkts[RL_SLOT(slot)];
		b -= w->bucket_bytes[RL_SLOT(slot)];
	}
	*pkts = p;
	*bytes = b;
}

#endif /* RL_WINDOW_H */
