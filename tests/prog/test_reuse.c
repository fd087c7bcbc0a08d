// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A slot taken by another source: the program evicts a source for a new
 * one (doc/design/pool.md), and the evicted source's per-CPU values stay
 * in the slot, on every CPU that judged it, with their `owner`; a CPU may
 * even still finish a packet of the evicted source and write its state
 * (its cached rule, its window) there. Replayed here by placing a new key
 * on the old source's per-CPU values, as the CPUs left them: the new
 * source must be judged by its own rule and window, on that CPU and by the
 * other CPUs' sums, and userspace must not show the old source's counts
 * as its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include "ratelimit.h"
#include "../harness.h"
#include "fixture.h"

/* The key of an IPv4 source, as the program makes it. */
static struct rl_key v4_key(const __u8 a[4])
{
	struct rl_key k = { .addr = { [10] = 0xff, [11] = 0xff } };

	memcpy(&k.addr[12], a, 4);
	return k;
}

/* Evict `from` and give the new key `to` a slot holding `from`'s per-CPU
 * values (every CPU, `owner` still `from`), as the slot of an evicted
 * source holds them when the program places another there. */
static bool hand_over(struct fixture *f, const struct rl_key *from,
		      const struct rl_key *to)
{
	void *vals = rl_percpu_alloc(sizeof(struct rl_source));
	bool ok = CHECK(vals, "alloc") &&
		  CHECK_EQ(fixture_source_vals(f, from, vals), 0,
			   "the old source's values") &&
		  CHECK_EQ(fixture_evict(f, from), 0, "evicted") &&
		  CHECK_EQ(fixture_source_vals(f, from, vals), -ENOENT,
			   "the old source no longer tracked") &&
		  CHECK_EQ(fixture_place(f, to, vals, false), 0,
			   "the new key on the old values");

	free(vals);
	return ok;
}

/* A fixture, held in the dispatcher (fixture_hold); `cpus`: how many the
 * test needs. */
static bool open_held(struct fixture *f, int cpus)
{
	if (!fixture_open(f, NULL))
		return false;
	if (cpus > 1 && !CHECK_GE(rl_ncpus(), cpus, "this test needs 2 CPUs or more"))
		return false;
	fixture_hold(f);
	return true;
}

TEST(reused_entry_inherits_nothing)
{
	static const __u8 old_a[4] = { 198, 18, 9, 7 }, new_a[4] = { 198, 18, 9, 8 };
	struct rl_key old_k = v4_key(old_a), new_k = v4_key(new_a);
	struct fixture f;
	struct frame fr;

	if (!open_held(&f, 1))
		goto out;
	/* the old source is allow-listed, everyone else gets 5 per window */
	if (!fixture_quota(&f, "default", 5, RL_UNLIMITED, RL_UNLIMITED, RL_UNLIMITED) ||
	    !fixture_quota(&f, "198.18.9.7", RL_UNLIMITED, RL_UNLIMITED, RL_UNLIMITED,
			   RL_UNLIMITED))
		goto out;
	frame_udp(&fr, "198.18.9.7", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 50, 0, T0), 50, "allow-listed: all 50 pass");
	if (!hand_over(&f, &old_k, &new_k))
		goto out;

	/* the new source on the CPU the old one left its state on */
	frame_udp(&fr, "198.18.9.8", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 20, 0, T0 + 1), 5,
		 "new source: its own rule (5), not the old one's allow-list");
	CHECK_SOURCE(&f, "198.18.9.8", T0 + 1, 5, 15, 5, "its own only");
out:
	fixture_close(&f);
}

/* The other CPUs' sum must skip a value left by another key: with the old
 * source's full window on one CPU, the new source still gets its budget
 * on another. */
TEST(reused_entry_not_summed_by_other_cpus)
{
	static const __u8 old_a[4] = { 198, 18, 9, 17 }, new_a[4] = { 198, 18, 9, 18 };
	struct rl_key old_k = v4_key(old_a), new_k = v4_key(new_a);
	struct fixture f;
	struct frame fr;

	if (!open_held(&f, 2))
		goto out;
	if (!fixture_quota(&f, "default", 10, RL_UNLIMITED, RL_UNLIMITED, RL_UNLIMITED))
		goto out;
	/* the old source fills its window on CPU 1 */
	frame_udp(&fr, "198.18.9.17", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 15, 1, T0), 10, "old source: its 10");
	if (!hand_over(&f, &old_k, &new_k))
		goto out;
	/* the new source on CPU 0, same window, same rules generation */
	frame_udp(&fr, "198.18.9.18", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 15, 0, T0 + 1), 10,
		 "new source on another CPU: its own 10, the old window not counted");
out:
	fixture_close(&f);
}

/* Nor does the new source inherit the old one's verification: the copy
 * of it a CPU keeps in the value (verified_ns) is no evidence that the
 * host answered this one, so it is a newcomer under the rule's newcomer
 * budget, on every CPU. */
TEST(reused_entry_is_a_newcomer)
{
	static const __u8 old_a[4] = { 198, 18, 9, 27 }, new_a[4] = { 198, 18, 9, 28 };
	struct rl_key old_k = v4_key(old_a), new_k = v4_key(new_a);
	struct rl_rule_change c = {
		.have_pps = true, .pps = 100,
		.have_new_pps = true, .new_pps = 1,
	};
	struct fixture f;
	struct frame fr;

	if (!open_held(&f, 2))
		goto out;
	if (!fixture_rule(&f, "198.18.0.0/15", &c))
		goto out;
	if (!fixture_answer(&f, "198.18.9.27", 1, T0))
		goto out;
	frame_udp(&fr, "198.18.9.27", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 5, 1, T0), 5,
		 "old source, verified: its own quota, in `sources`");
	frame_udp(&fr, "198.18.9.99", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 1, 0, T0), 1,
		 "a newcomer takes this window's newcomer budget");
	if (!hand_over(&f, &old_k, &new_k))
		goto out;
	frame_udp(&fr, "198.18.9.28", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 3, 1, T0 + 1), 0,
		 "new source on the old one's CPU: a newcomer, the budget spent");
	CHECK_EQ(fixture_send(&f, &fr, 3, 0, T0 + 1), 0, "and on the other");
out:
	fixture_close(&f);
}
