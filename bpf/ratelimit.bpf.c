// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit: per-source sliding-window rate limiting at the driver.
 * Semantics: xdp-ratelimit(8) SEMANTICS. The program reads as parse
 * (include/parse.h), classify (rule.bpf.h, ban.bpf.h, refused.bpf.h),
 * judge (judge.bpf.h: the window of include/window.h, the cross-CPU budget
 * of include/quota.h; newcomer.bpf.h) and account (the counters, events in
 * report.bpf.h). Each bpf/NAME.bpf.h holds one job; every map is in maps.bpf.h.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "ratelimit.h"
#include "parse.h"
#include "run_config.bpf.h"
#include "maps.bpf.h"
#include "clock.bpf.h"
#include "source.bpf.h"
#include "cpu_sum.bpf.h"
#include "history.bpf.h"
#include "judge.bpf.h"
#include "report.bpf.h"
#include "newcomer.bpf.h"
#include "ban.bpf.h"
#include "refused.bpf.h"
#include "rule.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Count a passed packet in a source's window that judge() did not roll. */
static __always_inline void count_unjudged(struct rl_state *st, __u64 now,
					   __u64 len, const struct rl_key *key)
{
	roll(st, now, key, 0);
	rl_quota_commit(st, len);
}

/* Is the packet within the source's and the rule's aggregate budgets, and,
 * for a new source, the rule's newcomer budget? Counts it in every window
 * it was judged in when it is; a dropped packet counts in none. */
static __always_inline int within_quota(struct rl_source *src,
					const struct rl_key *key,
					const struct rl_rule *rule,
					__u32 rule_id, __u64 now, __u64 len,
					__u32 gen)
{
	struct rl_budget sb = { rule->pkt_budget, rule->byte_budget };
	struct rl_budget ab = { rule->agg_pkt_budget, rule->agg_byte_budget };
	struct rl_budget nb = rl_newcomer_budget(rule);
	__u32 slot = rl_budget_slot(rule_id, rule);
	int src_limited = rl_budget_limited(&sb);
	struct rl_state *agg = NULL, *nw = NULL;

	if (src_limited) {
		if (src) {
			if (judge(&src->st, &sb, now, len, gen, key, 0) != RL_FITS) {
				/* --ban; a block bans nobody */
				if (!rl_budget_blocks(&sb, len))
					ban_source(rule, key, now);
				return 0;
			}
		} else if (rl_budget_blocks(&sb, len)) {
			/* untracked: judged as a fresh window */
			return 0;
		}
	}
	/* newcomer budget: new sources also fit it */
	if (newcomer_applies(&nb, src, key, now) &&
	    !newcomer_fits(&nb, slot, now, len, gen, &nw))
		return 0;
	if (rl_budget_limited(&ab)) {
		agg = bpf_map_lookup_elem(&aggregates, &slot);
		if (agg && judge_rule_window(slot, &ab, now, len, gen) != RL_FITS)
			return 0;
	}
	if (src && src_limited)
		rl_quota_commit(&src->st, len);
	else if (src)
		count_unjudged(&src->st, now, len, key);
	if (agg)
		rl_quota_commit(agg, len);
	if (nw)
		rl_quota_commit(nw, len);
	return 1;
}

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
	struct rl_key key;
	__u32 zero = 0, rule_id;
	__u64 now;
	int kind, pass;

	cnt = bpf_map_lookup_elem(&counters, &zero);
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cnt || !cfg)
		return XDP_PASS;	/* cannot happen: arrays */

	/* read through the volatile: a plain pointer to the const settings
	 * would let the compiler fold in their initial value */
	__u32 v6_mask[4] = { settings.v6_mask[0], settings.v6_mask[1],
			     settings.v6_mask[2], settings.v6_mask[3] };

	kind = rl_parse_frame(data, data_end, &key, v6_mask);
	if (kind == RL_PKT_NON_IP) {
		cnt->non_ip_pkts++;
		pass = 1;
		goto out;
	}
	if (kind == RL_PKT_ENCAP) {	/* unjudgeable: as malformed */
		cnt->encap_pkts++;
		pass = settings.flags & RL_F_PASS_MALFORMED;
		goto out;
	}
	if (kind == RL_PKT_MALFORMED) {
		cnt->malformed_pkts++;
		pass = settings.flags & RL_F_PASS_MALFORMED;
		goto out;
	}

	now = rl_now(cfg);
	src = bpf_map_lookup_elem(&sources, &key);
	if (src)
		own_source(src, &key, now);
	/* --ban: a banned source drops, its window untouched */
	if (cfg->bans_used && source_banned(&key, now)) {
		cnt->banned_pkts++;
		pass = 0;
		if (src)
			goto count_source;
		count_refused(&key, len, cnt, now);
		goto out;
	}
	rule_id = find_rule(src, &key, kind, cfg->rules_gen);
	if (rule_id != RL_NO_RULE) {
		rule = bpf_map_lookup_elem(&rules, &rule_id);
		if (rule && !(rule->flags & RL_RULE_F_USED)) {
			rule = NULL;
			/* keep the branch: clang would otherwise mask the
			 * pointer, which the verifier refuses */
			barrier_var(rule);
		}
	}
	if (!src) {
		if (rule && refused_untracked(rule, rule_id, now, len,
					      cfg->rules_gen)) {
			count_refused(&key, len, cnt, now);
			pass = 0;
			goto out;
		}
		src = new_source_state(&key, cnt, rule_id, cfg->rules_gen, now);
		if (!src)
			cnt->untracked_pkts++;
	}

	if (rule) {
		pass = within_quota(src, &key, rule, rule_id, now, len,
				    cfg->rules_gen);
	} else {
		/* not limited, still counted (and shown in window_*) */
		pass = 1;
		if (src)
			count_unjudged(&src->st, now, len, &key);
	}
count_source:
	if (src) {
		if (pass) {
			src->passed_pkts++;
			src->passed_bytes += len;
		} else {
			src->dropped_pkts++;
			src->dropped_bytes += len;
		}
		source_event(src, &key, pass, now, cnt);
	}
out:
	if (pass) {
		cnt->passed_pkts++;
		cnt->passed_bytes += len;
		return XDP_PASS;
	}
	cnt->dropped_pkts++;
	cnt->dropped_bytes += len;
	return (settings.flags & RL_F_DRY_RUN) ? XDP_PASS : XDP_DROP;
}
