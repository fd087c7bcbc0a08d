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
 * of those merged wins) and not carried to a longer one.
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

/* What the new settings `s` cannot take from `old` (the pins of a layout
 * rl_iface_open_layout opened): a rule whose budget the new window cannot
 * count or whose IPv6 prefix is longer than the new --ipv6-prefix, more
 * sources active in the last window than the new --max-sources. 0, or
 * -EINVAL with what to do in err. */
int rl_carry_check(const struct rl_iface *old, const struct rl_settings *s,
		   char *err, size_t errlen);

/* Fill the new maps `nm` (of a program loaded with `s`, its config
 * written by rl_loader_init) from `old`. 0, or -errno with err. */
int rl_carry(const struct rl_iface *old, const struct rl_settings *s,
	     const struct rl_maps *nm, struct rl_carried *c, char *err,
	     size_t errlen);

/* After the commit point, when the old program no longer runs: the bans
 * and verified sources it made since rl_carry, where `nm` has none newer.
 * Best effort. */
void rl_carry_late(const struct rl_iface *old, const struct rl_settings *s,
		   const struct rl_maps *nm);

#endif /* RL_RELOAD_CARRY_H */
