// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The newcomer budget of include/newcomer.h on the host, with a simulated
 * clock: a source is new for exactly one window from its entry's creation;
 * the newcomer window (quota.h, one CPU) is exact against model.h; a
 * refused newcomer takes no entry and stays new; an established source
 * never consults the budget; eviction makes a source new again. The table
 * is a small LRU, as `sources` is, driven the way bpf/ratelimit.bpf.c
 * drives the map (refused_untracked, new_source_state, within_quota).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "newcomer.h"
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

struct entry {
	uint32_t addr;
	uint64_t created;
	uint64_t last;
	int used;
};

/* A rule with only a newcomer budget, and a table of `cap` sources. */
struct sim {
	struct rl_state newwin;
	struct rl_history newhist;
	struct rl_budget nb;
	struct entry tab[MAX_TABLE];
	size_t cap;
	uint64_t entries_made;
};

static void sim_init(struct sim *s, uint64_t budget, size_t cap)
{
	memset(s, 0, sizeof(*s));
	s->nb.pkts = budget;
	s->nb.bytes = RL_UNLIMITED;
	s->cap = cap;
}

static struct entry *sim_find(struct sim *s, uint32_t addr)
{
	for (size_t i = 0; i < s->cap; i++)
		if (s->tab[i].used && s->tab[i].addr == addr)
			return &s->tab[i];
	return NULL;
}

/* A new entry, evicting the least recently seen when the table is full. */
static struct entry *sim_insert(struct sim *s, uint32_t addr, uint64_t now)
{
	struct entry *victim = &s->tab[0];

	for (size_t i = 0; i < s->cap; i++) {
		if (!s->tab[i].used) {
			victim = &s->tab[i];
			break;
		}
		if (s->tab[i].last < victim->last)
			victim = &s->tab[i];
	}
	*victim = (struct entry){ .addr = addr, .created = now, .last = now, .used = 1 };
	s->entries_made++;
	return victim;
}

/* The program's verdict for one packet; *judged_new says whether the
 * newcomer budget applied to it. */
static int sim_packet(struct sim *s, uint32_t addr, uint64_t now, int *judged_new)
{
	struct entry *e = sim_find(s, addr);
	int is_new = rl_newcomer_applies(&s->nb, e != NULL, e ? e->created : 0, now, W);

	*judged_new = is_new;
	if (is_new && judge(&s->newwin, &s->newhist, 1, 0, &s->nb, now, LEN, GEN, WIDTH,
			     NB, NULL) != RL_FITS)
		return 0;	/* refused: no entry */
	if (!e)
		e = sim_insert(s, addr, now);
	e->last = now;
	if (is_new)
		rl_quota_commit(&s->newwin, LEN);
	return 1;
}

TEST(newcomer_new_for_exactly_one_window)
{
	static const uint64_t created[] = { T0, 1, UINT64_MAX - W / 2, 0 };

	for (size_t i = 0; i < sizeof(created) / sizeof(created[0]); i++) {
		uint64_t c = created[i];

		CHECK(rl_source_new(c, c, W), "new at creation (%" PRIu64 ")", c);
		CHECK(rl_source_new(c, c + W - 1, W), "new a window less 1 ns on");
		CHECK(!rl_source_new(c, c + W, W), "established a window on (%" PRIu64 ")", c);
		CHECK(!rl_source_new(c, c + 100 * W, W), "established long after");
		CHECK(rl_source_new(c, c - 5, W), "a clock behind the creation: new");
	}
}

TEST(newcomer_applies_only_to_new_sources)
{
	struct rl_budget none = { RL_UNLIMITED, RL_UNLIMITED };
	struct rl_budget pk = { 10, RL_UNLIMITED }, by = { RL_UNLIMITED, 1000 };

	CHECK(!rl_newcomer_applies(&none, 0, 0, T0, W), "no budget: never");
	CHECK(rl_newcomer_applies(&pk, 0, 0, T0, W), "untracked: new");
	CHECK(rl_newcomer_applies(&by, 0, 0, T0, W), "a byte budget too");
	CHECK(rl_newcomer_applies(&pk, 1, T0, T0 + W - 1, W), "tracked under a window: new");
	CHECK(!rl_newcomer_applies(&pk, 1, T0, T0 + W, W), "tracked a window: established");
	struct rl_rule r24 = { .prefixlen = 24 }, r0 = { .flags = RL_RULE_F_V6 },
		       apart = { .flags = RL_RULE_F_V6 | RL_RULE_F_APART };

	CHECK_EQ(rl_budget_slot(7, &r24), 7, "a rule's own slot");
	CHECK_EQ(rl_budget_slot(7, &r0), RL_BUDGET_DEFAULT, "/0: the default's shared slot");
	CHECK_EQ(rl_budget_slot(7, &apart), 7, "::/0 set apart: its own slot");
	CHECK_EQ(rl_new_index(RL_BUDGET_DEFAULT), RL_AGGREGATE_ENTRIES - 1,
		 "the last newcomer window fits the map");
}

TEST(newcomer_refused_take_no_entry_and_stay_new)
{
	struct sim s;
	int n;

	sim_init(&s, 3, 16);
	for (uint32_t a = 1; a <= 3; a++)
		CHECK(sim_packet(&s, a, T0, &n) && n, "newcomer %u passes", a);
	for (uint32_t a = 4; a <= 10; a++)
		CHECK(!sim_packet(&s, a, T0 + WIDTH, &n) && n, "newcomer %u refused", a);
	CHECK_EQ(s.entries_made, 3, "refusals made no entry");
	/* source 4 keeps trying: still new a window later, it passes when the
	 * budget frees, and is established one window after that pass */
	CHECK(!sim_packet(&s, 4, T0 + W - 1, &n) && n, "still refused in the window");
	CHECK(sim_packet(&s, 4, T0 + W, &n) && n, "the budget freed: passes, as new");
	CHECK(sim_find(&s, 4)->created == T0 + W, "created by its first pass");
	for (uint32_t a = 11; a <= 13; a++)
		sim_packet(&s, a, T0 + W + WIDTH, &n);
	CHECK(!sim_packet(&s, 4, T0 + 2 * W - 1, &n) && n, "new until a window after");
	CHECK(sim_packet(&s, 4, T0 + 2 * W, &n) && !n, "then established");
}

TEST(newcomer_eviction_makes_new_again)
{
	struct sim s;
	int n;

	sim_init(&s, 2, 2);
	CHECK(sim_packet(&s, 1, T0, &n) && n, "source 1 arrives");
	CHECK(sim_packet(&s, 1, T0 + 2 * W, &n) && !n, "established");
	CHECK(sim_packet(&s, 2, T0 + 2 * W + 1, &n) && n, "source 2");
	CHECK(sim_packet(&s, 3, T0 + 2 * W + 2, &n) && n, "source 3 evicts 1");
	CHECK(sim_find(&s, 1) == NULL, "1 evicted");
	CHECK(!sim_packet(&s, 1, T0 + 2 * W + 3, &n) && n,
	      "evicted: new again, and the budget is spent");
	CHECK(sim_packet(&s, 1, T0 + 3 * W + WIDTH, &n) && n, "passes as new later");
	CHECK(sim_find(&s, 1)->created == T0 + 3 * W + WIDTH, "a fresh creation time");
}

/*
 * Random traffic: a few steady clients and a flood of random newcomers
 * through a small table. The newcomer window agrees with model.h packet by
 * packet; a source whose entry is a window old is never refused; no
 * refused packet makes an entry.
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
		uint64_t made = s.entries_made;
		uint32_t addr;
		struct entry *e;
		int est, v, m = -1;

		now += rng_range(&seed, 0, 400000);	/* ~5000 packets/s */
		/* 8 steady clients half the time, else a newcomer of 2^20 */
		addr = rng_next(&seed) & 1 ? (uint32_t)rng_range(&seed, 1, 8) :
		       (uint32_t)rng_range(&seed, 100, 100 + (1 << 20));
		e = sim_find(&s, addr);
		est = e && now - e->created >= W;
		v = sim_packet(&s, addr, now, &n);
		if (n)
			m = model_judge(&ref, now, LEN);
		mismatches += n && m != v;
		established_refused += est && (!v || n);
		refused += !v;
		passed_new += v && n;
		entries_unpaid += s.entries_made != made && !(v && n);
	}
	printf("    %" PRIu64 " packets: %" PRIu64 " newcomers passed, %" PRIu64
	       " refused (seed 0x%" PRIx64 ", RL_TEST_SEED to change)\n",
	       steps, passed_new, refused, s0);
	CHECK_EQ(mismatches, 0, "newcomer window verdicts against model.h");
	CHECK_EQ(established_refused, 0, "established sources never judged as new");
	CHECK_EQ(entries_unpaid, 0, "every entry made by a passed newcomer");
	CHECK(refused > steps / 10 && passed_new >= steps / 200,
	      "the budget both passed and refused (%" PRIu64 ", %" PRIu64 ")",
	      passed_new, refused);
	model_free(&ref);
}
