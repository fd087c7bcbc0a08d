/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One frame on several CPUs at once: a thread per CPU, pinned, all let go
 * together, each running the frame in one BPF_PROG_TEST_RUN. What the
 * cross-CPU quota (test_verdict.c) and a source's first packets on two
 * CPUs (test_pool.c) are measured with.
 */
#ifndef RL_PROG_SPREAD_H
#define RL_PROG_SPREAD_H

#include <pthread.h>
#include <stdbool.h>
#include "fixture.h"

#define SPREAD_MAX_CPUS 1024

struct spread;

/* One thread of a round: its CPU, set by the caller; the rest recorded by
 * the round for the caller's checks. */
struct spread_cpu {
	struct spread *sp;
	pthread_t tid;
	int cpu;
	int err;		/* errno of a failed pin or run, else 0 */
	const char *what;	/* which one failed */
	int ran_on;		/* sched_getcpu() after the run */
	__u64 start, end;	/* CLOCK_MONOTONIC ns around the run */
};

/* Before the rounds: the program held in the dispatcher (fixture_hold),
 * the test clock at `now` (the rounds' runs do not set it). False, and a
 * failed check, when the config cannot be written. */
bool spread_prepare(struct fixture *f, __u64 now);

/* One round: each of the `n` CPUs c[i].cpu runs `fr` `repeat` times, all
 * at once, at the clock the config holds. False (and a failed check) when
 * a thread failed or did not run on its CPU. */
bool spread_round(struct fixture *f, const struct frame *fr, __u32 repeat,
		  struct spread_cpu *c, int n);

#endif /* RL_PROG_SPREAD_H */
