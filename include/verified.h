/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Verified sources (xdp-ratelimit(8), "Verified sources"): what makes a
 * source verified, how long it lasts, and what may ban it. Plain C shared
 * by the programs (bpf/verified.bpf.h) and the host tests.
 *
 * A source is verified once it proved that it receives what the host
 * sends it: its ACK acknowledged the initial sequence number of a SYN-ACK
 * the host's own stack sent on that connection (ack == ISN + 1). The egress
 * hook records each such SYN-ACK (`synacks`, only segments a local socket
 * sends: forwarded and bridged ones have none), the XDP program checks the
 * peer's ACK against it. A blind forger must guess 32 bits. The host's
 * other segments to a peer that never completed a handshake (a request
 * socket's ACK to an out-of-window segment, TIME_WAIT and challenge ACKs,
 * RSTs) are sent by the kernel's control socket, a request or TIME_WAIT
 * socket, never by an established one, so they prove nothing. A verified
 * source stays so while the host's established connections with it send
 * (each segment of an established full socket renews it, never creates
 * it), for --verified-ttl after the last.
 *
 * Bans rest on connections the host established (`answered`: created on
 * the proof, kept by the established socket's segments) and on sequence
 * numbers within the window the host last advertised on them (its ack
 * number and window, scaled by its SYN-ACK's window scale): a blind forger
 * who knows the 4-tuple must still guess about 2^32 / window. A source is
 * banned only once those packets alone exceed its quota within one window.
 * Packets forged with its address spend its quota while they last (they
 * are judged like its own), but can neither ban it nor count toward a ban.
 */
#ifndef RL_VERIFIED_H
#define RL_VERIFIED_H

#include "quota.h"

/* Is a source that last proved (or was renewed) at `answered` verified at
 * `now`? 0: never. A clock behind `answered` (another CPU's read)
 * counts as verified. */
RL_INLINE int rl_verified_holds(__u64 answered, __u64 now, __u64 ttl_ns)
{
	return answered && (__s64)(now - answered) < (__s64)ttl_ns;
}

/* Must the egress hook rewrite a renewal time written at `answered`? Only
 * once it is an eighth of the TTL old: a segment costs a lookup, a write
 * (and its cache line on the other CPUs) at most eight times a TTL. A
 * source stays verified between TTL x 7/8 and TTL after its last segment. */
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

/* Does the peer's acknowledgment number `ack` prove that it read SYN-ACK
 * `s`? Only the SYN-ACK's receiver knows its sequence number. */
RL_INLINE int rl_synack_proved(const struct rl_synack *s, __u32 ack)
{
	return ack == s->isn + 1;
}

/* A window the host advertised, in bytes: `win` scaled by `wscale`. */
RL_INLINE __u32 rl_window_bytes(__u16 win, __u8 wscale)
{
	return (__u32)win << (wscale > 14 ? 14 : wscale);
}

/* Is sequence number `seq` within the window connection `a` last
 * advertised (from its ack number, `win` bytes on)? */
RL_INLINE int rl_seq_in_window(const struct rl_answered *a, __u32 seq)
{
	return seq - a->ack < a->win;
}

/* Is a TCP socket in state `state` (BPF_TCP_*) established: past its
 * handshake, not yet closed? A request socket (NEW_SYN_RECV), a Fast Open
 * child not yet acknowledged (SYN_RECV), TIME_WAIT and CLOSE are not. */
RL_INLINE int rl_tcp_established(__u32 state)
{
	return state == 1 /* ESTABLISHED */ || state == 4 /* FIN_WAIT1 */ ||
	       state == 5 /* FIN_WAIT2 */ || state == 8 /* CLOSE_WAIT */ ||
	       state == 9 /* LAST_ACK */ || state == 11 /* CLOSING */;
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

/* The `synacks` table for --max-sources N: that of `newcomers` (a
 * quarter of N, at least 1,024): one handshake in flight per newcomer it
 * holds. It must hold the SYN-ACKs sent within the longest round trip
 * served: the newcomer budget's SYNs per second times that RTT (and the
 * verified sources' own handshakes). Beyond, the oldest records go first
 * and their clients' ACKs prove nothing: they stay newcomers until a
 * later connection proves them. */
RL_INLINE __u64 rl_synacks_entries(__u64 max_sources)
{
	return rl_newcomers_entries(max_sources);
}

#endif /* RL_VERIFIED_H */
