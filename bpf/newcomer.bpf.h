/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Newcomers: whether a packet must fit its rule's newcomer budget, and that
 * window's verdict (include/newcomer.h).
 */
#ifndef RL_NEWCOMER_BPF_H
#define RL_NEWCOMER_BPF_H

#include "maps.bpf.h"
#include "newcomer.h"
#include "source.bpf.h"
#include "judge.bpf.h"

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
#endif /* RL_NEWCOMER_BPF_H */
