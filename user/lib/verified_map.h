/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Verified sources as userspace reads them (stats, status). */
#ifndef RL_VERIFIED_MAP_H
#define RL_VERIFIED_MAP_H

#include <stdbool.h>
#include "lib/maps.h"

/* Is `key` verified at `now` (the program's clock) under settings `s`? */
bool rl_source_is_verified(const struct rl_maps *m, const struct rl_settings *s,
			   const struct rl_key *key, __u64 now);

/* How many sources are verified at `now`: 0 or a negative errno. */
int rl_verified_count(const struct rl_maps *m, const struct rl_settings *s,
		      __u64 now, __u64 *count);

#endif /* RL_VERIFIED_MAP_H */
