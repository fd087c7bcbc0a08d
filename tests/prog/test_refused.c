// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Sources refused on their first packet take no `sources` entry, but their
 * drops still count for them (xdp-ratelimit(8): a dropped packet is counted
 * in the source's dropped counters), in `refused`, and `stats` shows them.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
#include "ratelimit.h"
#include "events.h"
#include "lib/source_table.h"
#include "../harness.h"
#include "fixture.h"

/* Run `n` frames from `addr` of `len` bytes on `cpu`; how many passed. */
static int send_from(struct fixture *f, const char *addr, size_t len, int n,
		     int cpu, __u64 now)
{
	struct frame fr;

	frame_udp(&fr, addr, len, 0);
	return fixture_send(f, &fr, n, cpu, now);
}

static const struct rl_source_row *row_of(const struct rl_source_top *top,
					  const char *addr)
{
	struct rl_source_sum want;

	memset(&want, 0, sizeof(want));
	want.key.addr[10] = want.key.addr[11] = 0xff;
	if (inet_pton(AF_INET, addr, &want.key.addr[12]) != 1)
		return NULL;
	for (size_t i = 0; i < top->n; i++)
		if (!memcmp(&top->rows[i].sum.key, &want.key, sizeof(want.key)))
			return &top->rows[i];
	return NULL;
}

TEST(refused_sources_keep_their_drops)
{
	int ncpus = rl_ncpus();
	struct rl_source_top top = {};
	const struct rl_source_row *r;
	struct fixture f;

	if (!fixture_open(&f, NULL))
		goto out;
	if (!fixture_pps(&f, "198.19.9.0/24", 0) ||
	    !fixture_quota(&f, "198.18.0.0/16", 100, RL_UNLIMITED, 10,
			   RL_UNLIMITED))
		goto out;
	/* a blocked source, its frames spread over every CPU */
	for (int cpu = 0; cpu < ncpus; cpu++)
		CHECK_EQ(send_from(&f, "198.19.9.1", 100, 7, cpu, T0), 0,
			 "blocked on every cpu");
	/* ten newcomers fill the aggregate, the next ones are refused */
	for (int i = 1; i <= 10; i++) {
		char addr[32];

		snprintf(addr, sizeof(addr), "198.18.1.%d", i);
		CHECK_EQ(send_from(&f, addr, 64, 1, 0, T0), 1, "within aggregate");
	}
	CHECK_EQ(send_from(&f, "198.18.2.1", 80, 3, 0, T0), 0, "aggregate full");
	CHECK_EQ(fixture_totals(&f).new_sources, 10, "no entry for refusals");

	if (!CHECK_EQ(rl_source_top_read(&f.m, &f.s, 0, T0, 0, &top), 0,
		      "read the sources"))
		goto out;
	CHECK_EQ(top.tracked, 10, "ten tracked");
	CHECK_EQ(top.refused_only, 2, "two refused without an entry");
	CHECK_EQ(top.n, 12, "every source shown");
	r = row_of(&top, "198.19.9.1");
	CHECK(r && !r->tracked && r->sum.dropped_pkts == (__u64)7 * ncpus &&
	      r->sum.dropped_bytes == (__u64)700 * ncpus && !r->sum.passed_pkts,
	      "the blocked source's drops, from every CPU");
	CHECK(r == &top.rows[0], "the blocked source is the busiest");
	r = row_of(&top, "198.18.2.1");
	CHECK(r && !r->tracked && r->sum.dropped_pkts == 3 &&
	      r->sum.dropped_bytes == 240, "dropped by the aggregate, for its source");
	r = row_of(&top, "198.18.1.1");
	CHECK(r && r->tracked && r->sum.passed_pkts == 1 && !r->sum.dropped_pkts,
	      "a tracked source as before");
	rl_source_top_free(&top);

	/* unblocked, the source gets an entry: one row, drops kept */
	if (!fixture_pps(&f, "198.19.9.0/24", 1000))
		goto out;
	CHECK_EQ(send_from(&f, "198.19.9.1", 100, 4, 0, T0 + NSEC_S), 4,
		 "passes once unblocked");
	if (!CHECK_EQ(rl_source_top_read(&f.m, &f.s, 0, T0 + NSEC_S, 1, &top), 0,
		      "read the busiest"))
		goto out;
	CHECK_EQ(top.n, 1, "--top 1");
	CHECK_EQ(top.refused_only, 1, "only the aggregate's refusal left");
	r = row_of(&top, "198.19.9.1");
	CHECK(r && r->tracked && r->sum.passed_pkts == 4 &&
	      r->sum.dropped_pkts == (__u64)7 * ncpus && r->sum.window_pkts == 4,
	      "tracked now, its earlier drops merged");
out:
	rl_source_top_free(&top);
	fixture_close(&f);
}

/*
 * A spoofed flood against a blocked prefix: each packet a newcomer. Only
 * a CPU's share of RL_REFUSED_NEW_PER_PERIOD per period get an entry (no
 * table insert per packet); the rest count as unlisted, and a source that
 * is listed keeps counting whatever the flood does.
 */
TEST(refused_inserts_are_budgeted)
{
	const int flood = 3 * RL_REFUSED_NEW_PER_PERIOD;
	const __u64 share = rl_per_cpu_share(RL_REFUSED_NEW_PER_PERIOD, rl_cpu_ids());
	struct rl_source_top top = {};
	const struct rl_source_row *r;
	struct rl_counters c;
	struct fixture f;
	char addr[32];

	if (!fixture_open(&f, NULL))
		goto out;
	if (!fixture_pps(&f, "198.19.0.0/16", 0))
		goto out;
	CHECK_EQ(send_from(&f, "198.19.99.99", 100, 1, 0, T0), 0, "a blocked sender");
	for (int i = 0; i < flood; i++) {
		snprintf(addr, sizeof(addr), "198.19.%d.%d", 1 + i / 200, 1 + i % 200);
		CHECK_EQ(send_from(&f, addr, 64, 1, 0, T0), 0, "flood dropped");
	}
	CHECK_EQ(send_from(&f, "198.19.99.99", 100, 5, 0, T0), 0, "still blocked");
	c = fixture_totals(&f);
	CHECK_EQ(c.dropped_pkts, (__u64)flood + 6, "every refusal dropped and counted");
	CHECK_EQ(c.refused_unlisted_pkts, (__u64)flood + 1 - share,
		 "beyond the CPU's share of the insert budget: unlisted");
	if (!CHECK_EQ(rl_source_top_read(&f.m, &f.s, 0, T0, 0, &top), 0, "read"))
		goto out;
	CHECK_EQ(top.refused_only, share, "listed: the CPU's share");
	r = row_of(&top, "198.19.99.99");
	CHECK(r && r->sum.dropped_pkts == 6 && r->sum.dropped_bytes == 600,
	      "the listed sender keeps counting during the flood");
	rl_source_top_free(&top);
	/* the next period lists newcomers again */
	CHECK_EQ(send_from(&f, "198.19.200.1", 64, 1, 0, T0 + RL_REFUSED_PERIOD_NS), 0,
		 "next period");
	if (!CHECK_EQ(rl_source_top_read(&f.m, &f.s, 0, T0, 0, &top), 0, "read"))
		goto out;
	CHECK(row_of(&top, "198.19.200.1") != NULL, "listed in the next period");
out:
	rl_source_top_free(&top);
	fixture_close(&f);
}

/* The same flood on every CPU at once: the interface lists at most
 * RL_REFUSED_NEW_PER_PERIOD + ncpus - 1 per period, whatever the CPU count
 * (each CPU its share, rounded up), and every CPU lists its share. */
TEST(refused_inserts_bounded_on_every_cpu)
{
	int cpus[64], n = fixture_cpus(cpus, 64);
	__u32 ids = (__u32)rl_cpu_ids();
	const __u64 share = rl_per_cpu_share(RL_REFUSED_NEW_PER_PERIOD, ids);
	struct rl_source_top top = {};
	struct fixture f;
	char addr[32];

	/* the share's bound for any CPU count, not only this machine's */
	for (__u32 k = 1; k <= 4096; k++) {
		__u64 s = rl_per_cpu_share(RL_REFUSED_NEW_PER_PERIOD, k);

		if (!CHECK(s >= 1 && s * k >= RL_REFUSED_NEW_PER_PERIOD &&
			   s * k <= RL_REFUSED_NEW_PER_PERIOD + k - 1,
			   "%u CPUs: share %llu", k, (unsigned long long)s))
			break;
	}
	if (!fixture_open(&f, NULL) || !fixture_pps(&f, "198.19.0.0/16", 0))
		goto out;
	for (int c = 0; c < n; c++)
		for (int i = 0; i < 2 * RL_REFUSED_NEW_PER_PERIOD; i++) {
			snprintf(addr, sizeof(addr), "198.19.%d.%d", 1 + c * 20 + i / 200,
				 1 + i % 200);
			send_from(&f, addr, 64, 1, cpus[c], T0);
		}
	if (!CHECK_EQ(rl_source_top_read(&f.m, &f.s, 0, T0, 0, &top), 0, "read"))
		goto out;
	CHECK_EQ(top.refused_only, share * (__u64)n, "each CPU lists its share");
	CHECK_LE(top.refused_only, (__u64)RL_REFUSED_NEW_PER_PERIOD + ids - 1,
		 "the interface lists at most the budget + ncpus - 1");
out:
	rl_source_top_free(&top);
	fixture_close(&f);
}
