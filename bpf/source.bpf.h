/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A source's per-CPU entry in `sources` or `newcomers` (RL_TABLE_*): whose
 * state a value holds (the kernel may hand an evicted value to a new key),
 * and a new source's entry.
 */
#ifndef RL_SOURCE_BPF_H
#define RL_SOURCE_BPF_H

#include "maps.bpf.h"
#include "cpus.bpf.h"
#include "source_index.bpf.h"

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
 * none: the source is new on this CPU), which this CPU is about to write:
 * it joins the CPUs a refresh reads first (include/cpus.h; a window no
 * budget judges has no refresh to join it). */
static __always_inline void own_source(struct rl_source *src,
				       const struct rl_key *key)
{
	if (owned_by(src, key))
		return;
	cpus_join(bpf_get_smp_processor_id());
	__builtin_memset(src, 0, sizeof(*src));
	__builtin_memcpy(&src->owner, key, sizeof(*key));
}

/* This CPU's value in slot `slot` of `sources` (RL_NO_SLOT: none). */
static __always_inline struct rl_source *slot_source(int slot)
{
	__u32 s = slot;

	return slot < 0 ? NULL : bpf_map_lookup_elem(&sources, &s);
}

/* This CPU's value of `key` in `table`, owned (NULL: none), for a packet
 * at `now`. */
static __always_inline struct rl_source *table_source(int table,
						      const struct rl_key *key,
						      __u64 now)
{
	struct rl_source *src;
	int slot;

	if (table == RL_TABLE_NEWCOMERS) {
		src = bpf_map_lookup_elem(&newcomers, key);
	} else {
		slot = source_front_find(key, now);
		if (slot == RL_NO_SLOT)
			slot = source_find(key, now, NULL);
		src = slot_source(slot);
	}
	if (src)
		own_source(src, key);
	return src;
}

/* A new source's state in `table` (an evicted source starts afresh), its
 * rule cached; in `sources`, placed as `verified` or not (eviction keeps a
 * verified source from unverified ones). */
static __always_inline struct rl_source *new_source_state(int table,
							  const struct rl_key *key,
							  struct rl_counters *cnt,
							  __u32 rule_id, __u32 gen,
							  int verified, __u64 now)
{
	struct rl_source *src;

	if (table == RL_TABLE_NEWCOMERS) {
		bpf_map_update_elem(&newcomers, key, &new_source, BPF_NOEXIST);
		src = table_source(table, key, now);
	} else {
		src = slot_source(source_place(key, verified, now));
		if (src)
			own_source(src, key);
	}
	if (!src)
		return NULL;
	cnt->new_sources++;
	src->rule_gen = gen;
	src->rule_id = rule_id;
	return src;
}
#endif /* RL_SOURCE_BPF_H */
