// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The source pool (doc/design/pool.md) against what its contract says:
 * eviction never takes a verified source's way for an unverified one, and
 * a source that lost its way starts afresh when it is placed again, on
 * every CPU, even in the way it had; a source that finds no way is still
 * held to its quota. Keys are aimed at buckets with the
 * seed the test reads from the config (an attacker does not know it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "lib/maps.h"
#include "lib/reload_carry.h"
#include "lib/source_index_map.h"
#include "../harness.h"
#include "fixture.h"
#include "gen/frames.h"

/* The key of an IPv4 source, as the program makes it. */
static struct rl_key v4_key(const char *addr)
{
	struct rl_key k = { .addr = { [10] = 0xff, [11] = 0xff } };

	inet_pton(AF_INET, addr, &k.addr[12]);
	return k;
}

/* 198.18.<i / 256>.<i % 256> */
static void nth_addr(__u32 i, char *buf, size_t len)
{
	snprintf(buf, len, "198.18.%u.%u", (i >> 8) & 0xff, i & 0xff);
}

/* The slot of the scoped rule of the test in progress (-1: the test's
 * sources are tracked by their own keys): the key of a source's TCP
 * window. A file-wide variable, reset by open_pool() and set by
 * open_two_buckets_rule(): tests run one at a time. */
static int scoped_slot = -1;

static bool open_pool(struct fixture *f, __u64 max_sources, int cpus,
		      struct rl_index *x)
{
	struct rl_attach_req req;

	scoped_slot = -1;
	rl_attach_req_defaults(&req);
	req.max_sources = max_sources;
	if (!fixture_open(f, &req))
		return false;
	if (cpus > 1 && !CHECK_GE(rl_ncpus(), cpus, "this test needs 2 CPUs or more"))
		return false;
	fixture_hold(f);
	return CHECK_EQ(rl_index_open(x, &f->m), 0, "the index");
}

static bool key_tracked(const struct rl_index *x, const struct rl_key *k,
			__u32 *slot)
{
	__u32 s;

	return rl_index_find(x, k, slot ? slot : &s) == 0;
}

static bool tracked(const struct rl_index *x, const char *addr, __u32 *slot)
{
	struct rl_key k = v4_key(addr);

	return key_tracked(x, &k, slot);
}

static int udp(struct fixture *f, const char *addr, int n, int cpu, __u64 now)
{
	struct frame fr;

	frame_udp(&fr, addr, 100, 0);
	return fixture_send(f, &fr, n, cpu, now);
}

/* The rule a pool test's sources fall under: one that reads verification
 * (it bans), a plain one, or a plain one scoped to TCP (its windows'
 * keys are rl_scoped_key()'s, not the sources'). */
enum rule_kind { RULE_BANS, RULE_PLAIN, RULE_SCOPED };

/* The key a source's TCP segments are tracked under. */
static struct rl_key window_key(const char *addr)
{
	struct rl_key k = v4_key(addr);

	if (scoped_slot >= 0)
		rl_scoped_key(&k, &k, (__u32)scoped_slot, 0);
	return k;
}

/* The slot of the one scoped rule in `rules`, or -1. */
static int find_scoped_slot(struct fixture *f)
{
	struct rl_rule r;

	for (__u32 slot = 0; slot < RL_MAX_RULES; slot++)
		if (!bpf_map_lookup_elem(f->m.rules, &slot, &r) &&
		    (r.flags & RL_RULE_F_USED) && r.scope)
			return (int)slot;
	return -1;
}

/* A pool of two buckets (`max_sources` up to 24: every source in both)
 * under a rule of 5 pps of kind `kind` over 198.18.0.0/15: its sources
 * are placed verified or not. */
static bool open_two_buckets_rule(struct fixture *f, __u64 max_sources,
				  struct rl_index *x, enum rule_kind kind)
{
	struct rl_rule_change c = { .have_pps = true, .pps = 5,
				    .have_ban = kind == RULE_BANS,
				    .ban_ns = 10 * NSEC_S };
	struct rl_scope tcp = rl_scope_of(RL_PROTO_TCP, 0, 0, 0);

	if (!open_pool(f, max_sources, 1, x) ||
	    !CHECK_EQ(x->nbuckets, 2, "two buckets"))
		return false;
	if (kind != RULE_SCOPED)
		return fixture_rule(f, "198.18.0.0/15", &c);
	if (!fixture_rule_scoped(f, "198.18.0.0/15", &tcp, &c))
		return false;
	scoped_slot = find_scoped_slot(f);
	return CHECK_GE(scoped_slot, 0, "the scoped rule's slot");
}

static bool open_two_buckets(struct fixture *f, __u64 max_sources,
			     struct rl_index *x)
{
	return open_two_buckets_rule(f, max_sources, x, RULE_BANS);
}

/* Where key `k` may live in index `x`: its buckets, tag, home way. */
static void place_of(const struct rl_index *x, const struct rl_key *k,
		     struct rl_index_place *p)
{
	__u64 w[2];

	memcpy(w, k->addr, sizeof(w));
	rl_index_locate(p, w, x->seed, x->nbuckets);
}

/* Is the window of client `addr`'s TCP segments tracked? */
static bool client_tracked(const struct rl_index *x, const char *addr)
{
	struct rl_key k = window_key(addr);

	return key_tracked(x, &k, NULL);
}

/* The word of the way that holds the window of client `addr`'s TCP
 * segments (0: not tracked): the way of its buckets that names the slot
 * rl_index_find() gives (a slot is named by one way). */
static __u32 way_word(const struct rl_index *x, const char *addr)
{
	struct rl_key k = window_key(addr);
	struct rl_index_place p;
	struct rl_index_bucket b;
	__u32 slot;

	if (!key_tracked(x, &k, &slot))
		return 0;
	place_of(x, &k, &p);
	for (int i = 0; i < 2; i++) {
		if (bpf_map_lookup_elem(x->index, &p.bucket[i], &b))
			return 0;
		for (int way = 0; way < RL_INDEX_WAYS; way++)
			if (b.slot[way] == slot + 1)
				return b.way[way];
	}
	return 0;
}

/* Client `addr` connects as real clients do: its SYN at `syn` (placed,
 * unverified), the host's handshake, its data at T0 (verified by then).
 * False on a failed check. */
static bool client_connects(struct fixture *f, const char *addr, __u64 syn)
{
	struct frame fr;

	frame_tcp(&fr, addr, HOST_ADDR(addr), PEER_PORT, HOST_PORT, TCP_SYN);
	if (!CHECK_EQ(fixture_send(f, &fr, 1, 0, syn), 1, "the client's SYN") ||
	    !CHECK(fixture_answer(f, addr, 0, T0), "the client's handshake"))
		return false;
	frame_tcp(&fr, addr, HOST_ADDR(addr), PEER_PORT, HOST_PORT, TCP_ACK);
	return CHECK_EQ(fixture_send(f, &fr, 1, 0, T0), 1, "the client's data");
}

/* A client placed at its SYN, proved by its ACK, has its way verified by
 * its next packet at the latest, under a rule that reads verification or
 * one that does not (`plain`): eviction keeps a verified client that
 * sends, whatever its rule. */
static void proof_marks_the_way(enum rule_kind kind)
{
	const char *client = "198.18.0.7";
	struct rl_index x;
	struct fixture f;
	struct frame fr;

	if (!open_two_buckets_rule(&f, 16, &x, kind))
		goto out;
	frame_tcp(&fr, client, HOST_ADDR(client), PEER_PORT, HOST_PORT, TCP_SYN);
	CHECK_EQ(fixture_send(&f, &fr, 1, 0, T0 - 10 * NSEC_S), 1, "the client's SYN");
	CHECK_EQ(way_word(&x, client) & (RL_WAY_STATE | RL_WAY_VERIFIED), RL_WAY_LIVE,
		 "placed at its SYN, unverified");
	if (!CHECK(fixture_answer(&f, client, 0, T0), "the client's handshake"))
		goto out;
	frame_tcp(&fr, client, HOST_ADDR(client), PEER_PORT, HOST_PORT, TCP_ACK);
	CHECK_EQ(fixture_send(&f, &fr, 1, 0, T0), 1, "the client's data");
	CHECK_EQ(way_word(&x, client) & (RL_WAY_STATE | RL_WAY_VERIFIED),
		 RL_WAY_LIVE | RL_WAY_VERIFIED, "its way verified by its next packet");
out:
	fixture_close(&f);
}

TEST(pool_proof_marks_the_way_verified)
{
	proof_marks_the_way(RULE_BANS);
}

TEST(pool_proof_marks_the_way_verified_plain_rule)
{
	proof_marks_the_way(RULE_PLAIN);
}

/* The same of the window a scoped rule keeps of the client's segments. */
TEST(pool_proof_marks_the_way_verified_scoped_rule)
{
	proof_marks_the_way(RULE_SCOPED);
}

/* Under a rule that reads no verification (the common `--default-pps`),
 * or a scoped one (the client's window of its TCP segments; the forged
 * UDP falls under no rule), a verified client that sends, found least
 * recently, against forged addresses that came back since: a new forged
 * address takes one of theirs, never the client's (as the man page's
 * Tracked sources says of a verified client, whatever its rule). */
static void verified_client_kept(enum rule_kind kind)
{
	const char *client = "198.18.0.7";
	__u64 unit = 1ULL << RL_STAMP_SHIFT;
	struct rl_index x;
	struct fixture f;
	char addr[32];

	if (!open_two_buckets_rule(&f, 16, &x, kind))
		goto out;
	if (!client_connects(&f, client, T0 - 10 * NSEC_S))
		goto out;
	/* 31 forged addresses fill the other ways, and come back */
	for (__u32 again = 0; again < 2; again++)
		for (__u32 i = 0; i < 31; i++) {
			nth_addr(0x200 + i, addr, sizeof(addr));
			if (udp(&f, addr, 1, 0, T0 + (1 + again) * unit + i) < 0)
				goto out;
		}
	if (!CHECK(client_tracked(&x, client), "every way taken, the client's too"))
		goto out;
	nth_addr(0x300, addr, sizeof(addr));
	if (udp(&f, addr, 1, 0, T0 + 3 * unit) < 0)
		goto out;
	CHECK(tracked(&x, addr, NULL), "the new forged address placed");
	CHECK(client_tracked(&x, client), "in the way of a forged one, not the client's");
out:
	fixture_close(&f);
}

TEST(pool_verified_client_kept_under_a_plain_rule)
{
	verified_client_kept(RULE_PLAIN);
}

TEST(pool_verified_client_kept_under_a_scoped_rule)
{
	verified_client_kept(RULE_SCOPED);
}

/*
 * A verified client that went quiet for a window comes back with a new
 * connection, its way taken meanwhile, while every way is held by a
 * verified client that sends: each of those came as real clients do
 * (SYN, handshake, data), and is marked verified by its data. A verified
 * source may take a verified way: "Any other packet that cannot be
 * tracked (a verified source, ...) is judged as a fresh window and
 * counted as untracked" (the man page, Tracked sources), whatever its
 * rule. Under a rule that reads verification its SYN reads it, and passes.
 * Under a plain rule (9d6e16c) the others' ways are verified by their data,
 * but the SYN's verification is not read (RL_PKT_MAY_TCP excludes SYNs):
 * it was refused as an unverified source without a way, and the client
 * could not connect again while the ways stayed busy (before 9d6e16c the
 * others' ways, placed at their SYN, stayed unverified under a plain rule,
 * and the SYN took one of them). Under a scoped rule, the same of the
 * clients' windows: the SYN's refusal reads the verification of the
 * window's source, not of the window's key, which has none.
 */
static void verified_client_back_with_a_syn(enum rule_kind kind)
{
	const char *client = "198.18.0.7";
	__u64 back = T0 + 10 * NSEC_S, t = back, lag;
	struct rl_verified v = { .answered_ns = back };
	struct rl_key k = v4_key(client);
	struct rl_index x;
	struct fixture f;
	struct frame fr;
	char addr[32];
	__u32 n = 0, verified = 0;

	if (!open_two_buckets_rule(&f, 24, &x, kind))
		goto out;
	/* fixture_answer() runs the handshake a window and a bucket before
	 * the time it is given */
	lag = f.s.window_ns + f.s.bucket_ns;
	if (!client_connects(&f, client, T0 - lag - 1))
		goto out;
	/* quiet since; other clients come, one after the other */
	for (__u32 i = 1; i <= 2 * RL_INDEX_WAYS; i++, t += 10 * NSEC_MS) {
		nth_addr(0x100 + i, addr, sizeof(addr));
		frame_tcp(&fr, addr, HOST_ADDR(addr), PEER_PORT, HOST_PORT, TCP_SYN);
		if (fixture_send(&f, &fr, 1, 0, t) < 0 ||
		    !CHECK(fixture_answer(&f, addr, 0, t + lag), "handshake"))
			goto out;
		frame_tcp(&fr, addr, HOST_ADDR(addr), PEER_PORT, HOST_PORT, TCP_ACK);
		if (fixture_send(&f, &fr, 1, 0, t + 1) < 0)
			goto out;
	}
	for (__u32 i = 1; i <= 2 * RL_INDEX_WAYS; i++) {
		nth_addr(0x100 + i, addr, sizeof(addr));
		n += client_tracked(&x, addr);
		verified += (way_word(&x, addr) & RL_WAY_VERIFIED) != 0;
	}
	printf("    (%u of the others tracked, the client %s)\n", n,
	       client_tracked(&x, client) ? "tracked" : "not tracked");
	CHECK_EQ(verified, n, "every other client's way verified by its data");
	/* its verification still held (`verified`, an LRU of --max-sources
	 * entries, may have dropped it for the others': a larger table
	 * keeps it) */
	if (!CHECK_EQ(bpf_map_update_elem(f.m.verified, &k, &v, BPF_ANY), 0,
		      "the client's verification"))
		goto out;
	frame_tcp(&fr, client, HOST_ADDR(client), PEER_PORT + 1, HOST_PORT, TCP_SYN);
	CHECK_EQ(fixture_send(&f, &fr, 1, 0, t), 1,
		 "the verified client's new SYN passes");
out:
	fixture_close(&f);
}

TEST(pool_verified_client_back_with_a_syn)
{
	verified_client_back_with_a_syn(RULE_BANS);
}

TEST(pool_verified_client_back_with_a_syn_plain_rule)
{
	verified_client_back_with_a_syn(RULE_PLAIN);
}

TEST(pool_verified_client_back_with_a_syn_scoped_rule)
{
	verified_client_back_with_a_syn(RULE_SCOPED);
}

/* A client that sent its SYN before its handshake (as every TCP client
 * does) is placed unverified; verified since, a flood of new unverified
 * addresses must not push it out. */
TEST(pool_verified_later_kept_from_a_flood)
{
	const char *client = "198.18.0.7";
	struct rl_index x;
	struct fixture f;
	struct frame fr;
	char addr[32];

	if (!open_two_buckets(&f, 16, &x))
		goto out;
	frame_tcp(&fr, client, HOST_ADDR(client), PEER_PORT, HOST_PORT, TCP_SYN);
	CHECK_EQ(fixture_send(&f, &fr, 1, 0, T0 - 10 * NSEC_S), 1, "the client's SYN");
	CHECK(tracked(&x, client, NULL), "the client placed at its SYN");
	if (!CHECK(fixture_answer(&f, client, 0, T0), "the client's handshake"))
		goto out;
	frame_tcp(&fr, client, HOST_ADDR(client), PEER_PORT, HOST_PORT, TCP_ACK);
	CHECK_EQ(fixture_send(&f, &fr, 1, 0, T0), 1, "the client's data");
	/* forged: UDP from addresses nobody answers */
	for (__u32 i = 1; i <= 200; i++) {
		nth_addr(0x100 + i, addr, sizeof(addr));
		if (udp(&f, addr, 1, 0, T0 + i) < 0)
			goto out;
	}
	CHECK(tracked(&x, client, NULL),
	      "a verified client is never pushed out by a flood of new addresses");
out:
	fixture_close(&f);
}

/* A removed source (a dead scoped rule's window) placed again starts a
 * fresh window: the values its way kept are not its own any more, on the
 * CPU that filled it (`before`) nor, summed by the refresh, on the one
 * that places it again (`after`). */
static void removed_starts_afresh(const char *src, int before, int after)
{
	struct rl_key k = v4_key(src);
	struct rl_index x;
	struct fixture f;

	if (!open_pool(&f, RL_DEFAULT_MAX_SOURCES, before == after ? 1 : 2, &x) ||
	    !fixture_pps(&f, "default", 5))
		goto out;
	CHECK_EQ(udp(&f, src, 10, before, T0), 5, "its budget");
	if (!CHECK_EQ(rl_index_remove(&x, &k), 0, "removed") ||
	    !CHECK(!tracked(&x, src, NULL), "not tracked"))
		goto out;
	CHECK_EQ(udp(&f, src, 10, after, T0 + 1), 5, "placed again: a fresh window");
out:
	fixture_close(&f);
}

TEST(pool_removed_source_starts_afresh)
{
	removed_starts_afresh("198.18.3.7", 0, 0);
}

TEST(pool_removed_source_not_summed_from_other_cpus)
{
	removed_starts_afresh("198.18.3.8", 1, 0);
}

/*
 * K, in a pool of two buckets (5 pps), fills its window on CPU `kcpu` at
 * T0 (its slot in `kslot`); the other 31 ways are taken on CPU 0 by
 * sources found again a stamp later, so that K is the one source seen
 * once: the next new source evicts it. False on a failed check.
 */
#define STAMP_NS	(1ULL << RL_STAMP_SHIFT)
static bool k_seen_once(struct fixture *f, struct rl_index *x, const char *kaddr,
			int kcpu, __u32 *kslot)
{
	char others[2 * RL_INDEX_WAYS - 1][32];
	__u32 n = 0;

	if (!open_pool(f, 16, kcpu + 1, x) || !CHECK_EQ(x->nbuckets, 2, "two buckets") ||
	    !fixture_pps(f, "default", 5))
		return false;
	CHECK_EQ(udp(f, kaddr, 10, kcpu, T0), 5, "K: its budget");
	if (!CHECK(tracked(x, kaddr, kslot), "K placed"))
		return false;
	for (__u32 i = 0; n < 2 * RL_INDEX_WAYS - 1 && i < 64; i++) {
		nth_addr(0x200 + i, others[n], sizeof(others[n]));
		if (udp(f, others[n], 1, 0, T0) != 1)
			return false;
		n += tracked(x, others[n], NULL);
	}
	if (!CHECK_EQ(n, 2 * RL_INDEX_WAYS - 1, "every way taken"))
		return false;
	for (__u32 i = 0; i < n; i++)
		CHECK_EQ(udp(f, others[i], 1, 0, T0 + STAMP_NS), 1, "found again");
	return true;
}

/*
 * Eviction alone, no userspace: K fills its window on CPU 1 (k_seen_once);
 * J, new, evicts K and takes its way and slot on CPU 0; K, back on CPU 0,
 * evicts J (the one source seen once) from that same way. "An evicted
 * source starts a fresh window": CPU 1's value of the slot still names K.
 */
TEST(pool_evicted_source_back_in_its_way_starts_afresh)
{
	const char *kaddr = "198.18.4.1", *jaddr = "198.18.16.1";
	struct rl_index x;
	struct fixture f;
	__u32 kslot = 0, slot;

	if (!k_seen_once(&f, &x, kaddr, 1, &kslot))
		goto out;
	CHECK_EQ(udp(&f, jaddr, 1, 0, T0 + STAMP_NS), 1, "J");
	if (!CHECK(tracked(&x, jaddr, &slot) && slot == kslot, "J in K's slot") ||
	    !CHECK(!tracked(&x, kaddr, NULL), "K evicted"))
		goto out;
	CHECK_EQ(udp(&f, kaddr, 10, 0, T0 + STAMP_NS + 1), 5,
		 "K back, on CPU 0: a fresh window, not CPU 1's old one");
	CHECK(tracked(&x, kaddr, &slot) && slot == kslot, "K back in its own slot");
	CHECK(!tracked(&x, jaddr, NULL), "J evicted for it");
out:
	fixture_close(&f);
}

/*
 * K seen once on CPU 0 (k_seen_once); the newcomer Z is an IPv6 source
 * whose key is all zero (the unspecified address ::, or any address of
 * ::/N masked to the tracked prefix): anyone can send from it. Z evicts K
 * and takes its way and slot, on the same CPU. Z starts a fresh window,
 * not K's: the slot's values, their owner cleared, are nobody's, not the
 * zero key's (they would also carry K's verification, totals and events).
 */
TEST(pool_zero_key_does_not_inherit_the_evicted_values)
{
	const char *kaddr = "198.18.4.1";
	const struct rl_key z = { 0 };
	struct rl_index x;
	struct fixture f;
	struct frame fr;
	__u32 kslot = 0, slot;

	if (!k_seen_once(&f, &x, kaddr, 0, &kslot))
		goto out;
	frame_udp(&fr, "::", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 10, 0, T0 + STAMP_NS), 5,
		 "the zero key: a fresh window, not K's full one");
	CHECK(rl_index_find(&x, &z, &slot) == 0 && slot == kslot,
	      "the zero key in K's slot");
	CHECK(!tracked(&x, kaddr, NULL), "K evicted");
out:
	fixture_close(&f);
}

/*
 * Both of a source's buckets full of verified sources: it finds no way it
 * may take, and each of its packets is judged as a fresh window. An
 * unverified sender that finds such an address (an IPv6 block holds many
 * to try) must still not pass more than its quota a window.
 */
TEST(pool_unplaceable_source_still_limited)
{
	const char *attacker = "198.18.9.9";
	struct rl_index x;
	struct fixture f;
	char addr[32];
	__u32 n = 0;

	if (!open_two_buckets(&f, 24, &x))
		goto out;
	/* every way a verified client's */
	for (__u32 i = 1; n < x.nslots && i < 64; i++) {
		nth_addr(0x100 + i, addr, sizeof(addr));
		if (!CHECK(fixture_answer(&f, addr, 0, T0), "handshake"))
			goto out;
		n += tracked(&x, addr, NULL);
	}
	if (!CHECK_EQ(n, 2 * RL_INDEX_WAYS, "every way a verified client's"))
		goto out;
	CHECK_LE(udp(&f, attacker, 100, 0, T0 + 1), 5,
		 "an untracked sender: at most its quota in the window");
out:
	fixture_close(&f);
}

/* Set `placing` of the bucket a source at `addr` locks to `v`, as a CPU
 * that places a source of that bucket holds it. */
static bool hold_placing(const struct rl_index *x, const char *addr, __u32 v)
{
	struct rl_index_place p;
	struct rl_index_bucket b;
	struct rl_key k = v4_key(addr);
	__u32 lock;

	place_of(x, &k, &p);
	lock = rl_index_lock_bucket(&p);
	if (!CHECK_EQ(bpf_map_lookup_elem(x->index, &lock, &b), 0, "the lock's bucket"))
		return false;
	if (!v)
		CHECK_EQ(b.placing, 1, "the hold left to its holder");
	b.placing = v;
	return CHECK_EQ(bpf_map_update_elem(x->index, &lock, &b, BPF_ANY), 0,
			"`placing` set");
}

/* A CPU that holds `placing` and never lets go (a virtual CPU its
 * hypervisor stopped, for ever): the CPU that waits for it gives up after
 * its bounded wait, the packet refused as a source without room while its
 * budget limits it; the hold is left to its holder; let go, the source
 * is placed at its next packet. */
TEST(pool_placing_held_for_ever_bounded)
{
	const char *src = "198.18.3.3";
	struct rl_index x;
	struct fixture f;

	if (!open_pool(&f, 1024, 1, &x) || !fixture_pps(&f, "default", 5) ||
	    !hold_placing(&x, src, 1))
		goto out;
	CHECK_EQ(udp(&f, src, 1, 0, T0), 0, "refused after the bounded wait");
	CHECK(!tracked(&x, src, NULL), "not placed");
	CHECK_EQ(fixture_refused(&f, src), 1, "its drop in `refused`");
	if (!hold_placing(&x, src, 0))
		goto out;
	CHECK_EQ(udp(&f, src, 1, 0, T0 + 1), 1, "let go: placed, passed");
	CHECK(tracked(&x, src, NULL), "placed");
out:
	fixture_close(&f);
}

/* ---- placements on two CPUs at once ---- */

#define RACE_SOURCES	4096	/* distinct sources, each sent by both CPUs */

struct racer {
	int prog_fd;
	int cpu;
	int *ready;	/* threads at the barrier (atomic) */
	int err;	/* errno of a failed pin or run (no checks off the main thread) */
};

/* Pinned to its CPU, after the other thread: one frame of each source in
 * turn, the same order on both CPUs, so that both place the same new
 * sources at once (and evict each other's in a 32-way pool). */
static void *race_thread(void *arg)
{
	struct racer *r = arg;
	struct frame fr;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(r->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		r->err = errno;
	frame_udp(&fr, "198.18.0.0", 64, 0);
	for (int i = 0; i < RACE_SOURCES; i++) {
		__u8 *saddr = fr.data + tg_l3_off(0) + TG_IPV4_SADDR_OFF;
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = fr.data,
			    .data_size_in = (__u32)fr.len, .repeat = 1);

		saddr[2] = (__u8)(i >> 8);
		saddr[3] = (__u8)i;
		/* a spinning barrier per source: both CPUs meet its first
		 * packet within microseconds (a failed thread still arrives) */
		__atomic_add_fetch(r->ready, 1, __ATOMIC_ACQ_REL);
		while (__atomic_load_n(r->ready, __ATOMIC_ACQUIRE) < 2 * (i + 1))
			;
		if (!r->err && bpf_prog_test_run_opts(r->prog_fd, &opts))
			r->err = errno;
	}
	return NULL;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct rl_key));
}

/* Every bucket of `x` whole: no source in two ways (two budgets), no way
 * left busy, no `placing` left taken, every live way's word its key's; no
 * slot named by two ways (two sources' values in one), and every slot the
 * pool handed out named by a way (none lost); how many ways are live (-1:
 * a check failed). */
static int index_whole(struct fixture *f, const struct rl_index *x)
{
	struct rl_key *keys = calloc((size_t)x->nbuckets * RL_INDEX_WAYS,
				     sizeof(*keys));
	__u8 *named = calloc(x->nslots, 1);
	int live = 0, twice = 0, busy = 0, astray = 0, taken = 0, shared = 0;
	__u32 slotted = 0, zero = 0;
	struct rl_source_pool pool;
	struct rl_index_bucket b;

	if (!CHECK(keys && named, "calloc") ||
	    !CHECK_EQ(bpf_map_lookup_elem(f->m.source_pool, &zero, &pool), 0, "the pool")) {
		free(keys);
		free(named);
		return -1;
	}
	for (__u32 i = 0; i < x->nbuckets; i++) {
		if (!CHECK_EQ(bpf_map_lookup_elem(f->m.source_index, &i, &b), 0,
			      "a bucket")) {
			free(keys);
			free(named);
			return -1;
		}
		taken += b.placing != 0;
		for (int w = 0; w < RL_INDEX_WAYS; w++) {
			struct rl_index_place p;
			__u32 slot;
			__u64 k[2];

			if (b.slot[w] && b.slot[w] <= x->nslots) {
				slotted++;
				shared += named[b.slot[w] - 1]++ != 0;
			}
			busy += (b.way[w] & RL_WAY_STATE) == RL_WAY_BUSY;
			if ((b.way[w] & RL_WAY_STATE) != RL_WAY_LIVE)
				continue;
			slot = b.slot[w] - 1;
			if (!CHECK_EQ(bpf_map_lookup_elem(f->m.source_keys, &slot, k), 0,
				      "a live way's key")) {
				free(keys);
				free(named);
				return -1;
			}
			rl_index_locate(&p, k, x->seed, x->nbuckets);
			astray += !rl_way_matches(b.way[w], &p) ||
				  (p.bucket[0] != i && p.bucket[1] != i);
			memcpy(&keys[live++], k, sizeof(*keys));
		}
	}
	qsort(keys, (size_t)live, sizeof(*keys), key_cmp);
	for (int i = 1; i < live; i++)
		twice += !key_cmp(&keys[i - 1], &keys[i]);
	free(keys);
	free(named);
	if (pool.handed > x->nslots)
		pool.handed = x->nslots;	/* a fetching add past the end */
	CHECK_EQ(taken, 0, "`placing` left taken");
	CHECK_EQ(twice, 0, "sources in two ways");
	CHECK_EQ(busy, 0, "ways left busy");
	CHECK_EQ(astray, 0, "live ways whose word or bucket is not their key's");
	CHECK_EQ(shared, 0, "slots named by two ways");
	CHECK_EQ(slotted, pool.handed, "ways with a slot, of the slots handed out");
	return taken || twice || busy || astray || shared || slotted != pool.handed ?
	       -1 : live;
}

/* A pool for `max_sources` on two CPUs, 5 pps a source, its clock fixed
 * at T0 (the threads' runs set none). */
static bool open_racing(struct fixture *f, __u64 max_sources,
			struct rl_index *x)
{
	struct rl_config cfg;

	if (!open_pool(f, max_sources, 2, x) || !fixture_pps(f, "default", 5) ||
	    !CHECK_EQ(rl_config_read(&f->m, &cfg), 0, "read config"))
		return false;
	cfg.test_now_ns = T0;
	return CHECK_EQ(rl_config_write(&f->m, &cfg), 0, "write config");
}

/* Two CPUs send the first packet of each of RACE_SOURCES sources at once
 * into a pool for `max_sources`: the index stays whole; how many ways are
 * live after (-1: a check failed). */
static int race(__u64 max_sources)
{
	struct racer r[2] = { 0 };
	struct rl_index x;
	struct fixture f;
	pthread_t tid[2];
	int ready = 0, live = -1, started = 0;

	if (!open_racing(&f, max_sources, &x))
		goto out;
	for (int i = 0; i < 2; i++) {
		r[i] = (struct racer){ .prog_fd = f.prog_fd, .cpu = i, .ready = &ready };
		if (!CHECK_EQ(pthread_create(&tid[i], NULL, race_thread, &r[i]), 0,
			      "pthread_create")) {
			/* the other thread meets nobody at its barriers */
			__atomic_add_fetch(&ready, 2 * RACE_SOURCES, __ATOMIC_ACQ_REL);
			break;
		}
		started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(tid[i], NULL);
		CHECK(!r[i].err, "runs on CPU %d: %s", i, strerror(r[i].err));
	}
	if (started == 2)
		live = index_whole(&f, &x);
out:
	fixture_close(&f);
	return live;
}

/* Two buckets: every placement past the 32nd evicts, on both CPUs. */
TEST(pool_concurrent_evictions_keep_the_index_whole)
{
	int live = race(16);

	if (live >= 0)
		CHECK_EQ(live, 2 * RL_INDEX_WAYS, "every way live");
}

/* Room for every source: one way each, however the CPUs met. */
TEST(pool_concurrent_placements_place_each_source_once)
{
	int live = race(RACE_SOURCES);

	if (live >= 0)
		CHECK_EQ(live, RACE_SOURCES, "each source placed");
}

/* Sources removed by userspace (a dead scoped rule's windows) while CPU 1
 * places them: each removal meets its source's first packet at the
 * barrier. The index stays whole: no way left busy by a removal, no
 * source in two ways. */
TEST(pool_removals_beside_placements_keep_the_index_whole)
{
	struct racer r = { 0 };
	struct rl_index x;
	struct fixture f;
	pthread_t tid;
	int ready = 0, removed = 0;
	char addr[32];

	if (!open_racing(&f, RACE_SOURCES, &x))
		goto out;
	r = (struct racer){ .prog_fd = f.prog_fd, .cpu = 1, .ready = &ready };
	if (!CHECK_EQ(pthread_create(&tid, NULL, race_thread, &r), 0,
		      "pthread_create"))
		goto out;
	for (int i = 0; i < RACE_SOURCES; i++) {
		struct rl_key k;
		int err;

		snprintf(addr, sizeof(addr), "198.18.%d.%d", (i >> 8) & 0xff, i & 0xff);
		k = v4_key(addr);
		__atomic_add_fetch(&ready, 1, __ATOMIC_ACQ_REL);
		while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < 2 * (i + 1))
			;
		for (int tries = 0; tries < 2; tries++) {
			err = rl_index_remove(&x, &k);
			removed += !err;
			if (err && err != -ENOENT)
				break;
		}
		if (err && err != -ENOENT) {
			CHECK_EQ(err, -ENOENT, "removing a source");
			__atomic_add_fetch(&ready, 2 * RACE_SOURCES, __ATOMIC_ACQ_REL);
			break;
		}
	}
	pthread_join(tid, NULL);
	CHECK(!r.err, "runs on CPU 1: %s", strerror(r.err));
	CHECK_GT(removed, 0, "sources removed");
	index_whole(&f, &x);
out:
	fixture_close(&f);
}

/* ---- a walk through read-only fds (a command that changes nothing) ---- */

#define RO_SOURCES	20

/* `fd` again, read only: as read-only commands open the pins. */
static int read_only(int fd)
{
	LIBBPF_OPTS(bpf_get_fd_by_id_opts, ro, .open_flags = BPF_F_RDONLY);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	return bpf_map_get_fd_by_id_opts(info.id, &ro);
}

/* How often the walk met each of the RO_SOURCES sources, its key owning
 * its value on CPU 0. */
static int count_ro(void *ctx, const struct rl_key *key, __u32 slot,
		    const void *vals)
{
	const struct rl_source *v = vals;	/* CPU 0's */
	int *met = ctx;
	char addr[32];

	(void)slot;
	for (int i = 0; i < RO_SOURCES; i++) {
		struct rl_key k;

		snprintf(addr, sizeof(addr), "198.18.5.%d", i + 1);
		k = v4_key(addr);
		if (!memcmp(&k, key, sizeof(k)) && !memcmp(&v->owner, key, sizeof(k)))
			met[i]++;
	}
	return 0;
}

/* A read-only fd cannot map `source_keys`: the walk reads each key by a
 * lookup, and meets every source once, with its values. */
TEST(pool_walk_through_read_only_fds)
{
	int met[RO_SOURCES] = { 0 };
	struct rl_index x, ro;
	struct fixture f;
	char addr[32];

	ro.index = ro.sources = ro.keys = ro.pool = -1;
	if (!open_pool(&f, RL_DEFAULT_MAX_SOURCES, 1, &x) || !fixture_pps(&f, "default", 5))
		goto out;
	for (int i = 0; i < RO_SOURCES; i++) {
		snprintf(addr, sizeof(addr), "198.18.5.%d", i + 1);
		if (!CHECK_EQ(udp(&f, addr, 1, 0, T0), 1, "a source"))
			goto out;
	}
	ro = x;
	ro.index = read_only(x.index);
	ro.sources = read_only(x.sources);
	ro.keys = read_only(x.keys);
	ro.pool = read_only(x.pool);
	if (!CHECK(ro.index >= 0 && ro.sources >= 0 && ro.keys >= 0 && ro.pool >= 0,
		   "read-only fds: %s", strerror(errno)))
		goto out;
	if (!CHECK_EQ(rl_index_walk(&ro, count_ro, met), 0, "the walk"))
		goto out;
	for (int i = 0; i < RO_SOURCES; i++)
		CHECK_EQ(met[i], 1, "each source met once, with its values");
out:
	close(ro.index);	/* -1: EBADF, nothing */
	close(ro.sources);
	close(ro.keys);
	close(ro.pool);
	fixture_close(&f);
}

/* The key of IPv6 source `addr` under the default --ipv6-prefix 64. */
static struct rl_key v6_key64(const char *addr)
{
	struct rl_key k = { 0 };

	inet_pton(AF_INET6, addr, k.addr);
	memset(&k.addr[8], 0, 8);
	return k;
}

/*
 * A CPU's front entry (struct rl_source_front) names the way and slot of
 * the source its last packet found. Here the way is emptied (userspace
 * removes K), and another source with K's tag takes it, with K's slot,
 * on another CPU: the entry's way, tag and slot are as it names them, and
 * only the slot's key tells that K is gone. K's next packet on its CPU,
 * in the same stamp unit, must not land in K2's slot: K is placed again,
 * apart, starting afresh, and K2's window keeps only its own packets.
 */
TEST(pool_front_entry_checks_the_slot_key)
{
	char kaddr[48], k2addr[48], other[48];
	struct rl_index_place pk, p2;
	struct rl_key k, k2;
	struct rl_source_sum sum;
	struct rl_index x;
	struct fixture f;
	__u32 kslot, k2slot, i;

	if (!open_pool(&f, 16, 2, &x) || !CHECK_EQ(x.nbuckets, 2, "two buckets") ||
	    !fixture_pps(&f, "default", 5))
		goto out;
	/* sources named by their /64, as fixture_source() reads them */
	snprintf(kaddr, sizeof(kaddr), "2001:db8:0:1::");
	k = v6_key64(kaddr);
	place_of(&x, &k, &pk);
	/* a /64 with K's tag: the seed is the test's to read (an attacker
	 * does not know it); 2^16 tags, so about 16 in 2^20 prefixes */
	for (i = 2; i < (1U << 20); i++) {
		snprintf(k2addr, sizeof(k2addr), "2001:db8:%x:%x::", i >> 16,
			 i & 0xffff);
		k2 = v6_key64(k2addr);
		place_of(&x, &k2, &p2);
		if (p2.tag == pk.tag)
			break;
	}
	if (!CHECK(i < (1U << 20), "a prefix with K's tag"))
		goto out;
	CHECK_EQ(udp(&f, kaddr, 3, 0, T0), 3, "K on CPU 0: its front entry");
	if (!CHECK(key_tracked(&x, &k, &kslot), "K placed"))
		goto out;
	/* another source in the other bucket, so that K's is the emptier
	 * once K is gone: K2 then goes to the one way there with a slot */
	for (i = 0; i < 64; i++) {
		struct rl_key o;
		__u32 s;

		snprintf(other, sizeof(other), "2001:db8:1:%x::", i);
		o = v6_key64(other);
		if (udp(&f, other, 1, 1, T0) != 1)
			goto out;
		if (key_tracked(&x, &o, &s) && s != kslot)
			break;
	}
	if (!CHECK_EQ(rl_index_remove(&x, &k), 0, "K removed"))
		goto out;
	CHECK_EQ(udp(&f, k2addr, 2, 1, T0 + 1), 2, "K2 on CPU 1");
	if (!CHECK(key_tracked(&x, &k2, &k2slot), "K2 placed") ||
	    !CHECK_EQ(k2slot, kslot, "K2 in K's way and slot, with K's tag"))
		goto out;
	CHECK_EQ(udp(&f, kaddr, 5, 0, T0 + 2), 5,
		 "K back on CPU 0, the same stamp unit: a fresh window");
	CHECK(key_tracked(&x, &k, &kslot) && kslot != k2slot,
	      "K placed again, in a slot of its own");
	if (fixture_source(&f, k2addr, T0 + 2, &sum))
		CHECK_EQ(sum.window_pkts, 2, "K2's window: its own 2 packets");
out:
	fixture_close(&f);
}

/* A source that sends on one CPU only is found through its front entry:
 * its way is stamped all the same once per stamp unit, as a probe stamps
 * it, so that eviction sees it as recent as it is (an entry trusted
 * across units would leave the way as old as its first packet). */
TEST(pool_front_entry_stamps_the_way_each_unit)
{
	const char *src = "198.18.0.7";
	__u64 later = T0 + 3 * STAMP_NS;
	struct rl_index x;
	struct fixture f;

	if (!open_pool(&f, 16, 1, &x) || !fixture_pps(&f, "default", 1000))
		goto out;
	CHECK_EQ(udp(&f, src, 3, 0, T0), 3, "placed, then found by its entry");
	CHECK_EQ((way_word(&x, src) & RL_WAY_STAMP) >> RL_WAY_STAMP_SHIFT,
		 rl_index_stamp(T0), "stamped at T0");
	CHECK_EQ(udp(&f, src, 3, 0, later), 3, "three units later, the same CPU");
	CHECK_EQ((way_word(&x, src) & RL_WAY_STAMP) >> RL_WAY_STAMP_SHIFT,
		 rl_index_stamp(later), "stamped in the new unit");
	CHECK(way_word(&x, src) & RL_WAY_REPEAT, "found again: RL_WAY_REPEAT");
out:
	fixture_close(&f);
}

/* The stamp unit of way word `w`. */
static __u32 word_stamp(__u32 w)
{
	return (w & RL_WAY_STAMP) >> RL_WAY_STAMP_SHIFT;
}

/*
 * The front entry keeps a 12-bit stamp unit, as a way does: 4096 units
 * (about 18.3 minutes) later it reads as the same unit. A source found
 * on CPU 0 at T0 (its entry), then on CPU 1 2000 units later (its way
 * stamped then), comes back on CPU 0 exactly 4096 units after T0: a
 * probe would stamp its way now; the entry, trusted, leaves it 2096
 * units old (a verified way that old is idle to eviction).
 */
TEST(pool_front_entry_not_trusted_a_stamp_cycle_later)
{
	const char *src = "198.18.0.7";
	__u64 mid = T0 + 2000 * STAMP_NS, cycle = T0 + 4096 * STAMP_NS;
	struct rl_index x;
	struct fixture f;

	if (!open_pool(&f, 16, 2, &x) || !fixture_pps(&f, "default", 1000))
		goto out;
	CHECK_EQ(udp(&f, src, 2, 0, T0), 2, "placed, then CPU 0's entry");
	CHECK_EQ(udp(&f, src, 1, 1, mid), 1, "found on CPU 1, 2000 units on");
	CHECK_EQ(word_stamp(way_word(&x, src)), rl_index_stamp(mid), "stamped then");
	CHECK_EQ(rl_index_stamp(cycle), rl_index_stamp(T0), "the stamp came round");
	CHECK_EQ(udp(&f, src, 1, 0, cycle), 1, "back on CPU 0, 4096 units after T0");
	CHECK_EQ(word_stamp(way_word(&x, src)), rl_index_stamp(cycle),
		 "stamped now, as a probe stamps it");
out:
	fixture_close(&f);
}

/*
 * stamp_way() XORs the stamp bits: two CPUs that read the same old word
 * in one unit and XOR the same difference leave the word as it was (and
 * RL_WAY_REPEAT unset if it was). Before the front entry the next packet
 * of the source, on either CPU, stamped the way again; with it, neither
 * CPU looks at the way's stamp again until the next unit (268 ms). The
 * second CPU's XOR is played here by the test (a race the test cannot
 * time): the word's stamp put back to the old unit after CPU 0's packet.
 */
TEST(pool_front_entry_restamps_a_lost_stamp)
{
	const char *src = "198.18.0.7";
	__u64 later = T0 + 10 * STAMP_NS;
	struct rl_key k = v4_key(src);
	struct rl_index_bucket b;
	struct rl_index_place p;
	struct rl_index x;
	struct fixture f;
	__u32 slot, old, now_unit;
	int way = -1, bi = -1;

	if (!open_pool(&f, 16, 1, &x) || !fixture_pps(&f, "default", 1000))
		goto out;
	CHECK_EQ(udp(&f, src, 2, 0, T0), 2, "placed at T0");
	CHECK_EQ(udp(&f, src, 1, 0, later), 1, "found 10 units later: CPU 0's entry");
	old = rl_index_stamp(T0);
	now_unit = rl_index_stamp(later);
	if (!CHECK_EQ(word_stamp(way_word(&x, src)), now_unit, "stamped") ||
	    !CHECK(key_tracked(&x, &k, &slot), "tracked"))
		goto out;
	place_of(&x, &k, &p);
	for (int i = 0; i < 2 && way < 0; i++) {
		if (bpf_map_lookup_elem(x.index, &p.bucket[i], &b))
			goto out;
		for (int w = 0; w < RL_INDEX_WAYS; w++)
			if (b.slot[w] == slot + 1) {
				way = w;
				bi = i;
			}
	}
	if (!CHECK_GE(way, 0, "its way"))
		goto out;
	/* the other CPU's XOR of the same difference: the old stamp back */
	b.way[way] ^= (old ^ now_unit) << RL_WAY_STAMP_SHIFT;
	if (!CHECK_EQ(bpf_map_update_elem(x.index, &p.bucket[bi], &b, BPF_ANY), 0,
		      "the racing XOR"))
		goto out;
	CHECK_EQ(udp(&f, src, 1, 0, later + 1), 1, "the next packet, same unit, CPU 0");
	CHECK_EQ(word_stamp(way_word(&x, src)), now_unit,
		 "stamped again, as the probe did before the front entry");
out:
	fixture_close(&f);
}

/*
 * A fresh CPU's front entry is all zero: key 0 (the key of ::, or of
 * ::/N), stamp unit 0, bucket 0, way 0, tag 0, slot + 1 0. A zero-key
 * packet on a CPU that never ran, in a stamp unit 0, with bucket 0's way
 * 0 empty and slotless (its word 0, tag 0): the entry must not be
 * trusted (slot + 1 0 is no slot).
 */
TEST(pool_front_entry_all_zero_not_trusted)
{
	const struct rl_key z = { 0 };
	__u64 t = 4096ULL * STAMP_NS * 2;	/* stamp unit 0 */
	struct rl_index x;
	struct fixture f;
	struct frame fr;
	__u32 slot;

	if (!open_pool(&f, 16, 2, &x) || !fixture_pps(&f, "default", 5))
		goto out;
	CHECK_EQ(rl_index_stamp(t), 0, "stamp unit 0");
	frame_udp(&fr, "::", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 10, 1, t), 5, "the zero key: its quota");
	CHECK(rl_index_find(&x, &z, &slot) == 0, "the zero key placed");
	CHECK_EQ(fixture_send(&f, &fr, 10, 1, t + 1), 0,
		 "found again (its entry): still over");
out:
	fixture_close(&f);
}

/*
 * key_source_verified() on a scoped window: a verified client's
 * SYN under a TCP-scoped rule over an IPv6 prefix, its window finding no
 * way (the lower bucket's `placing` held), passes as a fresh window; an
 * unverified one's is refused. The window key holds the source's first
 * 96 bits (--ipv6-prefix 64 here): unscoped, the source's /64 key.
 */
static void scoped_syn_without_a_way(const char *client, const char *stranger,
				     const char *prefix, bool v6)
{
	struct rl_rule_change c = { .have_pps = true, .pps = 5 };
	struct rl_scope tcp = rl_scope_of(RL_PROTO_TCP, 0, 0, 0);
	struct rl_verified v = { .answered_ns = T0 };
	struct rl_key k, w, ks;
	struct rl_index_place p;
	struct rl_index_bucket b;
	struct rl_index x;
	struct fixture f;
	struct frame fr;
	__u32 lock;
	int slot;

	if (!open_pool(&f, 1024, 1, &x) || !fixture_rule_scoped(&f, prefix, &tcp, &c))
		goto out;
	slot = find_scoped_slot(&f);
	if (!CHECK_GE(slot, 0, "its slot"))
		goto out;
	k = v6 ? v6_key64(client) : v4_key(client);
	ks = v6 ? v6_key64(stranger) : v4_key(stranger);
	if (!CHECK_EQ(bpf_map_update_elem(f.m.verified, &k, &v, BPF_ANY), 0, "verified") ||
	    !CHECK_EQ(bpf_map_update_elem(f.m.verified_bloom, NULL, &k, BPF_ANY), 0, "bloom"))
		goto out;
	/* hold `placing` of both windows' lock buckets */
	for (int i = 0; i < 2; i++) {
		rl_scoped_key(&w, i ? &ks : &k, (__u32)slot, v6);
		place_of(&x, &w, &p);
		lock = rl_index_lock_bucket(&p);
		if (!CHECK_EQ(bpf_map_lookup_elem(x.index, &lock, &b), 0, "bucket"))
			goto out;
		b.placing = 1;
		if (!CHECK_EQ(bpf_map_update_elem(x.index, &lock, &b, BPF_ANY), 0, "held"))
			goto out;
	}
	frame_tcp(&fr, client, HOST_ADDR(client), PEER_PORT, HOST_PORT, TCP_SYN);
	CHECK_EQ(fixture_send(&f, &fr, 1, 0, T0 + 1), 1,
		 "the verified client's SYN, its window without a way: passes");
	frame_tcp(&fr, stranger, HOST_ADDR(stranger), PEER_PORT, HOST_PORT, TCP_SYN);
	CHECK_EQ(fixture_send(&f, &fr, 1, 0, T0 + 1), 0,
		 "an unverified source's SYN without a way: refused");
	rl_scoped_key(&w, &k, (__u32)slot, v6);
	CHECK(!key_tracked(&x, &w, NULL), "the window not placed");
out:
	fixture_close(&f);
}

TEST(pool_scoped_v6_verified_syn_without_a_way)
{
	scoped_syn_without_a_way("2001:db8:0:7::1", "2001:db8:0:8::1",
				 "2001:db8::/32", true);
}

TEST(pool_scoped_v4_verified_syn_without_a_way)
{
	scoped_syn_without_a_way("198.18.0.7", "198.18.0.8", "198.18.0.0/15", false);
}

/*
 * A verified client (its `verified` entry fresh) under a plain rule
 * scoped to UDP: its UDP packets never read its verification, so its
 * window is placed verified, its source's verification read then; a
 * flood of forged addresses that come back does not push it out while it
 * sends (the man page, Tracked sources). Before, the window was placed
 * unverified and never marked. (A TCP-scoped window is marked by its
 * segments: pool_verified_client_kept_under_a_scoped_rule.)
 */
TEST(pool_verified_client_udp_window_kept)
{
	const char *client = "198.18.0.7";
	__u64 unit = 1ULL << RL_STAMP_SHIFT;
	struct rl_rule_change c = { .have_pps = true, .pps = 5 };
	struct rl_scope udps = rl_scope_of(RL_PROTO_UDP, 0, 0, 0);
	struct rl_verified v = { .answered_ns = T0 };
	struct rl_key k = v4_key(client), w;
	struct rl_index x;
	struct fixture f;
	char addr[32];

	if (!open_pool(&f, 16, 1, &x) || !CHECK_EQ(x.nbuckets, 2, "two buckets") ||
	    !fixture_rule_scoped(&f, "198.18.0.0/15", &udps, &c))
		goto out;
	scoped_slot = find_scoped_slot(&f);
	if (!CHECK_GE(scoped_slot, 0, "its slot") ||
	    !CHECK_EQ(bpf_map_update_elem(f.m.verified, &k, &v, BPF_ANY), 0, "verified") ||
	    !CHECK_EQ(bpf_map_update_elem(f.m.verified_bloom, NULL, &k, BPF_ANY), 0, "bloom"))
		goto out;
	CHECK_EQ(udp(&f, client, 1, 0, T0), 1, "the verified client's UDP");
	CHECK_EQ(udp(&f, client, 1, 0, T0 + unit), 1, "and again, a unit later");
	rl_scoped_key(&w, &k, (__u32)scoped_slot, 0);
	CHECK(way_word(&x, client) & RL_WAY_VERIFIED, "its window placed verified");
	for (__u32 again = 0; again < 2; again++)
		for (__u32 i = 0; i < 31; i++) {
			nth_addr(0x200 + i, addr, sizeof(addr));
			if (udp(&f, addr, 1, 0, T0 + (1 + again) * unit + i + 1) < 0)
				goto out;
		}
	if (!CHECK(key_tracked(&x, &w, NULL), "every way taken, the client's too"))
		goto out;
	nth_addr(0x300, addr, sizeof(addr));
	if (udp(&f, addr, 1, 0, T0 + 3 * unit) < 0)
		goto out;
	CHECK(key_tracked(&x, &w, NULL), "the verified client's UDP window kept");
out:
	fixture_close(&f);
}

/*
 * A reload onto new maps (a larger --max-sources) carries a verified
 * client's scoped window, verified, and rebuilds the Bloom filter of
 * verified sources from what it carries: the client's own key goes in,
 * the window's does not (no source has it; the filter is read by
 * sources' keys only, and each key put in takes its share of it).
 */
TEST(pool_carried_scoped_window_not_in_the_bloom_filter)
{
	const char *client = "198.18.0.7";
	struct rl_iface old = { .name = "old" };
	struct rl_key k = v4_key(client), w;
	struct rl_attach_req req;
	struct rl_carried carried;
	char err[RL_ERR_LEN];
	struct rl_index x, y;
	struct fixture f, g;
	__u32 slot;

	memset(&g, 0, sizeof(g));
	if (!open_two_buckets_rule(&f, 16, &x, RULE_SCOPED))
		goto out;
	w = window_key(client);
	if (!client_connects(&f, client, T0 - 10 * NSEC_S))
		goto out;
	if (!CHECK(way_word(&x, client) & RL_WAY_VERIFIED, "its window verified"))
		goto out;
	old.m = f.m;
	rl_attach_req_defaults(&req);
	req.max_sources = 64;	/* new maps */
	if (!fixture_open(&g, &req) ||
	    !CHECK_EQ(rl_config_read(&f.m, &old.cfg), 0, "the old config") ||
	    !CHECK(rl_carry(&old, &g.s, &g.m, &carried, err, sizeof(err)) == 0,
		   "carry: %s", err) ||
	    !CHECK_EQ(rl_index_open(&y, &g.m), 0, "the new index"))
		goto out;
	CHECK(rl_index_find(&y, &w, &slot) == 0, "the window carried");
	CHECK_EQ(bpf_map_lookup_elem(g.m.verified_bloom, NULL, &k), 0,
		 "the client's key in the new filter");
	CHECK(bpf_map_lookup_elem(g.m.verified_bloom, NULL, &w) && errno == ENOENT,
	      "the window's key not in it");
out:
	if (g.skel)
		fixture_close(&g);
	fixture_close(&f);
}
