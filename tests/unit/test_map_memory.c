// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The memory arithmetic of user/lib/map_memory.c: each map type as the
 * kernel charges it. The expected figures are what bpftool's memlock
 * showed for the program's maps on a 2-CPU machine (kernel 6.18, attach
 * --max-sources 1000000), less the kernel's own struct of each map (312
 * bytes for an array, 832 for a hash), which the figure leaves out. */
#include <string.h>
#include <linux/bpf.h>
#include "lib/map_memory.h"
#include "harness.h"

static __u64 bytes(__u32 type, __u32 key, __u32 value, __u32 n, __u32 flags,
		   __u64 extra, int ncpus, __u64 *grow)
{
	struct rl_map_shape s = { type, key, value, n, flags, extra };

	return rl_map_bytes(&s, ncpus, grow);
}

struct shape_case {
	const char *what;
	struct rl_map_shape s;
	__u64 want, want_grow;
};

TEST(map_memory_as_the_kernel_charges)
{
	static const struct shape_case cs[] = {
		/* E x (element 48 + key 16 + per-CPU pointer 8 + 2 x 128)
		 * + 16 x 2^21 buckets + 2 x 8 lock counts of 4 bytes */
		{ "sources", { BPF_MAP_TYPE_LRU_PERCPU_HASH, 16, 128, 1063012, 0, 0 },
		  382222432ULL, 0 },
		{ "history", { BPF_MAP_TYPE_LRU_HASH, 16, 264, 1063012, 0, 0 }, 382222432ULL, 0 },
		/* keys and values rounded to 8: 36 -> 40, 12 -> 16 */
		{ "answered", { BPF_MAP_TYPE_LRU_HASH, 36, 24, 1000000, 0, 0 }, 128777280ULL, 0 },
		{ "synacks", { BPF_MAP_TYPE_LRU_HASH, 36, 12, 250000, 0, 0 }, 30194368ULL, 0 },
		{ "rules", { BPF_MAP_TYPE_ARRAY, 4, 144, 4096, 0, 0 }, 589824ULL, 0 },
		/* mappable: whole pages and the page before them, which holds
		 * the kernel's struct (memlock shows exactly this) */
		{ "source_index", { BPF_MAP_TYPE_ARRAY, 4, 192, 83334, BPF_F_MMAPABLE, 0 },
		  16007168ULL, 0 },
		{ "source_keys", { BPF_MAP_TYPE_ARRAY, 4, 16, 1333344, BPF_F_MMAPABLE, 0 },
		  21340160ULL, 0 },
		{ "sources, per-CPU array", { BPF_MAP_TYPE_PERCPU_ARRAY, 4, 128, 1333344, 0, 0 },
		  352002816ULL, 0 },
		{ "scopes", { BPF_MAP_TYPE_ARRAY, 4, 12, 16, 0, 0 }, 256ULL, 0 },
		{ "aggregates", { BPF_MAP_TYPE_PERCPU_ARRAY, 4, 56, 8194, 0, 0 }, 983280ULL, 0 },
		{ "events, 256 KiB", { BPF_MAP_TYPE_RINGBUF, 0, 0, 262144, 0, 0 }, 275480ULL, 0 },
		{ "verified_bloom, one hash", { BPF_MAP_TYPE_BLOOM_FILTER, 0, 16, 4000000, 0, 1 },
		  1048576ULL, 0 },
		/* not preallocated: the buckets now, the elements as written */
		{ "remote", { BPF_MAP_TYPE_HASH, 16, 256, 1000000, BPF_F_NO_PREALLOC, 0 },
		  16777280ULL, 1000000ULL * (48 + 16 + 256 + 8) },
		{ "rules_v6", { BPF_MAP_TYPE_LPM_TRIE, 20, 4, 4096, BPF_F_NO_PREALLOC, 0 },
		  0, 4096ULL * (40 + 16 + 4) },
	};

	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		__u64 g = 1;

		CHECK_EQ(rl_map_bytes(&cs[i].s, 2, &g), cs[i].want, cs[i].what);
		CHECK_EQ(g, cs[i].want_grow, cs[i].what);
	}
}

TEST(map_memory_per_cpu)
{
	__u64 two = bytes(BPF_MAP_TYPE_LRU_PERCPU_HASH, 16, 128, 70144, 0, 0, 2, NULL);
	__u64 n64 = bytes(BPF_MAP_TYPE_LRU_PERCPU_HASH, 16, 128, 70144, 0, 0, 64, NULL);

	/* each possible CPU more: a 128-byte value per entry, 32 bytes of
	 * lock counts */
	CHECK_EQ(n64 - two, 62ULL * (70144 * 128 + 32), "62 CPUs more");
	CHECK_EQ(bytes(BPF_MAP_TYPE_LRU_HASH, 16, 264, 70144, 0, 0, 64, NULL) -
		 bytes(BPF_MAP_TYPE_LRU_HASH, 16, 264, 70144, 0, 0, 2, NULL),
		 62ULL * 32, "a shared map: the lock counts only");
	/* a plain preallocated hash keeps an extra element per CPU */
	CHECK_EQ(bytes(BPF_MAP_TYPE_HASH, 16, 16, 100, 0, 0, 4, NULL),
		 128ULL * 16 + 4 * 32 + 104 * (48 + 16 + 16) + 4 * 8, "hash, 4 CPUs");
}

TEST(map_memory_sized_by_sources)
{
	CHECK(rl_map_sized_by_sources(RL_MAP_IDX_sources), "sources");
	CHECK(rl_map_sized_by_sources(RL_MAP_IDX_source_index), "source_index");
	CHECK(rl_map_sized_by_sources(RL_MAP_IDX_source_keys), "source_keys");
	CHECK(rl_map_sized_by_sources(RL_MAP_IDX_history), "history");
	CHECK(!rl_map_sized_by_sources(RL_MAP_IDX_source_pool), "source_pool: one entry");
	CHECK(!rl_map_sized_by_sources(RL_MAP_IDX_rules), "rules");
	CHECK(!rl_map_sized_by_sources(RL_MAP_IDX_bans), "bans");
}
