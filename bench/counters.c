// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ratelimit-bench counters NETNS DEV: "RX PASSED DROPPED" on one line, the
 * frames DEV received (64-bit link statistics: on a veth, what its XDP hook
 * ran on) and xdp-ratelimit's interface counters from its pins (0 0 when
 * DEV has none). One process per reading instead of ip, bpftool and two
 * jq: the throughput runs read these twice each.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "lib/maps.h"
#include "lib/pin.h"
#include "bench.h"

/* rx_packets of IFLA_STATS64 for ifindex, in the current namespace */
static int link_rx(int ifindex, __u64 *rx)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK,
			.nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = 1 },
		.ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex },
	};
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), ret = -1;
	ssize_t n;

	if (fd < 0)
		return -1;
	if (send(fd, &req, sizeof(req), 0) < 0 || (n = recv(fd, buf, sizeof(buf), 0)) < 0)
		goto out;
	for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
	     nh = NLMSG_NEXT(nh, n)) {
		struct ifinfomsg *ifi = NLMSG_DATA(nh);
		int len = (int)IFLA_PAYLOAD(nh);

		if (nh->nlmsg_type != RTM_NEWLINK)
			continue;
		for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
			if (a->rta_type == IFLA_STATS64 &&
			    RTA_PAYLOAD(a) >= sizeof(struct rtnl_link_stats64)) {
				struct rtnl_link_stats64 st;

				memcpy(&st, RTA_DATA(a), sizeof(st));
				*rx = st.rx_packets;
				ret = 0;
			}
		}
	}
out:
	close(fd);
	return ret;
}

int bench_counters(int argc, char **argv)
{
	struct rl_counters sum = { 0 };
	struct rl_maps m;
	char path[256];
	__u64 rx = 0;
	int fd, ifindex;

	if (argc != 3) {
		fprintf(stderr, "Usage: ratelimit-bench counters NETNS_PATH DEV\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "ratelimit-bench counters: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	close(fd);
	ifindex = (int)if_nametoindex(argv[2]);
	if (!ifindex || link_rx(ifindex, &rx)) {
		fprintf(stderr, "ratelimit-bench counters: %s: no link statistics\n", argv[2]);
		return 1;
	}
	rl_maps_init(&m);
	rl_pin_path(path, sizeof(path), argv[2], RL_MAP_COUNTERS);
	m.counters = bpf_obj_get(path);
	if (m.counters >= 0 && rl_counters_sum(&m, &sum)) {
		fprintf(stderr, "ratelimit-bench counters: %s: cannot read\n", path);
		close(m.counters);
		return 1;
	}
	if (m.counters >= 0)
		close(m.counters);
	printf("%llu %llu %llu\n", (unsigned long long)rx,
	       (unsigned long long)sum.passed_pkts, (unsigned long long)sum.dropped_pkts);
	return fflush(stdout) ? 1 : 0;
}
