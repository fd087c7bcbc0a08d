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
 * the device goes with the namespace. */
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
/* Frames per sample for a sample of about r->ms at `ns` per frame. */
__u64 bench_repeat_for(const struct bench_rounds *r, double ns);

/* One BPF_PROG_TEST_RUN of `repeat` copies of `fr`: ns per frame by the
 * wall clock around the syscall, or < 0 (errno set). */
double bench_test_run(int prog_fd, const struct bench_frame *fr, __u64 repeat,
		      __u32 *retval);

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
