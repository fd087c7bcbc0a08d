// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/maps.h"
#include "lib/source_index_map.h"

/* Buckets a walk copies (one batch lookup) before it reads their sources'
 * values: 192 KiB of index. */
#define WALK_BUCKETS	1024U

static void place_of(const struct rl_index *x, const struct rl_key *key,
		     struct rl_index_place *p, __u64 k[2])
{
	memcpy(k, key, 2 * sizeof(*k));
	rl_index_locate(p, k, x->seed, x->nbuckets);
}

/* Does slot `slot1` - 1 (0: none) hold key `k`? */
static bool slot_holds(const struct rl_index *x, __u32 slot1, const __u64 k[2])
{
	__u32 slot = slot1 - 1;
	__u64 o[2];

	return slot1 && !bpf_map_lookup_elem(x->keys, &slot, o) &&
	       o[0] == k[0] && o[1] == k[1];
}

/* The way of `b` holding the key, or -1. */
static int probe(const struct rl_index *x, const struct rl_index_bucket *b,
		 const struct rl_index_place *p, const __u64 k[2])
{
	for (__u32 i = 0; i < RL_INDEX_WAYS; i++) {
		__u32 way = (p->home + i) & RL_INDEX_WAY_MASK;

		if (rl_way_matches(b->way[way], p) && slot_holds(x, b->slot[way], k))
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
		way = probe(x, &b, &p, k);
		if (way >= 0) {
			*slot = b.slot[way] - 1;
			return 0;
		}
	}
	return -ENOENT;
}

int rl_index_way_slot(const struct rl_index *x, __u32 bucket, __u32 way,
		      __u32 *slot)
{
	struct rl_index_bucket b;

	if (bpf_map_lookup_elem(x->index, &bucket, &b))
		return -errno;
	if (!b.slot[way & RL_INDEX_WAY_MASK])
		return -ENOENT;
	*slot = b.slot[way & RL_INDEX_WAY_MASK] - 1;
	return 0;
}

/* `len` bytes of map `fd` mapped (`writable` or read only), their length
 * rounded to pages in `*mapped`: the address, or MAP_FAILED. */
static void *map_whole(int fd, size_t len, bool writable, size_t *mapped)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	*mapped = (len + page - 1) & ~(page - 1);
	return mmap(NULL, *mapped, writable ? PROT_READ | PROT_WRITE : PROT_READ,
		    MAP_SHARED, fd, 0);
}

int rl_index_walk(const struct rl_index *x,
		  int (*each)(void *ctx, const struct rl_key *key, __u32 slot,
			      const void *vals),
		  void *ctx)
{
	int ncpus = rl_ncpus();
	struct rl_index_bucket *bk = calloc(WALK_BUCKETS, sizeof(*bk));
	__u32 bucket_ids[WALK_BUCKETS], batch = 0;
	bool started = false;
	void *vals = rl_percpu_alloc(sizeof(struct rl_source));
	size_t keys_len = 0;
	/* in place where the fd allows it; a read-only fd (a command that
	 * changes nothing) cannot map a map: a lookup per source then */
	const struct rl_key *keys = map_whole(x->keys, (size_t)x->nslots *
					      sizeof(*keys), false, &keys_len);
	int err = 0;

	if (!bk || !vals || ncpus <= 0) {
		err = ncpus <= 0 ? -EINVAL : -ENOMEM;
		goto out;
	}
	for (bool last = false; !last && !err;) {
		__u32 n = WALK_BUCKETS;
		int ret;

		/* a system call per WALK_BUCKETS buckets, not one each: an
		 * exporter's reading walks every bucket of a million sources'
		 * index (-ENOENT: the last of them read) */
		ret = bpf_map_lookup_batch(x->index, started ? &batch : NULL, &batch,
					   bucket_ids, bk, &n, NULL);
		if (ret < 0 && ret != -ENOENT) {
			err = ret;
			break;
		}
		last = ret == -ENOENT;
		started = true;
		for (__u32 i = 0; i < n && !err; i++) {
			for (__u32 way = 0; way < RL_INDEX_WAYS && !err; way++) {
				__u32 slot = bk[i].slot[way] - 1;
				struct rl_key key;

				if ((bk[i].way[way] & RL_WAY_STATE) != RL_WAY_LIVE ||
				    slot >= x->nslots)
					continue;
				if (bpf_map_lookup_elem(x->sources, &slot, vals)) {
					err = -errno;
					break;
				}
				if (keys != MAP_FAILED)
					memcpy(&key, &keys[slot], sizeof(key));
				else if (bpf_map_lookup_elem(x->keys, &slot, &key)) {
					err = -errno;
					break;
				}
				err = each(ctx, &key, slot, vals);
			}
		}
	}
out:
	if (keys != MAP_FAILED)
		munmap((void *)keys, keys_len);
	free(bk);
	free(vals);
	return err;
}

/* Slots the pool handed out: 0, or -errno. */
static int pool_handed(const struct rl_index *x, struct rl_source_pool *pool)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(x->pool, &zero, pool) ? -errno : 0;
}

int rl_index_place(const struct rl_index *x, const struct rl_key *key,
		   const void *vals, bool verified, __u64 now)
{
	__u32 empties[2] = { 0, 0 }, slotted[2] = { 0, 0 }, bare[2] = { 0, 0 };
	struct rl_index_bucket b[2];
	struct rl_source_pool pool;
	struct rl_index_place p;
	__u32 slot, word, zero = 0, pick, half, way;
	__u64 k[2];
	int err;

	place_of(x, key, &p, k);
	for (int i = 0; i < 2; i++) {
		if (bpf_map_lookup_elem(x->index, &p.bucket[i], &b[i]))
			return -errno;
		if (probe(x, &b[i], &p, k) >= 0)
			return -EEXIST;
		for (__u32 j = 0; j < RL_INDEX_WAYS; j++) {
			__u32 w = (p.home + j) & RL_INDEX_WAY_MASK;

			if ((b[i].way[w] & RL_WAY_STATE) != RL_WAY_EMPTY)
				continue;
			empties[i]++;
			if (b[i].slot[w] && !slotted[i])
				slotted[i] = w + 1;
			else if (!b[i].slot[w] && !bare[i])
				bare[i] = w + 1;
		}
	}
	/* as the program places */
	err = pool_handed(x, &pool);
	if (err)
		return err;
	pick = rl_pick_empty(empties, slotted, bare, pool.handed < x->nslots);
	if (!pick)
		return -ENOSPC;
	half = rl_pick_half(pick);
	way = rl_pick_way(pick);
	if (b[half].slot[way]) {
		slot = b[half].slot[way] - 1;
	} else {
		slot = pool.handed++;
		b[half].slot[way] = slot + 1;
		if (bpf_map_update_elem(x->pool, &zero, &pool, BPF_ANY))
			return -errno;
	}
	if (bpf_map_update_elem(x->sources, &slot, vals, BPF_ANY) ||
	    bpf_map_update_elem(x->keys, &slot, k, BPF_ANY))
		return -errno;
	/* a carried source was tracked before: kept as one that came back */
	word = p.tag | rl_index_stamp(now) << RL_WAY_STAMP_SHIFT | RL_WAY_REPEAT |
	       (verified ? RL_WAY_VERIFIED : 0);
	b[half].way[way] = word;
	if (bpf_map_update_elem(x->index, &p.bucket[half], &b[half], BPF_ANY))
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
 * Empty way `way` of the bucket at `bk` (mmapped) if its word is still
 * `w`, the way keeping its slot: claimed busy first (no CPU finds a busy way, none takes it),
 * its values cleared on every CPU (placed back in this way, as it likely
 * is, the source would find its old values its own: the owner check
 * cannot tell), then emptied. Never given back once claimed: while it was
 * busy its source may have been placed again elsewhere, and two live ways
 * of one source are two budgets. 0, 1 (the word changed: look again), or
 * -errno (emptied, its values perhaps not cleared).
 */
static int empty_way(const struct rl_index *x, struct rl_index_bucket *bk,
		     __u32 way, __u32 w)
{
	__u32 busy = (w & RL_WAY_TAG) | RL_WAY_BUSY, slot = bk->slot[way] - 1;
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
	struct rl_index_bucket *b;
	struct rl_index_place p;
	__u64 k[2];
	int way, err = -ENOENT;
	size_t len;

	/* the map is mmapable: a way's word changes here as the program
	 * changes it, by compare-and-swap, the other ways untouched */
	b = map_whole(x->index, (size_t)x->nbuckets * sizeof(*b), true, &len);
	if (b == MAP_FAILED)
		return -errno;
	place_of(x, key, &p, k);
	for (int i = 0; i < 2 && err == -ENOENT; i++) {
		struct rl_index_bucket *bk = &b[p.bucket[i]];

		for (int tries = 0; tries < 8; tries++) {
			__u32 w;
			int ret;

			way = probe(x, bk, &p, k);
			if (way < 0)
				break;
			w = __atomic_load_n(&bk->way[way], __ATOMIC_SEQ_CST);
			/* the key read again after the word (the program
			 * writes a way's key before the word that publishes
			 * it): evicted since probe(), for a source of the same
			 * tag, the way is not emptied under it */
			if (!rl_way_matches(w, &p) ||
			    !slot_holds(x, __atomic_load_n(&bk->slot[way], __ATOMIC_SEQ_CST), k))
				continue;
			ret = empty_way(x, bk, (__u32)way, w);
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
	x->keys = m->source_keys;
	x->pool = m->source_pool;
	x->seed = cfg->index_seed;
	x->nbuckets = cfg->index_buckets;
	x->nslots = rl_pool_slots(cfg->index_buckets);
}

int rl_index_open(struct rl_index *x, const struct rl_maps *m)
{
	struct rl_config cfg;
	int err = rl_config_read(m, &cfg);

	if (!err)
		rl_index_of(x, m, &cfg);
	return err;
}
