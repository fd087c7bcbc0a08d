/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The index of `sources` (doc/design/pool.md): where a tracked source's
 * per-CPU state is, without a kernel hash call. Plain C, shared by the
 * program, the library and the host tests.
 *
 * `source_index` is an array of buckets of RL_INDEX_WAYS ways; `sources`
 * a per-CPU array with one slot per way (slot = bucket x RL_INDEX_WAYS +
 * way). A key hashes, with the seed the loader drew, to two buckets and a
 * tag: it lives in one way of one of the two (the emptier one when it is
 * placed), so that a table three quarters full still finds a way for
 * nearly every source. A way's word says whether it holds a source and
 * which tag; the bucket keeps the source's whole key beside it, the one
 * proof a tag matched the right source. Placing a source (or evicting one
 * for it) takes the lower of its two buckets' `placing` word (a try-lock:
 * a CPU that finds it taken leaves the packet untracked, it never waits),
 * so that two CPUs placing one new source never give it two ways; finding
 * one takes no lock.
 */
#ifndef RL_SOURCE_INDEX_H
#define RL_SOURCE_INDEX_H

#include <linux/types.h>

#define RL_INDEX_WAYS		16
#define RL_INDEX_WAY_MASK	(RL_INDEX_WAYS - 1)

/* A way's word: its state (the low two bits), RL_WAY_RECENT (a packet
 * found it since the last eviction in its buckets), RL_WAY_VERIFIED (its
 * source was verified when it was placed or since: such a way is evicted
 * only for another verified source), and the tag (the high 28 bits). */
#define RL_WAY_EMPTY		0U
#define RL_WAY_BUSY		1U	/* claimed: its key is being written */
#define RL_WAY_LIVE		2U
#define RL_WAY_STATE		3U
#define RL_WAY_RECENT		(1U << 2)
#define RL_WAY_VERIFIED		(1U << 3)
#define RL_WAY_FLAGS		(RL_WAY_RECENT | RL_WAY_VERIFIED)
#define RL_WAY_TAG		0xfffffff0U

/* Fewer than this many sources per bucket on average (three quarters
 * full at --max-sources): see rl_index_buckets(). */
#define RL_INDEX_LOAD_NUM	3
#define RL_INDEX_LOAD_DEN	4

/*
 * One bucket, whole 64-byte lines (the array lays buckets end to end from
 * a page): the ways' words, the line a lookup reads before it compares a
 * key; each way's key; and `placing`, 1 while a CPU places a source whose
 * lower bucket this is, in a line of its own so that taking it does not
 * take the words' line from the CPUs that read it.
 */
struct rl_index_bucket {
	__u32 way[RL_INDEX_WAYS];
	__u8 key[RL_INDEX_WAYS][16];
	__u32 placing;
	__u32 pad[15];
};

/* Where a key may live: its two buckets and its tag (RL_WAY_LIVE set). */
struct rl_index_place {
	__u32 bucket[2];
	__u32 tag;
	__u32 home;	/* the first way a probe of either bucket reads */
};

/* murmur3's 64-bit finalizer: every input bit moves every output bit. */
static __always_inline __u64 rl_index_mix(__u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/*
 * The key's 64-bit hash under `seed`: each 64-bit half mixed in whole
 * (an IPv4 key's first half is the same for every source), keyed so that
 * nobody who does not know the seed can aim sources at one bucket. A
 * mix that moved one bit of the first half to fixed bits of the second
 * would let keys collide under every seed (tests/unit test_source_index).
 */
static __always_inline __u64 rl_index_hash(const __u64 k[2], __u64 seed)
{
	return rl_index_mix(rl_index_mix(k[0] ^ seed) ^ k[1] ^
			    (seed * 0x9e3779b97f4a7c15ULL));
}

/* The buckets, tag and home way of key `k` in an index of `nbuckets`
 * (at least 2) under `seed`. */
static __always_inline void rl_index_locate(struct rl_index_place *p,
					    const __u64 k[2], __u64 seed,
					    __u32 nbuckets)
{
	__u64 x = rl_index_hash(k, seed);
	__u64 t = x * 0xd6e8feb86659fd93ULL;
	__u32 b0 = (__u32)(((x & 0xffffffffULL) * nbuckets) >> 32);
	__u32 b1 = (__u32)(((x >> 32) * nbuckets) >> 32);

	if (b1 == b0)
		b1 = b0 + 1 < nbuckets ? b0 + 1 : 0;
	p->bucket[0] = b0;
	p->bucket[1] = b1;
	p->tag = ((__u32)(t >> 32) & RL_WAY_TAG) | RL_WAY_LIVE;
	p->home = (__u32)(t >> 28) & RL_INDEX_WAY_MASK;
}

/* Does way word `w` hold a source with the tag of `p`? */
static __always_inline int rl_way_matches(__u32 w, const struct rl_index_place *p)
{
	return (w & ~RL_WAY_FLAGS) == p->tag;
}

/* The bucket whose lock placing a source at `p` takes. */
static __always_inline __u32 rl_index_lock_bucket(const struct rl_index_place *p)
{
	return p->bucket[0] < p->bucket[1] ? p->bucket[0] : p->bucket[1];
}

/*
 * How good a victim way word `w` is for a source placed verified or not
 * (lower is better; RL_WAY_NEVER: not this one). An empty way first; then
 * a source no packet found since the last eviction in these buckets; an
 * unverified source before a verified one, and a verified one only for a
 * verified newcomer; never a way another CPU is writing.
 */
#define RL_WAY_NEVER		8
static __always_inline int rl_way_victim_rank(__u32 w, int verified)
{
	int rank;

	if ((w & RL_WAY_STATE) == RL_WAY_EMPTY)
		return 0;
	if ((w & RL_WAY_STATE) != RL_WAY_LIVE)
		return RL_WAY_NEVER;
	if ((w & RL_WAY_VERIFIED) && !verified)
		return RL_WAY_NEVER;
	rank = w & RL_WAY_RECENT ? 2 : 1;
	return w & RL_WAY_VERIFIED ? rank + 2 : rank;
}

/* Slot of way `way` of bucket `bucket` in `sources`. */
static __always_inline __u32 rl_index_slot(__u32 bucket, __u32 way)
{
	return bucket * RL_INDEX_WAYS + way;
}

/* Buckets of an index for `max_sources`: at most three quarters full,
 * at least 2 (a key's two buckets differ). */
static __always_inline __u32 rl_index_buckets(__u64 max_sources)
{
	__u64 n = (max_sources * RL_INDEX_LOAD_DEN +
		   (__u64)RL_INDEX_LOAD_NUM * RL_INDEX_WAYS - 1) /
		  ((__u64)RL_INDEX_LOAD_NUM * RL_INDEX_WAYS);

	return n < 2 ? 2 : (__u32)n;
}
#endif /* RL_SOURCE_INDEX_H */
