/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The index of `sources` (doc/design/pool.md): where a tracked source's
 * per-CPU state is, without a kernel hash call. Plain C, shared by the
 * program, the library and the host tests.
 *
 * `sources` is a dense per-CPU pool of slots, one per way of the index,
 * handed out in order of arrival (`source_pool` counts them), so that
 * sources that come back in the order they came walk it in sequence, as
 * the kernel's LRU hash walks its preallocated elements; `source_keys` holds each slot's
 * key, shared. `source_index` is an array of buckets of RL_INDEX_WAYS
 * ways. A key hashes, with the seed the loader drew, to two buckets and a
 * tag: it lives in one way of one of the two (the emptier one when it is
 * placed), so that a table three quarters full still finds a way for
 * nearly every source. A way's word says whether it holds a source and
 * which tag; beside it the bucket names the way's slot (a way keeps the
 * slot it was first given), whose key is the one proof a tag matched the
 * right source. Placing a source (or evicting one for it) takes the lower
 * of its two buckets' `placing` word, so that two CPUs placing one new
 * source never give it two ways; finding one takes no lock.
 */
#ifndef RL_SOURCE_INDEX_H
#define RL_SOURCE_INDEX_H

#include <linux/types.h>

#define RL_INDEX_WAYS		16
#define RL_INDEX_WAY_MASK	(RL_INDEX_WAYS - 1)

/* A way's word: its state (the low two bits), RL_WAY_REPEAT (a packet
 * found it at a later stamp than it was placed at: its source came back,
 * and is kept before the sources seen once, as the kernel's LRU keeps a
 * hash's active list), RL_WAY_VERIFIED (its source was verified when it
 * was placed or since: such a way is evicted only for another verified
 * source while its source sends), its stamp (bits 4 to 15: when a packet
 * last found it, in RL_STAMP_SHIFT units of the program's clock, modulo
 * 4096) and its tag (the high 16 bits). */
#define RL_WAY_EMPTY		0U
#define RL_WAY_BUSY		1U	/* claimed: its key is being written */
#define RL_WAY_LIVE		2U
#define RL_WAY_STATE		3U
#define RL_WAY_REPEAT		(1U << 2)
#define RL_WAY_VERIFIED		(1U << 3)
#define RL_WAY_STAMP_SHIFT	4
#define RL_WAY_STAMP		(0xfffU << RL_WAY_STAMP_SHIFT)
#define RL_WAY_FLAGS		(RL_WAY_REPEAT | RL_WAY_VERIFIED | RL_WAY_STAMP)
#define RL_WAY_TAG		0xffff0000U

/* A stamp's unit: 2^28 ns (268 ms). A way's word is written when its
 * stamp is older than the packet's: at most about 4 times a second per
 * source that keeps sending, and never while it does not; 4096 units
 * (18 minutes) before a stamp comes round again. */
#define RL_STAMP_SHIFT		28
#define RL_STAMP_MASK		0xfffU

/* The stamp of clock reading `now`. */
static __always_inline __u32 rl_index_stamp(__u64 now)
{
	return (__u32)(now >> RL_STAMP_SHIFT) & RL_STAMP_MASK;
}

/* How long ago (in stamp units, modulo 4096) way word `w` was last found
 * at stamp `stamp`. */
static __always_inline __u32 rl_way_age(__u32 w, __u32 stamp)
{
	return (stamp - ((w & RL_WAY_STAMP) >> RL_WAY_STAMP_SHIFT)) & RL_STAMP_MASK;
}

/* Fewer than this many sources per bucket on average (three quarters
 * full at --max-sources): see rl_index_buckets(). */
#define RL_INDEX_LOAD_NUM	3
#define RL_INDEX_LOAD_DEN	4

/*
 * One bucket, whole 64-byte lines (the array lays buckets end to end from
 * a page): the ways' words, the line a lookup reads first; each way's
 * slot in `sources` plus one (0: none yet), the line it reads next; and
 * `placing`, 1 while a CPU places a source whose lower bucket this is, in
 * a line of its own so that taking it does not take the others from the
 * CPUs that read them.
 */
struct rl_index_bucket {
	__u32 way[RL_INDEX_WAYS];
	__u32 slot[RL_INDEX_WAYS];
	__u32 placing;
	__u32 pad[15];
};

/* Value of the one-entry `source_pool`: the slots of `sources` handed out
 * so far (at rl_pool_slots() and over, none is left: a new source takes a
 * way that has one). Its own line: written once per slot, while the pool
 * fills. */
struct rl_source_pool {
	__u32 handed;
	__u32 pad[15];
};

/*
 * Value of the per-CPU `source_front` (entry 0: sources' keys, 1: scoped
 * windows'): the key this CPU's last packet found, where it found it. The
 * next packet of the same key reads that way again, not the hash and the
 * probe (bpf/source_index.bpf.h source_front_find): trusted only while the
 * way is live with the same tag, its stamp the packet's unit, and the same
 * slot, whose key is still the packet's, so that it finds what a probe
 * finds and skips only a probe that would write nothing. The program's
 * own: not pinned, read by nobody else, empty in a program just loaded.
 */
struct rl_source_front {
	__u64 key[2];
	__u32 bucket;
	__u32 way;
	__u32 tag;	/* the way's word without RL_WAY_FLAGS */
	__u32 slot1;	/* its slot + 1; 0: none found yet */
	__u32 stamp;	/* the stamp unit it was found (and stamped) in */
	__u32 pad;
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
 * How good a victim way word `w` is for a source placed verified or not,
 * at stamp `stamp`, when ways older than `idle` stamps have a window with
 * nothing in it (lower is better; RL_WAY_NEVER: not this one). An empty
 * way first; then an unverified source before a verified one, and of
 * each, one seen once before one that came back; within those, the one
 * no packet found for longest (least recently used). A verified source
 * for an unverified one only once it is idle: it keeps its verification
 * (in `verified`) and its ban (in `bans`), and its window holds nothing.
 * Never a way another CPU is writing.
 */
#define RL_WAY_NEVER		0xffffffffU
static __always_inline __u32 rl_way_victim_rank(__u32 w, int verified,
						__u32 stamp, __u32 idle)
{
	__u32 age;

	if ((w & RL_WAY_STATE) == RL_WAY_EMPTY)
		return 0;
	if ((w & RL_WAY_STATE) != RL_WAY_LIVE)
		return RL_WAY_NEVER;
	age = rl_way_age(w, stamp);
	if ((w & RL_WAY_VERIFIED) && !verified && age <= idle)
		return RL_WAY_NEVER;
	return (((w & RL_WAY_VERIFIED) ? 2 : 0) + ((w & RL_WAY_REPEAT) ? 1 : 0)) *
	       (RL_STAMP_MASK + 1) + (RL_STAMP_MASK + 1) - age;
}

/* Stamps after which a source's window of `window_ns` holds nothing. */
static __always_inline __u32 rl_index_idle(__u64 window_ns)
{
	return (__u32)(window_ns >> RL_STAMP_SHIFT) + 1;
}

/*
 * A choice of empty way for a new source, the program's and a reload's
 * carry's alike: half x RL_INDEX_WAYS + way + 1 (0: none), RL_PICK_FRESH
 * set if it has no slot yet. Of each bucket the search found one empty way
 * with a slot and one without (`slotted`, `bare`: way + 1, 0: none): the
 * emptier bucket first (two choices keep the fullest bucket near the
 * average), a way with a slot before one without, a way without only while
 * the pool has `room`. Constant indices, no array indexed by a variable:
 * the compiler made that a pointer OR, which the verifier refuses.
 */
#define RL_PICK_FRESH	0x100U
static __always_inline __u32 rl_pick_in(__u32 slotted, __u32 bare, __u32 half,
					int room)
{
	if (slotted)
		return half * RL_INDEX_WAYS + slotted;
	if (bare && room)
		return (half * RL_INDEX_WAYS + bare) | RL_PICK_FRESH;
	return 0;
}

static __always_inline __u32 rl_pick_empty(const __u32 empties[2],
					   const __u32 slotted[2],
					   const __u32 bare[2], int room)
{
	__u32 pick;

	if (empties[1] > empties[0]) {
		pick = rl_pick_in(slotted[1], bare[1], 1, room);
		return pick ? pick : rl_pick_in(slotted[0], bare[0], 0, room);
	}
	pick = rl_pick_in(slotted[0], bare[0], 0, room);
	return pick ? pick : rl_pick_in(slotted[1], bare[1], 1, room);
}

/* The bucket (0 or 1 of the two) and way of pick `pick` (not 0). */
static __always_inline __u32 rl_pick_half(__u32 pick)
{
	return ((pick - 1) / RL_INDEX_WAYS) & 1;
}

static __always_inline __u32 rl_pick_way(__u32 pick)
{
	return (pick - 1) & RL_INDEX_WAY_MASK;
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
/* Slots of the pool of an index of `nbuckets`: one per way, so that a
 * source finds an empty way with a slot as often as the index has empty
 * ways (a pool of --max-sources slots, each way given one as it comes,
 * left a new source of a full pool only the ways of its two buckets to
 * evict from: a quarter of new sources a pass re-created 16% of the
 * sources that stayed, in tests/prog capacity_with_churn). */
static __always_inline __u32 rl_pool_slots(__u32 nbuckets)
{
	return nbuckets * RL_INDEX_WAYS;
}
#endif /* RL_SOURCE_INDEX_H */
