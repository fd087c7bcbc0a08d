/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What a reload onto new maps carries from the pinned ones (reload_txn.h;
 * xdp-ratelimit(8), reload): rules and their tries (budgets recomputed for
 * the new window), scopes, bans, verified sources (verified_bloom rebuilt
 * from them and the bans), answered connections, the interface's counters, the sync
 * agent's state and the config's bits. Per-source windows and counters
 * (sources, history, newcomers, new_history), the fleet's shares
 * (remote) and the rules' aggregate windows only while the bucket grid
 * (--window, --buckets, the clock) is the same; per-source state and
 * refused sources only while --ipv6-prefix is too. Bans and verified
 * sources of IPv6 are re-masked to a shorter --ipv6-prefix (the latest
 * of those merged wins); a longer one cannot name them, so a reload that
 * would lose a ban in force or a verification that holds (to a longer
 * prefix, or to a --max-sources below the sources verified) is refused
 * before anything changes.
 */
#ifndef RL_RELOAD_CARRY_H
#define RL_RELOAD_CARRY_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/iface.h"

struct rl_carried {
	int rules;		/* rules (slots in use) */
	long bans, verified, sources;
	bool windows;		/* per-source windows and counters */
};

/* `k`, a source key under `from`, under the new settings `to`: IPv6
 * masked to a shorter --ipv6-prefix; false for IPv6 under a longer one,
 * which a shorter key cannot name. */
bool rl_carry_key(struct rl_key *k, const struct rl_settings *from,
		  const struct rl_settings *to);

/* What carrying the bans in force and the verifications that hold (under
 * the new --verified-ttl) onto new settings would come to. */
struct rl_carry_loss {
	long v6_bans;		/* IPv6 bans a longer prefix cannot name */
	long v6_verified;	/* IPv6 verified sources, likewise */
	long verified;		/* verified sources, as the new keys count them */
};

/* 0 when nothing of `l` would be lost going from `from` to `to`, or
 * -EINVAL with what would be lost and how to go on in err (the interface
 * `iface` named in the commands). */
int rl_carry_loss_check(const struct rl_carry_loss *l, const struct rl_settings *from,
			const struct rl_settings *to, const char *iface,
			char *err, size_t errlen);

/* What the new settings `s` cannot take from `old` (the pins of a layout
 * rl_iface_open_layout opened): a rule whose budget the new window cannot
 * count or whose IPv6 prefix is longer than the new --ipv6-prefix, a ban
 * or a verified source it would lose (rl_carry_loss_check), more sources
 * active in the last window than the new --max-sources. 0, or
 * -EINVAL with what to do in err. */
int rl_carry_check(const struct rl_iface *old, const struct rl_settings *s,
		   char *err, size_t errlen);

/* Fill the new maps `nm` (of a program loaded with `s`, its config
 * written by rl_loader_init) from `old`. 0, or -errno with err: -ENOSPC
 * when a ban or a verification made before the call would be lost after
 * all (made since rl_carry_check, or pushed out of a table). */
int rl_carry(const struct rl_iface *old, const struct rl_settings *s,
	     const struct rl_maps *nm, struct rl_carried *c, char *err,
	     size_t errlen);

/* After the commit point, when the old program no longer runs: the bans
 * and verified sources it made since rl_carry, where `nm` has none newer.
 * Best effort. */
void rl_carry_late(const struct rl_iface *old, const struct rl_settings *s,
		   const struct rl_maps *nm);

#endif /* RL_RELOAD_CARRY_H */
