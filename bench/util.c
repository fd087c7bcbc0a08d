// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Helpers of ratelimit-bench: CPU pinning, summaries, JSON. */
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

int bench_hold(int prog_fd)
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

double bench_test_run(int prog_fd, const struct bench_frame *fr, __u64 repeat,
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

__u64 bench_repeat_for(const struct bench_rounds *r, double ns)
{
	__u64 repeat = (__u64)(r->ms * 1e6 / ns);

	return repeat < 1000 ? 1000 : repeat > 100000000 ? 100000000 : repeat;
}
