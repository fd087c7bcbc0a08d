// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Bans (xdp-ratelimit(8), "Bans"), in the program: a drop for the source's
 * own quota bans it on every CPU until the deadline once its packets on
 * connections the host answered exceed that quota, banned packets are
 * dropped and counted without touching the window or extending the ban,
 * drops by the aggregate or newcomer budget ban nobody, packets forged
 * with a client's address never ban it, bans outlive rule changes, and
 * `ban del` lifts them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "lib/ban_map.h"
#include "lib/reload_carry.h"
#include "../harness.h"
#include "fixture.h"

#define SRC "198.18.0.7"
#define BAN (10 * NSEC_S)

/* `n` segments from `addr` on a connection the host answers (an answer
 * first, through the egress hook) on `cpu` at `now`: how many passed. */
static int sent_passed(struct fixture *f, const char *addr, int n, int cpu,
		       __u64 now)
{
	struct frame fr;

	if (!fixture_answer(f, addr, cpu, now))
		return -1;
	frame_tcp(&fr, addr, HOST_ADDR(addr), PEER_PORT, HOST_PORT, TCP_ACK);
	return fixture_send(f, &fr, n, cpu, now);
}

/* `n` frames forged with `addr`: UDP, never answered. */
static int forged_passed(struct fixture *f, const char *addr, int n, int cpu,
			 __u64 now)
{
	struct frame fr;

	frame_udp(&fr, addr, 100, 0);
	return fixture_send(f, &fr, n, cpu, now);
}

/* A rule change that bans for BAN, with the limits given. */
#define BANNING(...) { .have_ban = true, .ban_ns = BAN, __VA_ARGS__ }

/* 198.18.0.0/15 at 5 pps per source, banning for BAN. */
static bool ban_rule(struct fixture *f)
{
	struct rl_rule_change c = BANNING(.have_pps = true, .pps = 5);

	return fixture_rule(f, "198.18.0.0/15", &c);
}

static bool key_of(const char *addr, struct rl_key *key)
{
	char err[RL_ERR_LEN];

	return CHECK(rl_ban_key(addr, RL_DEFAULT_V6_PREFIX, key, err, sizeof(err)) == 0,
		     "key of %s: %s", addr, err);
}

/* The ban of `addr` in the map (false when none). */
static bool ban_of(struct fixture *f, const char *addr, struct rl_ban *b)
{
	struct rl_key key;

	return key_of(addr, &key) && !bpf_map_lookup_elem(f->m.bans, &key, b);
}

/* sent_passed() or forged_passed(). */
typedef int (*sender_fn)(struct fixture *f, const char *addr, int n, int cpu, __u64 now);

/* `n` frames from `addr` sent on CPU 0 at `now` pass `want` (`what`), and
 * leave it unbanned (`why`). */
static void unbanned_after(struct fixture *f, sender_fn send, const char *addr, int n,
			   __u64 now, int want, const char *what, const char *why)
{
	struct rl_ban b;

	CHECK_EQ(send(f, addr, n, 0, now), want, what);
	CHECK(!ban_of(f, addr, &b), "%s", why);
}

TEST(ban_seen_on_every_cpu)
{
	int ncpus = rl_ncpus();
	struct rl_source_sum s;
	struct rl_ban b;
	struct fixture f;
	__u64 banned_at = T0 + 3 * NSEC_MS;

	if (!fixture_open(&f, NULL) || !ban_rule(&f))
		goto out;
	unbanned_after(&f, sent_passed, SRC, 5, T0, 5, "the quota passes",
		       "no ban within the quota");
	CHECK_EQ(sent_passed(&f, SRC, 1, 0, banned_at), 0, "over quota: dropped");
	if (!CHECK(ban_of(&f, SRC, &b), "banned by the drop"))
		goto out;
	CHECK_EQ(b.until_ns, banned_at + BAN, "banned for BAN from the drop");
	CHECK_EQ(b.rule_prefixlen, 15, "the banning rule is kept");
	/* two windows on, the quota would let it through: the ban does not */
	for (int cpu = 0; cpu < ncpus; cpu++)
		CHECK_EQ(sent_passed(&f, SRC, 3, cpu, T0 + 2 * NSEC_S), 0,
			 "banned on every CPU");
	CHECK_EQ(fixture_totals(&f).banned_pkts, (__u64)3 * ncpus, "banned packets counted");
	if (fixture_source(&f, SRC, T0 + 2 * NSEC_S, &s)) {
		CHECK_EQ(s.dropped_pkts, 1 + 3 * ncpus, "banned packets are the source's drops");
		CHECK_EQ(s.passed_pkts, 6, "nothing passed (its quota and its handshake's ACK)");
		CHECK_EQ(s.window_pkts, 0, "the window untouched (empty two windows on)");
	}
	/* other sources are not affected */
	CHECK_EQ(sent_passed(&f, "198.18.0.8", 5, 1 % ncpus, T0 + 2 * NSEC_S), 5,
		 "another source passes");
out:
	fixture_close(&f);
}

TEST(ban_expires_and_is_not_extended)
{
	__u64 banned_at = T0 + 1;
	struct rl_ban b;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !ban_rule(&f))
		goto out;
	CHECK_EQ(sent_passed(&f, SRC, 6, 0, banned_at), 5, "the sixth banned it");
	/* packets all through the ban do not extend it */
	for (__u64 t = banned_at + NSEC_S; t < banned_at + BAN; t += NSEC_S)
		CHECK_EQ(sent_passed(&f, SRC, 2, 0, t), 0, "banned");
	if (CHECK(ban_of(&f, SRC, &b), "still in the map"))
		CHECK_EQ(b.until_ns, banned_at + BAN, "the deadline did not move");
	CHECK_EQ(sent_passed(&f, SRC, 1, 0, banned_at + BAN - 1), 0, "1 ns before the end");
	CHECK_EQ(sent_passed(&f, SRC, 5, 0, banned_at + BAN), 5, "over: its quota again");
	CHECK_EQ(sent_passed(&f, SRC, 1, 0, banned_at + BAN), 0, "over quota again: banned again");
	if (CHECK(ban_of(&f, SRC, &b), "banned again"))
		CHECK_EQ(b.until_ns, banned_at + 2 * BAN, "a new ban from the new drop");
out:
	fixture_close(&f);
}

TEST(ban_del_lifts)
{
	struct rl_ban_row *rows = NULL;
	struct rl_key key;
	struct fixture f;
	size_t n = 0;

	if (!fixture_open(&f, NULL) || !ban_rule(&f))
		goto out;
	CHECK_EQ(sent_passed(&f, SRC, 6, 0, T0), 5, "banned by the sixth");
	CHECK_EQ(sent_passed(&f, "198.18.0.9", 7, 0, T0), 5, "a second one banned");
	if (!CHECK_EQ(rl_bans_read(&f.m, T0 + NSEC_S, &rows, &n), 0, "read bans"))
		goto out;
	CHECK_EQ(n, 2, "two bans listed");
	if (n == 2) {
		CHECK_EQ(rows[0].ns_left, BAN - NSEC_S, "time left");
		CHECK(!strcmp(rows[0].rule, "198.18.0.0/15"), "rule %s", rows[0].rule);
	}
	free(rows);
	rows = NULL;
	if (!key_of(SRC, &key))
		goto out;
	CHECK_EQ(rl_ban_del(&f.m, &key, T0 + NSEC_S), 0, "ban del");
	CHECK_EQ(rl_ban_del(&f.m, &key, T0 + NSEC_S), -ENOENT, "not banned any more");
	CHECK_EQ(sent_passed(&f, SRC, 5, 0, T0 + 2 * NSEC_S), 5, "lifted: its quota again");
	CHECK_EQ(sent_passed(&f, "198.18.0.9", 1, 0, T0 + 2 * NSEC_S), 0, "the other still banned");
	CHECK_EQ(rl_bans_clear(&f.m, T0 + 2 * NSEC_S), 1, "ban del all: one held");
	CHECK_EQ(sent_passed(&f, "198.18.0.9", 5, 0, T0 + 3 * NSEC_S), 5, "all lifted");
	if (CHECK_EQ(rl_bans_read(&f.m, T0 + 3 * NSEC_S, &rows, &n), 0, "read bans"))
		CHECK_EQ(n, 0, "no bans left");
	/* an expired ban is no ban */
	CHECK_EQ(sent_passed(&f, SRC, 6, 0, T0 + 4 * NSEC_S), 5, "banned again");
	CHECK_EQ(rl_ban_del(&f.m, &key, T0 + 4 * NSEC_S + BAN), -ENOENT,
		 "expired: not banned");
out:
	free(rows);
	fixture_close(&f);
}

TEST(ban_survives_rule_changes)
{
	struct rl_rule_change c = { .have_ban = true, .ban_ns = 0 };
	struct rl_prefix p;
	struct fixture f;
	char err[RL_ERR_LEN];

	if (!fixture_open(&f, NULL) || !ban_rule(&f))
		goto out;
	CHECK_EQ(sent_passed(&f, SRC, 6, 0, T0), 5, "banned");
	if (!fixture_rule(&f, "198.18.0.0/15", &c))
		goto out;
	CHECK_EQ(sent_passed(&f, SRC, 1, 0, T0 + 2 * NSEC_S), 0, "--ban 0 keeps the ban");
	if (!CHECK(rl_parse_prefix("198.18.0.0/15", &p, err, sizeof(err)) == 0 &&
		   rl_rule_del(&f.m, &p, err, sizeof(err)) == 0, "quota del: %s", err))
		goto out;
	CHECK_EQ(sent_passed(&f, SRC, 1, 0, T0 + 2 * NSEC_S), 0, "quota del keeps it");
	CHECK_EQ(sent_passed(&f, "198.18.0.8", 10, 0, T0 + 2 * NSEC_S), 10,
		 "no rule: others unlimited");
	/* with --ban 0, a drop bans nobody */
	if (!ban_rule(&f) || !fixture_rule(&f, "198.18.0.0/15", &c))
		goto out;
	CHECK_EQ(sent_passed(&f, "198.18.0.8", 6, 0, T0 + 4 * NSEC_S), 5, "limited");
	CHECK_EQ(sent_passed(&f, "198.18.0.8", 5, 0, T0 + 6 * NSEC_S), 5, "not banned");
out:
	fixture_close(&f);
}

/* Only a drop for the source's own quota bans: not the aggregate's, not
 * the newcomer budget's. */
TEST(ban_only_for_own_quota)
{
	struct rl_rule_change c = BANNING(.have_pps = true, .pps = 100,
					  .have_agg_pps = true, .agg_pps = 3,
					  .have_new_pps = true, .new_pps = 2);
	struct fixture f;

	if (!fixture_open(&f, NULL) || !fixture_rule(&f, "198.18.0.0/15", &c))
		goto out;
	CHECK_EQ(forged_passed(&f, "198.18.0.1", 1, 0, T0), 1, "newcomer 1");
	CHECK_EQ(forged_passed(&f, "198.18.0.2", 1, 0, T0), 1, "newcomer 2");
	unbanned_after(&f, forged_passed, "198.18.0.3", 3, T0, 0, "newcomer budget refuses",
		       "not banned by the newcomer budget");
	unbanned_after(&f, sent_passed, "198.18.0.1", 5, T0 + 2 * NSEC_S, 3,
		       "established: the aggregate refuses", "not banned by the aggregate");
	CHECK_EQ(fixture_totals(&f).banned_pkts, 0, "nothing banned");
out:
	fixture_close(&f);
}

/* A block bans nobody: a tracked source whose rule becomes --pps 0, or a
 * --bps whose budget is below one frame, is dropped, never banned, though
 * the rule has --ban. */
TEST(ban_never_by_a_block)
{
	/* each block in turn becomes the rule, then its source sends */
	const struct {
		struct rl_rule_change rule;
		const char *addr;
		__u64 now;
		const char *what, *why;
	} blocks[] = {
		{ BANNING(.have_pps = true, .pps = 0), SRC, T0 + 2 * NSEC_S,
		  "--pps 0: dropped", "--pps 0 --ban bans nobody" },
		/* 50 B per 1 s window: below a frame */
		{ BANNING(.have_pps = true, .pps = 1000, .have_bps = true, .bps = 50),
		  "198.18.0.8", T0 + 4 * NSEC_S,
		  "--bps below a frame: dropped", "--bps below a frame bans nobody" },
	};
	struct fixture f;

	if (!fixture_open(&f, NULL) || !ban_rule(&f))
		goto out;
	for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++)
		CHECK_EQ(sent_passed(&f, blocks[i].addr, 1, 0, T0), 1, "tracked under 5 pps");
	for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
		if (!fixture_rule(&f, "198.18.0.0/15", &blocks[i].rule))
			goto out;
		unbanned_after(&f, sent_passed, blocks[i].addr, 20, blocks[i].now, 0,
			       blocks[i].what, blocks[i].why);
	}
	CHECK_EQ(fixture_totals(&f).banned_pkts, 0, "nothing banned");
out:
	fixture_close(&f);
}

/*
 * The attack: hping3 forges a served client's address at twice its quota.
 * The forgeries spend the client's quota (they are judged as its own), so
 * the client's own packets are dropped; but neither they nor those drops
 * may ban it: its own answered packets stay within its quota. Forged TCP
 * on a port the host never answered proves nothing either.
 */
TEST(ban_never_by_forged_copies)
{
	struct rl_ban b;
	struct fixture f;
	struct frame fr;

	if (!fixture_open(&f, NULL) || !ban_rule(&f))
		goto out;
	CHECK_EQ(sent_passed(&f, SRC, 2, 0, T0), 2, "the client is served");
	CHECK_EQ(forged_passed(&f, SRC, 10, 0, T0 + 1), 3, "forged UDP takes the rest");
	frame_tcp(&fr, SRC, HOST_ADDR(SRC), PEER_PORT + 1, HOST_PORT, TCP_ACK);
	CHECK_EQ(fixture_send(&f, &fr, 10, 0, T0 + 2), 0, "forged TCP, unanswered port");
	unbanned_after(&f, sent_passed, SRC, 3, T0 + 3, 0, "the client's own: dropped",
		       "but not banned: 5 of its own in a quota of 5");
	CHECK_EQ(sent_passed(&f, SRC, 5, 0, T0 + 2 * NSEC_S), 5, "served again");
	/* its own packets alone over its quota do ban it */
	CHECK_EQ(sent_passed(&f, SRC, 1, 0, T0 + 2 * NSEC_S + 1), 0, "its sixth");
	CHECK(ban_of(&f, SRC, &b), "banned by its own answered packets");
out:
	fixture_close(&f);
}

/* A flood of 50 forged sources at `now` on a rule whose newcomer budget
 * passes `budget` of them, after which it refuses first; SRC's packets
 * then drop as banned. */
static void banned_while_refusing_first(struct fixture *f, __u64 now, int budget)
{
	struct rl_counters before;
	char addr[32];
	int passed = 0;

	for (int i = 1; i <= 50; i++) {
		snprintf(addr, sizeof(addr), "198.19.1.%d", i);
		passed += forged_passed(f, addr, 1, 0, now);
	}
	CHECK_EQ(passed, budget, "a forged flood: the newcomer budget");
	CHECK(fixture_refusing(f, now), "the budget refuses first");
	before = fixture_totals(f);
	CHECK_EQ(forged_passed(f, SRC, 2, 0, now), 0, "banned: dropped");
	CHECK_EQ(fixture_totals(f).banned_pkts - before.banned_pkts, 2, "counted as banned");
}

/*
 * A banned source drops as banned while its rule's newcomer budget
 * refuses before any per-source lookup: banned, it was verified, and a
 * source once verified is never refused that early (its ban is read).
 */
TEST(ban_holds_while_refusing_first)
{
	struct rl_rule_change c = BANNING(.have_pps = true, .pps = 5,
					  .have_new_pps = true, .new_pps = 3);
	__u64 now = T0 + 2 * NSEC_S;
	struct rl_ban b;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !fixture_rule(&f, "198.18.0.0/15", &c))
		goto out;
	CHECK_EQ(sent_passed(&f, SRC, 5, 0, T0), 5, "the quota passes");
	CHECK_EQ(sent_passed(&f, SRC, 1, 0, T0 + 3 * NSEC_MS), 0, "over quota: dropped");
	if (!CHECK(ban_of(&f, SRC, &b), "banned by the drop"))
		goto out;
	banned_while_refusing_first(&f, now, 3);
	CHECK_EQ(fixture_refused(&f, SRC), 0, "not as refused");
out:
	fixture_close(&f);
}

/*
 * A ban carried by a reload onto new maps holds while the newcomer budget
 * refuses before any per-source lookup, though the source's `verified`
 * entry is gone (evicted: a banned source is answered no more) and its
 * entry, which read the verification, is not carried (a new --window):
 * the new Bloom filter, rebuilt from what is carried, must know it (a
 * ban needs a verified source). Otherwise it is refused first: not
 * counted as banned, and its SYN answered with a cookie, whose ACK
 * would pass.
 */
TEST(ban_carried_holds_while_refusing_first)
{
	struct rl_rule_change c = BANNING(.have_pps = true, .pps = 5,
					  .have_new_pps = true, .new_pps = 3,
					  .have_cookies = true, .cookies = true);
	__u64 now = T0 + 2 * NSEC_S;
	struct rl_iface old = { .name = "old" };
	struct rl_attach_req req;
	struct rl_carried carried;
	char err[RL_ERR_LEN];
	struct fixture f, g;
	struct rl_key key;
	struct frame fr;

	memset(&g, 0, sizeof(g));
	if (!fixture_open(&f, NULL) || !fixture_rule(&f, "198.18.0.0/15", &c) ||
	    !key_of(SRC, &key))
		goto out;
	old.m = f.m;
	CHECK_EQ(sent_passed(&f, SRC, 5, 0, T0), 5, "the quota passes");
	CHECK_EQ(sent_passed(&f, SRC, 1, 0, T0 + 3 * NSEC_MS), 0, "over quota: dropped");
	if (!CHECK(ban_of(&f, SRC, &(struct rl_ban){ 0 }), "banned by the drop"))
		goto out;
	CHECK_EQ(bpf_map_delete_elem(f.m.verified, &key), 0, "its `verified` entry evicted");
	rl_attach_req_defaults(&req);
	req.window_ns *= 2;	/* new maps; the sources' windows not carried */
	if (!fixture_open(&g, &req) ||
	    !CHECK_EQ(rl_config_read(&f.m, &old.cfg), 0, "the old config") ||
	    !CHECK(rl_carry(&old, &g.s, &g.m, &carried, err, sizeof(err)) == 0,
		   "carry: %s", err))
		goto out;
	CHECK_EQ(carried.bans, 1, "the ban carried");
	banned_while_refusing_first(&g, now, 6);	/* 3 pps in 2 s */
	frame_tcp(&fr, SRC, HOST_ADDR(SRC), PEER_PORT, HOST_PORT + 1, TCP_SYN);
	CHECK_EQ(fixture_run(&g, fr.data, fr.len, 0, now), XDP_DROP,
		 "its SYN dropped as banned, not answered with a cookie");
	CHECK_EQ(fixture_totals(&g).cookies_sent, 0, "no cookie sent");
out:
	if (g.skel)
		fixture_close(&g);
	fixture_close(&f);
}

/*
 * A reload onto new maps loses no ban in force and no verification that
 * holds: IPv6 keys a longer --ipv6-prefix cannot name refuse it at the
 * check (how many, in the message) and, made since the check, at the
 * carry, before the swap (xdp-ratelimit(8), reload). A ban over and a
 * verification lapsed are no loss.
 */
TEST(ban_reload_loses_none)
{
	struct rl_ban b = { .until_ns = ~0ULL >> 1, .banned_ns = 1 };
	struct rl_iface old = { .name = "old" };
	struct rl_verified v = { 0 };
	struct rl_attach_req req;
	struct rl_carried carried;
	char err[RL_ERR_LEN];
	struct fixture f, g;
	struct rl_key key;

	memset(&g, 0, sizeof(g));
	if (!fixture_open(&f, NULL) || !key_of("2001:db8:58:1::7", &key))
		goto out;
	old.m = f.m;
	rl_attach_req_defaults(&req);
	req.v6_prefix = 128;
	/* the new program's TTL judges what the carry keeps: the shortest,
	 * so that an entry lapses however recently the machine booted (the
	 * clock counts from boot; at the default 10 minutes, a fresh
	 * machine's entry answered at 1 still held) */
	req.verified_ttl_ns = RL_MIN_VERIFIED_TTL_NS;
	if (!CHECK_EQ(bpf_map_update_elem(f.m.bans, &key, &b, BPF_ANY), 0, "an IPv6 ban") ||
	    !fixture_open(&g, &req) ||
	    !CHECK_EQ(rl_config_read(&f.m, &old.cfg), 0, "the old config"))
		goto out;
	CHECK_EQ(rl_carry_check(&old, &g.s, err, sizeof(err)), -EINVAL, "ban: checked");
	CHECK(strstr(err, "would lose 1 IPv6 bans and 0 verified IPv6 sources") &&
	      strstr(err, "ban del ADDRESS --iface old"), "%s", err);
	CHECK_EQ(rl_carry(&old, &g.s, &g.m, &carried, err, sizeof(err)), -ENOSPC,
		 "ban made since the check: carried");
	CHECK(strstr(err, "would lose bans"), "%s", err);
	b.until_ns = 2;	/* over */
	/* ahead of the clock: it holds for a minute at the short TTL, however
	 * slowly the test runs */
	v.answered_ns = rl_prog_now_ns(&old.cfg.set) + 60 * NSEC_S;
	CHECK_EQ(bpf_map_update_elem(f.m.bans, &key, &b, BPF_ANY), 0, "the ban over");
	CHECK_EQ(bpf_map_update_elem(f.m.verified, &key, &v, BPF_ANY), 0, "verified");
	CHECK_EQ(rl_carry_check(&old, &g.s, err, sizeof(err)), -EINVAL, "verified: checked");
	CHECK(strstr(err, "would lose 0 IPv6 bans and 1 verified IPv6 sources") &&
	      strstr(err, "keep the prefix"), "%s", err);
	CHECK_EQ(rl_carry(&old, &g.s, &g.m, &carried, err, sizeof(err)), -ENOSPC,
		 "verified since the check: carried");
	CHECK(strstr(err, "would lose verified sources"), "%s", err);
	v.answered_ns = 1;	/* lapsed */
	CHECK_EQ(bpf_map_update_elem(f.m.verified, &key, &v, BPF_ANY), 0, "lapsed");
	err[0] = 0;
	CHECK(rl_carry_check(&old, &g.s, err, sizeof(err)) == 0, "nothing to lose: %s", err);
	CHECK_EQ(rl_carry(&old, &g.s, &g.m, &carried, err, sizeof(err)), 0, "carried");
out:
	if (g.skel)
		fixture_close(&g);
	fixture_close(&f);
}
