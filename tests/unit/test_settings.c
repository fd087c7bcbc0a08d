// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Attach settings and budgets: every value out of range is refused before
 * it reaches a map, with a message that names it. */
#include <string.h>
#include "lib/settings.h"
#include "../harness.h"

#define MS 1000000ULL

static bool refused(const struct rl_attach_req *r, const char *needle)
{
	struct rl_settings s;
	char err[256] = "";

	if (rl_settings_build(&s, r, 2, err, sizeof(err)) == 0)
		return CHECK(false, "accepted, want refusal naming '%s'", needle);
	return CHECK(strstr(err, needle), "message '%s' lacks '%s'", err, needle);
}

TEST(settings_defaults)
{
	struct rl_attach_req r;
	struct rl_settings s;
	char err[256];

	rl_attach_req_defaults(&r);
	if (!CHECK_EQ(rl_settings_build(&s, &r, 2, err, sizeof(err)), 0, "defaults"))
		return;
	CHECK_EQ(s.window_ns, 1000 * MS, "1 s window");
	CHECK_EQ(s.nbuckets, 10, "10 buckets");
	CHECK_EQ(s.bucket_ns, 100 * MS, "100 ms buckets");
	CHECK_EQ(s.v6_prefix, 64, "/64");
	CHECK_EQ(s.v6_mask[0], ~0U, "mask word 0");
	CHECK_EQ(s.v6_mask[1], ~0U, "mask word 1");
	CHECK_EQ(s.v6_mask[2], 0, "mask word 2");
	CHECK_EQ(s.ncpus, 2, "ncpus");
}

TEST(settings_refuse_out_of_range)
{
	struct rl_attach_req r;

	rl_attach_req_defaults(&r);
	r.nbuckets = 0;
	refused(&r, "--buckets 0");
	r.nbuckets = RL_MAX_BUCKETS + 1;
	refused(&r, "--buckets 17");
	rl_attach_req_defaults(&r);
	r.window_ns = 5 * MS;		/* 10 buckets of 0.5 ms */
	refused(&r, "too short");
	r.window_ns = 0;
	refused(&r, "--window 0");
	r.window_ns = 61000 * MS;
	refused(&r, "too long");
	rl_attach_req_defaults(&r);
	r.v6_prefix = 129;
	refused(&r, "--ipv6-prefix 129");
	r.v6_prefix = 0;
	refused(&r, "--ipv6-prefix 0");
	rl_attach_req_defaults(&r);
	r.max_sources = 1;
	refused(&r, "--max-sources 1");
}

TEST(settings_edges_accepted)
{
	struct rl_attach_req r;
	struct rl_settings s;
	char err[256];

	rl_attach_req_defaults(&r);
	r.window_ns = 10 * MS;		/* 10 buckets of exactly 1 ms */
	CHECK_EQ(rl_settings_build(&s, &r, 2, err, sizeof(err)), 0, "1 ms buckets");
	r.window_ns = 60000 * MS;
	r.nbuckets = RL_MAX_BUCKETS;
	CHECK_EQ(rl_settings_build(&s, &r, 2, err, sizeof(err)), 0, "1m, 16 buckets");
	r.nbuckets = 1;
	CHECK_EQ(rl_settings_build(&s, &r, 2, err, sizeof(err)), 0, "1 bucket");
	r.v6_prefix = 57;
	if (CHECK_EQ(rl_settings_build(&s, &r, 2, err, sizeof(err)), 0, "/57"))
		CHECK_EQ(((__u8 *)s.v6_mask)[7], 0x80, "/57 mask byte 7");
}

TEST(budget_rounding)
{
	CHECK_EQ(rl_budget(1000, 1000 * MS), 1000, "1000 pps over 1 s");
	CHECK_EQ(rl_budget(1000, 500 * MS), 500, "1000 pps over 500 ms");
	CHECK_EQ(rl_budget(3, 500 * MS), 1, "1.5 rounds down");
	CHECK_EQ(rl_budget(1, 100 * MS), 1, "0.1 is at least 1");
	CHECK_EQ(rl_budget(0, 1000 * MS), 0, "0 blocks");
	CHECK_EQ(rl_budget(RL_UNLIMITED, 1000 * MS), RL_UNLIMITED, "unlimited");
	CHECK_EQ(rl_budget(RL_UNLIMITED - 1, 60000 * MS), RL_UNLIMITED - 1,
		 "huge rates saturate below unlimited");
	CHECK_EQ(rl_budget(1000000000000ULL, 60000 * MS), 60000000000000ULL, "1T over 1m");
}
