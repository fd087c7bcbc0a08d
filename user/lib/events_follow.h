/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What `xdp-ratelimit events` prints of what the program reports
 * (include/events.h): one line per change of a source, whatever the number
 * of CPUs that report it.
 *
 * - limited: when the first CPU reports it;
 * - released: when the last CPU that limited the source reports it, or,
 *   for a source that went silent (and so runs no program), when a sweep
 *   finds that no CPU has dropped one of its packets for a whole window;
 *   never while the source is banned (silent, it drops nothing, but it is
 *   not let through): after its unbanned;
 * - banned: when the ban is stored; a second report of the same ban (two
 *   CPUs banning at once) is not printed again;
 * - unbanned: when the program reports the first packet after the ban, or
 *   a sweep finds the ban over (or lifted by `ban del`), whichever first.
 *
 * released and unbanned are printed only for sources this follower printed
 * limited or banned: every source's lines pair up, and a report that
 * arrives after a sweep already printed the change is not printed twice.
 * The state of the program is read through rl_follow_ops, so the logic
 * runs in the host tests without a program.
 */
#ifndef RL_EVENTS_FOLLOW_H
#define RL_EVENTS_FOLLOW_H

#include <stdbool.h>
#include "ratelimit.h"

struct rl_follow_ops {
	/* Does a CPU still limit `key` at `now` (include/events.h,
	 * rl_event_limited)? 1 with the latest such drop in *last, 0 when
	 * none does (or it has no entry), or -errno (asked again later). */
	int (*limited)(void *ctx, const struct rl_key *key, __u64 now,
		       __u64 *last);
	/* Does a ban hold `key` at `now`? 1 with its end in *until, 0 when
	 * none does (over, lifted, never), or -errno. */
	int (*banned)(void *ctx, const struct rl_key *key, __u64 now,
		      __u64 *until);
	/* Print event `e` (its time is the program's clock). */
	void (*print)(void *ctx, const struct rl_event *e);
};

struct rl_follow {
	const struct rl_follow_ops *ops;
	void *ctx;
	__u64 window_ns;
	void *limited;		/* tsearch trees of struct follow_entry */
	void *banned;
	size_t nlimited, nbanned;
};

void rl_follow_init(struct rl_follow *f, const struct rl_follow_ops *ops,
		    void *ctx, __u64 window_ns);
void rl_follow_free(struct rl_follow *f);

/* A report of the program, read at `now`. 0, or -ENOMEM. */
int rl_follow_event(struct rl_follow *f, const struct rl_event *e, __u64 now);

/* Look at the sources whose release or ban end is due at `now`: a lookup
 * each, once a window per limited source, at its end per ban (and once a
 * second, for `ban del`). */
void rl_follow_sweep(struct rl_follow *f, __u64 now);

/* Interval of the sweeps: a bucket, between 100 ms and 1 s. */
__u64 rl_follow_interval(__u64 bucket_ns);

#endif /* RL_EVENTS_FOLLOW_H */
