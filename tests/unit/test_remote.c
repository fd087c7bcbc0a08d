// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet sync on the host: the remote share as the verdict reads it
 * (include/remote.h), the wall-clock naming of buckets between hosts whose
 * grids are out of phase, the lease protocol with a remote share, and the
 * sync command's values (user/lib/sync_conf.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "remote.h"
#include "judge.h"
#include "lib/sync_conf.h"
#include "lib/sync_slots.h"
#include "harness.h"

#define W	100000000ULL	/* bucket width: 100 ms */

TEST(remote_share_counts_window_slots)
{
	struct rl_remote r = { 0 };
	struct rl_usage u = { 0 };

	rl_remote_put(&r, 100, 5, 500);		/* now's bucket */
	rl_remote_put(&r, 91, 7, 700);		/* oldest of 10 */
	rl_remote_put(&r, 90, 11, 1100);	/* left the window */
	rl_remote_put(&r, 101, 13, 1300);	/* ahead: counted */
	rl_remote_usage_add(&u, &r, 100, 10);
	CHECK_EQ(u.pkts, 5 + 7 + 13, "packets in the window");
	CHECK_EQ(u.bytes, 500 + 700 + 1300, "bytes in the window");
	CHECK_EQ(u.active, 0, "not a CPU");
	/* a bucket later, 91 leaves too */
	memset(&u, 0, sizeof(u));
	rl_remote_usage_add(&u, &r, 101, 10);
	CHECK_EQ(u.pkts, 5 + 13, "bucket 91 aged out");
	/* a window later, all of it: a share nobody refreshes ages out */
	memset(&u, 0, sizeof(u));
	rl_remote_usage_add(&u, &r, 111, 10);
	CHECK_EQ(u.pkts, 0, "aged out within a window");
}

TEST(remote_put_collision_keeps_later)
{
	struct rl_remote r = { 0 };
	struct rl_usage u = { 0 };

	rl_remote_put(&r, 100, 5, 50);
	rl_remote_put(&r, 116, 3, 30);	/* same slot, 16 later */
	CHECK_EQ(r.slot[RL_SLOT(116)].bucket, 116, "the later bucket");
	CHECK_EQ(r.slot[RL_SLOT(116)].pkts, 8, "both counts, counted longer");
	rl_remote_put(&r, 100, 2, 20);	/* an older one after: merged too */
	CHECK_EQ(r.slot[RL_SLOT(116)].bucket, 116, "still the later");
	CHECK_EQ(r.slot[RL_SLOT(116)].pkts, 10, "merged");
	rl_remote_usage_add(&u, &r, 116, 16);
	CHECK_EQ(u.pkts, 10, "read back");
}

/*
 * Two hosts whose monotonic clocks differ by an arbitrary offset, and
 * whose grids are out of phase on the wall clock: a pass published by one
 * is filed by the other under a bucket that does not end before the
 * publisher's bucket did (never counted for less than a window), and at
 * most one bucket later.
 */
TEST(fleet_buckets_across_phases)
{
	unsigned int seed = 7;

	for (int i = 0; i < 100000; i++) {
		__u64 real = 1763935805ULL * 1000000000ULL + (__u64)rand_r(&seed) * 997;
		__u64 off_a = real - (__u64)rand_r(&seed) * 1013;	/* realtime - mono */
		__u64 off_b = real - (__u64)rand_r(&seed) * 1031 - 7;
		__u64 lb_a = (real - off_a) / W, start, fb, lb_b, end_a, end_b;

		fb = rl_fleet_bucket(lb_a, W, off_a, &start);
		if (!CHECK_EQ(fb, start / W, "fleet bucket holds the start") ||
		    !CHECK_EQ(start, lb_a * W + off_a, "start on the wall clock"))
			return;
		lb_b = rl_local_bucket(start, W, off_b);
		end_a = start + W;			/* wall clock */
		end_b = (lb_b + 1) * W + off_b;		/* wall clock */
		if (!CHECK(end_b >= end_a, "step %d: B's bucket ends %llu before A's", i,
			   (unsigned long long)(end_a - end_b)) ||
		    !CHECK(end_b - end_a < W, "step %d: more than a bucket later", i))
			return;
	}
}

/* Offer n packets of len bytes at `now` to one CPU's state (with its
 * history `h`) with the remote share `r` (no other CPU), as the program
 * judges them (judge(), sum_others(): the history, then the remote share):
 * how many pass. */
static int offer(struct rl_state *st, struct rl_history *h,
		 const struct rl_budget *b, const struct rl_remote *r,
		 __u64 now, int n, __u64 len)
{
	int passed = 0;

	for (int i = 0; i < n; i++) {
		int ans = judge_remote(st, h, r, 1, 0, b, now, len, 2, W, 10, NULL);

		if (ans == RL_FITS) {
			rl_quota_commit(st, len);
			passed++;
		}
	}
	return passed;
}

/*
 * A lease taken with a remote share: the remote passes count as another
 * CPU's, so this CPU gets only what the fleet left free; once they fill
 * the budget, the next packet drops. A window later the share aged out.
 */
TEST(remote_share_in_lease)
{
	struct rl_state st = { 0 };
	struct rl_history h = { 0 };
	struct rl_budget b = { 100, RL_UNLIMITED, 0 };
	struct rl_remote r = { 0 };

	rl_remote_put(&r, 50, 60, 6000);
	CHECK_EQ(offer(&st, &h, &b, &r, 50 * W + 1, 200, 60), 40, "what the fleet left of 100");
	CHECK_EQ(offer(&st, &h, &b, &r, 60 * W + 1, 200, 60), 100, "local counts alone");
	/* the share adds to what the history holds (sum_others()): this
	 * host's 60 over three buckets, the oldest in the history, and the
	 * fleet's 30 leave 10 */
	rl_remote_put(&r, 70, 30, 3000);
	CHECK_EQ(offer(&st, &h, &b, &r, 70 * W + 1, 20, 60), 20, "bucket 70");
	CHECK_EQ(offer(&st, &h, &b, &r, 72 * W + 1, 20, 60), 20, "bucket 72");
	CHECK_EQ(offer(&st, &h, &b, &r, 74 * W + 1, 20, 60), 20, "bucket 74");
	CHECK_EQ(h.newest, 70 + 1, "bucket 70 went to the history");
	CHECK_EQ(offer(&st, &h, &b, &r, 75 * W + 1, 200, 60), 10, "what history and fleet left");
}

TEST(sync_redis_urls)
{
	static const char *const bad[] = {
		"", "redis://", "redis://host", "redis://:6379", "redis://h:0",
		"redis://h:65536", "redis://h:6379/x", "redis://h:6379/-1",
		"redis://user:pw@h:6379", "http://h:80", "unix://", "unix://rel/path",
		"unix:///run/r.sock?db=", "unix:///run/r.sock?x=1", "redis://[::1:6379",
		"redis://h:63a79",
	};
	struct rl_redis_url u;
	char err[256];

	CHECK(!rl_redis_url_parse("redis://198.18.0.10:6379", &u, err, sizeof(err)) &&
	      !u.unix_socket && !strcmp(u.host, "198.18.0.10") && u.port == 6379 && u.db == 0,
	      "host and port");
	CHECK(!rl_redis_url_parse("redis://redis.example:7000/3", &u, err, sizeof(err)) &&
	      !strcmp(u.host, "redis.example") && u.port == 7000 && u.db == 3, "a database");
	CHECK(!rl_redis_url_parse("redis://[2001:db8::1]:6379", &u, err, sizeof(err)) &&
	      !strcmp(u.host, "2001:db8::1"), "IPv6");
	CHECK(!rl_redis_url_parse("unix:///run/redis/r.sock?db=2", &u, err, sizeof(err)) &&
	      u.unix_socket && !strcmp(u.path, "/run/redis/r.sock") && u.db == 2,
	      "a Unix socket");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(rl_redis_url_parse(bad[i], &u, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "redis://HOST:PORT"), "'%s' refused, naming the forms", bad[i]);
}

TEST(sync_fleet_names_and_intervals)
{
	char err[256], long_name[RL_SYNC_FLEET_MAX + 2];

	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	CHECK(!rl_sync_fleet_check("web-1_eu.prod", err, sizeof(err)), "allowed characters");
	CHECK(rl_sync_fleet_check("", err, sizeof(err)) == -EINVAL, "empty");
	CHECK(rl_sync_fleet_check("a{b}", err, sizeof(err)) == -EINVAL, "a hash tag");
	CHECK(rl_sync_fleet_check("a b", err, sizeof(err)) == -EINVAL, "a space");
	CHECK(rl_sync_fleet_check("a:b", err, sizeof(err)) == -EINVAL, "a colon");
	CHECK(rl_sync_fleet_check(long_name, err, sizeof(err)) == -EINVAL, "too long");
	CHECK(!rl_sync_interval_check(1000000, 1000000000, err, sizeof(err)), "1ms");
	CHECK(!rl_sync_interval_check(1000000000, 1000000000, err, sizeof(err)), "the window");
	CHECK(rl_sync_interval_check(999999, 1000000000, err, sizeof(err)) == -ERANGE, "under 1ms");
	CHECK(rl_sync_interval_check(1000000001, 1000000000, err, sizeof(err)) == -ERANGE &&
	      strstr(err, "1s"), "over the window, naming it");
}

/* A scoped rule's window of a source is a key of its own, named by the
 * rule's prefix and scope (the same on every host), in the source's hash
 * slot. */
TEST(sync_window_keys)
{
	char own[256], scoped[256], other[256];

	rl_sync_window_key("f1", "198.18.0.7", NULL, 100000000, own, sizeof(own));
	rl_sync_window_key("f1", "198.18.0.7", "0.0.0.0/0 tcp syn", 100000000,
			   scoped, sizeof(scoped));
	rl_sync_window_key("f1", "198.18.0.7", "0.0.0.0/0 udp dport 53", 100000000,
			   other, sizeof(other));
	CHECK(!strcmp(own, "xrl:{f1|198.18.0.7}:100000000"), "own: %s", own);
	CHECK(!strcmp(scoped, "xrl:{f1|198.18.0.7}|0.0.0.0/0 tcp syn:100000000"),
	      "scoped: %s", scoped);
	CHECK(strcmp(scoped, other), "two scopes, two keys");
	CHECK_EQ(rl_key_slot(scoped, strlen(scoped)), rl_key_slot(own, strlen(own)),
		 "a source's windows share its hash slot");
}
