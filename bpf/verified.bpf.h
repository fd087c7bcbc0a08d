/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Verified sources (include/verified.h): the egress hook's marks, which
 * the XDP program reads to tell newcomers from verified sources and to
 * count the packets that may ban.
 */
#ifndef RL_VERIFIED_BPF_H
#define RL_VERIFIED_BPF_H

#include "maps.bpf.h"
#include "parse.h"
#include "verified.h"
#include "scope.h"
#include "events.bpf.h"
#include "rule.bpf.h"
#include "cookie_check.bpf.h"

/*
 * Is the source verified at `now`? A tracked source's CPU keeps the
 * answer time it last read (verified_ns), so a verified source reads the
 * shared entry once a TTL on each CPU; an unverified one reads it on
 * every packet its rule needs it for.
 */
static __always_inline int source_verified(struct rl_source *src,
					   const struct rl_key *key, __u64 now)
{
	struct rl_verified *v;
	__u64 t;

	if (src && rl_verified_holds(src->verified_ns, now, settings.verified_ttl_ns))
		return 1;
	if (bpf_map_peek_elem(&verified_bloom, (void *)key))
		return 0;	/* never verified here */
	v = bpf_map_lookup_elem(&verified, key);
	if (!v)
		return 0;
	t = RL_READ(v->answered_ns);
	if (!rl_verified_holds(t, now, settings.verified_ttl_ns))
		return 0;
	if (src) {
		/* verified since it was placed: the index keeps it */
		if (!src->verified_ns)
			source_index_verified(key);
		src->verified_ns = t;
	}
	return 1;
}

/*
 * A scoped rule's window (include/scope.h) of a source found verified: its
 * way in the index is marked verified as its source's is, once per CPU
 * (verified_ns, which no read of verification takes from a window: the
 * source's own entry keeps that), so that a flood of new addresses never
 * pushes out a verified client's window, whatever its rule.
 */
static __always_inline void window_verified(struct rl_source *win,
					    const struct rl_key *key, __u64 now)
{
	if (win->verified_ns)
		return;
	source_index_verified(key);
	win->verified_ns = now;
}

/*
 * Is the source of `key` (a source's key, or a scoped window's: its
 * source's verification) verified at `now`? Read where the packet's own
 * read did not take place (verdict(): a source refused for want of a way,
 * a scoped window placed). A global function: the key is built on its
 * own stack. (An IPv6 window's key holds its source's 96 bits, all a
 * source has where scopes judge: scope.bpf.h.)
 */
__noinline int key_source_verified(const struct rl_key *key, __u64 now)
{
	struct rl_key k;

	if (!key)
		return 0;
	k = *key;
	if (rl_key_scoped(&k))
		rl_scoped_source(&k, &k);
	return source_verified(NULL, &k, now);
}

/* The kind of a source key (RL_PKT_V4 or RL_PKT_V6): IPv4 is v4-mapped. */
static __always_inline int key_kind(const struct rl_key *key)
{
	return rl_v4_mapped_addr(key->addr) ? RL_PKT_V4 : RL_PKT_V6;
}

/*
 * Source `key` proved its return path at `now` (`create`: a proof; else
 * a segment of an established connection, which only renews an entry):
 * verified (or kept so; a write only every TTL/8), reporting `verified`
 * when it was not. 1 if it is verified now.
 */
static __always_inline int mark_verified(const struct rl_key *key, __u64 now,
					 struct rl_counters *cnt, int create)
{
	struct rl_verified fresh = { .answered_ns = now }, *v;
	__u64 t;
	long ev;

	v = bpf_map_lookup_elem(&verified, key);
	if (v) {
		t = RL_READ(v->answered_ns);
		if (!rl_answer_stale(t, now, settings.verified_ttl_ns))
			return 1;
		RL_WRITE(v->answered_ns, now);
		if (rl_verified_holds(t, now, settings.verified_ttl_ns))
			return 1;
	} else if (!create) {
		return 0;
	} else if (bpf_map_update_elem(&verified, key, &fresh, BPF_NOEXIST)) {
		return 1;	/* another CPU verified it first */
	} else {
		bpf_map_push_elem(&verified_bloom, (void *)key, BPF_ANY);
		cnt->verified_inserts++;
	}
	cnt->verified_new++;
	if (no_events)
		return 1;
	ev = event_budget(cnt, now);
	if (ev >= 0)
		report_source(RL_EVENT_VERIFIED, key,
			      find_rule(NULL, key, key_kind(key), 0), now, ev);
	return 1;
}

/*
 * Source `key` proved at `now` that it receives what the host sends it
 * (include/verified.h): verified from now on. The one way in for every
 * proof (the ACK of a SYN-ACK here; a returned SYN cookie). A global
 * function: one copy for every caller. 1 once verified.
 */
__noinline int verify_source(const struct rl_key *key, __u64 now)
{
	struct rl_counters *cnt;
	struct rl_key k;
	__u32 zero = 0;

	if (!key)
		return 0;	/* cannot happen: the caller's key */
	k = *key;	/* 6.1: a map key on this stack, not an argument */
	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!cnt)
		return 0;	/* cannot happen: an array */
	return mark_verified(&k, now, cnt, 1);
}

/*
 * A segment that reached the host: if it is the peer's ACK of a SYN-ACK
 * the host sent on its connection (`synacks`), source `key` is verified,
 * the record goes, and the connection counts as established for bans
 * (`answered`, with the SYN-ACK's window). Without a record, an ACK that
 * returns a valid SYN cookie of the kernel's proves as well: a listener
 * whose SYN queue overflows answers with cookies, from no socket, so the
 * egress hook records none (checked only while the kernel may have some
 * out: kernel_cookies; the connection counts for bans from the host's
 * first segment on it, as one established before the proof was seen:
 * mark_answered; `cookie_bad`: cookie_first() found none in it, a check
 * not made twice). 1 if it proved. (On 6.1 the
 * program's frame and this chain of global functions share 512 bytes of
 * stack.)
 */
__noinline int prove_source(struct xdp_md *ctx, const struct rl_key *key, __u64 now,
			    int cookie_bad)
{
	struct rl_answered a = { .answered_ns = now };
	struct rl_synack *s;
	struct rl_flow f;
	struct rl_seg seg;

	if (!ctx || !key)
		return 0;	/* cannot happen: the caller's pointers */
	if (!rl_parse_tcp((void *)(long)ctx->data, (void *)(long)ctx->data_end,
			  &f, 0, &seg) ||
	    (seg.flags & (RL_TCP_SYN | RL_TCP_RST | RL_TCP_ACK)) != RL_TCP_ACK)
		return 0;
	s = bpf_map_lookup_elem(&synacks, &f);
	if (!s) {	/* no SYN-ACK of a socket: one of the kernel's cookies? */
		if (cookie_bad || !kernel_cookies(now) || !cookie_valid(ctx) ||
		    !verify_source(key, now))
			return 0;
		/* for bans, the window scale its listener's cookies offer
		 * (none seen: the host's first segment makes an unscaled
		 * entry, mark_answered); its window, at most an unscaled
		 * one's, until the host's first segment says */
		a.wscale = kernel_cookie_wscale[f.host_port];
		if (!a.wscale--)
			return 1;
		a.ack = seg.seq;
		a.win = 0xffff;
	} else {
		if (!rl_synack_proved(s, seg.ack))
			return 0;
		a.ack = s->ack;
		a.win = s->win;		/* a SYN-ACK's window is never scaled */
		a.wscale = s->wscale;
		bpf_map_delete_elem(&synacks, &f);
		if (!verify_source(key, now))
			return 0;
	}
	bpf_map_update_elem(&answered, &f, &a, BPF_ANY);
	return 1;
}

/*
 * Is the packet of a verified source proven: does it belong to a
 * connection the host established (`answered`, within the TTL) and lie
 * within the window the host last advertised on it (include/verified.h)?
 * A parse or lookup that fails proves nothing. A question: count_proven()
 * counts it. A global function: its frame is not the program's, whose
 * stack the cross-CPU sum already fills.
 */
__noinline int proven_packet(struct xdp_md *ctx, __u64 now)
{
	struct rl_answered *a;
	struct rl_flow f;
	struct rl_seg seg;

	if (!ctx)
		return 0;	/* cannot happen: the caller's pointer */
	if (!rl_parse_tcp((void *)(long)ctx->data, (void *)(long)ctx->data_end,
			  &f, 0, &seg) || (seg.flags & RL_TCP_SYN))
		return 0;
	a = bpf_map_lookup_elem(&answered, &f);
	return a && rl_verified_holds(RL_READ(a->answered_ns), now,
				      settings.verified_ttl_ns) &&
	       rl_seq_in_window(a, seg.seq);
}

/*
 * Count a proven packet of `len` bytes of source `key` at `now`, whatever
 * its verdict, toward a ban (rl_proven_add), and answer whether the
 * source's proven packets alone now exceed the quota of rule `rule` in the
 * window of `now` (rl_proven_exceeds): then a drop for that quota bans.
 * One lookup of `verified` for both: the count and the question read the
 * same entry. 0 when the source has no entry (nothing counted).
 */
__noinline int count_proven(const struct rl_key *key, const struct rl_rule *rule,
			    __u64 now, __u64 len)
{
	struct rl_budget b = { 0 };
	struct rl_verified *v;
	struct rl_key k;
	__u32 win;

	if (!key || !rule)
		return 0;	/* cannot happen: the caller's pointers */
	k = *key;	/* 6.1: a map key on this stack, not an argument */
	v = bpf_map_lookup_elem(&verified, &k);
	if (!v)
		return 0;
	win = rl_proven_window(now, settings.window_ns);
	rl_proven_add(v, win, len);
	b.pkts = rule->pkt_budget;
	b.bytes = rule->byte_budget;
	return rl_proven_exceeds(v, win, &b);
}

/*
 * The TCP side of a packet's verdict under rule slot `rule_id`
 * (RL_NO_RULE: none), for source `key` that is verified (`how` has
 * HOW_VERIFIED) or not: the ACK that proves it (prove_source, whatever
 * the rule), then, under a rule that bans, its count toward a ban
 * (proven_packet) and whether that count is over the quota (count_proven).
 * The flags to add to `how`. One call from the program,
 * so that its own frame stays small: on 6.1 it and the deepest chain of
 * global functions share 512 (and a rule slot, not a pointer that may be
 * NULL, which 6.1 refuses a global function).
 */
__noinline int proof_and_proven(struct xdp_md *ctx, const struct rl_key *key,
				__u32 rule_id, __u64 now, int how)
{
	const struct rl_rule *rule = NULL;
	int add = 0;

	if (!ctx || !key)
		return 0;	/* cannot happen: the caller's pointers */
	if (!(how & HOW_VERIFIED) &&
	    prove_source(ctx, key, now, how & HOW_COOKIE_BAD))
		add = HOW_VERIFIED;
	if (!((how | add) & HOW_VERIFIED) || rule_id == RL_NO_RULE)
		return add;
	rule = bpf_map_lookup_elem(&rules, &rule_id);
	if (!rule || !(rule->flags & RL_RULE_F_USED) || !rule->ban_ns ||
	    !proven_packet(ctx, now))
		return add;
	if (count_proven(key, rule, now, (__u64)(ctx->data_end - ctx->data)))
		add |= HOW_PROVEN_OVER;
	return add;
}

/* The key of the peer a connection names, as `sources` keys it. */
static __always_inline void peer_key(struct rl_key *key, const struct rl_flow *f)
{
	__u32 w[4];
	int i;

	__builtin_memcpy(w, f->peer, sizeof(w));
	__builtin_memcpy(key->addr, w, sizeof(w));
	if (rl_v4_mapped_addr(f->peer))
		return;
#pragma unroll
	for (i = 0; i < 4; i++)
		w[i] &= settings.v6_mask[i];
	__builtin_memcpy(key->addr, w, sizeof(w));
}

/* The host's own stack sent SYN-ACK `seg` (TCP header at `tcp`) on
 * connection `f`: what the peer's ACK must acknowledge to prove. */
static __always_inline void record_synack(const struct rl_flow *f,
					  const struct rl_seg *seg, __u8 *tcp,
					  void *end)
{
	struct rl_synack s = {
		.isn = seg->seq, .ack = seg->ack, .win = seg->win,
		.wscale = rl_tcp_wscale(tcp, end, seg->doff),
	};

	bpf_map_update_elem(&synacks, f, &s, BPF_ANY);
}

/* The host sent segment `seg` at `now` on connection `f`, which it
 * established: the window it advertises bounds what counts toward a ban.
 * A write only when the window moved (or every TTL/8). */
static __always_inline void mark_answered(const struct rl_flow *f,
					  const struct rl_seg *seg, __u64 now)
{
	struct rl_answered fresh = {
		.answered_ns = now, .ack = seg->ack, .win = seg->win,
	}, *a;
	__u32 win;

	a = bpf_map_lookup_elem(&answered, f);
	if (!a) {	/* established before the proof was seen: unscaled */
		bpf_map_update_elem(&answered, f, &fresh, BPF_ANY);
		return;
	}
	win = rl_window_bytes(seg->win, a->wscale);
	if (RL_READ(a->ack) != seg->ack || RL_READ(a->win) != win) {
		RL_WRITE(a->ack, seg->ack);
		RL_WRITE(a->win, win);
	} else if (!rl_answer_stale(RL_READ(a->answered_ns), now,
				    settings.verified_ttl_ns)) {
		return;
	}
	RL_WRITE(a->answered_ns, now);
}
#endif /* RL_VERIFIED_BPF_H */
