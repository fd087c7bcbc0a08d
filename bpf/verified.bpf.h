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
#include "events.bpf.h"
#include "rule.bpf.h"

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
	if (src)
		src->verified_ns = t;
	return 1;
}

/*
 * A packet of a verified source under rule `rule`, which bans: if it
 * belongs to a connection the host answered, count it as proven
 * (include/verified.h), whatever its verdict. 1 if the proven packets
 * alone now exceed the source's quota: then a drop for that quota bans.
 * A parse or lookup that fails proves nothing, so never bans. A global
 * function: its frame is not the program's, whose stack the cross-CPU sum
 * already fills.
 */
__noinline int account_proven(struct xdp_md *ctx, const struct rl_key *key,
			      const struct rl_rule *rule, __u64 now, __u64 len)
{
	struct rl_answered *a;
	struct rl_verified *v;
	struct rl_budget b = { 0 };
	struct rl_flow f;
	struct rl_key k;
	__u8 flags;
	__u32 win;

	if (!ctx || !key || !rule)
		return 0;	/* cannot happen: the caller's pointers */
	if (!rl_parse_tcp((void *)(long)ctx->data, (void *)(long)ctx->data_end,
			  &f, 0, &flags) || (flags & RL_TCP_SYN))
		return 0;
	a = bpf_map_lookup_elem(&answered, &f);
	if (!a || !rl_verified_holds(RL_READ(a->answered_ns), now,
				     settings.verified_ttl_ns))
		return 0;
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

/* The key of the peer a connection names, as `sources` keys it; its
 * kind (RL_PKT_V4 or RL_PKT_V6). */
static __always_inline int peer_key(struct rl_key *key, const struct rl_flow *f)
{
	__u32 w[4];
	int i;

	__builtin_memcpy(w, f->peer, sizeof(w));
	__builtin_memcpy(key->addr, w, sizeof(w));
	if (w[0] == 0 && w[1] == 0 && w[2] == RL_HTONL(0xffff))
		return RL_PKT_V4;
#pragma unroll
	for (i = 0; i < 4; i++)
		w[i] &= settings.v6_mask[i];
	__builtin_memcpy(key->addr, w, sizeof(w));
	return RL_PKT_V6;
}

/* The source `key` (of kind RL_PKT_V4 or RL_PKT_V6) proved its return
 * path at `now`: mark it verified (or keep it so; a write only every
 * TTL/8), reporting `verified` when it was not. */
static __always_inline void verify_source(const struct rl_key *key, int kind,
					  __u64 now, struct rl_counters *cnt)
{
	struct rl_verified fresh = { .answered_ns = now }, *v;
	__u64 t;
	long ev;

	v = bpf_map_lookup_elem(&verified, key);
	if (v) {
		t = RL_READ(v->answered_ns);
		if (!rl_answer_stale(t, now, settings.verified_ttl_ns))
			return;
		RL_WRITE(v->answered_ns, now);
		if (rl_verified_holds(t, now, settings.verified_ttl_ns))
			return;
	} else if (bpf_map_update_elem(&verified, key, &fresh, BPF_NOEXIST)) {
		return;	/* another CPU marked it first */
	} else {
		bpf_map_push_elem(&verified_bloom, (void *)key, BPF_ANY);
	}
	cnt->verified_new++;
	if (no_events)
		return;
	ev = event_budget(cnt, now);
	if (ev >= 0)
		report_source(RL_EVENT_VERIFIED, key,
			      find_rule(NULL, key, kind, 0), now, ev);
}

/* The host answered the peer of `f` at `now`: it is verified. */
static __always_inline void mark_verified(const struct rl_flow *f, __u64 now,
					  struct rl_counters *cnt)
{
	struct rl_key key;
	int kind = peer_key(&key, f);

	verify_source(&key, kind, now, cnt);
}

/* The host answered connection `f` at `now`: what a ban may count. */
static __always_inline void mark_answered(const struct rl_flow *f, __u64 now)
{
	struct rl_answered fresh = { .answered_ns = now }, *a;

	a = bpf_map_lookup_elem(&answered, f);
	if (!a)
		bpf_map_update_elem(&answered, f, &fresh, BPF_ANY);
	else if (rl_answer_stale(RL_READ(a->answered_ns), now,
				 settings.verified_ttl_ns))
		RL_WRITE(a->answered_ns, now);
}
#endif /* RL_VERIFIED_BPF_H */
