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
#include <bpf/libbpf.h>
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
