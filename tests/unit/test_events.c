// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Events on the host: the program's decisions of include/events.h (the
 * budget per period, limited and released from the per-CPU marker, one
 * unbanned per ban) and what `events` prints of them (user/lib/events_follow.c:
 * one line per change of a source, the sweep for silent sources), with a
 * simulated clock and a simulated program state.
 */
#include <string.h>
#include "events.h"
#include "lib/events_follow.h"
#include "harness.h"

#define W	RL_NSEC_PER_SEC
#define MS	RL_NSEC_PER_MSEC
#define T0	(1000 * W)

TEST(events_period_budget)
{
	__u64 period = 0, used = 0;

	for (__u64 i = 1; i <= 3; i++)
		CHECK_EQ(rl_period_take(&period, &used, T0, 100, 3), i, "rank in the period");
	CHECK_EQ(rl_period_take(&period, &used, T0 + 99, 100, 3), 0, "spent");
	CHECK_EQ(rl_period_take(&period, &used, T0 + 100, 100, 3), 1, "the next period");
	CHECK_EQ(rl_period_take(&period, &used, T0 + 250, 100, 3), 1, "a period later");
}

TEST(events_marker)
{
	__u64 m = 0;

	CHECK_EQ(rl_event_of_packet(&m, 1, T0, W), RL_EVENT_NONE, "a pass, never limited");
	CHECK_EQ(rl_event_of_packet(&m, 0, T0, W), RL_EVENT_LIMITED, "first drop");
	CHECK_EQ(m, T0, "marker: the drop");
	CHECK_EQ(rl_event_of_packet(&m, 0, T0 + 500 * MS, W), RL_EVENT_NONE, "drop, limited");
	CHECK_EQ(m, T0 + 500 * MS, "marker: the last drop");
	CHECK_EQ(rl_event_of_packet(&m, 1, T0 + 1499 * MS, W), RL_EVENT_NONE,
		 "a pass within a window of the last drop");
	CHECK_EQ(rl_event_of_packet(&m, 1, T0 + 1500 * MS, W), RL_EVENT_RELEASED,
		 "a pass a window after it");
	CHECK_EQ(m, 0, "marker cleared");
	CHECK_EQ(rl_event_of_packet(&m, 1, T0 + 1600 * MS, W), RL_EVENT_NONE, "released once");
	/* silent for a window while limited: a drop is limited again */
	CHECK_EQ(rl_event_of_packet(&m, 0, T0 + 2 * W, W), RL_EVENT_LIMITED, "limited");
	CHECK_EQ(rl_event_of_packet(&m, 0, T0 + 3 * W, W), RL_EVENT_LIMITED,
		 "limited again after a silent window");
	m = 0;
	CHECK_EQ(rl_event_of_packet(&m, 0, 0, W), RL_EVENT_LIMITED, "a drop at time 0");
	CHECK_EQ(m, 1, "still marks limited");
	CHECK(rl_event_limited(T0, T0 + W - 1, W) && !rl_event_limited(T0, T0 + W, W) &&
	      !rl_event_limited(0, T0, W), "limited for a window after a drop");
}

TEST(events_unbanned_once)
{
	struct rl_ban b = { .until_ns = T0 + W };
	__u64 until = 0;

	CHECK(!rl_ban_claim_end(&b, T0 + W - 1, &until), "the ban holds");
	CHECK(rl_ban_claim_end(&b, T0 + W, &until), "the first packet after it");
	CHECK_EQ(until, T0 + W, "the ban's end");
	CHECK_EQ(b.until_ns, 0, "claimed");
	CHECK(!rl_ban_claim_end(&b, T0 + W + 1, &until), "only once");
}

/* ---- the follower, against a simulated program ---- */

#define KEYS 4

struct sim {
	__u64 last_drop[KEYS];	/* the latest drop of a CPU still limiting */
	__u64 ban_until[KEYS];	/* 0: no ban holds */
	int lookups;
	struct rl_event printed[32];
	int n;
};

static int key_index(const struct rl_key *k)
{
	return k->addr[15] % KEYS;
}

static int sim_limited(void *ctx, const struct rl_key *key, __u64 now, __u64 *last)
{
	struct sim *s = ctx;
	__u64 t = s->last_drop[key_index(key)];

	s->lookups++;
	if (!rl_event_limited(t, now, W))
		return 0;
	*last = t;
	return 1;
}

static int sim_banned(void *ctx, const struct rl_key *key, __u64 now, __u64 *until)
{
	struct sim *s = ctx;
	__u64 u = s->ban_until[key_index(key)];

	s->lookups++;
	if (!u || (__s64)(u - now) <= 0)
		return 0;
	*until = u;
	return 1;
}

static void sim_print(void *ctx, const struct rl_event *e)
{
	struct sim *s = ctx;

	if (s->n < 32)
		s->printed[s->n++] = *e;
}

static const struct rl_follow_ops sim_ops = {
	.limited = sim_limited, .banned = sim_banned, .print = sim_print,
};

static struct rl_event ev(__u32 type, int key, __u64 time, int cpu, __u64 until)
{
	struct rl_event e = { .time_ns = time, .type = type, .cpu = (__u32)cpu,
			      .until_ns = until, .rule_flags = RL_EVENT_F_RULE,
			      .rule_prefixlen = 15, .rule_addr = { 198, 18 } };

	e.key.addr[10] = e.key.addr[11] = 0xff;
	e.key.addr[12] = 198;
	e.key.addr[13] = 18;
	e.key.addr[15] = (__u8)key;
	return e;
}

/* The program reports `e` (read at its time) */
static void report(struct rl_follow *f, struct rl_event e)
{
	CHECK_EQ(rl_follow_event(f, &e, e.time_ns), 0, "follow");
}

/* The program drops a packet of `key` at `t` on `cpu` and reports it limited. */
static void drop_reported(struct rl_follow *f, struct sim *s, int key, __u64 t, int cpu)
{
	s->last_drop[key] = t;
	report(f, ev(RL_EVENT_LIMITED, key, t, cpu, 0));
}

/* The program bans `key` at `t` until `until` on CPU 0 and reports it. */
static void ban_reported(struct rl_follow *f, struct sim *s, int key, __u64 t, __u64 until)
{
	s->ban_until[key] = until;
	report(f, ev(RL_EVENT_BANNED, key, t, 0, until));
}

static bool printed(const struct sim *s, int i, __u32 type, int key, __u64 time,
		    const char *what)
{
	return CHECK(i < s->n && s->printed[i].type == type &&
		     s->printed[i].key.addr[15] == key && s->printed[i].time_ns == time &&
		     s->printed[i].rule_prefixlen == 15,
		     "%s: line %d of %d: type %u of source %u at %llu; want type %u of %d at %llu",
		     what, i, s->n, i < s->n ? s->printed[i].type : 0,
		     i < s->n ? s->printed[i].key.addr[15] : 0,
		     i < s->n ? (unsigned long long)s->printed[i].time_ns : 0ULL,
		     type, key, (unsigned long long)time);
}

TEST(follow_one_line_per_change)
{
	struct sim s = { 0 };
	struct rl_follow f;

	rl_follow_init(&f, &sim_ops, &s, W);
	/* limited on CPU 0, then on CPU 1: one line */
	drop_reported(&f, &s, 1, T0, 0);
	drop_reported(&f, &s, 1, T0 + 10 * MS, 1);
	CHECK_EQ(s.n, 1, "limited printed once");
	printed(&s, 0, RL_EVENT_LIMITED, 1, T0, "limited");
	/* CPU 0 releases while CPU 1 still limits it: nothing */
	report(&f, ev(RL_EVENT_RELEASED, 1, T0 + W, 0, 0));
	CHECK_EQ(s.n, 1, "not released while a CPU limits it");
	/* CPU 1 releases too: the last one */
	s.last_drop[1] = 0;
	report(&f, ev(RL_EVENT_RELEASED, 1, T0 + W + 10 * MS, 1, 0));
	CHECK_EQ(s.n, 2, "released");
	printed(&s, 1, RL_EVENT_RELEASED, 1, T0 + W + 10 * MS, "released by the last CPU");
	/* a released of a source not printed limited is not printed */
	report(&f, ev(RL_EVENT_RELEASED, 2, T0 + 2 * W, 0, 0));
	CHECK_EQ(s.n, 2, "no released without limited");
	rl_follow_free(&f);
}

TEST(follow_sweep_releases_silent_sources)
{
	struct sim s = { 0 };
	struct rl_follow f;

	rl_follow_init(&f, &sim_ops, &s, W);
	drop_reported(&f, &s, 1, T0, 0);
	rl_follow_sweep(&f, T0 + W - 1);
	CHECK_EQ(s.lookups, 0, "not due: nothing read");
	/* dropped on since: still limited at the window's end */
	s.last_drop[1] = T0 + 600 * MS;
	rl_follow_sweep(&f, T0 + W);
	CHECK_EQ(s.lookups, 1, "due: read once");
	CHECK_EQ(s.n, 1, "still limited");
	rl_follow_sweep(&f, T0 + 1500 * MS);
	CHECK_EQ(s.lookups, 1, "due again a window after the last drop");
	/* silent: the sweep a window after the last drop releases it */
	rl_follow_sweep(&f, T0 + 1600 * MS);
	CHECK_EQ(s.lookups, 2, "read at the new due time");
	if (CHECK_EQ(s.n, 2, "released by the sweep"))
		printed(&s, 1, RL_EVENT_RELEASED, 1, T0 + 1600 * MS, "swept");
	/* the program reports it later (a pass): not printed twice */
	report(&f, ev(RL_EVENT_RELEASED, 1, T0 + 5 * W, 0, 0));
	CHECK_EQ(s.n, 2, "released once");
	/* and limited again is a new line */
	report(&f, ev(RL_EVENT_LIMITED, 1, T0 + 6 * W, 0, 0));
	CHECK_EQ(s.n, 3, "limited again");
	rl_follow_free(&f);
}

TEST(follow_bans)
{
	__u64 end = T0 + 5 * W;
	struct sim s = { 0 };
	struct rl_follow f;

	rl_follow_init(&f, &sim_ops, &s, W);
	ban_reported(&f, &s, 1, T0, end);
	report(&f, ev(RL_EVENT_BANNED, 1, T0 + 1, 1, end + 1));	/* two CPUs at once */
	CHECK_EQ(s.n, 1, "banned printed once");
	printed(&s, 0, RL_EVENT_BANNED, 1, T0, "banned");
	/* the program reports the end: printed once */
	report(&f, ev(RL_EVENT_UNBANNED, 1, end + 1 + 3 * MS, 0, end + 1));
	report(&f, ev(RL_EVENT_UNBANNED, 1, end + 1 + 4 * MS, 1, end + 1));
	CHECK_EQ(s.n, 2, "unbanned printed once");
	printed(&s, 1, RL_EVENT_UNBANNED, 1, end + 1 + 3 * MS, "unbanned");

	/* a silent source: the sweep reports the end, at the end */
	ban_reported(&f, &s, 2, T0, end);
	for (__u64 t = T0; t < end; t += 100 * MS)
		rl_follow_sweep(&f, t);
	CHECK_LE(s.lookups, 5, "read about once a second while it holds");
	CHECK_EQ(s.n, 3, "still banned");
	rl_follow_sweep(&f, end + 100 * MS);
	if (CHECK_EQ(s.n, 4, "unbanned by the sweep"))
		printed(&s, 3, RL_EVENT_UNBANNED, 2, end, "at the ban's end");
	report(&f, ev(RL_EVENT_UNBANNED, 2, end + W, 0, end));
	CHECK_EQ(s.n, 4, "the program's report comes too late: not printed twice");

	/* lifted early (ban del): the sweep sees it within a second */
	ban_reported(&f, &s, 3, T0, end);
	s.ban_until[3] = 0;
	rl_follow_sweep(&f, T0 + W);
	if (CHECK_EQ(s.n, 6, "lifted"))
		printed(&s, 5, RL_EVENT_UNBANNED, 3, T0 + W, "when seen");

	/* banned again after an end nobody saw: the end, then the new ban */
	report(&f, ev(RL_EVENT_BANNED, 0, T0, 0, T0 + W));
	report(&f, ev(RL_EVENT_BANNED, 0, T0 + 3 * W, 0, T0 + 4 * W));
	if (CHECK_EQ(s.n, 9, "banned, unbanned, banned")) {
		printed(&s, 7, RL_EVENT_UNBANNED, 0, T0 + W, "the first ban's end");
		printed(&s, 8, RL_EVENT_BANNED, 0, T0 + 3 * W, "the second ban");
	}
	rl_follow_free(&f);
}

TEST(follow_sweep_interval)
{
	CHECK_EQ(rl_follow_interval(MS), 100 * MS, "at least 100 ms");
	CHECK_EQ(rl_follow_interval(250 * MS), 250 * MS, "a bucket");
	CHECK_EQ(rl_follow_interval(6 * W), W, "at most 1 s");
}

/* A banned source that went silent drops nothing, but is not let through:
 * released comes after its unbanned. */
TEST(follow_released_after_unbanned)
{
	__u64 end = T0 + 3 * W;
	struct sim s = { 0 };
	struct rl_follow f;

	rl_follow_init(&f, &sim_ops, &s, W);
	s.ban_until[1] = end;
	s.last_drop[1] = T0;
	report(&f, ev(RL_EVENT_BANNED, 1, T0, 0, end));
	report(&f, ev(RL_EVENT_LIMITED, 1, T0, 0, 0));
	for (__u64 t = T0; t < end; t += 100 * MS)
		rl_follow_sweep(&f, t);
	CHECK_EQ(s.n, 2, "not released while banned");
	rl_follow_sweep(&f, end);
	if (CHECK_EQ(s.n, 4, "unbanned, then released")) {
		printed(&s, 2, RL_EVENT_UNBANNED, 1, end, "unbanned");
		printed(&s, 3, RL_EVENT_RELEASED, 1, end, "released");
	}
	rl_follow_free(&f);
}
