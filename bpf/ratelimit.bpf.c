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
#include "newcomer.h"
#include "events.h"
#include "parse.h"
#include "remote.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Fixed at load by the loader (user/loader.c); a copy sits in `config`. */
const volatile struct rl_settings settings = {
	.window_ns = RL_DEFAULT_WINDOW_NS,
	.bucket_ns = RL_DEFAULT_WINDOW_NS / RL_DEFAULT_BUCKETS,
	.nbuckets = RL_DEFAULT_BUCKETS,
	.ncpus = 1,
	.v6_mask = { ~0U, ~0U, 0, 0 },
};

/* Set only by the benchmark (bench/cost.c): the program without events,
 * the baseline their cost is measured against. */
const volatile __u32 no_events;

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

/* A rule's aggregate and newcomer windows, indexed by its budget slot
 * (rl_agg_index, rl_new_index in include/newcomer.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RL_AGGREGATE_ENTRIES);
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

/* Banned sources and until when: one entry for every CPU to see. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RL_BAN_ENTRIES);
	__type(key, struct rl_key);
	__type(value, struct rl_ban);
} bans SEC(".maps");

/* The older buckets of each source, all CPUs together (struct
 * rl_history): shared, written only when a CPU rolls a third bucket of one
 * window (its past bucket goes here). max_entries is set by the loader:
 * that of `sources`. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
	__type(key, struct rl_key);
	__type(value, struct rl_history);
} history SEC(".maps");

/* The older buckets of each rule window, indexed like `aggregates`. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_AGGREGATE_ENTRIES);
	__type(key, __u32);
	__type(value, struct rl_history);
} agg_history SEC(".maps");

/* What the program reports (include/events.h), read by xdp-ratelimit events. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RL_EVENTS_RING_BYTES);
} events SEC(".maps");

/* What the other hosts of the fleet passed per source (include/remote.h),
 * written by the sync agent; max_entries is set by the loader (the
 * sources the table holds). Not preallocated: a host without an agent
 * pays no memory, and a replaced element is freed only after its readers. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_key);
	__type(value, struct rl_remote);
} remote SEC(".maps");

/* The state of the interface's sync agent, for `status`: written by the
 * agent (user/sync_status.c), never by the program; here so that it is
 * pinned with the others, with its BTF. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rl_sync_state);
} sync SEC(".maps");

/* Values for new entries: an update needs a full value, too big for the
 * stack. */
static const struct rl_source new_source;
static const struct rl_history new_history;

static __always_inline __u64 rl_now(const struct rl_config *cfg)
{
#ifdef RL_TEST_CLOCK
	/* test build only: BPF_PROG_TEST_RUN cannot move time */
	if (cfg->test_now_ns)
		return cfg->test_now_ns;
#endif
	/* a constant at load: the verifier drops the other branch */
	if (settings.flags & RL_F_COARSE_CLOCK)
		return bpf_ktime_get_coarse_ns();
	return bpf_ktime_get_ns();
}

/* Is `v` (this CPU's value, or another's) the value of `key`? A value the
 * kernel handed to a new key while a CPU still finished a packet of the old
 * key holds that key, not this one (struct rl_source `owner`). */
static __always_inline int owned_by(const struct rl_source *v,
				    const struct rl_key *key)
{
	__u64 k[2], o[2];

	__builtin_memcpy(k, key, sizeof(k));
	o[0] = RL_READ(((const __u64 *)&v->owner)[0]);
	o[1] = RL_READ(((const __u64 *)&v->owner)[1]);
	return o[0] == k[0] && o[1] == k[1];
}

/* This CPU's value for `key`, reset if it holds another key's state (or
 * none: the source is new on this CPU). */
static __always_inline void own_source(struct rl_source *src,
				       const struct rl_key *key, __u64 now)
{
	if (owned_by(src, key))
		return;
	__builtin_memset(src, 0, sizeof(*src));
	__builtin_memcpy(&src->owner, key, sizeof(*key));
	src->created_ns = now;
}

/* ---- cross-CPU sum (bpf_loop callbacks: one per map, so the map is a
 * constant the verifier knows, not a pointer loaded from the stack) ---- */

struct sum_ctx {
	struct rl_usage acc;
	__u64 now;
	__u64 bucket;
	__u32 self;
	__u32 gen;
	__u32 source;	/* the budget is a source's (key), else an aggregate's */
	union {
		struct rl_key key;
		__u32 rule_id;
	};
};

static __always_inline void sum_one(struct sum_ctx *c, const struct rl_state *o)
{
	rl_usage_add(&c->acc, o, c->now, c->bucket, settings.bucket_ns,
		     settings.nbuckets, c->gen);
}

static long sum_source_cpu(__u32 cpu, struct sum_ctx *c)
{
	struct rl_source *o;

	if (cpu == c->self)
		return 0;
	o = bpf_map_lookup_percpu_elem(&sources, &c->key, cpu);
	if (o && owned_by(o, &c->key))
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

/*
 * Fleet sync: the other hosts' passes for the source, added to `acc` as
 * another CPU's (include/remote.h). A global function: verified once, and
 * what it adds is a bound to the caller, not 2^16 paths through the ring
 * that the lease arithmetic after it would have to tell apart.
 */
__noinline int remote_share(const struct rl_key *key, __u64 bucket,
			    struct rl_usage *acc)
{
	struct rl_remote *r;
	struct rl_key k;

	if (!key || !acc)
		return 0;	/* cannot happen: the caller's own pointers */
	/* the key on this stack: 6.1's verifier takes a global function's
	 * pointer argument as plain memory, not as a map key */
	k = *key;
	r = bpf_map_lookup_elem(&remote, &k);
	if (r)
		rl_remote_usage_add(acc, r, bucket, settings.nbuckets);
	return 0;
}

/* Only once an agent ran on this interface: until then a refresh pays a
 * config read, not a hash lookup. */
static __always_inline void sum_remote(struct sum_ctx *c)
{
	struct rl_config *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&config, &zero);
	if (cfg && RL_READ(cfg->remote_used))
		remote_share(&c->key, c->bucket, &c->acc);
}

/*
 * What the other CPUs hold of the budget in `c`, summed into c->acc: their
 * newest and past buckets and leases, then the budget's history (the older
 * buckets of every CPU, this one's included) if any CPU's marker says it
 * holds part of the window, then, for a source, the other hosts' share
 * (fleet sync). The one place where the others' usage is summed.
 */
static __always_inline void sum_others(struct sum_ctx *c, int source)
{
	struct rl_history *h = NULL;

	if (source)
		bpf_loop(settings.ncpus, sum_source_cpu, c, 0);
	else
		bpf_loop(settings.ncpus, sum_aggregate_cpu, c, 0);
	if (c->acc.hist) {
		if (source)
			h = bpf_map_lookup_elem(&history, &c->key);
		else
			h = bpf_map_lookup_elem(&agg_history, &c->rule_id);
		rl_usage_history(&c->acc, h, c->bucket, settings.nbuckets);	/* NULL: closed */
	}
	if (source)
		sum_remote(c);
}

/* A source's history, created empty if it has none yet; created again
 * while this CPU's marker `st` is live, the one it flushed into was
 * evicted (rl_hist_lost). NULL: the roll keeps the bucket (fails closed). */
static __always_inline struct rl_history *source_history(const struct rl_key *key,
							 const struct rl_state *st)
{
	struct rl_history *h = bpf_map_lookup_elem(&history, key);
	int created;

	if (h)
		return h;
	created = !bpf_map_update_elem(&history, key, &new_history, BPF_NOEXIST);
	h = bpf_map_lookup_elem(&history, key);
	if (h && created && rl_marker_live(st->flushed, st->win.bucket, settings.nbuckets))
		rl_hist_lost(h, rl_tag_index(st->flushed - 1, st->win.bucket));
	return h;
}

/*
 * A roll (include/window.h) as a global function: the verifier checks its
 * history compare-and-swap loops once, not at each call site. The history
 * is looked up only for a bucket that goes into it. `key`: the source's
 * (NULL: the rule window `idx` of `aggregates`).
 */
__noinline int roll_apply(struct rl_state *st, const struct rl_key *key,
			  __u32 idx, int plan, __u64 to)
{
	struct rl_history *h = NULL;
	struct rl_key k;

	if (!st)
		return 0;	/* cannot happen: the callers' own pointer */
	if (plan & RL_ROLL_FLUSH) {
		if (key) {
			k = *key;
			h = source_history(&k, st);
		} else {
			h = bpf_map_lookup_elem(&agg_history, &idx);
		}
	}
	rl_roll_apply(st, h, plan, to);
	return 0;
}

/* Move a budget's per-CPU state to `now` (a roll only when the bucket
 * changed: the common case is one comparison). */
static __always_inline void roll(struct rl_state *st, __u64 now,
				 const struct rl_key *key, __u32 idx)
{
	__u64 to = 0;
	int plan = rl_roll_plan(st, now, settings.bucket_ns, settings.nbuckets, &to);

	if (plan)
		roll_apply(st, key, idx, plan, to);
}

/*
 * The slow part of judge(): read the other CPUs, take a lease, publish it,
 * read them again and confirm it (include/quota.h). `c` (on the stack of
 * the function that calls bpf_loop, as bpf_loop requires) holds the
 * packet's time, the rules generation, this CPU's newest bucket and the
 * budget's key.
 */
static __always_inline int refresh(struct rl_state *st, const struct rl_budget *b,
				   struct sum_ctx *c, __u64 len)
{
	int ans;

	__builtin_memset(&c->acc, 0, sizeof(c->acc));
	rl_usage_self(&c->acc, st, c->bucket, settings.nbuckets);
	sum_others(c, c->source);
	ans = rl_quota_refresh(st, b, &c->acc, len, c->gen, settings.ncpus);
	if (ans != RL_FITS)
		return ans;
	if (settings.ncpus > 1) {
		/* The lease is written; a full barrier (a fetching atomic)
		 * makes it visible before the others are read again. */
		if (__sync_fetch_and_add(&st->win.bucket, 0) != c->bucket)
			return RL_OVER;	/* cannot happen: only we write it */
		__builtin_memset(&c->acc, 0, sizeof(c->acc));
		rl_usage_self(&c->acc, st, c->bucket, settings.nbuckets);
		sum_others(c, c->source);
	}
	return rl_quota_confirm(st, b, &c->acc, len);
}

/*
 * refresh() of a source's budget as a global function: the verifier checks
 * it once, not at each of its call sites (inlined there, the lease
 * arithmetic's paths multiplied to 700,000 of the 1,000,000 instructions it
 * allows).
 */
__attribute__((noinline)) int judge_refresh(struct rl_state *st,
					    const struct rl_budget *b,
					    const struct sum_ctx *in, __u64 len)
{
	struct sum_ctx c;

	if (!st || !b || !in)
		return RL_OVER;	/* cannot happen: the callers' own pointers */
	c = *in;	/* bpf_loop's context must be on this stack */
	return refresh(st, b, &c, len);
}

/*
 * Judge one packet against one budget held per CPU in `st`. `key` is the
 * source's key (for the source budget) or NULL (for rule_id's window in
 * `aggregates`, judged only inside judge_rule_window, itself a global
 * function: the refresh is inlined there, since a global function called
 * from it, with bpf_loop's callback, would nest the stack past 512 bytes).
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

	roll(st, now, key, rule_id);
	ans = rl_quota_fast(st, b, len, gen);
	if (ans != RL_ASK)
		return ans;
	if (rl_quota_over_alone(st, b, len, gen, settings.nbuckets))
		return RL_OVER;
	c.bucket = st->win.bucket;
	c.self = bpf_get_smp_processor_id();
	c.source = key != NULL;
	if (!key) {
		c.rule_id = rule_id;
		return refresh(st, b, &c, len);
	}
	c.key = *key;
	return judge_refresh(st, b, &c, len);
}

/*
 * judge() for a rule's window (`aggregates` entry idx; none: fits): a
 * global function, so the verifier checks it once, not at each of its
 * four call sites (inlined, the program exceeds the verifier's 1M
 * instructions). At most five arguments: the caller looks the window up
 * again to commit (an array lookup, inlined by the verifier).
 */
__noinline int judge_rule_window(__u32 idx, const struct rl_budget *b,
				 __u64 now, __u64 len, __u32 gen)
{
	struct rl_state *st = bpf_map_lookup_elem(&aggregates, &idx);

	if (!st || !b)
		return RL_FITS;
	return judge(st, b, now, len, gen, NULL, idx);
}

/* A new source's state (an evicted source starts afresh), its rule cached. */
static __always_inline struct rl_source *new_source_state(const struct rl_key *key,
							  struct rl_counters *cnt,
							  __u32 rule_id, __u32 gen,
							  __u64 now)
{
	struct rl_source *src;

	bpf_map_update_elem(&sources, key, &new_source, BPF_NOEXIST);
	src = bpf_map_lookup_elem(&sources, key);
	if (!src)
		return NULL;
	cnt->new_sources++;
	own_source(src, key, now);
	src->rule_gen = gen;
	src->rule_id = rule_id;
	return src;
}

/* ---- events (include/events.h) ---- */

/*
 * May this CPU report one more event at `now`? The flags to submit it
 * with, or -1 with the event counted lost: never waited for. The first
 * RL_EVENTS_WAKEUPS of a period may wake a follower that waits (only if
 * it read everything before); the rest never do, and it finds them when
 * it next polls: a flood costs no wakeups.
 */
static __always_inline long event_budget(struct rl_counters *cnt, __u64 now)
{
	__u64 rank = rl_period_take(&cnt->events_period, &cnt->events_sent, now,
				    RL_EVENTS_PERIOD_NS, RL_EVENTS_PER_PERIOD);

	if (!rank) {
		cnt->events_lost++;
		return -1;
	}
	return rank <= RL_EVENTS_WAKEUPS ? 0 : BPF_RB_NO_WAKEUP;
}

/* A record for an event in the ring, or NULL (full: counted lost). */
static __always_inline struct rl_event *event_reserve(__u32 type,
						      const struct rl_key *key,
						      __u64 now)
{
	struct rl_counters *cnt;
	struct rl_event *e;
	__u32 zero = 0;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		cnt = bpf_map_lookup_elem(&counters, &zero);
		if (cnt)
			cnt->events_lost++;
		return NULL;
	}
	e->time_ns = now;
	__builtin_memcpy(&e->key, key, sizeof(e->key));
	e->type = type;
	e->cpu = bpf_get_smp_processor_id();
	e->until_ns = 0;
	return e;
}

/* Report `limited` or `released` of source `key` on this CPU, naming
 * rule slot `rule_id` (RL_NO_RULE: none), within the budget event_budget
 * gave (`flags`). Global functions, these two: verified once, not on
 * every path that reaches them. */
__noinline int report_source(__u32 type, const struct rl_key *key,
			     __u32 rule_id, __u64 now, __u64 flags)
{
	const struct rl_rule *r = NULL;
	struct rl_event *e;

	if (!key)
		return 0;	/* cannot happen: the caller's key */
	e = event_reserve(type, key, now);
	if (!e)
		return 0;
	if (rule_id != RL_NO_RULE)
		r = bpf_map_lookup_elem(&rules, &rule_id);
	if (r && !(r->flags & RL_RULE_F_USED)) {
		r = NULL;	/* deleted since */
		barrier_var(r);
	}
	rl_event_rule(e, r);
	bpf_ringbuf_submit(e, flags);
	return 1;
}

/* Report `banned` or `unbanned` of source `key` under ban `b`, which
 * ends (or ended) at `until`. */
__noinline int report_ban(__u32 type, const struct rl_key *key,
			  const struct rl_ban *b, __u64 now, __u64 until)
{
	struct rl_counters *cnt;
	struct rl_event *e;
	__u32 zero = 0;
	long flags;

	if (!key || !b)
		return 0;	/* cannot happen: the caller's pointers */
	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!cnt)
		return 0;	/* cannot happen: an array */
	flags = event_budget(cnt, now);
	if (flags < 0)
		return 0;
	e = event_reserve(type, key, now);
	if (!e)
		return 0;
	rl_event_ban_rule(e, b);
	e->until_ns = until;
	bpf_ringbuf_submit(e, flags);
	return 1;
}

/* A packet of a tracked source, passed or dropped: limited or released?
 * The budget is checked here, so that a flood of events costs a counter,
 * not a call. */
static __always_inline void source_event(struct rl_source *src,
					 const struct rl_key *key, int pass,
					 __u64 now, struct rl_counters *cnt)
{
	__u32 type;
	long flags;

	if (no_events)
		return;
	type = rl_event_of_packet(&src->limited_ns, pass, now, settings.window_ns);
	if (type == RL_EVENT_NONE)
		return;
	flags = event_budget(cnt, now);
	if (flags >= 0)
		report_source(type, key, src->rule_id, now, flags);
}

/* ---- newcomer budget and bans (include/newcomer.h) ---- */

struct created_ctx {
	struct rl_key key;
	__u64 created;
	__u32 self;
};

static long created_cpu(__u32 cpu, struct created_ctx *c)
{
	struct rl_source *o;
	__u64 t;

	if (cpu == c->self)
		return 0;
	o = bpf_map_lookup_percpu_elem(&sources, &c->key, cpu);
	if (!o || !owned_by(o, &c->key))
		return 0;	/* unused there, or another key's leftovers */
	t = RL_READ(o->created_ns);	/* 0: that CPU is still setting it up */
	if (t && (__s64)(t - c->created) < 0)
		c->created = t;
	return 0;
}

/*
 * When the source's entry was set up: the earliest created_ns of the
 * CPUs whose value the source owns (struct rl_source). This CPU's own is
 * its first packet here, so only while that says "new" are the others
 * read; the earliest is kept in this CPU's created_ns, so a source
 * established on another CPU is looked up once here, not per packet.
 */
static __always_inline __u64 source_created(struct rl_source *src,
					    const struct rl_key *key, __u64 now)
{
	struct created_ctx c = { .created = src->created_ns };

	if (!rl_source_new(c.created, now, settings.window_ns))
		return c.created;
	c.key = *key;
	c.self = bpf_get_smp_processor_id();
	bpf_loop(settings.ncpus, created_cpu, &c, 0);
	src->created_ns = c.created;
	return c.created;
}

/* Must the packet fit the rule's newcomer budget `nb`? */
static __always_inline int newcomer_applies(const struct rl_budget *nb,
					    struct rl_source *src,
					    const struct rl_key *key, __u64 now)
{
	if (!rl_budget_limited(nb))
		return 0;
	return rl_newcomer_applies(nb, src != NULL,
				   src ? source_created(src, key, now) : 0, now,
				   settings.window_ns);
}

/* Judge a packet against the newcomer window of budget slot `slot`;
 * the window to commit to when it fits (NULL: the map has no entry). */
static __always_inline int newcomer_fits(const struct rl_budget *nb, __u32 slot,
					 __u64 now, __u64 len, __u32 gen,
					 struct rl_state **win)
{
	__u32 idx = rl_new_index(slot);

	*win = bpf_map_lookup_elem(&aggregates, &idx);
	return judge_rule_window(idx, nb, now, len, gen) == RL_FITS;
}

/* Does a ban hold the source? The first packet after a ban ended
 * reports `unbanned` (one CPU does: rl_ban_claim_end). */
static __always_inline int source_banned(const struct rl_key *key, __u64 now)
{
	struct rl_ban *b = bpf_map_lookup_elem(&bans, key);
	__u64 until;

	if (!b)
		return 0;
	if (rl_ban_holds(b, now))
		return 1;
	if (!no_events && rl_ban_claim_end(b, now, &until))
		report_ban(RL_EVENT_UNBANNED, key, b, now, until);
	return 0;
}

/* A drop for the source's own quota: banned on every CPU, if the rule
 * bans. A ban that cannot be stored leaves the source to its quota. */
static __always_inline void ban_source(const struct rl_rule *rule,
				       const struct rl_key *key, __u64 now)
{
	struct rl_ban b;

	if (!rule->ban_ns)
		return;
	rl_ban_make(&b, rule, now);
	if (!bpf_map_update_elem(&bans, key, &b, BPF_ANY) && !no_events)
		report_ban(RL_EVENT_BANNED, key, &b, now, b.until_ns);
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
	struct rl_budget nb = rl_newcomer_budget(rule);
	__u32 slot = rl_budget_slot(rule_id, rule->prefixlen);
	struct rl_state *nw;

	if (rule->pkt_budget == 0 ||
	    (rule->byte_budget != RL_UNLIMITED && rule->byte_budget < len))
		return 1;
	/* newcomer budget: refuses without an entry */
	if (rl_budget_limited(&nb) && !newcomer_fits(&nb, slot, now, len, gen, &nw))
		return 1;
	if (!rl_budget_limited(&ab))
		return 0;
	return judge_rule_window(slot, &ab, now, len, gen) != RL_FITS;
}

/* May this CPU add an entry to `refused` now? (its share of
 * RL_REFUSED_NEW_PER_PERIOD) */
static __always_inline int refused_insert_ok(struct rl_counters *cnt, __u64 now)
{
	return rl_period_take(&cnt->refused_period, &cnt->refused_inserts, now,
			      RL_REFUSED_PERIOD_NS,
			      rl_per_cpu_share(RL_REFUSED_NEW_PER_PERIOD,
					       settings.ncpus)) != 0;
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
	__u32 slot = rl_budget_slot(rule_id, rule->prefixlen);
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
