/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The CPUs a refresh reads (include/quota.h): those that have written
 * some budget's state, not every possible one. The kernel sizes per-CPU
 * maps for every *possible* CPU, and many machines have far more possible
 * CPUs than ever run the program (a VM with room for hot-added vCPUs, a
 * firmware that lists absent sockets, a NIC with fewer queues than CPUs):
 * a refresh that read them all would cost what the largest machine the
 * kernel could become costs. Plain C shared by the program and the host
 * tests.
 *
 * The one-entry `cpus` array (struct rl_cpus): a bit per CPU that has
 * joined. A CPU joins (one atomic OR, once per CPU) before it first writes
 * a budget's state: when it first takes a source's value (its owner reset:
 * bpf/source.bpf.h), and at every refresh before it publishes a lease. A
 * refresh reads, after its barrier, the words and then only the CPUs
 * whose bit is set. Of two overlapping refreshes on CPUs W and R, if R's
 * confirming read misses W's bit, W's join came after that read, hence
 * after R had joined, written its lease and fenced: W's confirming read
 * comes after its join and its own fence, and sees R's bit and lease
 * (store, full barrier, load on both sides, as the confirm step itself:
 * doc/design/cpus.md). So the confirm step's guarantee is kept whole; the
 * join needs no barrier of its own. A lease still divides what is free by
 * the possible CPUs (include/quota.h `d`): the joined ones may not have
 * sent yet, and a smaller share would leave a CPU that starts in the
 * window less than its turn. A CPU at or above RL_CPUS_BITS sets `high`, and from then on a
 * refresh reads every possible CPU, as before this map. Bits are never
 * cleared: a reload onto the same maps keeps them, one onto new maps
 * carries them, or sets every bit when the old maps had none to carry.
 */
#ifndef RL_CPUS_H
#define RL_CPUS_H

#include "ratelimit.h"
#include "compiler.h"

/* The word of `cpu`'s bit: masked where the verifier sees it (below). */
RL_INLINE __u32 rl_cpus_word(__u32 cpu)
{
	__u32 i = cpu / 64;

	RL_OPAQUE(i);
	return i & (RL_CPUS_WORDS - 1);
}

/* Has CPU `cpu` joined? (a CPU past the bits: if any such did) */
RL_INLINE int rl_cpus_has(const struct rl_cpus *c, __u32 cpu)
{
	if (cpu >= RL_CPUS_BITS)
		return RL_READ(c->high) != 0;
	return (RL_READ(c->seen[rl_cpus_word(cpu)]) >> (cpu % 64)) & 1;
}

/* CPU `cpu` joins, before it writes any budget's state: a plain load once
 * it has, an atomic OR the first time. */
RL_INLINE void rl_cpus_join(struct rl_cpus *c, __u32 cpu)
{
	__u64 *w = &c->high, bit = 1;

	if (cpu < RL_CPUS_BITS) {
		w = &c->seen[rl_cpus_word(cpu)];
		bit = 1ULL << (cpu % 64);
	}
	if (!(RL_READ(*w) & bit))
		__sync_fetch_and_or(w, bit);
}

/* 1 + the highest joined CPU, at most `ncpus` (every CPU once one above
 * the bits joined): where a refresh's reads end. */
RL_INLINE __u32 rl_cpus_end(const struct rl_cpus *c, __u32 ncpus)
{
	__u32 end = 0;

	if (RL_READ(c->high))
		return ncpus;
	for (__u32 i = 0; i < RL_CPUS_WORDS; i++) {
		__u64 w = RL_READ(c->seen[i]);

		if (!w)
			continue;
		end = i * 64 + 1;
		/* the highest set bit: a binary search, no loop */
		if (w >> 32) { end += 32; w >>= 32; }
		if (w >> 16) { end += 16; w >>= 16; }
		if (w >> 8) { end += 8; w >>= 8; }
		if (w >> 4) { end += 4; w >>= 4; }
		if (w >> 2) { end += 2; w >>= 2; }
		if (w >> 1)
			end += 1;
	}
	return end < ncpus ? end : ncpus;
}

#endif /* RL_CPUS_H */
