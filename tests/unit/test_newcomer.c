// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The newcomer budget of include/newcomer.h on the host, with a simulated
 * clock: a source is new while it is not verified (include/verified.h),
 * however long it has been seen; the newcomer window (quota.h, one CPU) is
 * exact against model.h; a refused newcomer takes no entry; admitted
 * newcomers live in a table of their own and never push a verified
 * source's state out. The tables are small LRUs, as `sources` and
 * `newcomers` are, driven the way bpf/ratelimit.bpf.c drives the maps
 * (verdict(), new_source_state); `verified` is written only by the
 * simulated egress hook (sim_answer).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "newcomer.h"
#include "verified.h"
#include "judge.h"
#include "model.h"
#include "harness.h"

#define W		RL_NSEC_PER_SEC
#define NB		10
#define WIDTH		(W / NB)
#define GEN		2
#define LEN		64
#define T0		(1000 * W)
#define MAX_TABLE	64
#define TTL		(600 * W)

struct entry {
	uint32_t addr;
	uint64_t last;
	int used;
};

/* A small LRU of sources, as `sources` and `newcomers` are. */
struct table {
	struct entry tab[MAX_TABLE];
	size_t cap;
	uint64_t made;
};

/* A rule with only a newcomer budget; the verified sources and when the
 * host last answered them (the egress hook's `verified`). */
struct sim {
	struct rl_state newwin;
	struct rl_history newhist;
	struct rl_budget nb;
	struct table sources, newcomers;
	uint64_t answered[MAX_TABLE];	/* by address, 0: never */
};

static void sim_init(struct sim *s, uint64_t budget, size_t cap)
{
	memset(s, 0, sizeof(*s));
	s->nb.pkts = budget;
	s->nb.bytes = RL_UNLIMITED;
	s->sources.cap = s->newcomers.cap = cap;
}

static struct entry *tab_find(struct table *t, uint32_t addr)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->tab[i].used && t->tab[i].addr == addr)
			return &t->tab[i];
	return NULL;
}

/* A new entry, evicting the least recently seen when the table is full. */
static struct entry *tab_insert(struct table *t, uint32_t addr, uint64_t now)
{
	struct entry *victim = &t->tab[0];

	for (size_t i = 0; i < t->cap; i++) {
		if (!t->tab[i].used) {
			victim = &t->tab[i];
			break;
		}
		if (t->tab[i].last < victim->last)
			victim = &t->tab[i];
	}
	*victim = (struct entry){ .addr = addr, .last = now, .used = 1 };
	t->made++;
	return victim;
}

/* The egress hook saw the host answer `addr` (addresses below MAX_TABLE). */
static void sim_answer(struct sim *s, uint32_t addr, uint64_t now)
{
	if (addr < MAX_TABLE)
		s->answered[addr] = now;
}

static int sim_verified(const struct sim *s, uint32_t addr, uint64_t now)
{
	return addr < MAX_TABLE && rl_verified_holds(s->answered[addr], now, TTL);
}

/* The program's verdict for one packet; *judged_new says whether the
 * newcomer budget applied to it. */
static int sim_packet(struct sim *s, uint32_t addr, uint64_t now, int *judged_new)
{
	int verified = sim_verified(s, addr, now);
	int is_new = rl_newcomer_applies(&s->nb, verified);
	struct entry *e = tab_find(&s->sources, addr);

	*judged_new = is_new;
	if (is_new && judge(&s->newwin, &s->newhist, 1, 0, &s->nb, now, LEN, GEN, WIDTH,
			     NB, NULL) != RL_FITS)
		return 0;	/* refused: no entry */
	if (!e && is_new)
		e = tab_find(&s->newcomers, addr);
	if (!e)
		e = tab_insert(is_new ? &s->newcomers : &s->sources, addr, now);
	e->last = now;
	if (is_new)
		rl_quota_commit(&s->newwin, LEN);
	return 1;
}

TEST(verified_for_exactly_one_ttl)
{
	static const uint64_t at[] = { T0, 1, UINT64_MAX - W / 2 };

	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		uint64_t c = at[i];

		CHECK(rl_verified_holds(c, c, TTL), "verified when answered (%" PRIu64 ")", c);
		CHECK(rl_verified_holds(c, c + TTL - 1, TTL), "a TTL less 1 ns on");
		CHECK(!rl_verified_holds(c, c + TTL, TTL), "lapsed a TTL on (%" PRIu64 ")", c);
		CHECK(rl_verified_holds(c, c - 5, TTL), "a clock behind the answer: verified");
		CHECK(!rl_answer_stale(c, c + TTL / 8 - 1, TTL), "no rewrite before TTL/8");
		CHECK(rl_answer_stale(c, c + TTL / 8, TTL), "rewritten at TTL/8");
	}
	CHECK(!rl_verified_holds(0, T0, TTL), "never answered: not verified");
}

TEST(newcomer_applies_only_to_new_sources)
{
	struct rl_budget none = { RL_UNLIMITED, RL_UNLIMITED, 0 };
	struct rl_budget pk = { 10, RL_UNLIMITED, 0 }, by = { RL_UNLIMITED, 1000, 0 };

	CHECK(!rl_newcomer_applies(&none, 0), "no budget: never");
	CHECK(rl_newcomer_applies(&pk, 0), "unverified: new");
	CHECK(rl_newcomer_applies(&by, 0), "a byte budget too");
	CHECK(!rl_newcomer_applies(&pk, 1), "verified: never new");
	struct rl_rule r24 = { .prefixlen = 24 }, r0 = { .flags = RL_RULE_F_V6 },
		       apart = { .flags = RL_RULE_F_V6 | RL_RULE_F_APART };

	CHECK_EQ(rl_budget_slot(7, &r24), 7, "a rule's own slot");
	CHECK_EQ(rl_budget_slot(7, &r0), RL_BUDGET_DEFAULT, "/0: the default's shared slot");
	CHECK_EQ(rl_budget_slot(7, &apart), 7, "::/0 set apart: its own slot");
	CHECK_EQ(rl_new_index(RL_BUDGET_DEFAULT), RL_AGGREGATE_ENTRIES - 1,
		 "the last newcomer window fits the map");
}

TEST(newcomer_refused_take_no_entry)
{
	struct sim s;
	int n;

	sim_init(&s, 3, 16);
	for (uint32_t a = 1; a <= 3; a++)
		CHECK(sim_packet(&s, a, T0, &n) && n, "newcomer %u passes", a);
	for (uint32_t a = 4; a <= 10; a++)
		CHECK(!sim_packet(&s, a, T0 + WIDTH, &n) && n, "newcomer %u refused", a);
	CHECK_EQ(s.newcomers.made, 3, "refusals made no entry");
	CHECK_EQ(s.sources.made, 0, "newcomers took no `sources` entry");
	CHECK(!sim_packet(&s, 4, T0 + W - 1, &n) && n, "still refused in the window");
	CHECK(sim_packet(&s, 4, T0 + W, &n) && n, "the budget freed: passes, as new");
}

/* The attack of the issue: a pool of spoofed addresses repeated for an
 * hour never earns anything by repeating: every window it passes at most
 * the newcomer budget, and it never takes a `sources` entry. */
TEST(newcomer_forged_pool_never_established)
{
	uint64_t worst = 0, now = T0;
	struct sim s;
	int n;

	sim_init(&s, 20, MAX_TABLE);
	for (uint64_t w = 0; w < 3600; w++) {
		uint64_t passed = 0;

		/* 200 packets per window from a pool of 100 addresses */
		for (uint32_t i = 0; i < 200; i++, now += W / 200)
			passed += sim_packet(&s, 1000 + i % 100, now, &n);
		if (passed > worst)
			worst = passed;
		CHECK(n, "still new after %" PRIu64 " windows", w);
	}
	CHECK(worst <= 20, "at most the newcomer budget a window (%" PRIu64 ")", worst);
	CHECK_EQ(s.sources.made, 0, "no `sources` entry for a forged address");
}

/* Newcomers through a small table never push a verified source out. */
TEST(newcomers_never_evict_verified)
{
	uint64_t now = T0;
	struct sim s;
	int n;

	sim_init(&s, 1000, 8);
	for (uint32_t a = 1; a <= 8; a++) {
		sim_answer(&s, a, now);
		CHECK(sim_packet(&s, a, now, &n) && !n, "verified %u: not new", a);
	}
	for (uint32_t i = 0; i < 100000; i++, now += WIDTH / 10)
		sim_packet(&s, 100 + i, now, &n);
	for (uint32_t a = 1; a <= 8; a++)
		CHECK(tab_find(&s.sources, a) != NULL, "verified %u kept", a);
	CHECK(s.newcomers.made > 1000, "the flood went through its own table");
	/* a lapsed verification makes a source new again, the table aside */
	CHECK(sim_packet(&s, 1, T0 + TTL, &n) && n, "lapsed: judged as new");
}

/*
 * Random traffic: a few steady clients the host answers and a flood of
 * random newcomers through small tables. The newcomer window agrees with
 * model.h packet by packet; a verified source is never refused; no refused
 * packet makes an entry.
 */
TEST(newcomer_vs_model_random)
{
	uint64_t seed = rng_seed(0x11c0de), s0 = seed, now = T0;
	uint64_t steps = 2000000, mismatches = 0, established_refused = 0;
	uint64_t refused = 0, passed_new = 0, entries_unpaid = 0;
	struct model ref;
	struct sim s;
	int n;

	sim_init(&s, 50, MAX_TABLE);
	model_init(&ref, WIDTH, NB, 50, RL_UNLIMITED);
	for (uint64_t i = 0; i < steps; i++) {
		uint64_t made;
		uint32_t addr;
		int est, v, m = -1;

		now += rng_range(&seed, 0, 400000);	/* ~5000 packets/s */
		/* 8 steady clients half the time, else a newcomer of 2^20 */
		addr = rng_next(&seed) & 1 ? (uint32_t)rng_range(&seed, 1, 8) :
		       (uint32_t)rng_range(&seed, 100, 100 + (1 << 20));
		/* the host answers the steady clients now and then */
		if (addr <= 8 && rng_next(&seed) % 64 == 0)
			sim_answer(&s, addr, now);
		est = sim_verified(&s, addr, now);
		made = s.sources.made + s.newcomers.made;
		v = sim_packet(&s, addr, now, &n);
		if (n)
			m = model_judge(&ref, now, LEN);
		mismatches += n && m != v;
		established_refused += est && (!v || n);
		refused += !v;
		passed_new += v && n;
		entries_unpaid += s.newcomers.made + s.sources.made != made && !v;
	}
	printf("    %" PRIu64 " packets: %" PRIu64 " newcomers passed, %" PRIu64
	       " refused (seed 0x%" PRIx64 ", RL_TEST_SEED to change)\n",
	       steps, passed_new, refused, s0);
	CHECK_EQ(mismatches, 0, "newcomer window verdicts against model.h");
	CHECK_EQ(established_refused, 0, "verified sources never judged as new");
	CHECK_EQ(entries_unpaid, 0, "every entry made by a passed packet");
	CHECK(refused > steps / 10 && passed_new >= steps / 200,
	      "the budget both passed and refused (%" PRIu64 ", %" PRIu64 ")",
	      passed_new, refused);
	model_free(&ref);
}
