// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What each rule judged (`rule_counters`, xdp-ratelimit(8) quota list -v):
 * counted at the verdict's exit per rule slot and CPU, kept across quota
 * set, zeroed when the slot goes to a new rule, and a scoped rule's own.
 */
#include <string.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "ratelimit.h"
#include "../harness.h"
#include "fixture.h"
#include "lib/rule_store.h"

/* What the rule of `prefix` and `scope` (NULL: unscoped) judged. */
static bool counted(struct fixture *f, const char *prefix,
		    const struct rl_scope *scope, struct rl_rule_counters *c)
{
	char err[RL_ERR_LEN];
	struct rl_prefix p;
	struct rl_rule r;

	memset(c, 0, sizeof(*c));
	if (!CHECK(rl_parse_prefix(prefix, &p, err, sizeof(err)) == 0, "%s", err))
		return false;
	rl_rule_init(&r, &p);
	if (scope)
		rl_rule_scope_put(&r, scope);
	return CHECK_EQ(rl_rule_counters_read(&f->m, &r, c), 0, "rule counters");
}

TEST(rule_counters_count_verdicts)
{
	struct rl_rule_counters c;
	struct fixture f;
	struct frame fr, other;
	char err[RL_ERR_LEN];
	struct rl_prefix p;
	int cpus[2], ncpus = fixture_cpus(cpus, 2);

	if (!fixture_open(&f, NULL))
		goto out;
	if (!fixture_pps(&f, "198.18.40.0/24", 5))
		goto out;
	frame_udp(&fr, "198.18.40.1", 100, 0);
	frame_udp(&other, "198.18.41.1", 60, 0);	/* no rule covers it */
	/* 5 of 8 pass, across the CPUs there are: summed */
	CHECK_EQ(fixture_send(&f, &fr, 4, cpus[0], T0), 4, "first CPU");
	CHECK_EQ(fixture_send(&f, &fr, 4, cpus[ncpus - 1], T0), 1, "other CPU");
	CHECK_EQ(fixture_send(&f, &other, 3, cpus[0], T0), 3, "unruled");
	if (!counted(&f, "198.18.40.0/24", NULL, &c))
		goto out;
	CHECK_EQ(c.passed_pkts, 5, "passed");
	CHECK_EQ(c.passed_bytes, 500, "passed bytes");
	CHECK_EQ(c.dropped_pkts, 3, "dropped");
	CHECK_EQ(c.dropped_bytes, 300, "dropped bytes");
	/* quota set keeps them, and counts on */
	if (!fixture_pps(&f, "198.18.40.0/24", 6))
		goto out;
	CHECK_EQ(fixture_send(&f, &fr, 2, cpus[0], T0), 1, "after quota set");
	if (!counted(&f, "198.18.40.0/24", NULL, &c))
		goto out;
	CHECK_EQ(c.passed_pkts, 6, "passed after quota set");
	CHECK_EQ(c.dropped_pkts, 4, "dropped after quota set");
	/* deleted, then set again: its slot's new rule starts from zero */
	if (!CHECK(rl_parse_prefix("198.18.40.0/24", &p, err, sizeof(err)) == 0, "%s", err) ||
	    !CHECK(rl_rule_del(&f.m, &p, err, sizeof(err)) == 0, "quota del: %s", err) ||
	    !fixture_pps(&f, "198.18.40.0/24", 6) ||
	    !counted(&f, "198.18.40.0/24", NULL, &c))
		goto out;
	CHECK_EQ(c.passed_pkts + c.dropped_pkts, 0, "a new rule in the slot");
out:
	fixture_close(&f);
}

/* A scoped rule counts the packets it judged; the source's unscoped rule
 * the rest. */
TEST(rule_counters_scoped)
{
	struct rl_scope syn = { .proto = 6, .flags = RL_SCOPE_F_SYN };
	struct rl_rule_change ch = { .have_pps = true, .pps = 2 };
	struct rl_rule_counters c;
	struct fixture f;
	struct frame s, u;

	if (!fixture_open(&f, NULL))
		goto out;
	syn.rank = rl_scope_rank(&syn);
	if (!fixture_pps(&f, "198.18.42.0/24", 100) ||
	    !fixture_rule_scoped(&f, "198.18.42.0/24", &syn, &ch))
		goto out;
	frame_tcp(&s, "198.18.42.1", "198.18.255.1", 40000, 80, TCP_SYN);
	frame_udp(&u, "198.18.42.1", 100, 0);
	CHECK_EQ(fixture_send(&f, &s, 5, 0, T0), 2, "SYNs");
	CHECK_EQ(fixture_send(&f, &u, 3, 0, T0), 3, "UDP");
	if (!counted(&f, "198.18.42.0/24", &syn, &c))
		goto out;
	CHECK_EQ(c.passed_pkts, 2, "scoped passed");
	CHECK_EQ(c.dropped_pkts, 3, "scoped dropped");
	if (!counted(&f, "198.18.42.0/24", NULL, &c))
		goto out;
	CHECK_EQ(c.passed_pkts, 3, "unscoped passed");
	CHECK_EQ(c.dropped_pkts, 0, "unscoped dropped");
out:
	fixture_close(&f);
}
