// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Bans rest on proof (include/verified.h), on the host with a simulated
 * clock: a source's quota judged as the program judges it (judge.h, one
 * CPU), and the proven count of the packets on connections the host
 * answered. Forged copies of a client's address spend its quota but never
 * ban it; a source whose own answered packets exceed its quota is banned.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "verified.h"
#include "judge.h"
#include "harness.h"

#define W		RL_NSEC_PER_SEC
#define NB		10
#define WIDTH		(W / NB)
#define GEN		2
#define LEN		100
#define T0		(1000 * W)
#define QUOTA		200

struct victim {
	struct rl_state st;
	struct rl_history h;
	struct rl_budget b;
	struct rl_verified v;
	uint64_t own_passed, own_sent, banned_at;
};

static void victim_init(struct victim *s)
{
	memset(s, 0, sizeof(*s));
	s->b.pkts = QUOTA;
	s->b.bytes = RL_UNLIMITED;
}

/* One packet, as verdict() takes it: `proven` when it belongs to a
 * connection the host answered (the forger's never do). 1 if it passed. */
static int packet(struct victim *s, uint64_t now, int proven)
{
	uint32_t win = rl_proven_window(now, W);
	int fits = judge(&s->st, &s->h, 1, 0, &s->b, now, LEN, GEN, WIDTH, NB,
			 NULL) == RL_FITS;

	if (proven)
		rl_proven_add(&s->v, win, LEN);
	if (!fits) {
		if (proven && rl_proven_exceeds(&s->v, win, &s->b) && !s->banned_at)
			s->banned_at = now;
		return 0;
	}
	rl_quota_commit(&s->st, LEN);
	return 1;
}

/* hping3 at twice the quota with the client's address, the client at
 * `own` packets a window: `own` within its quota is never banned. */
static uint64_t forged_beside_client(uint32_t own, uint64_t windows)
{
	uint64_t now = T0;
	struct victim s;

	victim_init(&s);
	for (uint64_t w = 0; w < windows; w++) {
		uint32_t forged = 2 * QUOTA, n = forged + own;

		for (uint32_t i = 0; i < n; i++, now += W / n) {
			int mine = own && i % (n / own) == 0;

			if (packet(&s, now, mine) && mine)
				s.own_passed++;
			s.own_sent += mine;
		}
	}
	printf("    own %u/window: %" PRIu64 " of %" PRIu64 " passed beside the forgery\n",
	       own, s.own_passed, s.own_sent);
	return s.banned_at;
}

TEST(ban_never_by_forged_copies)
{
	CHECK_EQ(forged_beside_client(QUOTA / 10, 60), 0, "a light client: not banned");
	CHECK_EQ(forged_beside_client(QUOTA * 9 / 10, 60), 0,
		 "a client near its quota: not banned");
}

TEST(ban_by_own_answered_packets)
{
	uint64_t now = T0;
	struct victim s;

	victim_init(&s);
	/* 1.5 x the quota, all on answered connections */
	for (uint32_t i = 0; i < 3 * QUOTA && !s.banned_at; i++, now += W / (3 * QUOTA / 2))
		packet(&s, now, 1);
	CHECK(s.banned_at && s.banned_at - T0 <= 2 * W,
	      "banned within two windows (%llu ns)",
	      (unsigned long long)(s.banned_at - T0));

	/* the same offender hiding behind forged copies of itself */
	victim_init(&s);
	now = T0;
	for (uint32_t i = 0; i < 12 * QUOTA && !s.banned_at; i++, now += W / (4 * QUOTA))
		packet(&s, now, i % 4 < 2);	/* 2 x quota its own */
	CHECK(s.banned_at, "forgeries beside it do not shield it");
}

/* Two CPUs counting one source's proven packets across window edges:
 * a reset that races an add loses counts, never adds any. */
TEST(proven_count_interleaved_cpus)
{
	struct rl_verified v = { 0 };
	struct rl_budget b = { 10, RL_UNLIMITED, 0 };

	for (uint32_t i = 0; i < 10; i++)
		rl_proven_add(&v, 7, LEN);
	CHECK(!rl_proven_exceeds(&v, 7, &b), "10 of 10: not over");
	rl_proven_add(&v, 7, LEN);
	CHECK(rl_proven_exceeds(&v, 7, &b), "11 of 10: over");
	CHECK(!rl_proven_exceeds(&v, 8, &b), "another window: nothing counted");
	/* CPU A saw window 7 and is about to reset; CPU B moved to 8 first */
	rl_proven_add(&v, 8, LEN);
	CHECK_EQ(v.proven_pkts, 1, "window 8 starts afresh");
	rl_proven_add(&v, 7, LEN);	/* A, late, with its old window */
	CHECK_EQ(v.proven_win, 7, "the late CPU restarts its window");
	CHECK(v.proven_pkts <= 1, "and can only lose counts (%u)", v.proven_pkts);
	struct rl_budget by = { RL_UNLIMITED, 3 * LEN, 0 };

	memset(&v, 0, sizeof(v));
	for (uint32_t i = 0; i < 3; i++)
		rl_proven_add(&v, 1, LEN);
	CHECK(!rl_proven_exceeds(&v, 1, &by), "bytes at the budget: not over");
	rl_proven_add(&v, 1, 1);
	CHECK(rl_proven_exceeds(&v, 1, &by), "a byte more: over");
}
