/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The CPUs a refresh reads: this CPU joins them before it writes a
 * budget's state; a refresh reads the joined ones only (include/cpus.h).
 */
#ifndef RL_CPUS_BPF_H
#define RL_CPUS_BPF_H

#include "maps.bpf.h"
#include "cpus.h"

static __always_inline struct rl_cpus *cpus_map(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpus, &zero);
}

/*
 * Global functions: the verifier checks their branches once, and the
 * refresh that calls them sees a number, not one state per branch
 * (inlined, they doubled the program's verifier instructions).
 */

/* CPU `self` joins (a plain load once it has). */
__noinline int cpus_join(__u32 self)
{
	struct rl_cpus *c = cpus_map();

	if (c)
		rl_cpus_join(c, self);
	return 0;
}

/* 1 + the highest CPU a refresh reads: every possible one if the map
 * cannot be read (cannot happen: an array). */
__noinline __u32 cpus_end(void)
{
	struct rl_cpus *c = cpus_map();

	return c ? rl_cpus_end(c, settings.ncpus) : settings.ncpus;
}

/* Must a refresh read CPU `cpu`? */
static __always_inline int cpus_joined(__u32 cpu)
{
	struct rl_cpus *c = cpus_map();

	return !c || rl_cpus_has(c, cpu);
}
#endif /* RL_CPUS_BPF_H */
