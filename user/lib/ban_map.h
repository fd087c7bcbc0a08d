/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Bans in the running program's `bans` map (xdp-ratelimit(8), "Bans"):
 * the program imposes them; userspace lists them and lifts them. An entry whose time
 * is up is no ban (the program leaves it to the LRU): never listed, and
 * lifting it is "not banned".
 */
#ifndef RL_BAN_MAP_H
#define RL_BAN_MAP_H

#include <stddef.h>
#include "lib/maps.h"
#include "lib/values.h"

struct rl_ban_row {
	struct rl_key key;
	struct rl_ban ban;
	__u64 ns_left;			/* at the `now` it was read at */
	char rule[RL_PREFIX_STRLEN];	/* the banning rule's prefix */
};

/*
 * The bans that hold at `now` (CLOCK_MONOTONIC ns, the program's clock),
 * soonest to end first; *rows is malloc'ed (free it), *n their count.
 * 0 or a negative errno.
 */
int rl_bans_read(const struct rl_maps *m, __u64 now, struct rl_ban_row **rows,
		 size_t *n);

/* The key of ADDRESS as the program tracks it: an IPv4 address, or an
 * IPv6 address or prefix of at least the tracked length, masked to it.
 * 0, or -EINVAL with what was wrong in err. */
int rl_ban_key(const char *address, __u32 v6_prefix, struct rl_key *key,
	       char *err, size_t errlen);

/* How many bans hold at `now`, or a negative errno. */
int rl_bans_count(const struct rl_maps *m, __u64 now);

/* Lift one ban: 0, -ENOENT when the source is not banned at `now`. */
int rl_ban_del(const struct rl_maps *m, const struct rl_key *key, __u64 now);
/* Lift every ban (and forget expired ones): the count of bans that held
 * at `now`, or a negative errno. */
int rl_bans_clear(const struct rl_maps *m, __u64 now);

#endif /* RL_BAN_MAP_H */
