// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit: per-source sliding-window rate limiting at the driver.
 * Semantics: xdp-ratelimit(8) SEMANTICS; the window is include/window.h, the
 * cross-CPU budget include/quota.h, the parser include/parse.h.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "ratelimit.h"
#include "window.h"
#include "quota.h"
#include "parse.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Fixed at load by the loader (user/loader.c); a copy sits in `config`. */
const volatile struct rl_settings settings = {
	.window_ns = RL_DEFAULT_WINDOW_NS,
	.bucket_ns = RL_DEFAULT_WINDOW_NS / RL_DEFAULT_BUCKETS,
	.nbuckets = RL_DEFAULT_BUCKETS,
	.ncpus = 1,
	.v6_mask = { ~0U, ~0U, 0, 0 },
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rl_config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rl_counters);
} counters SEC(".maps");

/* max_entries is set by the loader from --max-sources (user/loader.c). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
	__type(key, struct rl_key);
	__type(value, struct rl_source);
} sources SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_MAX_RULES);
	__type(key, __u32);
	__type(value, struct rl_rule);
} rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_lpm_v4);
	__type(value, __u32);
} rules_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_lpm_v6);
	__type(value, __u32);
} rules_v6 SEC(".maps");

/* A rule's aggregate budget, indexed like `rules`. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RL_MAX_RULES);
	__type(key, __u32);
	__type(value, struct rl_state);
} aggregates SEC(".maps");

/* Drops of sources refused before they took a `sources` entry: a small
 * table of their own, so refused packets never evict a tracked source. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RL_REFUSED_ENTRIES);
	__type(key, struct rl_key);
	__type(value, struct rl_refused);
} refused SEC(".maps");

/* Value for new sources: update needs a full value, too big for the stack. */
static const struct rl_source new_source;

static __always_inline __u64 rl_now(const struct rl_config *cfg)
{
#ifdef RL_TEST_CLOCK
	/* test build only: BPF_PROG_TEST_RUN cannot move time */
	if (cfg->test_now_ns)
		return cfg->test_now_ns;
#endif
	return bpf_ktime_get_ns();
}

/* ---- cross-CPU sum (bpf_loop callbacks: one per map, so the map is a
 * constant the verifier knows, not a pointer loaded from the stack) ---- */

struct sum_ctx {
	struct rl_usage acc;
	__u64 now;
	__u64 start;
	__u32 self;
	__u32 gen;
	union {
		struct rl_key key;
		__u32 rule_id;
	};
};

static __always_inline void sum_one(struct sum_ctx *c, const struct rl_state *o)
{
	rl_usage_add(&c->acc, o, c->now, c->start, settings.bucket_ns,
		     settings.nbuckets, c->gen);
}

static long sum_source_cpu(__u32 cpu, struct sum_ctx *c)
{
	struct rl_source *o;

	if (cpu == c->self)
		return 0;
	o = bpf_map_lookup_percpu_elem(&sources, &c->key, cpu);
	if (o)
		sum_one(c, &o->st);
	return 0;
}

static long sum_aggregate_cpu(__u32 cpu, struct sum_ctx *c)
{
	struct rl_state *o;

	if (cpu == c->self)
		return 0;
	o = bpf_map_lookup_percpu_elem(&aggregates, &c->rule_id, cpu);
	if (o)
		sum_one(c, o);
	return 0;
}

/* What the other CPUs hold of the budget in `c`, summed into c->acc. */
static __always_inline void sum_others(struct sum_ctx *c, int source)
{
	if (source)
		bpf_loop(settings.ncpus, sum_source_cpu, c, 0);
	else
		bpf_loop(settings.ncpus, sum_aggregate_cpu, c, 0);
}

/*
 * Judge one packet against one budget held per CPU in `st`. `key` is the
 * source's key (for the source budget) or NULL (for rule_id's aggregate).
 */
static __always_inline int judge(struct rl_state *st, const struct rl_budget *b,
				 __u64 now, __u64 len, __u32 gen,
				 const struct rl_key *key, __u32 rule_id)
{
	struct sum_ctx c = {
		.now = now,
		.gen = gen,
	};
	int ans;

	rl_window_roll(&st->win, now, settings.bucket_ns, settings.nbuckets);
	ans = rl_quota_fast(st, b, len, gen);
	if (ans != RL_ASK)
		return ans;
	c.start = st->win.start;
	c.self = bpf_get_smp_processor_id();
	if (key)
		c.key = *key;
	else
		c.rule_id = rule_id;
	sum_others(&c, key != NULL);
	ans = rl_quota_refresh(st, b, &c.acc, len, gen, settings.ncpus);
	if (ans != RL_FITS)
		return ans;
	if (settings.ncpus > 1) {
		/* The lease is written; a full barrier (a fetching atomic)
		 * makes it visible before the others are read again. */
		if (__sync_fetch_and_add(&st->lease.start, 0) != st->win.start)
			return RL_OVER;	/* cannot happen: only we write it */
		__builtin_memset(&c.acc, 0, sizeof(c.acc));
		sum_others(&c, key != NULL);
	}
	return rl_quota_confirm(st, b, &c.acc, len);
}

/* A new source's state (an evicted source starts afresh), its rule cached. */
static __always_inline struct rl_source *new_source_state(const struct rl_key *key,
							  struct rl_counters *cnt,
							  __u32 rule_id, __u32 gen)
{
	struct rl_source *src;

	bpf_map_update_elem(&sources, key, &new_source, BPF_NOEXIST);
	src = bpf_map_lookup_elem(&sources, key);
	if (!src)
		return NULL;
	cnt->new_sources++;
	src->rule_gen = gen;
	src->rule_id = rule_id;
	return src;
}

/*
 * Would the first packet of a source not in the table be dropped anyway?
 * Then it is dropped without taking a table entry: a spoofed flood against
 * a blocked prefix or a full aggregate budget cannot evict the sources that
 * keep sending (their windows stay in force).
 */
static __always_inline int refused_untracked(const struct rl_rule *rule,
					     __u32 rule_id, __u64 now,
					     __u64 len, __u32 gen)
{
	struct rl_budget ab = { rule->agg_pkt_budget, rule->agg_byte_budget };
	struct rl_state *agg;

	if (rule->pkt_budget == 0 ||
	    (rule->byte_budget != RL_UNLIMITED && rule->byte_budget < len))
		return 1;
	if (!rl_budget_limited(&ab))
		return 0;
	agg = bpf_map_lookup_elem(&aggregates, &rule_id);
	return agg && judge(agg, &ab, now, len, gen, NULL, rule_id) != RL_FITS;
}

/* May this CPU add an entry to `refused` now? (RL_REFUSED_NEW_PER_PERIOD) */
static __always_inline int refused_insert_ok(struct rl_counters *cnt, __u64 now)
{
	__u64 period = now / RL_REFUSED_PERIOD_NS;

	if (cnt->refused_period != period) {
		cnt->refused_period = period;
		cnt->refused_inserts = 0;
	}
	if (cnt->refused_inserts >= RL_REFUSED_NEW_PER_PERIOD)
		return 0;
	cnt->refused_inserts++;
	return 1;
}

/* Count a refused newcomer's drop against its address (xdp-ratelimit(8):
 * a dropped packet counts as dropped for its source). Shared entries, so atomic. */
static __always_inline void count_refused(const struct rl_key *key, __u64 len,
					  struct rl_counters *cnt, __u64 now)
{
	struct rl_refused first = { 1, len }, *r;

	r = bpf_map_lookup_elem(&refused, key);
	if (!r) {
		if (!refused_insert_ok(cnt, now)) {
			cnt->refused_unlisted_pkts++;
			return;
		}
		if (!bpf_map_update_elem(&refused, key, &first, BPF_NOEXIST))
			return;
		/* another CPU inserted it first */
		r = bpf_map_lookup_elem(&refused, key);
		if (!r) {
			cnt->refused_unlisted_pkts++;
			return;
		}
	}
	__sync_fetch_and_add(&r->dropped_pkts, 1);
	__sync_fetch_and_add(&r->dropped_bytes, len);
}

/* The rule covering the source; the LPM trie is only consulted when the
 * rules changed since the source last resolved it, or while they change. */
static __always_inline __u32 find_rule(struct rl_source *src,
				       const struct rl_key *key, int kind,
				       __u32 gen)
{
	__u32 *id;

	if (src && src->rule_gen == gen && !RL_RULES_CHANGING(gen))
		return src->rule_id;
	if (kind == RL_PKT_V4) {
		struct rl_lpm_v4 k = { .prefixlen = 32 };

		__builtin_memcpy(k.addr, &key->addr[12], 4);
		id = bpf_map_lookup_elem(&rules_v4, &k);
	} else {
		struct rl_lpm_v6 k = { .prefixlen = 128 };

		__builtin_memcpy(k.addr, key->addr, 16);
		id = bpf_map_lookup_elem(&rules_v6, &k);
	}
	if (src) {
		src->rule_gen = gen;
		src->rule_id = id ? *id : RL_NO_RULE;
	}
	return id ? *id : RL_NO_RULE;
}

/* Count a passed packet in a window that judge() did not roll. */
static __always_inline void count_unjudged(struct rl_state *st, __u64 now,
					   __u64 len)
{
	rl_window_roll(&st->win, now, settings.bucket_ns, settings.nbuckets);
	rl_quota_commit(st, len);
}

/* Is the packet within the source's and the rule's aggregate budgets?
 * Counts it in both windows when it is; a dropped packet counts in none. */
static __always_inline int within_quota(struct rl_source *src,
					const struct rl_key *key,
					const struct rl_rule *rule,
					__u32 rule_id, __u64 now, __u64 len,
					__u32 gen)
{
	struct rl_budget sb = { rule->pkt_budget, rule->byte_budget };
	struct rl_budget ab = { rule->agg_pkt_budget, rule->agg_byte_budget };
	int src_limited = rl_budget_limited(&sb);
	struct rl_state *agg = NULL;

	if (src_limited) {
		if (src) {
			if (judge(&src->st, &sb, now, len, gen, key, 0) != RL_FITS)
				return 0;
		} else if (sb.pkts == 0 || (sb.bytes != RL_UNLIMITED && sb.bytes < len)) {
			/* untracked: judged as a fresh window */
			return 0;
		}
	}
	if (rl_budget_limited(&ab)) {
		agg = bpf_map_lookup_elem(&aggregates, &rule_id);
		if (agg && judge(agg, &ab, now, len, gen, NULL, rule_id) != RL_FITS)
			return 0;
	}
	if (src && src_limited)
		rl_quota_commit(&src->st, len);
	else if (src)
		count_unjudged(&src->st, now, len);
	if (agg)
		rl_quota_commit(agg, len);
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
	if (kind == RL_PKT_MALFORMED) {
		cnt->malformed_pkts++;
		pass = settings.flags & RL_F_PASS_MALFORMED;
		goto out;
	}

	now = rl_now(cfg);
	src = bpf_map_lookup_elem(&sources, &key);
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
		src = new_source_state(&key, cnt, rule_id, cfg->rules_gen);
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
			count_unjudged(&src->st, now, len);
	}
	if (src) {
		if (pass) {
			src->passed_pkts++;
			src->passed_bytes += len;
		} else {
			src->dropped_pkts++;
			src->dropped_bytes += len;
		}
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
