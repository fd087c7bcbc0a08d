/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Keep an XDP program in the kernel's XDP dispatcher while a tool runs it
 * with BPF_PROG_TEST_RUN.
 *
 * A test run with repeat > 1 adds the program to the dispatcher and removes
 * it again, and each change waits for an RCU grace period: well under a
 * millisecond on an idle machine, up to ~20 ms when the CPUs are busy. Tools
 * that make thousands of short runs (a paced generator, per-frame program
 * tests) cannot afford that. While the program is also attached in native
 * mode to a device, the dispatcher keeps it and a run only takes a
 * reference. The device is a veth pair made for the purpose in a network
 * namespace of its own, which only an open fd keeps: xdp_hold_release()
 * closes it, and so does the process's death, even by SIGKILL, deleting
 * the pair and the attachment with it.
 */
#ifndef RL_XDP_HOLD_H
#define RL_XDP_HOLD_H

#include <net/if.h>

struct xdp_hold {
	char name[IF_NAMESIZE - 1];	/* the pair: NAME"a", NAME"b" */
	int ifindex;		/* in netns_fd; 0: nothing held */
	int link_fd;
	int netns_fd;		/* valid while ifindex */
};

/* Best effort: 0 when held, else -errno (runs still work, only slower). */
int xdp_hold(struct xdp_hold *h, int prog_fd);
void xdp_hold_release(struct xdp_hold *h);

#endif /* RL_XDP_HOLD_H */
