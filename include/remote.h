/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Fleet sync (xdp-ratelimit sync): what the other hosts of a fleet passed
 * for a source, as the XDP program reads it and the agent writes it. Plain
 * C shared by the program, the agent (user/cli/sync_agent.c) and the host unit
 * tests, like window.h.
 *
 * The agent keeps, per source active here, a struct rl_remote in the
 * `remote` map: per bucket of this host's grid, the passes of the other
 * hosts. A refresh (include/quota.h) adds the slots inside its window to
 * the other CPUs' usage, as if another CPU had passed them: the lease
 * protocol holds as long as remote usage only grows within a bucket, which
 * it does since the agent writes cumulative counts per bucket. A slot
 * leaves with its bucket, so a share the agent stops refreshing (Redis
 * down, agent gone) ages out within a window, and the host is back to its
 * local counts alone.
 *
 * Hosts name buckets on the wall clock, since each host's grid is on its
 * own monotonic clock: a host's local bucket `lb` starts at lb * width +
 * off on CLOCK_REALTIME (off = realtime - monotonic), and is published as
 * the fleet bucket containing that start, with the start itself. A reader
 * files it under its own bucket containing the *end* of the publisher's
 * bucket, so a remote pass is never counted for less time than a window
 * from when it happened (doc/design/fleet.md: at most one bucket more).
 */
#ifndef RL_REMOTE_H
#define RL_REMOTE_H

#include "quota.h"

/*
 * Add the remote share `r` to `u` (the usage of the other CPUs) for a CPU
 * whose newest bucket is `bucket`. A slot counts while its bucket is one
 * of the window's (bucket - nbuckets, bucket], or ahead of it (a later
 * bucket here that the publisher's clock had already reached). Not a CPU:
 * no lease, not `active`.
 */
RL_INLINE void rl_remote_usage_add(struct rl_usage *u, const struct rl_remote *r,
				   __u64 bucket, __u32 nbuckets)
{
	__u64 p = 0, b = 0;
	__u32 i;

	for (i = 0; i < RL_MAX_BUCKETS; i++) {
		__s64 age = (__s64)(bucket - r->slot[i].bucket);

		if (age < (__s64)nbuckets && age > -(__s64)RL_MAX_BUCKETS) {
			p += r->slot[i].pkts;
			b += r->slot[i].bytes;
		}
	}
	u->pkts += p;
	u->bytes += b;
}

/*
 * File `pkts`/`bytes` under local bucket `bucket` of `r` (the agent). A
 * slot holding another bucket (16 apart: an old one, or one ahead) is
 * merged into the later of the two, which counts it longer, never less.
 */
RL_INLINE void rl_remote_put(struct rl_remote *r, __u64 bucket, __u64 pkts,
			     __u64 bytes)
{
	struct rl_remote_slot *s = &r->slot[RL_SLOT(bucket)];

	if ((s->pkts || s->bytes) && s->bucket != bucket &&
	    (__s64)(bucket - s->bucket) < 0)
		bucket = s->bucket;
	s->bucket = bucket;
	s->pkts = rl_sat_add(s->pkts, pkts);
	s->bytes = rl_sat_add(s->bytes, bytes);
}

/* The fleet's name for local bucket `lb` (width ns, off = realtime -
 * monotonic): the wall-clock bucket containing its start; *start gets
 * that start (CLOCK_REALTIME ns). */
RL_INLINE __u64 rl_fleet_bucket(__u64 lb, __u64 width, __u64 off, __u64 *start)
{
	*start = lb * width + off;
	return *start / width;
}

/* The local bucket a pass published with bucket start `start` (realtime
 * ns) is filed under: the one containing the end of that bucket. */
RL_INLINE __u64 rl_local_bucket(__u64 start, __u64 width, __u64 off)
{
	return (start + width - 1 - off) / width;
}

#endif /* RL_REMOTE_H */
