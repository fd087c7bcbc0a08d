// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The source pool (doc/design/pool.md): a source is placed once however
 * many CPUs see its first packets together; a full pair of buckets never
 * gives a verified source's way to an unverified one; and it gives up the
 * way a packet found least recently. The keys
 * that share a pair of buckets are found with the index's own hash
 * (rl_index_locate) under the seed the loader drew, in a small table.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include "ratelimit.h"
#include "lib/maps.h"
#include "lib/settings.h"
#include "lib/source_index_map.h"
#include "../harness.h"
#include "fixture.h"
#include "spread.h"

/* The key of IPv4 source `a`, as the program makes it. */
static struct rl_key v4_key(__u32 a)
{
	struct rl_key k = { .addr = { [10] = 0xff, [11] = 0xff } };

	a = htonl(a);
	memcpy(&k.addr[12], &a, 4);
	return k;
}

/* The text of an IPv4 key, for frame_udp(). */
static const char *v4_text(const struct rl_key *k, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u.%u", k->addr[12], k->addr[13], k->addr[14],
		 k->addr[15]);
	return buf;
}

/* ---- a source's first packets on two CPUs ---- */

#define FIRST_ROUNDS	500
#define FIRST_REPEAT	16	/* frames per CPU per round */
#define FIRST_BUDGET	FIRST_REPEAT	/* a round's two CPUs send twice it */

/* Round r's source: 198.18.100.1 on. */
static __u32 first_source(int r)
{
	return (198U << 24 | 18U << 16 | 100U << 8) + 1 + (__u32)r;
}

/* How often the walk met each round's source. */
static int count_rounds(void *ctx, const struct rl_key *key, __u32 slot,
			const void *vals)
{
	int *met = ctx;

	(void)slot;
	(void)vals;
	for (int r = 0; r < FIRST_ROUNDS; r++) {
		struct rl_key k = v4_key(first_source(r));

		if (!memcmp(&k, key, sizeof(k))) {
			met[r]++;
			break;
		}
	}
	return 0;
}

/*
 * A new source's first packets on two CPUs at once, round after round (a
 * new source each): it gets one slot, which both CPUs judge every frame
 * in, and so one budget: a second slot would be a second budget. The walk
 * meets each source once.
 */
TEST(pool_first_packets_on_two_cpus_one_slot)
{
	int cpus[2], n = fixture_cpus(cpus, 2), rounds = 0, overlap = 0;
	int *met = calloc(FIRST_ROUNDS, sizeof(*met));
	void *vals = rl_percpu_alloc(sizeof(struct rl_source));
	struct spread_cpu c[2];
	struct rl_counters before, after;
	struct fixture f;
	struct frame fr;
	char addr[32];

	if (!fixture_open(&f, NULL) || !CHECK(met && vals, "alloc") ||
	    !CHECK_GE(n, 2, "this test needs 2 CPUs or more") ||
	    !fixture_pps(&f, "default", FIRST_BUDGET))
		goto out;
	if (!spread_prepare(&f, T0))
		goto out;
	c[0].cpu = cpus[0];
	c[1].cpu = cpus[1];
	before = fixture_totals(&f);
	for (int r = 0; r < FIRST_ROUNDS; r++) {
		struct rl_key k = v4_key(first_source(r));
		struct rl_counters was = fixture_totals(&f), now;
		bool ok = true;

		frame_udp(&fr, v4_text(&k, addr, sizeof(addr)), 64, 0);
		if (!spread_round(&f, &fr, FIRST_REPEAT, c, 2) ||
		    !CHECK_EQ(fixture_source_vals(&f, &k, vals), 0, "the source is tracked"))
			break;
		now = fixture_totals(&f);
		for (int i = 0; i < 2; i++) {
			const struct rl_source *v =
				RL_PERCPU_VAL(vals, sizeof(struct rl_source), c[i].cpu);

			ok &= CHECK(!memcmp(&v->owner, &k, sizeof(k)),
				    "%s: CPU %d's value in its slot is its own", addr,
				    c[i].cpu);
			ok &= CHECK_EQ(v->passed_pkts + v->dropped_pkts, FIRST_REPEAT,
				       "every frame of a CPU judged in the one slot");
		}
		ok &= CHECK_LE(now.passed_pkts - was.passed_pkts, FIRST_BUDGET,
			       "one budget: passed in the round <= the budget");
		overlap += c[1].start < c[0].end && c[0].start < c[1].end;
		rounds++;
		if (!ok) {
			printf("    round %d, source %s\n", r, addr);
			break;
		}
	}
	after = fixture_totals(&f);
	printf("    %d rounds of %d frames on 2 CPUs, the runs overlapping in %d\n",
	       rounds, FIRST_REPEAT, overlap);
	CHECK_EQ(rounds, FIRST_ROUNDS, "rounds run");
	CHECK_EQ(after.untracked_pkts - before.untracked_pkts, 0,
		 "no first packet left untracked");
	CHECK_GE(overlap, 1, "rounds where both CPUs ran together (the check is not vacuous)");
	if (!CHECK_EQ(fixture_walk(&f, count_rounds, met), 0, "walk the index"))
		goto out;
	for (int r = 0; r < rounds; r++)
		if (!CHECK_EQ(met[r], 1, "the walk meets each round's source once"))
			break;
	CHECK_EQ(fixture_tracked(&f), rounds, "one slot per source, none else");
out:
	free(vals);
	free(met);
	fixture_close(&f);
}

/* ---- a full pair of buckets ---- */

/* A table of 64 sources: 6 buckets, so that many keys share a pair. */
#define SMALL_TABLE	64
#define PAIR_WAYS	(2 * RL_INDEX_WAYS)

/* The two buckets of `key`, the lower first. */
static void pair_of(const struct rl_index *x, const struct rl_key *key, __u32 pair[2])
{
	struct rl_index_place p;
	__u64 k[2];

	memcpy(k, key, sizeof(k));
	rl_index_locate(&p, k, x->seed, x->nbuckets);
	pair[0] = p.bucket[0] < p.bucket[1] ? p.bucket[0] : p.bucket[1];
	pair[1] = p.bucket[0] < p.bucket[1] ? p.bucket[1] : p.bucket[0];
}

/* `n` keys of net.0.0/16 (`net`: its first two octets, host order) from
 * its address `*next` on whose two buckets are `pair`; *next moves past
 * the last one. False (and a failed check) if the /16 has fewer. */
static bool keys_in_pair(const struct rl_index *x, __u32 net, const __u32 pair[2],
			 __u32 *next, struct rl_key *keys, int n)
{
	int found = 0;

	for (; found < n && *next < 0x10000; ++*next) {
		struct rl_key k = v4_key(net << 16 | *next);
		__u32 p[2];

		pair_of(x, &k, p);
		if (p[0] == pair[0] && p[1] == pair[1])
			keys[found++] = k;
	}
	return CHECK_EQ(found, n, "keys found in the pair of buckets");
}

/* A fixture of SMALL_TABLE sources, held, its index in `x`. */
static bool open_small(struct fixture *f, struct rl_index *x)
{
	struct rl_attach_req req;

	rl_attach_req_defaults(&req);
	req.max_sources = SMALL_TABLE;
	if (!fixture_open(f, &req) || !fixture_index(f, x))
		return false;
	fixture_hold(f);
	return CHECK_GE(x->nbuckets, 3, "more buckets than a pair");
}

/* Is `key` tracked: 0, -ENOENT, -errno (fixture_source_vals). */
static int tracked(struct fixture *f, const struct rl_key *key)
{
	void *vals = rl_percpu_alloc(sizeof(struct rl_source));
	int err = vals ? fixture_source_vals(f, key, vals) : -ENOMEM;

	free(vals);
	return err;
}

/* How many of `keys` are tracked; the last one not tracked (if any) in
 * *gone. */
static int tracked_of(struct fixture *f, const struct rl_key *keys, int n, int *gone)
{
	int count = 0;

	for (int i = 0; i < n; i++) {
		if (!tracked(f, &keys[i]))
			count++;
		else if (gone)
			*gone = i;
	}
	return count;
}

/*
 * 32 verified sources fill the two buckets of a pair: a new unverified
 * source of the same pair takes none of their ways (they send: its
 * packets are refused, not passed untracked) however often it comes,
 * while a new verified one does (the buckets were full: the check is not
 * vacuous).
 */
TEST(pool_verified_ways_kept_from_unverified)
{
	/* 198.18/16: a newcomer budget, so that verification is read and
	 * the answered sources are placed verified; 198.19/16: unverified
	 * sources go to `sources`, not `newcomers` */
	struct rl_rule_change verifying = {
		.have_pps = true, .pps = 100,
		.have_new_pps = true, .new_pps = 1000,
	};
	struct rl_key keys[PAIR_WAYS + 1], stranger;
	__u32 pair[2], next = 1, next19 = 1;
	struct rl_counters was, now;
	struct rl_index x;
	struct fixture f;
	struct frame fr;
	char addr[32];
	int gone = -1;

	if (!open_small(&f, &x) || !fixture_rule(&f, "198.18.0.0/16", &verifying) ||
	    !fixture_pps(&f, "198.19.0.0/16", 100))
		goto out;
	keys[0] = v4_key(198U << 24 | 18U << 16 | next++);
	pair_of(&x, &keys[0], pair);
	if (!keys_in_pair(&x, 198U << 8 | 18, pair, &next, keys + 1, PAIR_WAYS) ||
	    !keys_in_pair(&x, 198U << 8 | 19, pair, &next19, &stranger, 1))
		goto out;
	for (int i = 0; i < PAIR_WAYS; i++)
		if (!CHECK(fixture_answer(&f, v4_text(&keys[i], addr, sizeof(addr)),
					  i % 2 % rl_ncpus(), T0), "%s answered", addr))
			goto out;
	if (!CHECK_EQ(tracked_of(&f, keys, PAIR_WAYS, NULL), PAIR_WAYS,
		      "the answered sources fill both buckets"))
		goto out;
	frame_udp(&fr, v4_text(&stranger, addr, sizeof(addr)), 64, 0);
	was = fixture_totals(&f);
	/* with no way it may take, it is refused while its budget limits it
	 * (else a sender that found such an address passed unlimited) */
	CHECK_EQ(fixture_send(&f, &fr, 3, 0, T0), 0, "the unverified source is refused");
	CHECK_EQ(fixture_send(&f, &fr, 3, 1 % rl_ncpus(), T0 + 1), 0, "on either CPU");
	now = fixture_totals(&f);
	CHECK_EQ(now.untracked_pkts - was.untracked_pkts, 0, "none passed untracked");
	CHECK_EQ(now.dropped_pkts - was.dropped_pkts, 6, "all six dropped");
	CHECK_EQ(now.new_sources - was.new_sources, 0, "no source placed");
	CHECK_EQ(tracked(&f, &stranger), -ENOENT, "not in `sources`");
	CHECK_EQ(tracked_of(&f, keys, PAIR_WAYS, NULL), PAIR_WAYS,
		 "every verified source kept its way");
	/* a verified newcomer of the pair takes a verified source's way */
	CHECK(fixture_answer(&f, v4_text(&keys[PAIR_WAYS], addr, sizeof(addr)), 0, T0),
	      "%s answered", addr);
	CHECK_EQ(tracked_of(&f, keys, PAIR_WAYS + 1, &gone), PAIR_WAYS,
		 "a verified source placed: one verified source evicted for it");
	CHECK(gone >= 0 && gone < PAIR_WAYS, "the evicted one is an old one (%d)", gone);
out:
	fixture_close(&f);
}

/*
 * A full pair of buckets evicts the way a packet found least recently (by
 * its stamp, include/source_index.h): 32 sources fill it, a 33rd evicts
 * one of them (all found at one stamp: any); a stamp later every source
 * but one sends again, and another stamp later a 34th source takes the
 * way of that one, whatever its place in the buckets.
 */
#define STAMP_NS	(1ULL << RL_STAMP_SHIFT)
TEST(pool_evicts_the_least_recently_found_way)
{
	struct rl_key keys[PAIR_WAYS + 2];
	struct rl_index_place p;
	__u32 pair[2], next = 1, first_way, slot;
	struct rl_counters was, now;
	struct rl_index x;
	struct fixture f;
	struct frame fr;
	char addr[32];
	int idle = -1, gone = -1;
	__u64 k[2];

	if (!open_small(&f, &x) || !fixture_pps(&f, "default", 100))
		goto out;
	keys[0] = v4_key(198U << 24 | 18U << 16 | next++);
	pair_of(&x, &keys[0], pair);
	if (!keys_in_pair(&x, 198U << 8 | 18, pair, &next, keys + 1, PAIR_WAYS + 1))
		goto out;
	for (int i = 0; i < PAIR_WAYS + 1; i++) {
		frame_udp(&fr, v4_text(&keys[i], addr, sizeof(addr)), 64, 0);
		if (!CHECK_EQ(fixture_send(&f, &fr, 1, i % 2 % rl_ncpus(), T0), 1, addr))
			goto out;
	}
	was = fixture_totals(&f);
	CHECK_EQ(was.new_sources, PAIR_WAYS + 1, "33 sources placed");
	CHECK_EQ(was.untracked_pkts, 0, "none untracked");
	if (!CHECK_EQ(tracked_of(&f, keys, PAIR_WAYS + 1, &gone), PAIR_WAYS,
		      "the 33rd evicted one of the 32"))
		goto out;
	/* the idle one: not the first way the 34th's search reads, so that
	 * the search's order cannot pick it by chance */
	memcpy(k, &keys[PAIR_WAYS + 1], sizeof(k));
	rl_index_locate(&p, k, x.seed, x.nbuckets);
	if (rl_index_way_slot(&x, p.bucket[0], p.home, &first_way))
		first_way = ~0U;	/* no slot yet: no source's */
	for (int i = 0; i <= PAIR_WAYS && idle < 0; i++)
		if (i != gone && !rl_index_find(&x, &keys[i], &slot) && slot != first_way)
			idle = i;
	if (!CHECK(idle >= 0, "an idle source chosen"))
		goto out;
	for (int i = 0; i <= PAIR_WAYS; i++) {
		if (i == gone || i == idle)
			continue;
		frame_udp(&fr, v4_text(&keys[i], addr, sizeof(addr)), 64, 0);
		CHECK_EQ(fixture_send(&f, &fr, 1, (i + 1) % 2 % rl_ncpus(), T0 + STAMP_NS), 1,
			 "a tracked source sends again");
	}
	frame_udp(&fr, v4_text(&keys[PAIR_WAYS + 1], addr, sizeof(addr)), 64, 0);
	CHECK_EQ(fixture_send(&f, &fr, 1, 0, T0 + 2 * STAMP_NS), 1, "the 34th passes");
	now = fixture_totals(&f);
	CHECK_EQ(now.new_sources - was.new_sources, 1, "the 34th placed, none re-created");
	CHECK_EQ(tracked(&f, &keys[PAIR_WAYS + 1]), 0, "the 34th tracked");
	CHECK_EQ(tracked(&f, &keys[idle]), -ENOENT,
		 "the source found least recently: evicted");
	for (int i = 0; i <= PAIR_WAYS; i++)
		if (i != gone && i != idle &&
		    !CHECK_EQ(tracked(&f, &keys[i]), 0,
			      "every source found since: kept"))
			break;
out:
	fixture_close(&f);
}

/*
 * A source evicted and placed again starts afresh, as any new source
 * (bpf/source.bpf.h, new_source_state()): what it left in its slot (its
 * values on each CPU, their `owner` still its key) is no longer its state,
 * even where it takes the same way again. Here its way is emptied (as an
 * eviction leaves it) and it sends again in the same window: a new
 * source's first packet, in a new window, with counts of its own.
 */
TEST(pool_evicted_source_starts_afresh)
{
	const char *addr = "198.18.5.5";
	struct rl_key key = v4_key(198U << 24 | 18U << 16 | 5U << 8 | 5);
	struct rl_counters was, now;
	__u32 slot, again;
	struct rl_index x;
	struct fixture f;
	struct frame fr;

	if (!fixture_open(&f, NULL) || !fixture_pps(&f, "default", 1) ||
	    !fixture_index(&f, &x))
		goto out;
	frame_udp(&fr, addr, 64, 0);
	CHECK_EQ(fixture_send(&f, &fr, 2, 0, T0), 1, "1 a window: the first passes");
	if (!CHECK_EQ(rl_index_find(&x, &key, &slot), 0, "tracked") ||
	    !CHECK_EQ(fixture_evict(&f, &key), 0, "evicted"))
		goto out;
	was = fixture_totals(&f);
	CHECK_EQ(fixture_send(&f, &fr, 1, 0, T0 + NSEC_MS), 1,
		 "placed again: a new source's first packet passes");
	now = fixture_totals(&f);
	CHECK_EQ(now.new_sources - was.new_sources, 1, "a new source");
	if (CHECK_EQ(rl_index_find(&x, &key, &again), 0, "tracked again"))
		printf("    slot %u, then slot %u\n", slot, again);
	CHECK_SOURCE(&f, addr, T0 + NSEC_MS, 1, 0, 1, "its counts start afresh");
out:
	fixture_close(&f);
}
