// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Randomized run: tens of thousands of random, mutated and well-formed
 * frames from a population of sources larger than the table, on random
 * CPUs, with random clock advances and quota changes under way, checked
 * frame by frame and in total against invariants:
 *
 *  - the verdict is XDP_PASS or XDP_DROP, nothing else;
 *  - each frame moves exactly one of passed/dropped, by one frame and its
 *    length, as its verdict says (passed + dropped = frames seen);
 *  - malformed and non_ip move exactly for the frames a reference
 *    classifier written from doc/design/parsing.md calls so, and
 *    never create a source; non-IP frames pass, malformed frames drop;
 *  - a blocked prefix never passes, an allow-listed one never drops;
 *  - per-source totals summed over the table stay within the interface's.
 *
 * The seed is printed; RL_SEED=N repeats a run, RL_RANDOM_FRAMES=N sets its
 * length.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "lib/maps.h"
#include "../harness.h"
#include "fixture.h"

#define DEFAULT_SEED	0x5eed2025ULL
#define DEFAULT_FRAMES	100000
#define MAX_LEN		3000	/* within one test-run buffer: see test_corpus.c */
#define MAX_FAILS	10	/* frame mismatches printed */

static __u64 rng;

static __u64 rnd(void)		/* xorshift64* */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static __u32 below(__u32 n)
{
	return (__u32)(rnd() % n);
}

static bool chance(__u32 percent)
{
	return below(100) < percent;
}

static __u64 env_u64(const char *name, __u64 def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

/* ---- the reference classifier (doc/design/parsing.md) ---- */

enum ref_kind { REF_V4, REF_V6, REF_NON_IP, REF_MALFORMED, REF_ENCAP };

struct ref {
	enum ref_kind kind;
	__u8 src[16];		/* IPv4 in the first 4 bytes */
};

static unsigned be16(const __u8 *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static struct ref classify(const __u8 *p, size_t len)
{
	struct ref r = { .kind = REF_MALFORMED };
	size_t off = 14;
	unsigned proto;

	if (len < 14)
		return r;
	proto = be16(p + 12);
	for (int tags = 0; tags < 2 && (proto == 0x8100 || proto == 0x88a8); tags++) {
		if (len < off + 4)
			return r;
		proto = be16(p + off + 2);
		off += 4;
	}
	if (proto == 0x0800) {
		unsigned ihl = p[off] & 0xf;

		if (len < off + 20 || p[off] >> 4 != 4 || ihl < 5 || len < off + 4 * ihl)
			return r;
		r.kind = REF_V4;
		memcpy(r.src, p + off + 12, 4);
	} else if (proto == 0x86dd) {
		static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };

		if (len < off + 40 || p[off] >> 4 != 6)
			return r;
		/* a multicast or IPv4-mapped source cannot be a sender */
		if (p[off + 8] == 0xff || !memcmp(p + off + 8, mapped, 12))
			return r;
		r.kind = REF_V6;
		memcpy(r.src, p + off + 8, 16);
	} else if (proto == 0x8100 || proto == 0x88a8 || proto == 0x8864 ||
		   proto == 0x8847 || proto == 0x8848) {
		r.kind = REF_ENCAP;	/* a third tag, PPPoE session, MPLS */
	} else {
		r.kind = REF_NON_IP;
	}
	return r;
}

/* ---- rules: fixed ones the verdict invariants rely on, and a default
 * that changes under way ---- */

struct fixed_rule {
	const char *prefix;
	bool v6;
	__u8 addr[16];
	__u32 len;
	bool block;		/* else allow-list */
};

static struct fixed_rule fixed[] = {
	{ "198.19.0.0/16", false, { 198, 19 }, 16, true },
	{ "198.18.7.0/24", false, { 198, 18, 7 }, 24, false },
	{ "2001:db8:dead::/48", true, { 0x20, 0x01, 0x0d, 0xb8, 0xde, 0xad }, 48, true },
	{ "2001:db8:beef::/48", true, { 0x20, 0x01, 0x0d, 0xb8, 0xbe, 0xef }, 48, false },
};
#define NFIXED (sizeof(fixed) / sizeof(fixed[0]))

static bool in_prefix(const __u8 *a, const __u8 *net, __u32 len)
{
	for (__u32 i = 0; i < len; i++)
		if ((a[i / 8] ^ net[i / 8]) & (0x80 >> (i % 8)))
			return false;
	return true;
}

/* The fixed rule a source falls in (the longest: they do not nest), or NULL. */
static const struct fixed_rule *fixed_rule_of(const struct ref *r)
{
	for (size_t i = 0; i < NFIXED; i++)
		if (fixed[i].v6 == (r->kind == REF_V6) &&
		    in_prefix(r->src, fixed[i].addr, fixed[i].len))
			return &fixed[i];
	return NULL;
}

static bool set_rules(struct fixture *f)
{
	for (size_t i = 0; i < NFIXED; i++)
		if (!fixture_pps(f, fixed[i].prefix, fixed[i].block ? 0 : RL_UNLIMITED))
			return false;
	/* limited sources around the allow-listed /24; a prefix with an
	 * aggregate budget; a byte budget for IPv6 */
	return fixture_quota(f, "198.18.0.0/20", 5, 20000, 50, RL_UNLIMITED) &&
	       fixture_quota(f, "2001:db8:1::/48", RL_UNLIMITED, 100000, RL_UNLIMITED,
			     RL_UNLIMITED) &&
	       fixture_pps(f, "default", 100);
}

/* ---- frames ---- */

/* A source from a population of a few thousand, biased to the rules. */
static void random_source(bool v6, __u8 *a)
{
	__u32 pick = below(8), n = below(v6 ? 600 : 3000);

	memset(a, 0, 16);
	if (!v6) {
		a[0] = 198;
		a[1] = pick == 0 ? 19 : 18;			/* blocked */
		/* the allow-listed /24, the limited /20 around it, beyond */
		a[2] = pick == 1 ? 7 : pick < 5 ? (__u8)(n % 16) : (__u8)(16 + (n >> 8));
		a[3] = (__u8)n;
		return;
	}
	a[0] = 0x20; a[1] = 0x01; a[2] = 0x0d; a[3] = 0xb8;
	a[4] = pick == 0 ? 0xde : pick == 1 ? 0xbe : 0x00;
	a[5] = pick == 0 ? 0xad : pick == 1 ? 0xef : pick < 5 ? 1 : (__u8)(n >> 8);
	a[7] = (__u8)(n % 64);			/* the /64 */
	a[15] = (__u8)rnd();			/* a host in it */
}

static size_t put16(__u8 *p, unsigned v)
{
	p[0] = (__u8)(v >> 8);
	p[1] = (__u8)v;
	return 2;
}

/* A well-formed frame: UDP (or a fragment, or behind IPv6 extension
 * headers) over IPv4 or IPv6, behind 0..2 VLAN tags. */
static size_t valid_frame(__u8 *p)
{
	bool v6 = chance(40);
	int nvlan = chance(60) ? 0 : (int)below(3);
	size_t off = 12, hdr = v6 ? 40 : 20 + 4 * below(11), len;

	memset(p, 0, MAX_LEN);
	memcpy(p, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	for (int i = 0; i < nvlan; i++) {
		off += put16(p + off, i == 0 && nvlan == 2 ? 0x88a8 : 0x8100);
		off += put16(p + off, 100 + i);
	}
	off += put16(p + off, v6 ? 0x86dd : 0x0800);
	len = off + hdr + 8 + (chance(80) ? below(200) : below(MAX_LEN - off - hdr - 8));
	if (v6) {
		p[off] = 0x60;
		put16(p + off + 4, (unsigned)(len - off - 40));
		p[off + 6] = chance(70) ? 17 : (__u8)below(64);	/* UDP, or a header */
		p[off + 7] = 64;
		random_source(true, p + off + 8);
		memcpy(p + off + 24, "\x20\x01\x0d\xb8\xff\xff", 6);
	} else {
		p[off] = (__u8)(0x40 | hdr / 4);
		put16(p + off + 2, (unsigned)(len - off));
		if (chance(20))
			put16(p + off + 6, below(0x10000));	/* a fragment */
		p[off + 8] = 64;
		p[off + 9] = 17;
		random_source(false, p + off + 12);
		memcpy(p + off + 16, "\xc6\x12\xff\xfe", 4);
	}
	return len;
}

static size_t non_ip_frame(__u8 *p)
{
	static const unsigned types[] = { 0x0806, 0x88cc, 0x8847, 0x8864, 0x88b5, 0x0042 };
	size_t len = valid_frame(p), off = 12;

	/* replace the innermost EtherType, or push a third tag */
	while (be16(p + off) == 0x8100 || be16(p + off) == 0x88a8)
		off += 4;
	if (off == 20 && chance(50)) {
		memmove(p + 24, p + 20, len - 20 < MAX_LEN - 24 ? len - 20 : MAX_LEN - 24);
		put16(p + 20, 0x8100);
		put16(p + 22, 300);
		return len + 4 < MAX_LEN ? len + 4 : MAX_LEN;
	}
	put16(p + off, types[below(sizeof(types) / sizeof(types[0]))]);
	return len;
}

/* A well-formed frame mutated: bytes flipped in the headers, header fields
 * set to boundary values, or cut short. */
static size_t mutated_frame(__u8 *p)
{
	size_t len = valid_frame(p);
	int n = 1 + (int)below(4);

	for (int i = 0; i < n; i++) {
		size_t at = below(len < 80 ? (__u32)len : 80);

		switch (below(4)) {
		case 0:
			p[at] ^= (__u8)(1 << below(8));
			break;
		case 1:
			p[at] = (__u8)rnd();
			break;
		case 2: {	/* version/IHL nibbles at every header start */
			static const __u8 vihl[] = { 0x00, 0x40, 0x44, 0x45, 0x4f, 0x60,
						     0x65, 0xf5, 0x06 };

			p[14 + 4 * below(3)] = vihl[below(sizeof(vihl))];
			break;
		}
		default:
			len = 14 + below((__u32)(len - 14) + 1);	/* cut */
		}
	}
	return len;
}

static size_t random_bytes(__u8 *p)
{
	static const unsigned types[] = { 0x0800, 0x86dd, 0x8100, 0x88a8 };
	size_t len = 14 + below(chance(80) ? 100 : MAX_LEN - 14);

	for (size_t i = 0; i < len; i++)
		p[i] = (__u8)rnd();
	if (chance(70))
		put16(p + 12, types[below(4)]);
	return len;
}

static size_t random_frame(__u8 *p)
{
	__u32 r = below(100);

	return r < 45 ? valid_frame(p) : r < 80 ? mutated_frame(p) :
	       r < 90 ? non_ip_frame(p) : random_bytes(p);
}

/* Random clock advance: mostly within a bucket, sometimes a bucket or a
 * window and more. */
static __u64 advance(void)
{
	__u32 r = below(100);

	return r < 50 ? 0 : r < 85 ? below(1000000) : r < 95 ? below(150 * 1000000) :
	       r < 99 ? NSEC_S + below(NSEC_S) : 3600 * NSEC_S;
}

/* ---- the run ---- */

struct tally {
	__u64 frames, pass, drop, pass_bytes, drop_bytes, malformed, non_ip, encap;
	__u64 blocked, allowed;	/* frames from fixed rules' prefixes */
	int bad;
};

static void frame_fail(struct tally *t, __u64 i, const char *why, int v,
		       const struct rl_counters *m)
{
	if (++t->bad > MAX_FAILS)
		return;
	CHECK(false, "frame %llu: %s (verdict %d; moved passed %llu, dropped %llu, "
	      "malformed %llu, non_ip %llu, new sources %llu)",
	      (unsigned long long)i, why, v, (unsigned long long)m->passed_pkts,
	      (unsigned long long)m->dropped_pkts, (unsigned long long)m->malformed_pkts,
	      (unsigned long long)m->non_ip_pkts, (unsigned long long)m->new_sources);
}

/* Checks one frame's verdict and counters against the reference. */
static void check_frame(struct tally *t, __u64 i, const __u8 *p, size_t len,
			int v, const struct rl_counters *m)
{
	struct ref r = classify(p, len);
	const struct fixed_rule *fr = fixed_rule_of(&r);
	bool pass = v == XDP_PASS, ip = r.kind == REF_V4 || r.kind == REF_V6;

	t->frames++;
	if (v != XDP_PASS && v != XDP_DROP)
		return frame_fail(t, i, "verdict neither XDP_PASS nor XDP_DROP", v, m);
	t->pass += pass;
	t->drop += !pass;
	t->pass_bytes += pass ? len : 0;
	t->drop_bytes += pass ? 0 : len;
	t->malformed += r.kind == REF_MALFORMED;
	t->non_ip += r.kind == REF_NON_IP;
	t->encap += r.kind == REF_ENCAP;
	if (m->passed_pkts != pass || m->dropped_pkts != !pass ||
	    m->passed_bytes != (pass ? len : 0) || m->dropped_bytes != (pass ? 0 : len))
		return frame_fail(t, i, "not counted once, as its verdict", v, m);
	if (m->malformed_pkts != (r.kind == REF_MALFORMED) ||
	    m->non_ip_pkts != (r.kind == REF_NON_IP) ||
	    m->encap_pkts != (r.kind == REF_ENCAP))
		return frame_fail(t, i, r.kind == REF_MALFORMED ? "malformed not counted so" :
				  r.kind == REF_NON_IP ? "non-IP not counted so" :
				  r.kind == REF_ENCAP ? "encapsulated not counted so" :
				  "IP counted as malformed or non-IP", v, m);
	if (!ip && (m->new_sources || (r.kind == REF_NON_IP) != pass))
		return frame_fail(t, i, "non-IP must pass, malformed and encapsulated drop, none "
				  "make a source", v, m);
	t->blocked += fr && fr->block;
	t->allowed += fr && !fr->block;
	if (fr && fr->block == pass)
		return frame_fail(t, i, fr->block ? "a blocked source passed" :
				  "an allow-listed source dropped", v, m);
}

/* What sum_sources() adds up as it walks the tracked sources. */
struct source_walk {
	struct fixture *f;
	__u64 now;
	struct rl_source_sum *sum;
	__u64 n;
};

static int add_source(void *ctx, const struct rl_key *key, __u32 slot,
		      const void *vals)
{
	struct source_walk *w = ctx;
	struct rl_source_sum s;

	(void)slot;
	(void)vals;
	if (!CHECK_EQ(rl_source_read(&w->f->m, &w->f->s, key, w->now, &s), 0,
		      "read source"))
		return -1;
	w->sum->passed_pkts += s.passed_pkts;
	w->sum->passed_bytes += s.passed_bytes;
	w->sum->dropped_pkts += s.dropped_pkts;
	w->sum->dropped_bytes += s.dropped_bytes;
	w->n++;
	return 0;
}

/* Sums of the per-source totals over every tracked source. */
static bool sum_sources(struct fixture *f, __u64 now, struct rl_source_sum *sum)
{
	struct source_walk w = { .f = f, .now = now, .sum = sum };

	memset(sum, 0, sizeof(*sum));
	if (!CHECK_EQ(fixture_walk(f, add_source, &w), 0, "walk the tracked sources"))
		return false;
	printf("    %llu sources tracked at the end\n", (unsigned long long)w.n);
	return true;
}

static void check_totals(struct fixture *f, const struct tally *t, __u64 now)
{
	struct rl_counters c = fixture_totals(f);
	struct rl_source_sum s;

	CHECK_EQ(c.passed_pkts + c.dropped_pkts, t->frames, "passed + dropped = frames seen");
	CHECK_EQ(c.passed_pkts, t->pass, "passed = XDP_PASS verdicts");
	CHECK_EQ(c.dropped_pkts, t->drop, "dropped = XDP_DROP verdicts");
	CHECK_EQ(c.passed_bytes, t->pass_bytes, "passed bytes");
	CHECK_EQ(c.dropped_bytes, t->drop_bytes, "dropped bytes");
	CHECK_EQ(c.malformed_pkts, t->malformed, "malformed = reference malformed");
	CHECK_EQ(c.non_ip_pkts, t->non_ip, "non_ip = reference non-IP");
	CHECK_EQ(c.encap_pkts, t->encap, "encap = reference encapsulated");
	if (!sum_sources(f, now, &s))
		return;
	CHECK_LE(s.passed_pkts, c.passed_pkts - c.non_ip_pkts, "sources' passed <= IP passed");
	CHECK_LE(s.dropped_pkts, c.dropped_pkts - c.malformed_pkts - c.encap_pkts,
		 "sources' dropped <= IP dropped");
	CHECK_LE(s.passed_bytes, c.passed_bytes, "sources' passed bytes");
	CHECK_LE(s.dropped_bytes, c.dropped_bytes, "sources' dropped bytes");
	/* the pool is larger than the table: eviction was exercised */
	CHECK_GE(c.new_sources, 2 * f->s.max_sources, "sources created");
	printf("    %llu passed, %llu dropped, %llu malformed, %llu non_ip, %llu encap, "
	       "%llu sources created, %llu untracked\n",
	       (unsigned long long)c.passed_pkts, (unsigned long long)c.dropped_pkts,
	       (unsigned long long)c.malformed_pkts, (unsigned long long)c.non_ip_pkts,
	       (unsigned long long)c.encap_pkts,
	       (unsigned long long)c.new_sources, (unsigned long long)c.untracked_pkts);
}

TEST(random_frames_invariants)
{
	__u64 seed = env_u64("RL_SEED", DEFAULT_SEED);
	__u64 nframes = env_u64("RL_RANDOM_FRAMES", DEFAULT_FRAMES);
	static __u8 buf[MAX_LEN + 8];
	struct rl_attach_req req;
	struct tally t = { 0 };
	struct fixture f;
	__u64 now = T0;
	int cpus[64], ncpus = fixture_cpus(cpus, 64);
	__u64 t0, t1;

	printf("    seed %#llx, %llu frames (RL_SEED=N, RL_RANDOM_FRAMES=N to change)\n",
	       (unsigned long long)seed, (unsigned long long)nframes);
	rng = seed ? seed : 1;
	rl_attach_req_defaults(&req);
	req.max_sources = 256;	/* far below the population: evictions */
	if (!fixture_open(&f, &req) || !set_rules(&f))
		goto out;
	fixture_hold(&f);
	t0 = rl_now_ns();
	for (__u64 i = 0; i < nframes && t.bad <= MAX_FAILS; i++) {
		/* 2 bytes in: IP headers aligned, as in struct frame */
		__u8 *p = buf + 2;
		size_t len = random_frame(p);
		struct rl_counters m;
		int v;

		if (i % 2000 == 1999 && !fixture_pps(&f, "default", below(500)))
			break;
		now += advance();
		v = fixture_run_counted(&f, p, len, cpus[below((__u32)ncpus)], now, &m);
		check_frame(&t, i, p, len, v, &m);
	}
	t1 = rl_now_ns();
	printf("    %llu frames on %d CPUs in %.1f s\n", (unsigned long long)t.frames,
	       ncpus, (double)(t1 - t0) / 1e9);
	CHECK_EQ(t.bad, 0, "frames that broke an invariant");
	CHECK_EQ(t.frames, nframes, "frames run");
	CHECK(t.blocked && t.allowed, "frames from blocked (%llu) and allow-listed (%llu) prefixes",
	      (unsigned long long)t.blocked, (unsigned long long)t.allowed);
	check_totals(&f, &t, now);
out:
	fixture_close(&f);
}
