/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The kernel memory the program's maps take (xdp-ratelimit(8) Memory):
 * worked out from each map's definition (rl_map_defs: type, key and
 * value sizes) and what the attach chose (max_entries, flags, as the
 * kernel reports them), the way the kernel charges a map of that shape
 * (its map_mem_usage), times the possible CPUs for per-CPU maps. The
 * kernel's own structures of a map (under 1 KiB each) are not counted.
 */
#ifndef RL_MAP_MEMORY_H
#define RL_MAP_MEMORY_H

#include <stdbool.h>
#include <linux/types.h>
#include "lib/maps.h"

/* A map as the kernel holds it. */
struct rl_map_shape {
	__u32 type;		/* BPF_MAP_TYPE_* */
	__u32 key_size;
	__u32 value_size;
	__u32 max_entries;
	__u32 flags;		/* BPF_F_NO_PREALLOC matters */
	__u64 extra;		/* a Bloom filter's hash count (0: 5) */
};

/* Per element of a hash map, before its key and value: its list and LRU
 * nodes and hash (the kernel's struct htab_elem); per bucket of the
 * bucket array (a power of two at least max_entries); per node of an LPM
 * trie, before its prefix and value. x86_64, Linux 6.1 to 6.18. */
#define RL_HTAB_ELEM_BYTES	48
#define RL_HTAB_BUCKET_BYTES	16
#define RL_LPM_NODE_BYTES	40

/* Bytes a map of this shape takes once created (preallocated elements,
 * bucket arrays, ring pages); *grow (may be NULL): the most a map not
 * preallocated adds as entries are written (0 for the others). */
__u64 rl_map_bytes(const struct rl_map_shape *s, int ncpus, __u64 *grow);

/* The program's maps on this machine. */
struct rl_memory {
	int ncpus;			/* possible CPUs */
	__u64 map[RL_NR_MAPS];		/* rl_map_bytes, RL_MAPS order */
	__u64 grow[RL_NR_MAPS];
	__u64 total;			/* every map, once created */
	__u64 per_source;		/* of that, the maps --max-sources sizes */
	__u64 grow_total;		/* at most this more, as entries are
					 * written (rule tries, fleet shares) */
};

/* True for the maps the loader sizes from --max-sources. */
bool rl_map_sized_by_sources(int idx);

/* The memory of the maps of m (a loaded object's or the pins'), their
 * shapes read from the kernel; 0 or -errno. */
int rl_memory_read(const struct rl_maps *m, int ncpus, struct rl_memory *out);

#endif /* RL_MAP_MEMORY_H */
