// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include "lib/map_memory.h"

#define PAGE_BYTES	4096ULL
/* a ring buffer's pages before its data: the consumer's and the
 * producer's positions (the kernel's RINGBUF_NR_META_PAGES) */
#define RINGBUF_META_PAGES	3ULL

static __u64 round8(__u64 v)
{
	return (v + 7) & ~7ULL;
}

static __u64 pow2_at_least(__u64 v)
{
	__u64 p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* The kernel's htab_map_mem_usage, less struct bpf_htab itself. */
static __u64 hash_bytes(const struct rl_map_shape *s, int ncpus, bool percpu,
			bool lru, __u64 *grow)
{
	__u64 n = s->max_entries, value = round8(s->value_size);
	__u64 elem = RL_HTAB_ELEM_BYTES + round8(s->key_size) + (percpu ? 8 : value);
	/* buckets, and the per-CPU lock counts (8 ints a CPU) */
	__u64 b = pow2_at_least(n) * RL_HTAB_BUCKET_BYTES + 4ULL * 8 * (__u64)ncpus;

	if (!lru && (s->flags & BPF_F_NO_PREALLOC)) {
		/* an element and its free-list node as each is written */
		*grow = n * (elem + 8 + (percpu ? value * (__u64)ncpus : 0));
		return b;
	}
	if (!percpu && !lru)
		n += (__u64)ncpus;	/* an extra element per CPU for updates */
	b += n * elem;
	if (percpu)
		b += n * value * (__u64)ncpus;
	else if (!lru)
		b += 8ULL * (__u64)ncpus;
	return b;
}

static __u64 bloom_bytes(const struct rl_map_shape *s)
{
	__u64 hashes = (s->extra & 0xf) ? (s->extra & 0xf) : 5;
	__u64 bits = (__u64)s->max_entries * hashes / 5 * 7;

	if (bits > (1ULL << 31))
		bits = 1ULL << 31;
	else if (bits <= 64)
		bits = 64;
	else
		bits = pow2_at_least(bits);
	return round8(bits / 8);
}

__u64 rl_map_bytes(const struct rl_map_shape *s, int ncpus, __u64 *grow)
{
	__u64 value = round8(s->value_size), n = s->max_entries, g = 0, b = 0;

	switch (s->type) {
	case BPF_MAP_TYPE_ARRAY:
		b = n * value;
		/* mappable: whole pages, and the page of the kernel's array
		 * before them, so that the values start on a page */
		if (s->flags & BPF_F_MMAPABLE)
			b = ((b + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1)) + PAGE_BYTES;
		break;
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		b = n * 8 + n * value * (__u64)ncpus;
		break;
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		b = hash_bytes(s, ncpus, s->type == BPF_MAP_TYPE_PERCPU_HASH ||
				 s->type == BPF_MAP_TYPE_LRU_PERCPU_HASH,
			       s->type == BPF_MAP_TYPE_LRU_HASH ||
				 s->type == BPF_MAP_TYPE_LRU_PERCPU_HASH, &g);
		break;
	case BPF_MAP_TYPE_LPM_TRIE:
		/* a node per prefix, made as it is written; the prefix
		 * field of the key is the node's own */
		g = n * (RL_LPM_NODE_BYTES + s->key_size - 4 + s->value_size);
		break;
	case BPF_MAP_TYPE_RINGBUF:
		b = (RINGBUF_META_PAGES + n / PAGE_BYTES) * PAGE_BYTES +
		    (RINGBUF_META_PAGES + 2 * (n / PAGE_BYTES)) * 8;
		break;
	case BPF_MAP_TYPE_BLOOM_FILTER:
		b = bloom_bytes(s);
		break;
	default:
		break;
	}
	if (grow)
		*grow = g;
	return b;
}

bool rl_map_sized_by_sources(int idx)
{
	/* the maps loader.c sizes from --max-sources */
	switch (idx) {
	case RL_MAP_IDX_sources:
	case RL_MAP_IDX_source_index:
	case RL_MAP_IDX_source_keys:
	case RL_MAP_IDX_history:
	case RL_MAP_IDX_verified:
	case RL_MAP_IDX_answered:
	case RL_MAP_IDX_synacks:
	case RL_MAP_IDX_verified_bloom:
	case RL_MAP_IDX_newcomers:
	case RL_MAP_IDX_new_history:
	case RL_MAP_IDX_remote:
		return true;
	default:
		return false;
	}
}

int rl_memory_read(const struct rl_maps *m, int ncpus, struct rl_memory *out)
{
	memset(out, 0, sizeof(*out));
	out->ncpus = ncpus;
	for (int i = 0; i < RL_NR_MAPS; i++) {
		struct bpf_map_info info;
		__u32 len = sizeof(info);
		struct rl_map_shape s;

		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(m->fd[i], &info, &len))
			return -errno;
		s = (struct rl_map_shape){
			.type = rl_map_defs[i].type, .key_size = rl_map_defs[i].key_size,
			.value_size = rl_map_defs[i].value_size,
			.max_entries = info.max_entries, .flags = info.map_flags,
			.extra = info.map_extra,
		};
		out->map[i] = rl_map_bytes(&s, ncpus, &out->grow[i]);
		out->total += out->map[i];
		out->grow_total += out->grow[i];
		if (rl_map_sized_by_sources(i))
			out->per_source += out->map[i];
	}
	return 0;
}
