/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Bans (xdp-ratelimit(8), "Bans"): whether a ban holds, and the ban a drop
 * imposes. Plain C shared by the XDP program (bpf/ban.bpf.h), the CLI
 * (user/lib/ban_map.c) and the host tests.
 */
#ifndef RL_BAN_H
#define RL_BAN_H

#include "ratelimit.h"
#include "compiler.h"

/* Does a ban entry still hold at `now`? Expired entries are left for the
 * LRU: deleting one could race a fresh ban of the same source. */
RL_INLINE int rl_ban_holds(const struct rl_ban *b, __u64 now)
{
	return (__s64)(b->until_ns - now) > 0;
}

/* The ban a drop for the source's own quota imposes under rule `r`. */
RL_INLINE void rl_ban_make(struct rl_ban *b, const struct rl_rule *r, __u64 now)
{
	b->until_ns = now + r->ban_ns;
	b->banned_ns = now;
	b->rule_flags = r->flags & RL_RULE_F_V6;
	b->rule_prefixlen = r->prefixlen;
	__builtin_memcpy(b->rule_addr, r->addr, sizeof(b->rule_addr));
}

#endif /* RL_BAN_H */
