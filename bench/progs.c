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

/* the rest of the usage line: --src, and the programs */
#define PROGS_USAGE " [--src ADDR]\n" \
	"                             NAME=PROG_ID NAME=PROG_ID..."

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
	struct bench_case pc[MAX_PROGS];
	char names[MAX_PROGS][32];
	__u32 ids[MAX_PROGS];
	const char *src = "198.18.0.1";
	struct bench_rounds ro = { .rounds = 11, .ms = 20, .cpu = 0 };
	int n = 0, opt, len, ret = 1, rounds;
	struct bench_frame fr = { 0 };
	json_t *progs, *ratios;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 's')
			src = optarg;
		else if (!bench_rounds_opt(&ro, opt, optarg))
			return bench_usage("progs", PROGS_USAGE);
	}
	rounds = ro.rounds;
	if (rounds < 1 || ro.ms <= 0 || optind >= argc || argc - optind > MAX_PROGS)
		return bench_usage("progs", PROGS_USAGE);
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

		pc[n] = (struct bench_case){
			.name = names[n], .fd = -1, .tail_map = -1, .fr = fr,
			.expect = BENCH_SAME_VERDICT,
		};
		if (!eq || eq == argv[i] || (size_t)(eq - argv[i]) >= sizeof(names[n])) {
			fprintf(stderr, "ratelimit-bench: progs: '%s' is not NAME=PROG_ID\n",
				argv[i]);
			ret = 2;
			goto out;
		}
		memcpy(names[n], argv[i], (size_t)(eq - argv[i]));
		names[n][eq - argv[i]] = '\0';
		ids[n] = (__u32)strtoul(eq + 1, &end, 10);
		if (!ids[n] || *end) {
			fprintf(stderr, "ratelimit-bench: progs: '%s' is not a program id\n",
				eq + 1);
			ret = 2;
			goto out;
		}
		pc[n].fd = bpf_prog_get_fd_by_id(ids[n]);
		if (pc[n].fd < 0) {
			fprintf(stderr, "ratelimit-bench: progs: no program %u: %s\n",
				ids[n], strerror(errno));
			goto out;
		}
	}
	/* the holding veths go with a network namespace of our own */
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "ratelimit-bench: unshare: %s\n", strerror(errno));
		goto out;
	}
	if (bench_cases_run(pc, n, &ro))
		goto out;
	progs = json_array();
	ratios = json_object();
	for (int i = 0; i < n; i++) {
		json_array_append_new(progs, json_pack(
			"{s:s, s:I, s:I, s:s, s:i, s:o}", "name", pc[i].name,
			"id", (json_int_t)ids[i], "repeat", (json_int_t)pc[i].repeat,
			"verdict", verdict_name(pc[i].verdict),
			"other_verdicts", (int)pc[i].bad_verdicts,
			"ns", bench_summary_json(bench_summarize(pc[i].ns, rounds))));
		if (i)
			json_object_set_new(ratios, pc[i].name,
					    bench_ratio_json(pc, i, 0, rounds));
	}
	ret = bench_print_json(json_pack("{s:i, s:f, s:s, s:s, s:o, s:o}", "rounds", rounds,
					 "ms_per_sample", ro.ms, "src", src,
					 "base", pc[0].name, "progs", progs,
					 "ratio_to_base", ratios)) ? 1 : 0;
out:
	for (int i = 0; i < n; i++)
		close(pc[i].fd);
	bench_cases_free(pc, n);
	return ret;
}
