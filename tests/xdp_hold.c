// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Keep an XDP program in the XDP dispatcher: see xdp_hold.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include "xdp_hold.h"

static int ip_link(const char *verb, const struct xdp_hold *h)
{
	char cmd[128];

	if (verb[0] == 'a')
		snprintf(cmd, sizeof(cmd),
			 "ip link add %sa type veth peer name %sb >/dev/null 2>&1",
			 h->name, h->name);
	else
		snprintf(cmd, sizeof(cmd), "ip link del %sa >/dev/null 2>&1",
			 h->name);
	return system(cmd) == 0 ? 0 : -1;
}

int xdp_hold(struct xdp_hold *h, int prog_fd)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = XDP_FLAGS_DRV_MODE);
	char dev[IF_NAMESIZE];
	int err;

	h->ifindex = 0;
	h->link_fd = -1;
	/* "xh<pid>" + "a"/"b": unique per process in the namespace */
	snprintf(h->name, sizeof(h->name), "xh%d", (int)getpid());
	if (ip_link("add", h))
		return -ENODEV;
	h->ifindex = (int)if_nametoindex(strcat(strcpy(dev, h->name), "a"));
	if (!h->ifindex)
		return -ENODEV;
	h->link_fd = bpf_link_create(prog_fd, h->ifindex, BPF_XDP, &opts);
	if (h->link_fd < 0) {
		err = -errno;
		xdp_hold_release(h);
		return err;
	}
	return 0;
}

void xdp_hold_release(struct xdp_hold *h)
{
	if (h->link_fd >= 0)
		close(h->link_fd);
	h->link_fd = -1;
	if (h->ifindex)
		ip_link("del", h);
	h->ifindex = 0;
}
