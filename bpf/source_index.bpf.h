/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Finding and placing a source in `source_index` (include/source_index.h):
 * its slot in `sources`. Global functions, so that the verifier walks the
 * probe loops once, not on every path of the program that reaches them.
 */
#ifndef RL_SOURCE_INDEX_BPF_H
#define RL_SOURCE_INDEX_BPF_H

#include "maps.bpf.h"
#include "cpus.bpf.h"
#include "source_index.h"
#include "scope.h"

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

/* Key `key` as two words: whole loads, not the 16 byte loads (and their
 * spills) a copy of a byte array takes; every key the program passes is
 * a stack or map value of 8-byte alignment. */
static __always_inline void key_words(__u64 k[2], const struct rl_key *key)
{
	const __u64 *w = (const __u64 *)(const void *)key;

	k[0] = w[0];
	k[1] = w[1];
}

/* Stamp way `way` of `b` (word `w`) found at `stamp`, unless it is so
 * already, and mark it RL_WAY_REPEAT the first time: the one shared write
 * of a lookup, once a stamp unit at most. An XOR of those bits only: a
 * verification marked, or the stamp of another CPU, meanwhile stays (two
 * stamps together make another stamp, an age a little wrong, never a word
 * of another source). */
static __always_inline void stamp_way(struct rl_index_bucket *b, __u32 way,
				      __u32 w, __u32 stamp)
{
	__u32 diff = (w ^ (stamp << RL_WAY_STAMP_SHIFT)) & RL_WAY_STAMP;

	if (!diff)
		return;
	if (!(w & RL_WAY_REPEAT))
		diff |= RL_WAY_REPEAT;
	__sync_fetch_and_xor(&b->way[way & RL_INDEX_WAY_MASK], diff);
}

/* Does slot `slot1` - 1 (0: none) of `source_keys` hold key `k`? */
static __always_inline int slot_holds(__u32 slot1, const __u64 k[2])
{
	__u32 slot = slot1 - 1;
	const __u64 *o;

	if (!slot1)
		return 0;
	o = bpf_map_lookup_elem(&source_keys, &slot);
	return o && RL_READ(o[0]) == k[0] && RL_READ(o[1]) == k[1];
}

/* The way of bucket `b` that holds the key (-1: none), stamped at `stamp`
 * (RL_STAMP_NONE: not stamped). */
#define RL_STAMP_NONE	(~0U)
static __always_inline int probe(struct rl_index_bucket *b,
				 const struct rl_index_place *p,
				 const __u64 k[2], __u32 stamp)
{
	for (__u32 i = 0; i < RL_INDEX_WAYS; i++) {
		__u32 way = (p->home + i) & RL_INDEX_WAY_MASK;
		__u32 w = RL_READ(b->way[way]);

		if (!rl_way_matches(w, p) || !slot_holds(RL_READ(b->slot[way]), k))
			continue;
		if (stamp != RL_STAMP_NONE)
			stamp_way(b, way, w, stamp);
		return way;
	}
	return -1;
}

/* The slot front entry `f` names for key `k` (RL_NO_SLOT: none, or not
 * the key's any more), for a packet at stamp unit `stamp`: the way it
 * names checked as probe() checks a way, and trusted only where a probe
 * would write nothing to it (its stamp already this unit's). */
static __always_inline int front_slot(const struct rl_source_front *f,
				      const __u64 k[2], __u32 stamp)
{
	struct rl_index_bucket *b;
	__u32 bucket = f->bucket, way = f->way & RL_INDEX_WAY_MASK, slot1, w;

	if (f->key[0] != k[0] || f->key[1] != k[1] || f->stamp != stamp)
		return RL_NO_SLOT;
	b = bpf_map_lookup_elem(&source_index, &bucket);
	if (!b)
		return RL_NO_SLOT;
	/* the way's stamp this unit's too: else a probe would write it (a
	 * stamp lost to another CPU's XOR, an entry 4096 units old) */
	w = RL_READ(b->way[way]);
	if ((w & ~RL_WAY_FLAGS) != f->tag ||
	    ((w & RL_WAY_STAMP) >> RL_WAY_STAMP_SHIFT) != stamp)
		return RL_NO_SLOT;
	slot1 = RL_READ(b->slot[way]);
	if (slot1 != f->slot1 || !slot_holds(slot1, k))
		return RL_NO_SLOT;
	return (int)slot1 - 1;
}

/* The front entry of key `k`: a source's (0) or a scoped rule's window's
 * (1), so that a packet that looks up both finds each in its own. */
static __always_inline __u32 front_index(const __u64 k[2])
{
	return rl_key_scoped((const struct rl_key *)(const void *)k);
}

/* Key `k` found at way `way` of bucket `bucket` (tag `tag`, slot + 1
 * `slot1`) in stamp unit `stamp`: this CPU's front entry. */
static __always_inline void front_keep(const __u64 k[2], __u32 bucket,
				       __u32 way, __u32 tag, __u32 slot1,
				       __u32 stamp)
{
	__u32 idx = front_index(k);
	struct rl_source_front *f = bpf_map_lookup_elem(&source_front, &idx);

	if (!f)
		return;
	f->key[0] = k[0];
	f->key[1] = k[1];
	f->bucket = bucket;
	f->way = way;
	f->tag = tag;
	f->slot1 = slot1;
	f->stamp = stamp;
}

/* Where a source was found: its bucket and way. */
struct rl_way_ref {
	__u32 bucket;
	__u32 way;
};

/* The slot of source `key` in `sources`, or RL_NO_SLOT; its way stamped
 * with the time `now` of the packet that looks (0: a lookup that is no
 * packet's, as a refresh's, stamps nothing), and named in `at` if not
 * NULL. A packet's lookup (`now`, no `at`) leaves what it found in this
 * CPU's front entry (source_front_find). */
__noinline int source_find(const struct rl_key *key, __u64 now,
			   struct rl_way_ref *at)
{
	struct rl_index_place p;
	struct rl_index_bucket *b = NULL;
	__u32 stamp, slot1, bucket = 0;
	__u64 k[2];
	int way = -1;

	if (!key)
		return RL_NO_SLOT;
	key_words(k, key);
	if (index_place(&p, k))
		return RL_NO_SLOT;
	stamp = now ? rl_index_stamp(now) : RL_STAMP_NONE;
	/* one exit from the loop: what follows a find is walked once, not
	 * once for each way of each bucket it may be found in */
	for (int i = 0; i < 2; i++) {
		bucket = i ? p.bucket[1] : p.bucket[0];
		b = bpf_map_lookup_elem(&source_index, &bucket);
		if (!b)
			return RL_NO_SLOT;
		way = probe(b, &p, k, stamp);
		if (way >= 0)
			break;
	}
	if (way < 0 || !b)
		return RL_NO_SLOT;
	slot1 = RL_READ(b->slot[way & RL_INDEX_WAY_MASK]);
	if (at) {
		at->bucket = bucket;
		at->way = way;
	} else if (now) {
		front_keep(k, bucket, way, p.tag, slot1, stamp);
	}
	return (int)slot1 - 1;
}

/*
 * The slot of source `key` for a packet at `now` that this CPU's front
 * entry names (struct rl_source_front), or RL_NO_SLOT: then source_find().
 * The source that sends again on this CPU costs no hash and no probe (the
 * heavy sender a limiter is for); any other pays a compare. A function of
 * its own: branches on the caller's arguments before source_find()'s
 * probe loop would have the verifier walk that loop once for each.
 */
__noinline int source_front_find(const struct rl_key *key, __u64 now)
{
	struct rl_source_front *f;
	__u64 k[2];
	__u32 idx;

	if (!key)
		return RL_NO_SLOT;
	key_words(k, key);
	idx = front_index(k);
	f = bpf_map_lookup_elem(&source_front, &idx);
	if (!f)
		return RL_NO_SLOT;
	return front_slot(f, k, rl_index_stamp(now));
}

/* What the victim search (a bpf_loop over both buckets' ways) reads and
 * finds, per bucket: its empty ways (their count), one of them that has
 * a slot and one that has none (each way + 1, 0: none); and the best way
 * to evict so far (half x RL_INDEX_WAYS + way) and its rank. */
struct victim_ctx {
	__u32 bucket[2];
	__u32 home;
	int verified;
	__u32 stamp;
	__u32 idle;
	__u32 empties[2];
	__u32 slotted[2];
	__u32 bare[2];
	__u32 victim;
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
	rank = rl_way_victim_rank(RL_READ(b->way[way]), c->verified, c->stamp,
				  c->idle);
	if (rank == 0) {
		c->empties[half]++;
		if (RL_READ(b->slot[way])) {
			if (!c->slotted[half])
				c->slotted[half] = way + 1;
		} else if (!c->bare[half]) {
			c->bare[half] = way + 1;
		}
	} else if (rank < c->rank) {
		c->rank = rank;
		c->victim = half * RL_INDEX_WAYS + way;
	}
	return 0;
}

/* What clear_owner() clears: slot `slot` of every CPU that joined. */
struct clear_ctx {
	__u32 slot;
	__u32 end;
};

static long clear_cpu(__u32 cpu, struct clear_ctx *c)
{
	struct rl_source *o;

	if (cpu >= c->end)
		return 1;
	if (!cpus_joined(cpu))
		return 0;
	o = bpf_map_lookup_percpu_elem(&sources, &c->slot, cpu);
	if (o)
		__builtin_memset(&o->owner, RL_OWNER_NOBODY, sizeof(o->owner));
	return 0;
}

/*
 * No CPU's value of slot `slot` belongs to anyone any more (its owner
 * RL_OWNER_NOBODY, not zero: the zero key would own it): its new
 * source starts afresh on every CPU, even one it had before (evicted from
 * this way and placed in it again, its old values name it still). Only
 * the CPUs that joined hold values (a CPU joins before it owns one,
 * include/cpus.h). Before the way is published: a CPU still finishing a
 * packet of the evicted source writes that source's key, not the new one.
 */
static __always_inline void clear_owner(__u32 slot)
{
	struct clear_ctx c = { .slot = slot, .end = cpus_end() };

	bpf_loop(settings.ncpus, clear_cpu, &c, 0);
}

/* Slots of `sources`, as the loader sized it for the index. */
static __always_inline __u32 pool_slots(void)
{
	struct rl_config *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&config, &zero);
	return cfg ? rl_pool_slots(cfg->index_buckets) : 0;
}

/* Is a slot of `sources` left to hand out? A hint: the fetching add in
 * take_way() decides. */
static __always_inline int pool_has_room(__u32 slots)
{
	struct rl_source_pool *pool;
	__u32 zero = 0;

	pool = bpf_map_lookup_elem(&source_pool, &zero);
	return pool && RL_READ(pool->handed) < slots;
}

/* Claim way `way` of `b` (holding `old`) for key `k`: its slot (a new one
 * from the pool of `slots` if `fresh`, else the one it has, whose values then lose
 * their owner), the key in it, the word published. The slot, or
 * RL_NO_SLOT if another CPU changed the way first or the pool ran out
 * meanwhile (the way given back as it was). */
static __always_inline int take_way(struct rl_index_bucket *b, __u32 way,
				    __u32 old, const __u64 k[2], __u32 word,
				    int fresh, __u32 slots)
{
	struct rl_source_pool *pool;
	__u32 zero = 0, slot;
	__u64 *d;

	way &= RL_INDEX_WAY_MASK;
	if (__sync_val_compare_and_swap(&b->way[way], old,
					(word & RL_WAY_TAG) | RL_WAY_BUSY) != old)
		return RL_NO_SLOT;
	if (fresh) {
		/* given a slot since it was read (placed, then removed:
		 * its word back as it was): it keeps that one */
		if (RL_READ(b->slot[way]))
			goto give_back;
		pool = bpf_map_lookup_elem(&source_pool, &zero);
		slot = pool ? __sync_fetch_and_add(&pool->handed, 1) : ~0U;
		if (slot >= slots)
			goto give_back;
	} else {
		/* a way with a slot keeps it: the values in it are another
		 * source's, or this one's from before it was evicted */
		slot = RL_READ(b->slot[way]) - 1;
		clear_owner(slot);
	}
	d = bpf_map_lookup_elem(&source_keys, &slot);
	if (!d)
		goto give_back;	/* cannot happen: the map has `slots` */
	RL_WRITE(d[0], k[0]);
	RL_WRITE(d[1], k[1]);
	if (fresh)
		RL_WRITE(b->slot[way], slot + 1);
	/* the slot and key before the word that publishes them: x86 keeps
	 * two stores in order (a CPU of another order is refused at attach) */
	RL_WRITE(b->way[way], word);
	return (int)slot;
give_back:
	/* nothing changes a busy word but its claimer */
	RL_WRITE(b->way[way], old);
	return RL_NO_SLOT;
}

/* Reads of a taken `placing` before a CPU gives up waiting. The holder
 * writes one key and a few words, well under a microsecond, in softirq
 * (preemption off): only a hypervisor that stops its virtual CPU keeps it
 * longer, as it would a kernel spin lock's holder. 4,096 reads (tens of
 * microseconds) gave up under such a stop in qemu, and the source's first
 * packet on the waiting CPU was refused as a source without room; 2^17
 * reads (about 2 ms on a 2-CPU cloud VM, where a stopped holder's packet
 * costs the waiter that much at most) outlast a stop of a host's
 * scheduling slice. */
#define RL_PLACE_WAIT	(1U << 17)

/* What a CPU waiting for `placing` of bucket `lock` holds: whether it
 * took it. */
struct placing_wait {
	__u32 lock;
	int taken;
};

/* One read of `placing`, and a try to take it once it reads free (a
 * compare-and-swap only then, so that waiting CPUs do not keep its line
 * from the holder). */
static long placing_try(__u32 i, struct placing_wait *w)
{
	struct rl_index_bucket *b = bpf_map_lookup_elem(&source_index, &w->lock);

	(void)i;
	if (!b)
		return 1;
	if (RL_READ(b->placing) ||
	    __sync_val_compare_and_swap(&b->placing, 0, 1) != 0)
		return 0;
	w->taken = 1;
	return 1;
}

/* Take `placing` of bucket `lb` (index `lock`), waiting for a CPU that
 * holds it: 0, or -1 (RL_PLACE_WAIT reads in vain). */
static __always_inline int take_placing(struct rl_index_bucket *lb, __u32 lock)
{
	struct placing_wait w = { .lock = lock };

	if (__sync_val_compare_and_swap(&lb->placing, 0, 1) == 0)
		return 0;
	bpf_loop(RL_PLACE_WAIT, placing_try, &w, 0);
	return w.taken ? 0 : -1;
}

/*
 * Place source `key` (verified or not) at `now` and return its slot: where
 * it already is; else an empty way of the emptier of its two buckets (one
 * that has a slot, else one given the pool's next slot); else the way of
 * the least worth keeping (rl_way_victim_rank: least recently found, never
 * a verified source that sends for an unverified one), its slot taken
 * over. RL_NO_SLOT: every way is one it may not take (or a CPU held the
 * lock past RL_PLACE_WAIT). Under that bucket's `placing`, so that a
 * source is placed once however many CPUs see its first packets together;
 * a way's word changes by compare-and-swap only, as CPUs placing sources
 * of other lower buckets may share these.
 */
__noinline int source_place(const struct rl_key *key, int verified, __u64 now)
{
	struct rl_index_bucket *b0, *b1, *lb, *vb;
	struct victim_ctx v = {};
	struct rl_index_place p;
	__u32 lock, way, half, stamp, pick, slots;
	int fresh, room, slot, to_empty;
	__u64 k[2];

	if (!key)
		return RL_NO_SLOT;
	key_words(k, key);
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
	stamp = rl_index_stamp(now);
	way = probe(b0, &p, k, stamp);
	if ((int)way >= 0) {
		slot = (int)RL_READ(b0->slot[way & RL_INDEX_WAY_MASK]) - 1;
		goto out;
	}
	way = probe(b1, &p, k, stamp);
	if ((int)way >= 0) {
		slot = (int)RL_READ(b1->slot[way & RL_INDEX_WAY_MASK]) - 1;
		goto out;
	}
	v.bucket[0] = p.bucket[0];
	v.bucket[1] = p.bucket[1];
	v.home = p.home;
	v.verified = verified;
	v.stamp = stamp;
	v.idle = rl_index_idle(settings.window_ns);
	v.rank = RL_WAY_NEVER;
	bpf_loop(2 * RL_INDEX_WAYS, victim_way, &v, 0);
	/* an empty way (rl_pick_empty), else the best victim */
	slots = pool_slots();
	room = pool_has_room(slots);
	pick = rl_pick_empty(v.empties, v.slotted, v.bare, room);
	to_empty = pick != 0;
	if (!pick && v.rank < RL_WAY_NEVER)
		pick = v.victim + 1;
	slot = RL_NO_SLOT;
	if (!pick)
		goto out;
	fresh = pick & RL_PICK_FRESH;
	half = rl_pick_half(pick);
	way = rl_pick_way(pick);
	vb = half ? b1 : b0;
	way &= RL_INDEX_WAY_MASK;
	{
		__u32 old = RL_READ(vb->way[way]);

		/* another CPU changed it (an empty way placed meanwhile is
		 * not evicted for want of another look): untracked */
		if (rl_way_victim_rank(old, verified, stamp, v.idle) >= RL_WAY_NEVER ||
		    (to_empty && (old & RL_WAY_STATE) != RL_WAY_EMPTY) ||
		    (fresh && RL_READ(vb->slot[way])))
			goto out;
		slot = take_way(vb, way, old, k, p.tag |
				stamp << RL_WAY_STAMP_SHIFT |
				(verified ? RL_WAY_VERIFIED : 0), fresh, slots);
	}
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
 * packet's stamp may change the word meanwhile. */
static __always_inline void source_index_verified(const struct rl_key *key)
{
	struct rl_way_ref at;
	struct rl_index_bucket *b;
	__u32 w, slot1;
	__u64 k[2];
	int slot = source_find(key, 0, &at);

	if (slot < 0)
		return;
	b = bpf_map_lookup_elem(&source_index, &at.bucket);
	if (!b)
		return;
	key_words(k, key);
	for (int tries = 0; tries < 4; tries++) {
		w = RL_READ(b->way[at.way & RL_INDEX_WAY_MASK]);
		slot1 = RL_READ(b->slot[at.way & RL_INDEX_WAY_MASK]);
		/* the word before the key: a way's key is written before the
		 * word that publishes it (take_way) */
		if ((w & (RL_WAY_STATE | RL_WAY_VERIFIED)) != RL_WAY_LIVE ||
		    !slot_holds(slot1, k))
			return;
		if (__sync_val_compare_and_swap(&b->way[at.way & RL_INDEX_WAY_MASK],
						w, w | RL_WAY_VERIFIED) == w)
			return;
	}
}
#endif /* RL_SOURCE_INDEX_BPF_H */
