/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Finding and placing a source in `source_index` (include/source_index.h):
 * its slot in `sources`. Global functions, so that the verifier walks the
 * probe loops once, not on every path of the program that reaches them.
 */
#ifndef RL_SOURCE_INDEX_BPF_H
#define RL_SOURCE_INDEX_BPF_H

#include "maps.bpf.h"
#include "source_index.h"

/* -1: not found, or the index cannot be read (cannot happen: an array) */
#define RL_NO_SLOT	(-1)

/* Where key `k` may live, under the index's seed and size in `config`:
 * 0, or -1 (cannot happen: an array). */
static __always_inline int index_place(struct rl_index_place *p,
				       const __u64 k[2])
{
	struct rl_config *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cfg || cfg->index_buckets < 2)
		return -1;
	rl_index_locate(p, k, cfg->index_seed, cfg->index_buckets);
	return 0;
}

static __always_inline int key_is(const struct rl_index_bucket *b, __u32 way,
				  const __u64 k[2])
{
	const __u64 *o = (const __u64 *)b->key[way & RL_INDEX_WAY_MASK];

	return RL_READ(o[0]) == k[0] && RL_READ(o[1]) == k[1];
}

/* The way of bucket `b` that holds the key (-1: none), its RL_WAY_RECENT
 * set on the way (once between evictions: a shared write that is rare). */
static __always_inline int probe(struct rl_index_bucket *b,
				 const struct rl_index_place *p,
				 const __u64 k[2])
{
	for (__u32 i = 0; i < RL_INDEX_WAYS; i++) {
		__u32 way = (p->home + i) & RL_INDEX_WAY_MASK;
		__u32 w = RL_READ(b->way[way]);

		if (!rl_way_matches(w, p) || !key_is(b, way, k))
			continue;
		if (!(w & RL_WAY_RECENT))
			__sync_fetch_and_or(&b->way[way], RL_WAY_RECENT);
		return way;
	}
	return -1;
}

/* The slot of source `key` in `sources`, or RL_NO_SLOT. */
__noinline int source_find(const struct rl_key *key)
{
	struct rl_index_place p;
	struct rl_index_bucket *b;
	__u64 k[2];
	int way;

	if (!key)
		return RL_NO_SLOT;
	__builtin_memcpy(k, key, sizeof(k));
	if (index_place(&p, k))
		return RL_NO_SLOT;
	for (int i = 0; i < 2; i++) {
		b = bpf_map_lookup_elem(&source_index, &p.bucket[i]);
		if (!b)
			return RL_NO_SLOT;
		way = probe(b, &p, k);
		if (way >= 0)
			return rl_index_slot(p.bucket[i], way);
	}
	return RL_NO_SLOT;
}

/* What the victim search (a bpf_loop over both buckets' ways) reads and
 * finds: each bucket's empty ways (their count, and one of them), and the
 * best way to evict so far, as slot and rank. */
struct victim_ctx {
	__u32 bucket[2];
	__u32 home;
	int verified;
	__u32 empties[2];
	__u32 empty[2];
	__u32 slot;
	__u32 rank;
};

static long victim_way(__u32 i, struct victim_ctx *c)
{
	__u32 half = (i / RL_INDEX_WAYS) & 1;
	__u32 bucket = c->bucket[half];
	__u32 way = (c->home + i) & RL_INDEX_WAY_MASK;
	struct rl_index_bucket *b = bpf_map_lookup_elem(&source_index, &bucket);
	__u32 rank;

	if (!b)
		return 1;
	rank = rl_way_victim_rank(RL_READ(b->way[way]), c->verified);
	if (rank == 0) {
		if (!c->empties[half]++)
			c->empty[half] = rl_index_slot(bucket, way);
	} else if (rank < c->rank) {
		c->rank = rank;
		c->slot = rl_index_slot(bucket, way);
	}
	return 0;
}

/* Forget which of the bucket's sources packets found: the next eviction
 * tells the sources found since from the others (a clock's second chance). */
static __always_inline void age(struct rl_index_bucket *b)
{
	for (__u32 way = 0; way < RL_INDEX_WAYS; way++)
		if (RL_READ(b->way[way]) & RL_WAY_RECENT)
			__sync_fetch_and_and(&b->way[way], ~RL_WAY_RECENT);
}

/* Claim the way of slot `slot` (holding `old`) for key `k`, write the key
 * and publish it: 0, or -1 if another CPU changed the way first. */
static __always_inline int take_way(struct rl_index_bucket *b, __u32 way,
				    __u32 old, const __u64 k[2], __u32 word)
{
	__u64 *d = (__u64 *)b->key[way & RL_INDEX_WAY_MASK];

	way &= RL_INDEX_WAY_MASK;
	if (__sync_val_compare_and_swap(&b->way[way], old,
					(word & RL_WAY_TAG) | RL_WAY_BUSY) != old)
		return -1;
	RL_WRITE(d[0], k[0]);
	RL_WRITE(d[1], k[1]);
	/* the key before the word that publishes it: x86 keeps two stores
	 * in order (a CPU of another order is refused at attach) */
	RL_WRITE(b->way[way], word);
	return 0;
}

/* Reads of a taken `placing` before a CPU gives up waiting: the holder
 * writes one key and a few words (well under a microsecond); this bounds
 * the wait if it was interrupted. */
#define RL_PLACE_WAIT	4096

static long placing_free(__u32 i, __u32 *lock)
{
	struct rl_index_bucket *b = bpf_map_lookup_elem(&source_index, lock);

	(void)i;
	return !b || !RL_READ(b->placing);
}

/* Take `placing` of bucket `lb` (index `lock`), waiting for a CPU that
 * holds it: 0, or -1 (waited RL_PLACE_WAIT reads in vain). */
static __always_inline int take_placing(struct rl_index_bucket *lb, __u32 lock)
{
	for (int tries = 0; tries < 4; tries++) {
		if (__sync_val_compare_and_swap(&lb->placing, 0, 1) == 0)
			return 0;
		bpf_loop(RL_PLACE_WAIT, placing_free, &lock, 0);
	}
	return -1;
}

/*
 * Place source `key` (verified or not) and return its slot: where it
 * already is, else an empty way of its two buckets, else the way of the
 * least worth keeping (rl_way_victim_rank: never a verified source for an
 * unverified one). RL_NO_SLOT: every way is one it may not take (or a
 * CPU held the lock past RL_PLACE_WAIT). Under that bucket's `placing`,
 * so that a source is placed once however many CPUs see its first packets
 * together; a way's word changes by compare-and-swap only, as CPUs placing
 * sources of other lower buckets may share these.
 */
__noinline int source_place(const struct rl_key *key, int verified)
{
	struct rl_index_bucket *b0, *b1, *lb, *vb;
	struct victim_ctx v = {};
	struct rl_index_place p;
	__u32 lock, way, old, bucket;
	__u64 k[2];
	int slot;

	if (!key)
		return RL_NO_SLOT;
	__builtin_memcpy(k, key, sizeof(k));
	if (index_place(&p, k))
		return RL_NO_SLOT;
	lock = rl_index_lock_bucket(&p);
	b0 = bpf_map_lookup_elem(&source_index, &p.bucket[0]);
	b1 = bpf_map_lookup_elem(&source_index, &p.bucket[1]);
	lb = bpf_map_lookup_elem(&source_index, &lock);
	if (!b0 || !b1 || !lb)
		return RL_NO_SLOT;
	/* a CPU placing a source of this lower bucket (perhaps this one,
	 * from its first packets on two CPUs) is waited for: the source
	 * then is where it put it */
	if (take_placing(lb, lock))
		return RL_NO_SLOT;
	slot = probe(b0, &p, k);
	if (slot >= 0) {
		slot = rl_index_slot(p.bucket[0], slot);
		goto out;
	}
	slot = probe(b1, &p, k);
	if (slot >= 0) {
		slot = rl_index_slot(p.bucket[1], slot);
		goto out;
	}
	v.bucket[0] = p.bucket[0];
	v.bucket[1] = p.bucket[1];
	v.home = p.home;
	v.verified = verified;
	v.rank = RL_WAY_NEVER;
	bpf_loop(2 * RL_INDEX_WAYS, victim_way, &v, 0);
	/* the emptier bucket (two choices keep the fullest bucket near the
	 * average), else the best victim */
	if (v.empties[0] || v.empties[1]) {
		v.slot = v.empties[1] > v.empties[0] ? v.empty[1] : v.empty[0];
		v.rank = 0;
	}
	slot = RL_NO_SLOT;
	if (v.rank >= RL_WAY_NEVER)
		goto out;
	bucket = v.slot / RL_INDEX_WAYS;
	way = v.slot & RL_INDEX_WAY_MASK;
	vb = bucket == p.bucket[0] ? b0 : b1;
	old = RL_READ(vb->way[way]);
	if (rl_way_victim_rank(old, verified) >= RL_WAY_NEVER ||
	    take_way(vb, way, old, k, p.tag | RL_WAY_RECENT |
		     (verified ? RL_WAY_VERIFIED : 0)))
		goto out;	/* another CPU changed it: untracked */
	if (old & RL_WAY_STATE) {
		/* an eviction: the sources found since the last one in
		 * these buckets stay ahead of the others at the next */
		age(b0);
		age(b1);
	}
	slot = v.slot;
out:
	RL_WRITE(lb->placing, 0);
	return slot;
}

/* Mark source `key`, found verified, in the index: eviction keeps it from
 * unverified sources. Once per CPU that finds it so (its first read of a
 * verification), and a shared write only where the bit is not yet set.
 * By compare-and-swap of the word read with the key still in its way: a
 * CPU may have evicted the source since source_find(), and an OR would
 * mark the newcomer (perhaps a forged one) verified. A few tries: a
 * packet's RECENT or an eviction's ageing may change the word meanwhile. */
static __always_inline void source_index_verified(const struct rl_key *key)
{
	int slot = source_find(key);
	__u32 bucket, way, w;
	struct rl_index_bucket *b;
	__u64 k[2];

	if (slot < 0)
		return;
	bucket = (__u32)slot / RL_INDEX_WAYS;
	way = (__u32)slot & RL_INDEX_WAY_MASK;
	b = bpf_map_lookup_elem(&source_index, &bucket);
	if (!b)
		return;
	__builtin_memcpy(k, key, sizeof(k));
	for (int tries = 0; tries < 4; tries++) {
		w = RL_READ(b->way[way]);
		/* the word before the key: a way's key is written before the
		 * word that publishes it (take_way) */
		if ((w & (RL_WAY_STATE | RL_WAY_VERIFIED)) != RL_WAY_LIVE ||
		    !key_is(b, way, k))
			return;
		if (__sync_val_compare_and_swap(&b->way[way], w,
						w | RL_WAY_VERIFIED) == w)
			return;
	}
}
#endif /* RL_SOURCE_INDEX_BPF_H */
