/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Verified sources as userspace reads them (stats, status). */
#ifndef RL_VERIFIED_MAP_H
#define RL_VERIFIED_MAP_H

#include <stdbool.h>
#include "lib/maps.h"

/* Is `key` verified at `now` (the program's clock) under settings `s`? */
bool rl_source_is_verified(const struct rl_maps *m, const struct rl_settings *s,
			   const struct rl_key *key, __u64 now);

/* How many sources are verified at `now` (`count`), and how many
 * entries the table holds, lapsed or not (`entries`, may be NULL): 0 or a
 * negative errno. */
int rl_verified_count(const struct rl_maps *m, const struct rl_settings *s,
		      __u64 now, __u64 *count, __u64 *entries);

/* Verified entries the table pushed out while they held (or lapsed):
 * the entries the program inserted since attach (`inserts`, the counter
 * verified_inserts) that it no longer holds (`entries`). Nothing else
 * removes an entry, so only a full table's evictions make the two differ
 * (a reload onto a smaller table counts what it could not carry). */
__u64 rl_verified_evicted(__u64 inserts, __u64 entries);

#endif /* RL_VERIFIED_MAP_H */
