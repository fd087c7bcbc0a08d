// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet sync in the program: the `remote` share of a source counts as
 * another CPU's passes once an agent ran (config.remote_used), ages out
 * with its buckets; and what the agent publishes, the passes per bucket,
 * read back from `sources` (rl_source_sum_buckets).
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "remote.h"
#include "../harness.h"
#include "fixture.h"

#define SRC "198.18.0.7"
#define BUCKET (100 * NSEC_MS)	/* default: 1 s window, 10 buckets */

static struct rl_key key_v4(const char *addr)
{
	struct rl_key k = { .addr = { [10] = 0xff, [11] = 0xff } };

	inet_pton(AF_INET, addr, &k.addr[12]);
	return k;
}

static bool remote_used(struct fixture *f, __u32 on)
{
	struct rl_config cfg;

	if (!CHECK_EQ(rl_config_read(&f->m, &cfg), 0, "read config"))
		return false;
	cfg.remote_used = on;
	return CHECK_EQ(rl_config_write(&f->m, &cfg), 0, "write config");
}

TEST(remote_share_counts_as_another_cpu)
{
	struct rl_key k = key_v4(SRC), k2 = key_v4("198.18.0.8");
	struct rl_remote r = { 0 };
	struct fixture f;
	struct frame fr, fr2;

	if (!fixture_open(&f, NULL) || !fixture_pps(&f, "default", 10))
		goto out;
	/* the other hosts passed 6 in this bucket */
	rl_remote_put(&r, T0 / BUCKET, 6, 600);
	if (!CHECK_EQ(bpf_map_update_elem(f.m.remote, &k, &r, BPF_ANY), 0, "write remote") ||
	    !CHECK_EQ(bpf_map_update_elem(f.m.remote, &k2, &r, BPF_ANY), 0, "write remote 2"))
		goto out;
	frame_udp(&fr, SRC, 100, 0);
	frame_udp(&fr2, "198.18.0.8", 100, 0);
	/* no agent ever ran: not even looked up */
	CHECK_EQ(fixture_send(&f, &fr2, 12, 0, T0), 10, "without remote_used: local alone");
	if (!remote_used(&f, 1))
		goto out;
	CHECK_EQ(fixture_send(&f, &fr, 12, 0, T0), 4, "what the fleet left");
	CHECK_EQ(fixture_send(&f, &fr, 3, 0, T0 + 5 * BUCKET), 0, "still in the window");
	/* bucket T0 leaves: this host's 4 and the fleet's 6 with it */
	CHECK_EQ(fixture_send(&f, &fr, 12, 0, T0 + 10 * BUCKET), 10, "aged out with its bucket");
	/* a share ahead of this host's clock (a bucket on) counts already */
	memset(&r, 0, sizeof(r));
	rl_remote_put(&r, T0 / BUCKET + 21, 7, 700);
	bpf_map_update_elem(f.m.remote, &k, &r, BPF_ANY);
	CHECK_EQ(fixture_send(&f, &fr, 12, 0, T0 + 20 * BUCKET), 3, "a bucket ahead counts");
out:
	fixture_close(&f);
}

/* Read `k` from `sources` into `vals` and sum what it passed per bucket
 * at `now` (rl_source_sum_buckets, as the agent does). */
static bool ages_at(struct fixture *f, const struct rl_key *k, void *vals,
		    __u64 now, struct rl_source_sum *sum, struct rl_bucket *ages)
{
	if (!CHECK_EQ(fixture_source_vals(f, k, vals), 0, "read the source"))
		return false;
	rl_source_sum_buckets(k, vals, rl_ncpus(), f->m.history, &f->s, now, sum, ages);
	return true;
}

#define NBUCKETS 10	/* the fixture's default */

/* The passes per bucket age are `want` (100-byte frames: bytes too), and
 * the window holds `window` of them. */
static void check_ages(const struct rl_bucket *ages, const __u32 *want,
		       __u64 window_pkts, __u64 window)
{
	for (int i = 0; i < NBUCKETS; i++) {
		if (!CHECK(ages[i].pkts == want[i] && ages[i].bytes == 100 * want[i],
			   "age %d: %u packets, %u bytes, want %u", i, ages[i].pkts,
			   ages[i].bytes, want[i]))
			return;
	}
	CHECK_EQ(window_pkts, window, "the window's sum");
}

TEST(passes_per_bucket_for_the_agent)
{
	struct rl_key k = key_v4(SRC);
	struct rl_bucket ages[RL_MAX_BUCKETS];
	struct rl_source_sum sum;
	struct fixture f;
	struct frame fr;
	void *vals = rl_percpu_alloc(sizeof(struct rl_source));
	int cpus[2], n = fixture_cpus(cpus, 2);

	if (!vals || !fixture_open(&f, NULL) || !fixture_pps(&f, "default", 100))
		goto out;
	frame_udp(&fr, SRC, 100, 0);
	fixture_send(&f, &fr, 4, cpus[0], T0);
	fixture_send(&f, &fr, 6, cpus[n - 1], T0 + 3 * BUCKET);
	fixture_send(&f, &fr, 5, cpus[0], T0 + 3 * BUCKET);
	if (!ages_at(&f, &k, vals, T0 + 3 * BUCKET, &sum, ages))
		goto out;
	/* now's bucket from both CPUs, three buckets ago the first's 4 */
	check_ages(ages, (const __u32[NBUCKETS]){ 11, 0, 0, 4 }, sum.window_pkts, 15);
	/* the bucket T0 has left at T0 + 10 buckets */
	rl_source_sum_buckets(&k, vals, rl_ncpus(), f.m.history, &f.s, T0 + 10 * BUCKET, &sum, ages);
	check_ages(ages, (const __u32[NBUCKETS]){ [7] = 11 }, sum.window_pkts, 11);
	/* a third bucket on the first CPU sends bucket T0 to the history
	 * (include/window.h): still counted, at its age */
	fixture_send(&f, &fr, 2, cpus[0], T0 + 5 * BUCKET);
	if (ages_at(&f, &k, vals, T0 + 5 * BUCKET, &sum, ages))
		check_ages(ages, (const __u32[NBUCKETS]){ 2, 0, 11, 0, 0, 4 },
			   sum.window_pkts, 17);
out:
	free(vals);
	fixture_close(&f);
}
