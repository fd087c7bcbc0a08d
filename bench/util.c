// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Helpers of ratelimit-bench: CPU pinning, summaries, JSON, and the
 * runner of the cases timed in rounds. */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/maps.h"
#include "bench.h"

int bench_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct bench_summary bench_summarize(const double *v, int n)
{
	struct bench_summary s = { 0, 0, 0 };
	double *c;

	if (n <= 0)
		return s;
	c = malloc(sizeof(*c) * (size_t)n);
	if (!c)
		return s;
	memcpy(c, v, sizeof(*c) * (size_t)n);
	qsort(c, (size_t)n, sizeof(*c), cmp_double);
	s.min = c[0];
	s.max = c[n - 1];
	s.median = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return s;
}

json_t *bench_summary_json(struct bench_summary s)
{
	return json_pack("{s:f, s:f, s:f}", "median", s.median, "min", s.min,
			 "max", s.max);
}

int bench_print_json(json_t *doc)
{
	int ret;

	if (!doc)
		return -1;
	ret = json_dumpf(doc, stdout, JSON_REAL_PRECISION(6));
	json_decref(doc);
	if (ret || putchar('\n') == EOF || fflush(stdout))
		return -1;
	return 0;
}

static int hold_once(int prog_fd)
{
	static int n;
	char cmd[160], dev[IF_NAMESIZE];
	int ifindex;

	if (n % 2 == 0) {
		snprintf(cmd, sizeof(cmd),
			 "ip link add bh%da type veth peer name bh%db >/dev/null 2>&1",
			 n / 2, n / 2);
		if (system(cmd) != 0)
			return -ENODEV;
	}
	snprintf(dev, sizeof(dev), "bh%d%c", n / 2, n % 2 ? 'b' : 'a');
	n++;
	ifindex = (int)if_nametoindex(dev);
	if (!ifindex)
		return -ENODEV;
	return bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_DRV_MODE, NULL);
}

int bench_hold(int prog_fd)
{
	/* Debian 12's kernel refused the second end of a pair (seen under
	 * qemu): the next call takes a new pair's first end */
	return hold_once(prog_fd) ? hold_once(prog_fd) : 0;
}

/* One BPF_PROG_TEST_RUN of `repeat` copies of `fr`: ns per frame by the
 * wall clock around the syscall, or < 0 (errno set). */
static double test_run(int prog_fd, const struct bench_frame *fr, __u64 repeat,
		       __u32 *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr->data,
		    .data_size_in = (__u32)fr->len, .repeat = (__u32)repeat);
	__u64 t0, t1;

	t0 = rl_now_ns();
	if (bpf_prog_test_run_opts(prog_fd, &o))
		return -1;
	t1 = rl_now_ns();
	*retval = o.retval;
	return (double)(t1 - t0) / (double)repeat;
}

bool bench_rounds_opt(struct bench_rounds *r, int opt, const char *arg)
{
	if (opt == 'r')
		r->rounds = atoi(arg);
	else if (opt == 'm')
		r->ms = atof(arg);
	else if (opt == 'c')
		r->cpu = atoi(arg);
	else
		return false;
	return true;
}

int bench_usage(const char *cmd, const char *more)
{
	fprintf(stderr, "Usage: ratelimit-bench %s [--rounds N] [--ms MS] [--cpu CPU]%s\n",
		cmd, more);
	return 2;
}

/* Frames per sample for a sample of about r->ms at `ns` per frame. */
static __u64 repeat_for(const struct bench_rounds *r, double ns)
{
	__u64 repeat = (__u64)(r->ms * 1e6 / ns);

	return repeat < 1000 ? 1000 : repeat > 100000000 ? 100000000 : repeat;
}

int bench_case_find(const struct bench_case *cs, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(cs[i].name, name))
			return i;
	return -1;
}

/* One test run of case c; ns per frame, or < 0 (errno set). */
static double run(const struct bench_case *c, __u64 repeat, __u32 *retval)
{
	__u32 zero = 0;

	if (c->tail_map >= 0 &&
	    bpf_map_update_elem(c->tail_map, &zero, &c->tail_fd, BPF_ANY))
		return -1;
	if (c->before_run)
		c->before_run(c);
	return test_run(c->fd, &c->fr, repeat, retval);
}

static bool run_failed(const struct bench_case *c, double ns)
{
	if (ns > 0)
		return false;
	fprintf(stderr, "ratelimit-bench: test run of %s: %s\n", c->name, strerror(errno));
	return true;
}

/* Every program test-run kept in the XDP dispatcher, once (cases share
 * programs): otherwise each run waits for RCU grace periods. */
static void hold_all(const struct bench_case *cs, int n)
{
	for (int i = 0; i < n; i++) {
		bool seen = cs[i].no_hold;

		for (int h = 0; h < i && !seen; h++)
			seen = !cs[h].no_hold && cs[h].fd == cs[i].fd;
		if (!seen && bench_hold(cs[i].fd))
			fprintf(stderr, "ratelimit-bench: %s: program not held in the XDP dispatcher: runs are slower\n",
				cs[i].name);
	}
}

int bench_cases_run(struct bench_case *cs, int n, const struct bench_rounds *ro)
{
	hold_all(cs, n);
	/* calibrate: repeat for ~ms per sample */
	for (int i = 0; i < n; i++) {
		struct bench_case *c = &cs[i];
		double ns = run(c, c->cal ? c->cal : 2000, &c->verdict);

		if (run_failed(c, ns))
			return -1;
		c->repeat = repeat_for(ro, ns);
		c->ns = calloc((size_t)ro->rounds, sizeof(double));
		if (!c->ns)
			return -1;
	}
	for (int r = 0; r < ro->rounds; r++)
		for (int i = 0; i < n; i++) {
			struct bench_case *c = &cs[i];
			int want = c->expect == BENCH_SAME_VERDICT ? (int)c->verdict :
				   c->expect;
			__u32 rv;

			c->ns[r] = run(c, c->repeat, &rv);
			if (run_failed(c, c->ns[r]))
				return -1;
			if (want >= 0 && (int)rv != want)
				c->bad_verdicts++;
		}
	return 0;
}

void bench_cases_free(struct bench_case *cs, int n)
{
	for (int i = 0; i < n; i++) {
		free(cs[i].ns);
		cs[i].ns = NULL;
	}
}

json_t *bench_ratio_json(const struct bench_case *cs, int a, int b, int rounds)
{
	double *r = calloc((size_t)rounds, sizeof(*r));
	json_t *j;

	if (!r)
		return NULL;
	for (int i = 0; i < rounds; i++)
		r[i] = cs[a].ns[i] / cs[b].ns[i];
	j = bench_summary_json(bench_summarize(r, rounds));
	free(r);
	return j;
}
