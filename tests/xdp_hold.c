// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Keep an XDP program in the XDP dispatcher: see xdp_hold.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include "xdp_hold.h"

#define NETNS_SELF "/proc/thread-self/ns/net"

/* In a new network namespace (this thread only), make the veth pair and
 * attach; h->netns_fd keeps the namespace. */
static int hold_in_new_netns(struct xdp_hold *h, int prog_fd)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = XDP_FLAGS_DRV_MODE);
	char cmd[128], dev[IF_NAMESIZE];

	if (unshare(CLONE_NEWNET))
		return -errno;
	h->netns_fd = open(NETNS_SELF, O_RDONLY | O_CLOEXEC);
	if (h->netns_fd < 0)
		return -errno;
	snprintf(cmd, sizeof(cmd),
		 "ip link add %sa type veth peer name %sb >/dev/null 2>&1",
		 h->name, h->name);
	if (system(cmd) != 0)
		return -ENODEV;
	h->ifindex = (int)if_nametoindex(strcat(strcpy(dev, h->name), "a"));
	if (!h->ifindex)
		return -ENODEV;
	h->link_fd = bpf_link_create(prog_fd, h->ifindex, BPF_XDP, &opts);
	return h->link_fd < 0 ? -errno : 0;
}

int xdp_hold(struct xdp_hold *h, int prog_fd)
{
	int home = open(NETNS_SELF, O_RDONLY | O_CLOEXEC), err;

	h->ifindex = 0;
	h->link_fd = -1;
	h->netns_fd = -1;
	if (home < 0)
		return -errno;
	snprintf(h->name, sizeof(h->name), "xh%d", (int)getpid());
	err = hold_in_new_netns(h, prog_fd);
	if (setns(home, CLONE_NEWNET) && !err)
		err = -errno;
	close(home);
	if (err) {
		if (h->link_fd >= 0)
			close(h->link_fd);
		if (h->netns_fd >= 0)
			close(h->netns_fd);
		h->link_fd = h->netns_fd = -1;
		h->ifindex = 0;
	}
	return err;
}

void xdp_hold_release(struct xdp_hold *h)
{
	if (h->link_fd >= 0)
		close(h->link_fd);
	h->link_fd = -1;
	/* the last reference to the namespace: it goes, with the pair */
	if (h->ifindex && h->netns_fd >= 0)
		close(h->netns_fd);
	h->netns_fd = -1;
	h->ifindex = 0;
}
