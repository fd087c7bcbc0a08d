// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ratelimit-bench progs: the per-packet cost of XDP programs already
 * loaded, by id, with BPF_PROG_TEST_RUN: how `make bench` compares the
 * path a frame takes under libxdp's dispatcher (the dispatcher, its
 * freplace entry, xdp-ratelimit's stub, the tail call) with the program
 * run directly, on a kernel where the dispatcher works (the Debian 6.1
 * VM of bench/vm-dispatcher.sh).
 *
 * As in cost.c: each sample is one test run of `repeat` copies of one
 * UDP frame, timed around the syscall; rounds run every program once, in
 * turn; ratios to the first program are taken within a round. Every
 * program is kept in the kernel's XDP dispatcher by a native attachment
 * to a veth of our own network namespace (otherwise each run waits for
 * RCU grace periods).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "bench.h"
#include "gen/frames.h"

#define MAX_PROGS 8

struct prog_case {
	char name[32];
	__u32 id;
	int fd;
	__u64 repeat;
	__u32 verdict, other_verdicts;	/* the first run's; runs that differ */
	double ns[];	/* per round */
};

static int usage(void)
{
	fprintf(stderr,
		"Usage: ratelimit-bench progs [--rounds N] [--ms MS] [--cpu CPU] [--src ADDR]\n"
		"                             NAME=PROG_ID NAME=PROG_ID...\n");
	return 2;
}

static const char *verdict_name(__u32 v)
{
	static const char *n[] = { "aborted", "drop", "pass", "tx", "redirect" };

	return v < 5 ? n[v] : "other";
}

int bench_progs(int argc, char **argv)
{
	static const struct option opts[] = {
		BENCH_ROUNDS_OPTS,
		{ "src", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct prog_case *pc[MAX_PROGS] = { 0 };
	const char *src = "198.18.0.1";
	struct bench_rounds ro = { .rounds = 11, .ms = 20, .cpu = 0 };
	int n = 0, opt, len, ret = 1, rounds;
	struct bench_frame fr = { 0 };
	json_t *progs, *ratios;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 's')
			src = optarg;
		else if (!bench_rounds_opt(&ro, opt, optarg))
			return usage();
	}
	rounds = ro.rounds;
	if (rounds < 1 || ro.ms <= 0 || optind >= argc || argc - optind > MAX_PROGS)
		return usage();
	len = tg_frame_udp(fr.data, sizeof(fr.data), src, 0, 0);
	if (len <= 0) {
		fprintf(stderr, "ratelimit-bench: progs: bad --src '%s'\n", src);
		return 2;
	}
	fr.len = (size_t)len;
	if (bench_pin_cpu(ro.cpu)) {
		fprintf(stderr, "ratelimit-bench: cannot pin to CPU %d\n", ro.cpu);
		return 1;
	}
	for (int i = optind; i < argc; i++, n++) {
		const char *eq = strchr(argv[i], '=');
		char *end;

		pc[n] = calloc(1, sizeof(*pc[n]) + sizeof(double) * (size_t)rounds);
		if (!pc[n])
			goto out;
		pc[n]->fd = -1;
		if (!eq || eq == argv[i] || (size_t)(eq - argv[i]) >= sizeof(pc[n]->name)) {
			fprintf(stderr, "ratelimit-bench: progs: '%s' is not NAME=PROG_ID\n",
				argv[i]);
			ret = 2;
			goto out;
		}
		memcpy(pc[n]->name, argv[i], (size_t)(eq - argv[i]));
		pc[n]->id = (__u32)strtoul(eq + 1, &end, 10);
		if (!pc[n]->id || *end) {
			fprintf(stderr, "ratelimit-bench: progs: '%s' is not a program id\n",
				eq + 1);
			ret = 2;
			goto out;
		}
		pc[n]->fd = bpf_prog_get_fd_by_id(pc[n]->id);
		if (pc[n]->fd < 0) {
			fprintf(stderr, "ratelimit-bench: progs: no program %u: %s\n",
				pc[n]->id, strerror(errno));
			goto out;
		}
	}
	/* the holding veths go with a network namespace of our own */
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "ratelimit-bench: unshare: %s\n", strerror(errno));
		goto out;
	}
	for (int i = 0; i < n; i++) {
		double ns;

		if (bench_hold(pc[i]->fd))
			fprintf(stderr, "ratelimit-bench: program %u not held in the XDP dispatcher: runs are slower\n",
				pc[i]->id);
		/* calibrate: a sample lasts about --ms */
		ns = bench_test_run(pc[i]->fd, &fr, 2000, &pc[i]->verdict);
		if (ns <= 0) {
			fprintf(stderr, "ratelimit-bench: test run of %s: %s\n",
				pc[i]->name, strerror(errno));
			goto out;
		}
		pc[i]->repeat = bench_repeat_for(&ro, ns);
	}
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < n; i++) {
			__u32 rv;

			pc[i]->ns[r] = bench_test_run(pc[i]->fd, &fr, pc[i]->repeat, &rv);
			if (pc[i]->ns[r] <= 0) {
				fprintf(stderr, "ratelimit-bench: test run of %s: %s\n",
					pc[i]->name, strerror(errno));
				goto out;
			}
			pc[i]->other_verdicts += rv != pc[i]->verdict;
		}
	progs = json_array();
	ratios = json_object();
	for (int i = 0; i < n; i++) {
		double ratio[rounds];

		json_array_append_new(progs, json_pack(
			"{s:s, s:I, s:I, s:s, s:i, s:o}", "name", pc[i]->name,
			"id", (json_int_t)pc[i]->id, "repeat", (json_int_t)pc[i]->repeat,
			"verdict", verdict_name(pc[i]->verdict),
			"other_verdicts", (int)pc[i]->other_verdicts,
			"ns", bench_summary_json(bench_summarize(pc[i]->ns, rounds))));
		if (!i)
			continue;
		for (int r = 0; r < rounds; r++)
			ratio[r] = pc[i]->ns[r] / pc[0]->ns[r];
		json_object_set_new(ratios, pc[i]->name,
				    bench_summary_json(bench_summarize(ratio, rounds)));
	}
	ret = bench_print_json(json_pack("{s:i, s:f, s:s, s:s, s:o, s:o}", "rounds", rounds,
					 "ms_per_sample", ro.ms, "src", src,
					 "base", pc[0]->name, "progs", progs,
					 "ratio_to_base", ratios)) ? 1 : 0;
out:
	for (int i = 0; i < n; i++) {
		if (pc[i] && pc[i]->fd >= 0)
			close(pc[i]->fd);
		free(pc[i]);
	}
	return ret;
}
