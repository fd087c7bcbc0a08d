// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/maps.h"
#include "lib/source_index_map.h"

/* Buckets a walk copies (a lookup each) before it reads their sources' values:
 * 384 KiB of index. */
#define WALK_BUCKETS	1024U

static void place_of(const struct rl_index *x, const struct rl_key *key,
		     struct rl_index_place *p, __u64 k[2])
{
	memcpy(k, key, 2 * sizeof(*k));
	rl_index_locate(p, k, x->seed, x->nbuckets);
}

static bool key_is(const struct rl_index_bucket *b, __u32 way, const __u64 k[2])
{
	return !memcmp(b->key[way], k, sizeof(b->key[way]));
}

/* The way of `b` holding the key, or -1. */
static int probe(const struct rl_index_bucket *b, const struct rl_index_place *p,
		 const __u64 k[2])
{
	for (__u32 i = 0; i < RL_INDEX_WAYS; i++) {
		__u32 way = (p->home + i) & RL_INDEX_WAY_MASK;

		if (rl_way_matches(b->way[way], p) && key_is(b, way, k))
			return (int)way;
	}
	return -1;
}

int rl_index_find(const struct rl_index *x, const struct rl_key *key,
		  __u32 *slot)
{
	struct rl_index_bucket b;
	struct rl_index_place p;
	__u64 k[2];
	int way;

	place_of(x, key, &p, k);
	for (int i = 0; i < 2; i++) {
		if (bpf_map_lookup_elem(x->index, &p.bucket[i], &b))
			return -errno;
		way = probe(&b, &p, k);
		if (way >= 0) {
			*slot = rl_index_slot(p.bucket[i], (__u32)way);
			return 0;
		}
	}
	return -ENOENT;
}

int rl_index_walk(const struct rl_index *x,
		  int (*each)(void *ctx, const struct rl_key *key, __u32 slot,
			      const void *vals),
		  void *ctx)
{
	int ncpus = rl_ncpus();
	struct rl_index_bucket *bk = calloc(WALK_BUCKETS, sizeof(*bk));
	void *vals = rl_percpu_alloc(sizeof(struct rl_source));
	int err = 0;

	if (!bk || !vals || ncpus <= 0) {
		err = ncpus <= 0 ? -EINVAL : -ENOMEM;
		goto out;
	}
	for (__u32 first = 0; first < x->nbuckets && !err; first += WALK_BUCKETS) {
		__u32 n = x->nbuckets - first < WALK_BUCKETS ? x->nbuckets - first
							     : WALK_BUCKETS;

		for (__u32 i = 0; i < n; i++) {
			__u32 bucket = first + i;

			if (bpf_map_lookup_elem(x->index, &bucket, &bk[i])) {
				err = -errno;
				goto out;
			}
		}
		for (__u32 i = 0; i < n && !err; i++) {
			for (__u32 way = 0; way < RL_INDEX_WAYS && !err; way++) {
				__u32 slot = rl_index_slot(first + i, way);
				struct rl_key key;

				if ((bk[i].way[way] & RL_WAY_STATE) != RL_WAY_LIVE)
					continue;
				if (bpf_map_lookup_elem(x->sources, &slot, vals)) {
					err = -errno;
					break;
				}
				memcpy(&key, bk[i].key[way], sizeof(key));
				err = each(ctx, &key, slot, vals);
			}
		}
	}
out:
	free(bk);
	free(vals);
	return err;
}

int rl_index_place(const struct rl_index *x, const struct rl_key *key,
		   const void *vals, bool verified, __u64 now)
{
	struct rl_index_bucket b[2];
	struct rl_index_place p;
	__u32 slot, word;
	__u64 k[2];
	int best = -1;

	place_of(x, key, &p, k);
	for (int i = 0; i < 2; i++) {
		if (bpf_map_lookup_elem(x->index, &p.bucket[i], &b[i]))
			return -errno;
		if (probe(&b[i], &p, k) >= 0)
			return -EEXIST;
	}
	/* the emptier bucket, as the program places */
	{
		int empties[2] = { 0, 0 }, first[2] = { -1, -1 };

		for (int i = 0; i < 2; i++) {
			for (__u32 j = 0; j < RL_INDEX_WAYS; j++) {
				__u32 way = (p.home + j) & RL_INDEX_WAY_MASK;

				if ((b[i].way[way] & RL_WAY_STATE) != RL_WAY_EMPTY)
					continue;
				if (!empties[i]++)
					first[i] = i * RL_INDEX_WAYS + (int)way;
			}
		}
		best = empties[1] > empties[0] ? first[1] : first[0];
	}
	if (best < 0)
		return -ENOSPC;
	slot = rl_index_slot(p.bucket[best / RL_INDEX_WAYS],
			     (__u32)best & RL_INDEX_WAY_MASK);
	if (bpf_map_update_elem(x->sources, &slot, vals, BPF_ANY))
		return -errno;
	/* a carried source was tracked before: kept as one that came back */
	word = p.tag | rl_index_stamp(now) << RL_WAY_STAMP_SHIFT | RL_WAY_REPEAT |
	       (verified ? RL_WAY_VERIFIED : 0);
	memcpy(b[best / RL_INDEX_WAYS].key[best & RL_INDEX_WAY_MASK], k,
	       sizeof(b[0].key[0]));
	b[best / RL_INDEX_WAYS].way[best & RL_INDEX_WAY_MASK] = word;
	if (bpf_map_update_elem(x->index, &p.bucket[best / RL_INDEX_WAYS],
				&b[best / RL_INDEX_WAYS], BPF_ANY))
		return -errno;
	return 0;
}

int rl_index_lookup(const struct rl_index *x, const struct rl_key *key,
		    void *vals)
{
	__u32 slot;
	int err = rl_index_find(x, key, &slot);

	if (err)
		return err;
	return bpf_map_lookup_elem(x->sources, &slot, vals) ? -errno : 0;
}

/*
 * Empty way `way` of bucket `bucket` (at `bk`, mmapped) if its word is
 * still `w`: claimed busy first (no CPU finds a busy way, none takes it),
 * its values cleared on every CPU (placed back in this way, as it likely
 * is, the source would find its old values its own: the owner check
 * cannot tell), then emptied. Never given back once claimed: while it was
 * busy its source may have been placed again elsewhere, and two live ways
 * of one source are two budgets. 0, 1 (the word changed: look again), or
 * -errno (emptied, its values perhaps not cleared).
 */
static int empty_way(const struct rl_index *x, struct rl_index_bucket *bk,
		     __u32 bucket, __u32 way, __u32 w)
{
	__u32 busy = (w & RL_WAY_TAG) | RL_WAY_BUSY, slot = rl_index_slot(bucket, way);
	void *zero;
	int err = 0;

	if (!__atomic_compare_exchange_n(&bk->way[way], &w, busy, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return 1;
	zero = rl_percpu_alloc(sizeof(struct rl_source));
	if (!zero)
		err = -ENOMEM;
	else if (bpf_map_update_elem(x->sources, &slot, zero, BPF_ANY))
		err = -errno;
	free(zero);
	/* nothing changes a busy word but its claimer: a plain store */
	__atomic_store_n(&bk->way[way], RL_WAY_EMPTY, __ATOMIC_SEQ_CST);
	return err;
}

int rl_index_remove(const struct rl_index *x, const struct rl_key *key)
{
	size_t len = (size_t)x->nbuckets * sizeof(struct rl_index_bucket);
	struct rl_index_bucket *b;
	struct rl_index_place p;
	__u64 k[2];
	int way, err = -ENOENT;

	/* the map is mmapable: a way's word changes here as the program
	 * changes it, by compare-and-swap, the other ways untouched */
	len = (len + (size_t)sysconf(_SC_PAGESIZE) - 1) &
	      ~((size_t)sysconf(_SC_PAGESIZE) - 1);
	b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, x->index, 0);
	if (b == MAP_FAILED)
		return -errno;
	place_of(x, key, &p, k);
	for (int i = 0; i < 2 && err == -ENOENT; i++) {
		struct rl_index_bucket *bk = &b[p.bucket[i]];

		for (int tries = 0; tries < 8; tries++) {
			__u32 w;
			int ret;

			way = probe(bk, &p, k);
			if (way < 0)
				break;
			w = __atomic_load_n(&bk->way[way], __ATOMIC_SEQ_CST);
			if (!rl_way_matches(w, &p))
				continue;
			ret = empty_way(x, bk, p.bucket[i], (__u32)way, w);
			if (ret <= 0) {
				err = ret;
				break;
			}
		}
	}
	munmap(b, len);
	return err;
}

void rl_index_of(struct rl_index *x, const struct rl_maps *m,
		 const struct rl_config *cfg)
{
	x->index = m->source_index;
	x->sources = m->sources;
	x->seed = cfg->index_seed;
	x->nbuckets = cfg->index_buckets;
}

int rl_index_open(struct rl_index *x, const struct rl_maps *m)
{
	struct rl_config cfg;
	int err = rl_config_read(m, &cfg);

	if (!err)
		rl_index_of(x, m, &cfg);
	return err;
}
