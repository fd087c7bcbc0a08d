/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Verified sources (xdp-ratelimit(8), "Verified sources"): what makes a
 * source verified, how long it lasts, and what may ban it. Plain C shared
 * by the programs (bpf/verified.bpf.h) and the host tests.
 *
 * A source is verified while the host has answered it past a handshake
 * within the TTL: the egress hook saw the host send it a TCP segment that
 * is neither SYN nor RST. A forger who never sees the host's SYN-ACK
 * cannot make the host send one, and only the egress hook writes
 * `verified`, so no received packet creates, refreshes or evicts an entry.
 *
 * Bans rest on the same proof: the packets a ban counts are those of
 * connections the host answered (`answered`, also written on the way out),
 * and a source is banned only once those alone exceed its quota within one
 * window. Packets forged with its address spend its quota while they last
 * (they are judged like its own), but can neither ban it nor count toward
 * a ban.
 */
#ifndef RL_VERIFIED_H
#define RL_VERIFIED_H

#include "quota.h"

/* Is a source the host last answered at `answered` verified at `now`?
 * 0: never answered. A clock behind `answered` (another CPU's read)
 * counts as verified. */
RL_INLINE int rl_verified_holds(__u64 answered, __u64 now, __u64 ttl_ns)
{
	return answered && (__s64)(now - answered) < (__s64)ttl_ns;
}

/* Must the egress hook rewrite an answer time written at `answered`? Only
 * once it is an eighth of the TTL old: a reply costs a lookup, a write
 * (and its cache line on the other CPUs) at most eight times a TTL. A
 * source stays verified between TTL x 7/8 and TTL after its last answer. */
RL_INLINE int rl_answer_stale(__u64 answered, __u64 now, __u64 ttl_ns)
{
	return (__s64)(now - answered) >= (__s64)(ttl_ns / 8);
}

/* The fixed window a proven packet at `now` counts in (low 32 bits). */
RL_INLINE __u32 rl_proven_window(__u64 now, __u64 window_ns)
{
	return (__u32)(now / window_ns);
}

/*
 * Count a packet of an answered connection (`len` bytes) in window `win`:
 * the first of a window starts it afresh. CPUs race only to lose counts
 * (a reset between another's compare and add), never to add any, so a
 * race can delay a ban, never make one.
 */
RL_INLINE void rl_proven_add(struct rl_verified *v, __u32 win, __u64 len)
{
	__u32 w = RL_READ(v->proven_win);

	if (w != win && __sync_bool_compare_and_swap(&v->proven_win, w, win)) {
		RL_WRITE(v->proven_pkts, 0);
		RL_WRITE(v->proven_bytes, 0);
	}
	__sync_fetch_and_add(&v->proven_pkts, 1);
	__sync_fetch_and_add(&v->proven_bytes, len);
}

/*
 * Have the source's answered-connection packets alone exceeded budget `b`
 * in window `win`? A fixed window lies inside the sliding one that ends
 * now, so what it counts the source sent within the last W: this never
 * holds for a source whose own packets keep within its quota, whatever
 * was forged beside them.
 */
RL_INLINE int rl_proven_exceeds(const struct rl_verified *v, __u32 win,
				const struct rl_budget *b)
{
	if (RL_READ(v->proven_win) != win)
		return 0;
	return (b->pkts != RL_UNLIMITED && RL_READ(v->proven_pkts) > b->pkts) ||
	       (b->bytes != RL_UNLIMITED && RL_READ(v->proven_bytes) > b->bytes);
}

/* Has a rule a newcomer budget? */
RL_INLINE int rl_rule_newcomer_limited(const struct rl_rule *r)
{
	return r->new_pkt_budget != RL_UNLIMITED ||
	       r->new_byte_budget != RL_UNLIMITED;
}

/* Does a rule answer its unverified sources' SYNs with cookies
 * (--syn-cookies, with a newcomer budget: bpf/cookie.bpf.h)? */
RL_INLINE int rl_rule_cookies(const struct rl_rule *r)
{
	return (r->flags & RL_RULE_F_COOKIES) && rl_rule_newcomer_limited(r);
}

/* Does a rule read verification: it has a newcomer budget or bans? */
RL_INLINE int rl_rule_reads_verified(const struct rl_rule *r)
{
	return rl_rule_newcomer_limited(r) || r->ban_ns;
}

/* The `newcomers` table for --max-sources N: a quarter of it (at least
 * 1,024, at most N). Unverified sources only stay there while the
 * newcomer budget admits them, and one evicted starts a fresh window
 * whose packets the newcomer budget still bounds. */
RL_INLINE __u64 rl_newcomers_entries(__u64 max_sources)
{
	__u64 n = max_sources / 4;

	if (n < 1024)
		n = 1024;
	return n < max_sources ? n : max_sources;
}

#endif /* RL_VERIFIED_H */
