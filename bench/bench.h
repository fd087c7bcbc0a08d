/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ratelimit-bench: the C half of `make bench` (bench/run.sh drives it).
 * Subcommands print JSON on stdout; run.sh assembles the table.
 */
#ifndef RL_BENCH_H
#define RL_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <linux/types.h>

#define BENCH_FRAME_MAX 128

/* Built by tg_frame_udp() (tests/gen/frames.h); timed with rl_now_ns(). */
struct bench_frame {
	__u8 _align[2];		/* IP header 4-byte aligned, as NET_IP_ALIGN */
	__u8 data[BENCH_FRAME_MAX];
	size_t len;
};

/* Pin the calling thread to `cpu`. */
int bench_pin_cpu(int cpu);

/* median, min and max of n values (n > 0); as a JSON object */
struct bench_summary {
	double median, min, max;
};
struct bench_summary bench_summarize(const double *v, int n);
json_t *bench_summary_json(struct bench_summary s);

/* Print a JSON document on stdout; 0 or -1. */
int bench_print_json(json_t *doc);

/* Attach `prog_fd` in native mode to a new veth end in the current network
 * namespace, keeping it in the XDP dispatcher (see tests/xdp_hold.h);
 * the device goes with the namespace. Tried twice: Debian 12's kernel
 * (6.1) can refuse the second end of a pair, and the second try takes a
 * new pair's first end. */
int bench_hold(int prog_fd);

/* The options of the subcommands that time test runs in rounds:
 * --rounds N, --ms MS (a sample's length), --cpu CPU. */
struct bench_rounds {
	int rounds;
	double ms;
	int cpu;
};
#define BENCH_ROUNDS_OPTS \
	{ "rounds", required_argument, NULL, 'r' }, \
	{ "ms", required_argument, NULL, 'm' }, \
	{ "cpu", required_argument, NULL, 'c' }
/* Takes getopt's `opt` (r, m or c) into `r`: true, else false. */
bool bench_rounds_opt(struct bench_rounds *r, int opt, const char *arg);
/* "Usage: ratelimit-bench CMD [--rounds N] [--ms MS] [--cpu CPU]MORE" on
 * stderr; returns 2. */
int bench_usage(const char *cmd, const char *more);

/* expect: the verdict of the case's calibrating run */
#define BENCH_SAME_VERDICT	(-2)

/* One case timed in rounds: the program test-run on its frame, through a
 * driver's prog array when tail_map >= 0 (the driver tail-calls tail_fd,
 * set in the array before every run, as cases share drivers). */
struct bench_case {
	const char *name;
	const char *label;
	int fd;			/* the program test-run */
	int tail_map;		/* the driver's prog array, or -1 */
	int tail_fd;		/* what the driver tail-calls */
	bool no_hold;		/* not an XDP program: no dispatcher holds it */
	struct bench_frame fr;
	/* before every run (a driver's template, say), or NULL */
	void (*before_run)(const struct bench_case *c);
	const void *arg;	/* before_run's */
	__u64 cal;		/* frames of the calibrating run (0: 2000) */
	int expect;		/* the verdict every timed run must end with, -1
				 * (any) or BENCH_SAME_VERDICT */
	/* filled by bench_cases_run() */
	__u32 verdict;		/* the calibrating run's */
	__u32 bad_verdicts;	/* timed runs that ended otherwise */
	__u64 repeat;		/* frames per sample */
	double *ns;		/* per round: ns per frame */
};

/* The case named `name` in cs[0..n), or -1. */
int bench_case_find(const struct bench_case *cs, int n, const char *name);
/* Times the cases: each program held in the XDP dispatcher once (in the
 * current network namespace: the caller's own), each case's repeat sized
 * by a calibrating run so that a sample lasts about ro->ms, then every
 * case once per round, in turn, so that load from elsewhere hits every
 * case alike. 0, or -1 (a failed run said on stderr). bench_cases_free() frees what it
 * allocated, whatever it returned. */
int bench_cases_run(struct bench_case *cs, int n, const struct bench_rounds *ro);
void bench_cases_free(struct bench_case *cs, int n);
/* Within each round, case a's time over case b's: a summary. */
json_t *bench_ratio_json(const struct bench_case *cs, int a, int b, int rounds);

/* libxdp's dispatcher program, configured for one entry chain-calling on
 * XDP_PASS and loaded as a plain XDP program (dispatcher.c); NULL on
 * failure (said on stderr). */
struct bpf_object *bench_load_dispatcher(int *prog_fd);

/* The minimal limiter (bench/minimal.bpf.c) loaded with room for
 * max_sources, `limit` packets per window_ns, on the coarse clock or
 * bpf_ktime_get_ns(); NULL on failure (said on stderr). */
struct minimal;
struct minimal *bench_load_minimal(__u64 max_sources, __u64 limit, __u64 window_ns,
				   bool coarse);
/* Whether xdp-ratelimit attached with --window window_ns (0: the
 * default) reads the coarse clock on this machine: the minimal
 * limiter's clock when it stands beside it. */
bool bench_program_clock_coarse(__u64 window_ns);

int bench_cost(int argc, char **argv);
int bench_cpus(int argc, char **argv);
int bench_recv(int argc, char **argv);
int bench_counters(int argc, char **argv);
int bench_progs(int argc, char **argv);

#endif /* RL_BENCH_H */
