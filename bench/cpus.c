// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ratelimit-bench cpus: what a packet costs against the number of possible
 * CPUs, with BPF_PROG_TEST_RUN, as cost.c times its cases (samples of --ms,
 * rounds running every case in turn, median [min-max] over rounds).
 * bench/vm-cpus.sh runs it in guests booted with possible_cpus= 2, 16 and
 * 64: only this machine's possible CPUs change between them.
 *
 * The program is the test build (ratelimit_test.bpf.o, its clock settable
 * in rl_config.test_now_ns), loaded with the loader's own steps, a
 * default quota no sample fills. Whatever a refresh reads (every possible
 * CPU, or fewer), these cases measure it as it is:
 *   under   one source under quota, the clock held: the fast path
 *   light   a light source, one packet per bucket: the driver
 *           (bench/light.bpf.c) moves the clock one bucket per packet and
 *           tail-calls the program, so that each packet rolls the bucket
 *           and refreshes
 *   refresh what a packet that rolls and refreshes adds: light - under,
 *           within each round
 * Both run the program through the driver (under's holding the clock):
 * only the driver is test-run, and held in the XDP dispatcher; their
 * figures are net of it (driver: the driver tail-calling XDP_PASS, the
 * churn cases' way), and the refresh is their difference, the drivers'
 * parts cancelling.
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
#include <bpf/libbpf.h>
#include "ratelimit.h"
#include "ratelimit_test.skel.h"
#include "light.skel.h"
#include "lib/loader.h"
#include "lib/maps.h"
#include "lib/rule.h"
#include "lib/rule_store.h"
#include "lib/settings.h"
#include "lib/xdp_multi.h"
#include "bench.h"
#include "gen/frames.h"

/* small tables: their per-CPU values are allocated for every possible CPU */
#define CPUS_MAX_SOURCES	1024
/* a budget no sample fills: under's clock never moves (1e9 packets per
 * 1 s window) */
#define CPUS_HUGE_PPS		1000000000ULL
/* the test clock's start: any time the program's clock could read */
#define CPUS_T0			(1000 * RL_NSEC_PER_SEC)

struct cpus_inst {
	struct ratelimit_test *skel;
	struct rl_maps m;
	struct rl_settings s;
};

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || rl_run_config_note(level, fmt))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* The test build as attach loads the program, quota set default --pps
 * CPUS_HUGE_PPS, its clock at CPUS_T0. */
static int load_test(struct cpus_inst *r)
{
	struct rl_rule_change c = { .have_pps = true, .pps = CPUS_HUGE_PPS };
	struct rl_prefix def = { .is_default = true };
	struct rl_attach_req req;
	struct rl_config cfg;
	char err[RL_ERR_LEN] = "";

	rl_attach_req_defaults(&req);
	req.max_sources = CPUS_MAX_SOURCES;
	rl_maps_init(&r->m);
	if (rl_settings_build(&r->s, &req, rl_cpu_ids(), err, sizeof(err)))
		goto fail;
	rl_settings_clock(&r->s, rl_coarse_tick_ns());	/* as attach does */
	r->skel = ratelimit_test__open();
	if (!r->skel ||
	    rl_loader_prepare(r->skel->obj, &r->skel->rodata->settings, &r->s) ||
	    ratelimit_test__load(r->skel) || rl_maps_from_obj(r->skel->obj, &r->m) ||
	    rl_loader_init(&r->m, &r->s, RL_UNLIMITED, RL_UNLIMITED, err, sizeof(err)) ||
	    rl_rule_set(&r->m, &r->s, &def, &c, err, sizeof(err)) ||
	    rl_config_read(&r->m, &cfg))
		goto fail;
	cfg.test_now_ns = CPUS_T0;
	if (rl_config_write(&r->m, &cfg))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "ratelimit-bench: loading the test build failed%s%s\n",
		err[0] ? ": " : "", err);
	return -1;
}

/* The driver on `r`'s clock: one bucket per packet, or (hold) none. */
static struct light *load_driver(const struct cpus_inst *r, bool hold)
{
	struct light *d = light__open();

	if (!d)
		return NULL;
	d->rodata->light_step_ns = hold ? 0 : r->s.bucket_ns;
	if (bpf_map__reuse_fd(d->maps.config, r->m.config) || light__load(d)) {
		light__destroy(d);
		return NULL;
	}
	return d;
}

int bench_cpus(int argc, char **argv)
{
	static const struct option opts[] = {
		BENCH_ROUNDS_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct bench_rounds ro = { .rounds = 11, .ms = 20, .cpu = 0 };
	struct cpus_inst ru = { 0 }, rl = { 0 };	/* under, light */
	struct light *dl = NULL, *du = NULL;	/* drivers: light, under */
	struct bench_case cs[4];
	int n = 0, opt, ret = 1, rounds;
	json_t *cases, *doc;

	memset(cs, 0, sizeof(cs));
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1)
		if (!bench_rounds_opt(&ro, opt, optarg))
			return bench_usage("cpus", "");
	rounds = ro.rounds;
	if (optind != argc || rounds < 1 || ro.ms <= 0)
		return bench_usage("cpus", "");
	libbpf_set_print(quiet);
	if (bench_pin_cpu(ro.cpu)) {
		fprintf(stderr, "ratelimit-bench: cannot pin to CPU %d\n", ro.cpu);
		return 1;
	}
	/* our own network namespace: the veths holding the programs go with it */
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "ratelimit-bench: unshare: %s\n", strerror(errno));
		return 1;
	}
	if (load_test(&ru) || load_test(&rl) || !(dl = load_driver(&rl, false)) ||
	    !(du = load_driver(&ru, true))) {
		fprintf(stderr, "ratelimit-bench: loading the programs failed\n");
		goto out;
	}

	static const struct {
		const char *name, *label;
	} what[] = {
		{ "xdp_pass", "bare XDP_PASS" },
		{ "under", "1 source under quota (fast path)" },
		{ "driver", "driver -> XDP_PASS" },
		{ "light", "light source: every packet a new bucket" },
	};
	int pass_fd = bpf_program__fd(dl->progs.xdp_pass);
	int light_fd = bpf_program__fd(dl->progs.xdp_light);
	int light_map = bpf_map__fd(dl->maps.light_target);
	/* test-run, its prog array, what the driver tail-calls */
	const int fds[][3] = {
		{ pass_fd, -1, -1 },
		{ bpf_program__fd(du->progs.xdp_light), bpf_map__fd(du->maps.light_target),
		  bpf_program__fd(ru.skel->progs.xdp_ratelimit) },
		{ light_fd, light_map, pass_fd },
		{ light_fd, light_map, bpf_program__fd(rl.skel->progs.xdp_ratelimit) },
	};

	for (n = 0; n < 4; n++) {
		struct bench_case *c = &cs[n];
		int len = tg_frame_udp(c->fr.data, sizeof(c->fr.data), "198.18.0.1", 0, 0);

		c->name = what[n].name;
		c->label = what[n].label;
		c->fd = fds[n][0];
		c->tail_map = fds[n][1];
		c->tail_fd = fds[n][2];
		c->fr.len = len > 0 ? (size_t)len : 0;
		c->expect = XDP_PASS;
	}
	if (bench_cases_run(cs, n, &ro))
		goto out;

	cases = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(cases, json_pack("{s:s, s:s, s:I, s:i, s:o}",
			"name", cs[i].name, "label", cs[i].label,
			"repeat", (json_int_t)cs[i].repeat,
			"wrong_verdicts", (int)cs[i].bad_verdicts,
			"ns", bench_summary_json(bench_summarize(cs[i].ns, rounds))));
	{
		/* within each round: under and light net of the driver (its
		 * run to XDP_PASS out, bare XDP_PASS in), and what light adds */
		int pa = bench_case_find(cs, n, "xdp_pass");
		int un = bench_case_find(cs, n, "under");
		int dr = bench_case_find(cs, n, "driver");
		int li = bench_case_find(cs, n, "light");
		double unet[rounds], net[rounds], refr[rounds], ratio[rounds];

		for (int r = 0; r < rounds; r++) {
			unet[r] = cs[un].ns[r] - cs[dr].ns[r] + cs[pa].ns[r];
			net[r] = cs[li].ns[r] - cs[dr].ns[r] + cs[pa].ns[r];
			refr[r] = cs[li].ns[r] - cs[un].ns[r];
			ratio[r] = net[r] / unet[r];
		}
		doc = json_pack("{s:i, s:i, s:i, s:i, s:i, s:f, s:o, s:o, s:o, s:o, s:o}",
			/* libbpf_num_possible_cpus(): what per-CPU reads are
			 * sized by; the program's bound of its loops over CPUs */
			"possible_cpus", rl_ncpus(), "settings_ncpus", (int)rl.s.ncpus,
			"online_cpus", (int)sysconf(_SC_NPROCESSORS_ONLN),
			"cpu", ro.cpu, "rounds", rounds, "ms_per_sample", ro.ms,
			"cases", cases,
			"under_net", bench_summary_json(bench_summarize(unet, rounds)),
			"light_net", bench_summary_json(bench_summarize(net, rounds)),
			"refresh", bench_summary_json(bench_summarize(refr, rounds)),
			"light_vs_under", bench_summary_json(bench_summarize(ratio, rounds)));
	}
	ret = bench_print_json(doc) ? 1 : 0;
out:
	bench_cases_free(cs, n);
	light__destroy(dl);
	light__destroy(du);
	ratelimit_test__destroy(ru.skel);
	ratelimit_test__destroy(rl.skel);
	return ret;
}
