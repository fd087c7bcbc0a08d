/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * `sources` as userspace reads and writes it: a source's slot through
 * `source_index` (include/source_index.h), every tracked source with its
 * per-CPU values, and placing one (a reload's carry, before the program
 * runs on the maps). The program places and evicts on its own; userspace
 * writes only maps no program uses yet, or removes a source.
 */
#ifndef RL_LIB_SOURCE_INDEX_MAP_H
#define RL_LIB_SOURCE_INDEX_MAP_H

#include <stdbool.h>
#include "ratelimit.h"

/* The index of one interface's maps: `source_index`, `sources`,
 * `source_keys` and `source_pool` (fds), the settings its program hashes
 * with, and the pool's slots. */
struct rl_index {
	int index;
	int sources;
	int keys;
	int pool;
	__u64 seed;
	__u32 nbuckets;
	__u32 nslots;
};

struct rl_maps;

/* The index of maps `m`, as their config `cfg` says. */
void rl_index_of(struct rl_index *x, const struct rl_maps *m,
		 const struct rl_config *cfg);
/* The same, the config read from `m`: 0 or -errno. */
int rl_index_open(struct rl_index *x, const struct rl_maps *m);

/* The slot of `key`: 0, or -ENOENT (not tracked), -errno. */
int rl_index_find(const struct rl_index *x, const struct rl_key *key,
		  __u32 *slot);

/* The slot of way `way` of bucket `bucket` (empty or not): 0, -ENOENT
 * (it has none yet), -errno. */
int rl_index_way_slot(const struct rl_index *x, __u32 bucket, __u32 way,
		      __u32 *slot);

/* Each tracked source with its ncpus values (as a lookup returns them,
 * stride RL_PERCPU_VAL) in bucket order (`source_keys` mmapped if the
 * fd allows, else a lookup each); `each` returning non-zero stops
 * the walk with that value. A source placed or evicted meanwhile may be
 * missed or met, and one evicted from a bucket the walk read and placed
 * again in one it has not read yet is met twice (its old way's values
 * then hold its old state, as their owner says). */
int rl_index_walk(const struct rl_index *x,
		  int (*each)(void *ctx, const struct rl_key *key, __u32 slot,
			      const void *vals),
		  void *ctx);

/* Place `key` with values `vals` (every CPU's), found last at `now` (the
 * program's clock), in maps no program writes yet (the bucket is written
 * whole): an empty way of its buckets, as the program chooses one, and
 * its slot (the pool's next one if it has none). 0, -EEXIST (placed
 * already: values unchanged), -ENOSPC (both buckets full, or no slot
 * left), -errno. */
int rl_index_place(const struct rl_index *x, const struct rl_key *key,
		   const void *vals, bool verified, __u64 now);

/* Its ncpus values (as a lookup returns them): 0, -ENOENT, -errno. */
int rl_index_lookup(const struct rl_index *x, const struct rl_key *key,
		    void *vals);

/* Forget `key`, while the program runs: its way emptied and its values
 * cleared on every CPU (placed again, it starts afresh). 0, -ENOENT,
 * -errno. */
int rl_index_remove(const struct rl_index *x, const struct rl_key *key);

#endif /* RL_LIB_SOURCE_INDEX_MAP_H */
