// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Rule maintenance (user/lib/rule.c) against the loaded program's maps. */
#include <string.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "ratelimit.h"
#include "../harness.h"
#include "fixture.h"

static int count_rules(struct fixture *f)
{
	static struct rl_rule rules[RL_MAX_RULES];

	return rl_rule_list(&f->m, rules, RL_MAX_RULES);
}

/* A quota set killed after writing its slot but before inserting the
 * prefix leaves a slot nobody reaches: it must not be listed, must not
 * apply, and its slot must be reused. */
TEST(orphan_slot_is_ignored_and_reused)
{
	struct rl_rule orphan = {
		.pps = 1, .flags = RL_RULE_F_USED, .prefixlen = 24,
		.addr = { 198, 18, 5, 0 },
	}, got;
	struct fixture f;
	struct frame fr;
	__u32 id0 = 0;

	if (!fixture_open(&f, NULL))
		goto out;
	CHECK_EQ(bpf_map_update_elem(f.m.rules, &id0, &orphan, BPF_ANY), 0,
		 "write orphan slot 0");
	CHECK_EQ(count_rules(&f), 0, "orphan not listed");
	frame_udp(&fr, "198.18.5.1", 100, 0);
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_PASS, "1st");
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_PASS,
		 "orphan does not limit");
	if (!fixture_pps(&f, "198.18.6.0/24", 7))
		goto out;
	CHECK_EQ(bpf_map_lookup_elem(f.m.rules, &id0, &got), 0, "read slot 0");
	CHECK_EQ(got.pps, 7, "orphan slot reused by the next rule");
	CHECK_EQ(count_rules(&f), 1, "one rule listed");
out:
	fixture_close(&f);
}

/* Changing a rule's rate keeps the source's window and totals. */
TEST(quota_change_keeps_counters)
{
	struct fixture f;
	struct frame fr;
	if (!fixture_open(&f, NULL))
		goto out;
	if (!fixture_pps(&f, "198.18.0.0/15", 10))
		goto out;
	frame_udp(&fr, "198.18.0.9", 100, 0);
	CHECK_EQ(fixture_send(&f, &fr, 15, 0, T0), 10, "10 of 15 pass");
	if (!fixture_pps(&f, "198.18.0.0/15", 12))
		goto out;
	CHECK_EQ(fixture_send(&f, &fr, 5, 0, T0), 2,
		 "raised quota: only the 2 more fit the same window");
	CHECK_SOURCE(&f, "198.18.0.9", T0, 12, 8, 12, "kept");
out:
	fixture_close(&f);
}

/* A new, longer prefix reaches sources already tracked under a shorter
 * one at once (the rules generation), and deleting it hands them back. */
TEST(new_prefix_reaches_tracked_source)
{
	struct fixture f;
	struct frame fr;
	char err[RL_ERR_LEN];
	struct rl_prefix p;

	if (!fixture_open(&f, NULL))
		goto out;
	if (!fixture_pps(&f, "default", 100))
		goto out;
	frame_udp(&fr, "198.18.3.3", 100, 0);
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_PASS, "default");
	if (!fixture_pps(&f, "198.18.3.0/24", 0))
		goto out;
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_DROP,
		 "blocked by the new /24 at once");
	CHECK_EQ(rl_parse_prefix("198.18.3.0/24", &p, err, sizeof(err)), 0, "prefix");
	CHECK(rl_rule_del(&f.m, &p, err, sizeof(err)) == 0, "del: %s", err);
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_PASS,
		 "back under the default");
	CHECK(rl_rule_del(&f.m, &p, err, sizeof(err)) != 0 && strstr(err, "no rule"),
	      "deleting twice says there is no rule: %s", err);
	CHECK_EQ(count_rules(&f), 2, "default is two rules (v4 and v6)");
out:
	fixture_close(&f);
}

/* Move the rules generation by hand, as a killed CLI leaves it. */
static bool set_gen(struct fixture *f, __u32 gen)
{
	struct rl_config cfg;

	return CHECK(rl_config_read(&f->m, &cfg) == 0, "read config") &&
	       (cfg.rules_gen = gen, true) &&
	       CHECK(rl_config_write(&f->m, &cfg) == 0, "write config");
}

static __u32 get_gen(struct fixture *f)
{
	struct rl_config cfg = {};

	rl_config_read(&f->m, &cfg);
	return cfg.rules_gen;
}

/*
 * A quota set killed after its new prefix went in, before the change was
 * marked done: a source that resolved its rule meanwhile must not keep
 * the old one. While the generation is odd no cached rule is trusted, so
 * what `quota list` shows is what is enforced; the next change completes.
 */
TEST(interrupted_change_is_enforced)
{
	struct fixture f;
	struct frame fr;
	__u32 gen;

	if (!fixture_open(&f, NULL))
		goto out;
	gen = get_gen(&f);
	CHECK(gen && !RL_RULES_CHANGING(gen), "a finished change leaves an even generation");
	frame_udp(&fr, "198.18.4.4", 100, 0);
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_PASS, "no rule");
	/* the change starts: odd; the source resolves (no rule yet) */
	if (!set_gen(&f, gen + 1))
		goto out;
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_PASS, "mid-change");
	/* the prefix goes in; rl_rule_set then marks the change done, which
	 * the kill undoes here: back to the odd generation */
	if (!fixture_pps(&f, "198.18.4.0/24", 0) || !set_gen(&f, gen + 1))
		goto out;
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_DROP,
		 "the listed rule is enforced although the change was cut short");
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 1 % rl_ncpus(), T0), XDP_DROP,
		 "on every CPU");
	/* the next change completes it */
	if (!fixture_pps(&f, "198.18.5.0/24", 9))
		goto out;
	gen = get_gen(&f);
	CHECK(!RL_RULES_CHANGING(gen), "the next change leaves it even: %u", gen);
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, 0, T0), XDP_DROP, "still blocked");
out:
	fixture_close(&f);
}
