// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit: per-source sliding-window rate limiting at the driver.
 * Semantics: xdp-ratelimit(8) SEMANTICS. The program reads as parse
 * (include/parse.h), classify (rule.bpf.h, scope.bpf.h, ban.bpf.h,
 * verified.bpf.h), verdict (judge.bpf.h: the window of include/window.h,
 * the cross-CPU budget of include/quota.h; newcomer.bpf.h) and account
 * (the counters, refused.bpf.h, events in events.bpf.h), at its one exit;
 * a refused SYN may be answered with a SYN cookie, and the ACK returning
 * it passed (cookie.bpf.h). A second program, rl_egress, marks
 * the sources the host answers (verified.bpf.h). Each bpf/NAME.bpf.h holds
 * one job; every map is in maps.bpf.h.
 */
#include <linux/pkt_cls.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "ratelimit.h"
#include "parse.h"
/* How a packet is judged (`how` below): its source's state is in
 * `newcomers`, not `sources`; the host verified it (read only for rules
 * with a newcomer budget or a ban); its own in-window packets of
 * established connections exceed its quota (proof_and_proven: only then
 * may a drop ban). */
#define HOW_NEWCOMERS	(1 << 0)
#define HOW_VERIFIED	(1 << 1)
#define HOW_PROVEN_OVER	(1 << 2)
/* a scoped rule judges it (scope.bpf.h), in the window of the key
 * rl_scoped_key() makes of the source and the rule */
#define HOW_SCOPED	(1 << 3)
/* and the unscoped rule covering the source has a newcomer budget, which
 * an unverified packet pays before the scoped rule judges it
 * (include/scope.h); that rule's slot in the bits from HOW_COVER_SHIFT up
 * until then: in `how`, not a variable of its own, which would take stack
 * the program does not have */
#define HOW_COVERED	(1 << 4)
#define HOW_COVER_SHIFT	8
/* it paid it: an untracked window goes to `newcomers` */
#define HOW_PAID	(1 << 5)
/* it is an ACK whose SYN cookie cookie_first() found invalid: the proof
 * does not check it again (prove_source) */
#define HOW_COOKIE_BAD	(1 << 6)
/* it may be a TCP segment without SYN (RL_PKT_MAY_TCP): only then is
 * there a proof to look for (proof_and_proven, which would parse it
 * again), or a verified client's segment whose verification every rule
 * reads */
#define HOW_MAY_TCP	(1 << 7)

#include "run_config.bpf.h"
#include "maps.bpf.h"
#include "clock.bpf.h"
#include "source.bpf.h"
#include "cpu_sum.bpf.h"
#include "history.bpf.h"
#include "judge.bpf.h"
#include "events.bpf.h"
#include "newcomer.bpf.h"
#include "ban.bpf.h"
#include "refused.bpf.h"
#include "rule.bpf.h"
#include "verified.bpf.h"
#include "scope.bpf.h"
#include "cookie.bpf.h"
#include "refuse_first.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* A packet's fate, what verdict() and the steps before it decide and
 * account() counts: the program's one exit. */
#define FATE_DROP	0	/* refused: a budget, a block, a covering rule */
#define FATE_PASS	1
#define FATE_BAN	2	/* dropped for its source's own quota, which its
				 * proven packets alone exceed: it bans */
#define FATE_BANNED	3	/* dropped: a ban holds its source */
#define FATE_COOKIE	4	/* its ACK returned a valid SYN cookie: passed */
#define FATE_SENT	5	/* answered with a SYN cookie: XDP_TX */
/* not judged: no IP source; encapsulated; malformed (as parsed: include/parse.h) */
#define FATE_NON_IP	6
#define FATE_ENCAP	7
#define FATE_MALFORMED	8
/* not decided before the verdict: judged as any packet (FATE_CHECKED: an
 * ACK whose SYN cookie cookie_first() found invalid) */
#define FATE_JUDGE	(-1)
#define FATE_CHECKED	(-2)

/* Count a passed packet in a source's window that no budget judged. */
static __always_inline void count_unjudged(struct rl_state *st, __u64 now,
					   __u64 len, const struct rl_key *key,
					   int table)
{
	roll(st, now, key, table);
	rl_quota_commit(st, len);
}

/* Does rule `rule` read the packet's verification (a budget or a ban
 * that tells verified sources apart, or a covering rule's newcomer
 * budget that it pays unverified)? */
static __always_inline int reads_verified(const struct rl_rule *rule, int how)
{
	return rl_rule_reads_verified(rule) || (how & HOW_COVERED);
}

/* Is the packet of a protocol that no scope in use names (its IP header
 * read again: the parse keeps no protocol, which every packet would pay
 * for)? Then it walks no scope. */
static __always_inline int scope_skipped(struct xdp_md *ctx,
					 const struct rl_config *cfg)
{
	int proto = rl_frame_proto((void *)(long)ctx->data,
				   (void *)(long)ctx->data_end);

	return proto >= 0 &&
	       (rl_scope_skip_bit(proto) & RL_READ(cfg->scope_skip));
}

static __always_inline int how_table(int how)
{
	return how & HOW_NEWCOMERS ? RL_TABLE_NEWCOMERS : RL_TABLE_SOURCES;
}

/* The slot of the unscoped rule whose newcomer budget the packet pays. */
static __always_inline __u32 how_cover(int how)
{
	return (__u32)how >> HOW_COVER_SHIFT;
}

/* The source budget of rule `r` in `b`: a burst caps a window budget
 * (userspace gives a rule with --burst alone the largest: rl_usage_burst). */
static __always_inline void source_budget(struct rl_budget *b,
					  const struct rl_rule *r)
{
	*b = (struct rl_budget){ r->pkt_budget, r->byte_budget, r->burst };
}

/* Count a passed packet in the windows of budget slot `slot` of rule `r`
 * that judged it: the newcomer window (an unverified source's) and the
 * aggregate one. Looked up again here, not kept from the judging: a
 * pointer kept across it splits the verifier's paths in two for each. */
static __always_inline void commit_rule_windows(const struct rl_rule *r,
						__u32 slot, int verified,
						__u64 len)
{
	struct rl_budget b = rl_newcomer_budget(r);
	struct rl_state *st;
	__u32 idx;

	if (rl_newcomer_applies(&b, verified)) {
		idx = rl_new_index(slot);
		st = bpf_map_lookup_elem(&aggregates, &idx);
		if (st)
			rl_quota_commit(st, len);
	}
	agg_budget(&b, r);
	if (rl_budget_limited(&b)) {
		idx = rl_agg_index(slot);
		st = bpf_map_lookup_elem(&aggregates, &idx);
		if (st)
			rl_quota_commit(st, len);
	}
}

/* The fate of a packet over its source's own budget `b`: --ban bans on
 * the source's own packets only (verified.bpf.h); a block bans nobody. */
static __always_inline int over_fate(const struct rl_budget *b, __u64 len,
				     int how)
{
	if ((how & HOW_PROVEN_OVER) && !rl_budget_blocks(b, len))
		return FATE_BAN;
	return FATE_DROP;
}

/*
 * Does the packet fit? Its source's budget, then, for an unverified
 * source, the rule's newcomer budget, then the rule's aggregate budget:
 * each asked once, for a tracked source and an untracked one alike. A
 * source tracked in `sources` (*srcp) is judged in its window first. An
 * untracked one (*srcp NULL) has no window yet: its budget refuses it
 * only where it blocks, the rule's budgets next, and only a packet they
 * admit gives it an entry (`newcomers` for an unverified source under a
 * newcomer budget), judged then like any window (a lease, the fleet's
 * share): a spoofed flood against a blocked prefix or a full budget takes
 * no entry, so it cannot evict the sources that keep sending. Counts the
 * packet in every window it was judged in when it fits; a dropped packet
 * counts in none. The fate, and *srcp: the source's entry (NULL: none,
 * the table full). No rule: not limited, still counted (and shown in
 * window_*). One budget on the stack at a time, one flag word (`how`):
 * what stays live across the judging is what the stack pays for.
 */
static __always_inline int verdict(struct rl_source **srcp,
				   const struct rl_key *key, int how,
				   const struct rl_rule *rule, __u32 rule_id,
				   __u64 now, __u64 len, __u32 gen,
				   struct rl_counters *cnt)
{
	struct rl_source *src = *srcp;
	struct rl_budget b;
	int src_limited;
	__u32 slot;

	if (!rule) {
		if (!src)
			src = new_source_state(RL_TABLE_SOURCES, key, cnt,
					       rule_id, gen, 0, now);
		*srcp = src;
		if (src)
			count_unjudged(&src->st, now, len, key, RL_TABLE_SOURCES);
		return FATE_PASS;
	}
	source_budget(&b, rule);
	slot = rl_budget_slot(rule_id, rule);
	src_limited = rl_budget_limited(&b);
	if (src_limited) {
		if (src) {
			if (judge_source(&src->st, &b, now, len, gen, key,
					 RL_TABLE_SOURCES) != RL_FITS)
				return over_fate(&b, len, how);
		} else if (rl_budget_blocks(&b, len)) {
			return FATE_DROP;
		}
	}
	/* newcomer budget: unverified sources also fit it; refused, the
	 * next packets ask refuse_first() first */
	b = rl_newcomer_budget(rule);
	if (rl_newcomer_applies(&b, how & HOW_VERIFIED) &&
	    !newcomer_fits(&b, slot, now, len, gen)) {
		refusing_from(now);
		return FATE_DROP;
	}
	agg_budget(&b, rule);
	if (rl_budget_limited(&b) &&
	    judge_rule_window(rl_agg_index(slot), &b, now, len, gen) != RL_FITS) {
		refusing_from(now);
		return FATE_DROP;
	}
	if (!src) {
		/* admitted by the newcomer budget (its own or the covering
		 * rule's): kept apart */
		if ((rl_rule_newcomer_limited(rule) || (how & HOW_PAID)) &&
		    !(how & HOW_VERIFIED)) {
			how |= HOW_NEWCOMERS;
			src = table_source(RL_TABLE_NEWCOMERS, key, now);
		}
		how &= ~HOW_PAID;	/* read above only: one path on, not two */
		/* a scoped rule's window of a verified source is placed
		 * verified, even where its packets never read verification
		 * (UDP, ICMP under a plain rule): eviction keeps it as it
		 * keeps the source's own entry */
		if (!src && !(how & HOW_VERIFIED) && rl_key_scoped(key) &&
		    key_source_verified(key, now))
			how |= HOW_VERIFIED;
		if (!src)
			src = new_source_state(how_table(how), key, cnt,
					       rule_id, gen, how & HOW_VERIFIED,
					       now);
		*srcp = src;
		/* an unverified source with no way it may take (its buckets
		 * full of verified sources that send) is refused while its
		 * budget limits it: a sender that found such an address
		 * would otherwise pass unlimited. A packet whose verification
		 * was not read (a SYN, UDP, under a rule that reads none) reads
		 * it here, a scoped window's by its source: a verified client's
		 * SYN without a way is judged as a fresh window, as under any
		 * rule (Tracked sources) */
		if (!src && src_limited && !(how & HOW_VERIFIED) &&
		    !key_source_verified(key, now))
			return FATE_DROP;
		if (src && src_limited) {
			source_budget(&b, rule);
			if (judge_source(&src->st, &b, now, len, gen, key,
					 how_table(how)) != RL_FITS)
				return over_fate(&b, len, how);
		}
	}
	if (src && src_limited)
		rl_quota_commit(&src->st, len);
	else if (src)
		count_unjudged(&src->st, now, len, key, how_table(how));
	commit_rule_windows(rule, slot, how & HOW_VERIFIED, len);
	return FATE_PASS;
}

/* --syn-cookies (cookie.bpf.h): the fate of an unverified source's packet
 * under `rule` that cookie_first() answers (a SYN: FATE_SENT; an ACK
 * returning a valid cookie: FATE_COOKIE), else FATE_JUDGE (FATE_CHECKED:
 * an ACK it found no valid cookie in). */
static __always_inline int cookie_fate(struct xdp_md *ctx,
				       const struct rl_rule *rule, __u64 now)
{
	int act;

	if (!rule || !rl_rule_cookies(rule))
		return FATE_JUDGE;
	act = cookie_first(ctx, now);
	if (act == RL_COOKIE_DROP)
		return FATE_JUDGE;
	if (act == RL_COOKIE_BAD)
		return FATE_CHECKED;
	return act == RL_COOKIE_SENT ? FATE_SENT : FATE_COOKIE;
}

/* The verdict of the rule that judged the packet, in `rule_counters`. */
static __always_inline void count_rule(__u32 *rule_id, int pass, __u64 len)
{
	struct rl_rule_counters *rc = bpf_map_lookup_elem(&rule_counters, rule_id);

	if (!rc)
		return;
	if (pass) {
		rc->passed_pkts++;
		rc->passed_bytes += len;
	} else {
		rc->dropped_pkts++;
		rc->dropped_bytes += len;
	}
}

/* A judged packet's fate, counted where it belongs: the ban a drop for
 * its own quota earns (--ban: only by the source's own packets,
 * verified.bpf.h), its source's counters and events (or, with no entry,
 * its drops in `refused`, its passes as untracked), its rule's counters. */
static __always_inline void account_judged(struct rl_counters *cnt, int fate,
					   struct rl_source *src,
					   const struct rl_key *key,
					   const struct rl_rule *rule,
					   __u32 rule_id, __u32 *zero, __u64 len,
					   __u64 now)
{
	int pass = fate == FATE_PASS;

	if (fate == FATE_BAN && rule)
		ban_source(rule, key, now);
	if (fate == FATE_BANNED)
		cnt->banned_pkts++;
	if (src) {
		if (pass) {
			src->passed_pkts++;
			src->passed_bytes += len;
		} else {
			src->dropped_pkts++;
			src->dropped_bytes += len;
		}
		source_event(src, key, pass, now, cnt);
	} else if (pass) {
		cnt->untracked_pkts++;
	} else {
		count_refused(key, len, now);
	}
	if (rule) {
		/* the key in the program's `zero` slot, free by now: a slot
		 * of its own would cost the stack 16 bytes */
		*zero = rule_id;
		count_rule(zero, pass, len);
	}
}

/*
 * Account for the packet and return its action: the program's one exit,
 * as xdp-filter's `out:`. A packet that was not judged counts by its kind
 * (and passes or drops as --pass-malformed says); a SYN answered with a
 * SYN cookie counts as the interface's drop only (and in cookie_first()),
 * its returning ACK as the interface's pass only.
 */
static __always_inline int account(struct rl_counters *cnt, int fate,
				   struct rl_source *src,
				   const struct rl_key *key,
				   const struct rl_rule *rule, __u32 rule_id,
				   __u32 *zero, __u64 len, __u64 now)
{
	int pass = fate == FATE_PASS || fate == FATE_COOKIE;

	if (fate == FATE_SENT) {
		/* answered in the host's place: the SYN never reaches its
		 * stack, so it counts as dropped, in the totals only (as a
		 * cookie's ACK counts as passed), and again in cookies_sent */
		cnt->dropped_pkts++;
		cnt->dropped_bytes += len;
		return XDP_TX;
	}
	if (fate == FATE_NON_IP) {
		cnt->non_ip_pkts++;
		pass = 1;
	} else if (fate == FATE_ENCAP || fate == FATE_MALFORMED) {
		if (fate == FATE_ENCAP)
			cnt->encap_pkts++;
		else
			cnt->malformed_pkts++;
		pass = settings.flags & RL_F_PASS_MALFORMED;
	} else if (fate != FATE_COOKIE) {
		account_judged(cnt, fate, src, key, rule, rule_id, zero,
			       len, now);
	}
	if (pass) {
		cnt->passed_pkts++;
		cnt->passed_bytes += len;
		return XDP_PASS;
	}
	cnt->dropped_pkts++;
	cnt->dropped_bytes += len;
	return (settings.flags & RL_F_DRY_RUN) ? XDP_PASS : XDP_DROP;
}

/*
 * The XDP program: parse (include/parse.h), classify (the source's entry,
 * its ban, its rule and scope, whether it is verified or proves itself),
 * verdict(), account(): every path ends at `out:`.
 */
SEC("xdp")
int xdp_ratelimit(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 len = data_end - data;
	const struct rl_rule *rule = NULL;
	struct rl_source *src = NULL;
	struct rl_counters *cnt;
	struct rl_config *cfg;
	struct rl_ban *ban;
	struct rl_key key;
	int how = 0, fate;
	__u32 zero = 0, rule_id = RL_NO_RULE, gen;
	__u64 now = 0;
	int kind;

	cnt = bpf_map_lookup_elem(&counters, &zero);
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cnt || !cfg)
		return XDP_PASS;	/* cannot happen: arrays */

	/* parse */
	kind = rl_parse_frame_tcp(data, data_end, &key, settings.v6_mask);
	if (kind & RL_PKT_MAY_TCP) {
		how = HOW_MAY_TCP;
		kind &= ~RL_PKT_MAY_TCP;
	}
	if (kind == RL_PKT_NON_IP) {
		fate = FATE_NON_IP;
		goto out;
	}
	if (kind == RL_PKT_ENCAP) {	/* unjudgeable: as malformed */
		fate = FATE_ENCAP;
		goto out;
	}
	if (kind == RL_PKT_MALFORMED) {
		fate = FATE_MALFORMED;
		goto out;
	}

	/* classify */
	now = rl_now(cfg);
	/* while a newcomer or aggregate budget refuses (refuse_first.bpf.h),
	 * a packet of a source never verified here that it refuses drops
	 * before its source is looked up, unless a cookie rule answers it
	 * or it is the ACK that proves the source: then it goes on
	 * verified, as the usual path would have it. Not with scoped rules, which judge past
	 * the rule's own budget (scope.bpf.h). */
	if (refusing(now) && !RL_READ(cfg->scopes_used)) {
		rule_id = refuse_first(&key, kind, now, cfg->rules_gen, len);
		if (rule_id != RL_NO_RULE) {
			rule = bpf_map_lookup_elem(&rules, &rule_id);
			fate = cookie_fate(ctx, rule, now);
			if (fate >= 0)
				goto out;
			if (fate == FATE_CHECKED)
				how |= HOW_COOKIE_BAD;
			if (!(how & HOW_MAY_TCP) ||
			    !prove_source(ctx, &key, now, how & HOW_COOKIE_BAD)) {
				fate = FATE_DROP;
				goto out;
			}
			how = HOW_MAY_TCP | HOW_VERIFIED;
			rule = NULL;
			rule_id = RL_NO_RULE;
		}
	}
	src = table_source(RL_TABLE_SOURCES, &key, now);
	/* --ban: a banned source drops, its window untouched */
	if (cfg->bans_used) {
		ban = source_ban(&key);
		if (ban && rl_ban_holds(ban, now)) {
			fate = FATE_BANNED;
			goto out;
		}
		if (ban)
			ban_ended(ban, &key, now);
	}
	gen = cfg->rules_gen;	/* one snapshot for the whole verdict */
	rule_id = find_rule(src, &key, kind, gen);
	if (RL_READ(cfg->scopes_used) && !scope_skipped(ctx, cfg)) {
		__u32 scoped = scoped_rule(ctx, &key, rule_id, kind == RL_PKT_V6);

		if (scoped != RL_NO_RULE) {
			if (scoped & RL_SCOPED_COVERED)
				how |= HOW_COVERED |
				       (rule_id & (RL_MAX_RULES - 1)) << HOW_COVER_SHIFT;
			rule_id = scoped & ~RL_SCOPED_COVERED;
			how |= HOW_SCOPED;
		}
	}
	if (rule_id != RL_NO_RULE) {
		rule = bpf_map_lookup_elem(&rules, &rule_id);
		if (rule && !(rule->flags & RL_RULE_F_USED)) {
			rule = NULL;
			/* keep the branch: clang would otherwise mask the
			 * pointer, which the verifier refuses */
			barrier_var(rule);
		}
	}
	/* verification costs a lookup only to rules that read it (and to a
	 * scoped rule's packet whose covering rule has a newcomer budget),
	 * and, under any rule, to a TCP segment: the index then knows the
	 * verified clients whatever their rule, so that eviction keeps them
	 * (and a verified one's segment looks for no proof, a lookup of
	 * `synacks` spared; a source's verification is kept in its entry for
	 * a TTL). --syn-cookies: an unverified source's SYN is answered with a
	 * cookie, and its ACK returning a valid one passes (cookie.bpf.h);
	 * past the SYN-ACK budget, or any other packet, judged as before.
	 * The ACK that proves a source, and a ban's count, are looked for in
	 * one call (verified.bpf.h); a source proved above is verified */
	if (rule && ((how & HOW_MAY_TCP) || reads_verified(rule, how))) {
		if ((how & HOW_VERIFIED) || source_verified(src, &key, now)) {
			how |= HOW_VERIFIED;
		} else if (reads_verified(rule, how)) {
			fate = cookie_fate(ctx, rule, now);
			if (fate >= 0)
				goto out;
			if (fate == FATE_CHECKED)
				how |= HOW_COOKIE_BAD;
		}
	}
	if (rule && (how & HOW_MAY_TCP))
		how |= proof_and_proven(ctx, &key, rule_id, now, how);
	/* judged in the scoped rule's window of the source: its key from
	 * here on (ban_source() bans the source itself) */
	if (how & HOW_SCOPED) {
		rl_scoped_key(&key, &key, rule_id, kind == RL_PKT_V6);
		src = table_source(RL_TABLE_SOURCES, &key, now);
		if (src && (how & HOW_VERIFIED))
			window_verified(src, &key, now);
		/* from here on judged as any source: one path for the
		 * verifier to walk, not two */
		how &= ~HOW_SCOPED;
	}
	/* unverified, it pays the covering rule's newcomer budget before
	 * the scoped rule judges it; refused there, it takes no entry.
	 * Counted there at once, not once every window passed it: the
	 * covering rule carried to the end would double the paths the
	 * verifier walks. */
	if ((how & HOW_COVERED) && !(how & HOW_VERIFIED)) {
		struct rl_budget nb;

		if (judge_rule_window(cover_budget(how_cover(how), &nb), &nb,
				      now, len, gen) != RL_FITS) {
			fate = FATE_DROP;
			goto out;
		}
		cover_commit(how_cover(how), len);
		how |= HOW_PAID;
	}
	how &= ((1 << HOW_COVER_SHIFT) - 1) &
	       ~(HOW_COVERED | HOW_COOKIE_BAD | HOW_MAY_TCP);

	fate = verdict(&src, &key, how, rule, rule_id, now, len, gen, cnt);
out:
	return account(cnt, fate, src, &key, rule, rule_id, &zero, len, now);
}

/* A segment the host sends from no socket: forwarded or bridged, or a
 * SYN-ACK carrying the kernel's own SYN cookie (cookie_check.bpf.h), whose
 * headers are in the linear part, as the kernel builds it. A function of
 * its own: its locals stay apart from the socket path's. */
static __noinline int no_socket_segment(struct __sk_buff *skb)
{
	struct rl_config *cfg;
	struct rl_flow f;
	struct rl_seg seg;
	__u32 zero = 0;

	__u8 *tcp, ws;

	tcp = rl_parse_tcp((void *)(long)skb->data, (void *)(long)skb->data_end,
			   &f, 1, &seg);
	if (!tcp || (seg.flags & (RL_TCP_SYN | RL_TCP_ACK)) != (RL_TCP_SYN | RL_TCP_ACK))
		return 0;
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (cfg)
		kernel_cookies_from(rl_now(cfg));
	ws = 1 + rl_tcp_wscale(tcp, (void *)(long)skb->data_end, seg.doff);
	if (kernel_cookie_wscale[f.host_port] != ws)
		kernel_cookie_wscale[f.host_port] = ws;
	return 0;
}

/*
 * The egress hook (tc clsact, on the interface and every --replies-via
 * one), for the segments the host's own sockets send (a forwarded or
 * bridged skb has no socket): a SYN-ACK is recorded for the peer's ACK to
 * prove (include/verified.h); a segment of an established full socket,
 * neither SYN nor RST, renews its peer's verification and, once a rule
 * bans, the window it advertises. It never changes a packet or its fate,
 * and lets the filters after it run (TC_ACT_UNSPEC).
 */
SEC("tc")
int rl_egress(struct __sk_buff *skb)
{
	struct rl_counters *cnt;
	struct rl_config *cfg;
	struct bpf_sock *sk;
	struct rl_flow f;
	struct rl_seg seg;
	struct rl_key key;
	__u32 zero = 0;
	__u8 *tcp;
	__u64 now;

	sk = skb->sk;
	if (!sk) {
		/* forwarded or bridged; or the kernel's SYN cookie */
		no_socket_segment(skb);
		return TC_ACT_UNSPEC;
	}
	tcp = rl_parse_tcp((void *)(long)skb->data, (void *)(long)skb->data_end,
			   &f, 1, &seg);
	if (!tcp) {
		/* headers beyond the linear part: pull them once */
		if (skb->len <= skb->data_end - skb->data ||
		    bpf_skb_pull_data(skb, skb->len < 128 ? skb->len : 128))
			return TC_ACT_UNSPEC;
		tcp = rl_parse_tcp((void *)(long)skb->data,
				   (void *)(long)skb->data_end, &f, 1, &seg);
		if (!tcp)
			return TC_ACT_UNSPEC;
	}
	if ((seg.flags & (RL_TCP_SYN | RL_TCP_ACK)) == (RL_TCP_SYN | RL_TCP_ACK)) {
		record_synack(&f, &seg, tcp, (void *)(long)skb->data_end);
		return TC_ACT_UNSPEC;
	}
	if (seg.flags & (RL_TCP_SYN | RL_TCP_RST))
		return TC_ACT_UNSPEC;
	/* a request, TIME_WAIT or control socket's segment proves nothing */
	sk = bpf_sk_fullsock(sk);
	if (!sk || sk->type != 1 /* SOCK_STREAM */ || sk->protocol != 6 /* TCP */ ||
	    !rl_tcp_established(sk->state))
		return TC_ACT_UNSPEC;
	cnt = bpf_map_lookup_elem(&counters, &zero);
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cnt || !cfg)
		return TC_ACT_UNSPEC;	/* cannot happen: arrays */
	now = rl_now(cfg);
	cnt->replies++;
	peer_key(&key, &f);
	mark_verified(&key, now, cnt, 0);
	if (RL_READ(cfg->bans_used))
		mark_answered(&f, &seg, now);
	return TC_ACT_UNSPEC;
}
