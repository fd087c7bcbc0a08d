/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Cross-CPU sums: what the other CPUs, the shared history and the other
 * hosts of a fleet hold of a budget (include/quota.h, include/remote.h).
 * bpf_loop callbacks, one per map, so that the map is a constant the
 * verifier knows, not a pointer loaded from the stack.
 */
#ifndef RL_CPU_SUM_BPF_H
#define RL_CPU_SUM_BPF_H

#include "maps.bpf.h"
#include "quota.h"
#include "remote.h"
#include "source.bpf.h"
#include "cpus.bpf.h"

struct sum_ctx {
	struct rl_usage acc;
	__u64 now;
	__u64 bucket;
	__u32 self;
	__u32 gen;
	__u32 source;	/* the budget is a source's (key) in table RL_TABLE_*,
			 * or 0: an aggregate's (rule_id) */
	/* 1 + the highest CPU to read (include/cpus.h): the loop runs to
	 * the possible CPUs' count, a constant the verifier knows (a count
	 * it does not know made it walk the program's paths twice over),
	 * and stops here */
	__u32 end;
	/* a source's slot in `sources` (RL_NO_SLOT: none), found again
	 * once per refresh, not carried from the packet's lookup: that would
	 * cost every path of the program stack */
	int slot;
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

	if (cpu >= c->end)
		return 1;
	if (cpu == c->self || !cpus_joined(cpu))
		return 0;
	if (c->slot < 0)
		return 1;
	o = bpf_map_lookup_percpu_elem(&sources, &c->slot, cpu);
	if (o && owned_by(o, &c->key))
		sum_one(c, &o->st);
	return 0;
}

static long sum_newcomer_cpu(__u32 cpu, struct sum_ctx *c)
{
	struct rl_source *o;

	if (cpu >= c->end)
		return 1;
	if (cpu == c->self || !cpus_joined(cpu))
		return 0;
	o = bpf_map_lookup_percpu_elem(&newcomers, &c->key, cpu);
	if (o && owned_by(o, &c->key))
		sum_one(c, &o->st);
	return 0;
}

static long sum_aggregate_cpu(__u32 cpu, struct sum_ctx *c)
{
	struct rl_state *o;

	if (cpu >= c->end)
		return 1;
	if (cpu == c->self || !cpus_joined(cpu))
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
 * newest and past buckets and leases (of the CPUs that joined: only they
 * can hold any, include/cpus.h; read after the caller's barrier), then the budget's history (the older
 * buckets of every CPU, this one's included) if any CPU's marker says it
 * holds part of the window, then, for a source, the other hosts' share
 * (fleet sync). The one place where the others' usage is summed.
 * `of_source`: a constant, a source's budget (in table c->source) or a
 * rule window's, so that the verifier walks only the paths of one kind.
 */
static __always_inline void sum_others(struct sum_ctx *c, int of_source)
{
	struct rl_history *h = NULL;

	c->end = cpus_end();
	if (!of_source) {
		bpf_loop(settings.ncpus, sum_aggregate_cpu, c, 0);
		if (c->acc.hist) {
			h = bpf_map_lookup_elem(&agg_history, &c->rule_id);
			rl_usage_history(&c->acc, h, c->bucket, settings.nbuckets);	/* NULL: closed */
		}
		return;
	}
	if (c->source == RL_TABLE_NEWCOMERS)
		bpf_loop(settings.ncpus, sum_newcomer_cpu, c, 0);
	else
		bpf_loop(settings.ncpus, sum_source_cpu, c, 0);
	if (c->acc.hist) {
		if (c->source == RL_TABLE_NEWCOMERS)
			h = bpf_map_lookup_elem(&new_history, &c->key);
		else
			h = bpf_map_lookup_elem(&history, &c->key);
		rl_usage_history(&c->acc, h, c->bucket, settings.nbuckets);	/* NULL: closed */
	}
	sum_remote(c);
}
#endif /* RL_CPU_SUM_BPF_H */
