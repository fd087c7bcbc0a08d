// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Helpers of ratelimit-bench: frames, CPU pinning, summaries, JSON. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/libbpf.h>
#include "bench.h"

int bench_frame_udp(struct bench_frame *f, const char *src, int nvlan)
{
	bool v6 = strchr(src, ':') != NULL;
	__u16 proto = htons(v6 ? ETH_P_IPV6 : ETH_P_IP);
	struct ethhdr eth = { .h_proto = proto };
	size_t l3 = sizeof(eth) + 4 * (size_t)nvlan, l4;
	__u8 *p = f->data;

	if (nvlan < 0 || nvlan > 2)
		return -1;
	memset(f, 0, sizeof(*f));
	memcpy(eth.h_dest, "\x02\x00\x00\x00\x00\x02", ETH_ALEN);
	memcpy(eth.h_source, "\x02\x00\x00\x00\x00\x01", ETH_ALEN);
	if (nvlan)
		eth.h_proto = htons(nvlan == 2 ? ETH_P_8021AD : ETH_P_8021Q);
	memcpy(p, &eth, sizeof(eth));
	for (int i = 0; i < nvlan; i++) {
		__u16 tag[2] = { htons(100 + i),
				 i + 1 < nvlan ? htons(ETH_P_8021Q) : proto };

		memcpy(p + sizeof(eth) + 4 * i, tag, 4);
	}
	if (v6) {
		struct ipv6hdr ip6 = { .version = 6, .nexthdr = IPPROTO_UDP,
				       .hop_limit = 64,
				       .payload_len = htons(sizeof(struct udphdr)) };

		if (inet_pton(AF_INET6, src, &ip6.saddr) != 1 ||
		    inet_pton(AF_INET6, "2001:db8:1::1", &ip6.daddr) != 1)
			return -1;
		memcpy(p + l3, &ip6, sizeof(ip6));
		l4 = l3 + sizeof(ip6);
	} else {
		struct iphdr ip = { .version = 4, .ihl = 5, .ttl = 64,
				    .protocol = IPPROTO_UDP,
				    .tot_len = htons(sizeof(ip) + sizeof(struct udphdr)) };

		if (inet_pton(AF_INET, src, &ip.saddr) != 1 ||
		    inet_pton(AF_INET, "198.18.1.1", &ip.daddr) != 1)
			return -1;
		memcpy(p + l3, &ip, sizeof(ip));
		l4 = l3 + sizeof(ip);
	}
	{
		struct udphdr udp = { .source = htons(9000), .dest = htons(9),
				      .len = htons(sizeof(udp)) };

		memcpy(p + l4, &udp, sizeof(udp));
	}
	f->len = l4 + sizeof(struct udphdr);
	if (f->len < 60)
		f->len = 60;
	return 0;
}

int bench_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

__u64 bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
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
