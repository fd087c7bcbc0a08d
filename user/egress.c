// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The egress hook: tc clsact filters of rl_egress (egress.h). */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "egress.h"

int rl_egress_hooks(int ifindex, const __u32 via[RL_MAX_REPLIES_VIA],
		    int out[RL_MAX_REPLIES_VIA])
{
	int n = 0;

	for (int i = 0; i < RL_MAX_REPLIES_VIA && via[i]; i++)
		out[n++] = (int)via[i];
	if (!n)
		out[n++] = ifindex;
	return n;
}

static void hook_of(struct bpf_tc_hook *h, int hook_ifindex)
{
	memset(h, 0, sizeof(*h));
	h->sz = sizeof(*h);
	h->ifindex = hook_ifindex;
	h->attach_point = BPF_TC_EGRESS;
}

static void filter_of(struct bpf_tc_opts *o, int ifindex)
{
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->handle = (__u32)ifindex;
	o->priority = RL_TC_PRIORITY;
}

static int egress_detach(int ifindex, const __u32 via[RL_MAX_REPLIES_VIA]);

static int egress_attach(int prog_fd, int ifindex, const __u32 via[RL_MAX_REPLIES_VIA],
			 char *err, size_t errlen)
{
	int hooks[RL_MAX_REPLIES_VIA], n = rl_egress_hooks(ifindex, via, hooks);
	char name[IF_NAMESIZE] = "?";
	struct bpf_tc_hook h;
	struct bpf_tc_opts o;
	int ret = 0;

	for (int i = 0; i < n; i++) {
		hook_of(&h, hooks[i]);
		filter_of(&o, ifindex);
		o.prog_fd = prog_fd;
		/* a filter of ours left by a killed attach is replaced */
		o.flags = BPF_TC_F_REPLACE;
		ret = bpf_tc_attach(&h, &o);
		if (ret) {
			/* no clsact qdisc yet (asked first: libbpf complains
			 * aloud of one that exists) */
			ret = bpf_tc_hook_create(&h);
			if (ret && ret != -EEXIST)
				goto fail;
			filter_of(&o, ifindex);
			o.prog_fd = prog_fd;
			o.flags = BPF_TC_F_REPLACE;
			ret = bpf_tc_attach(&h, &o);
		}
		if (ret)
			goto fail;
		continue;
fail:
		if_indextoname((unsigned int)hooks[i], name);
		snprintf(err, errlen,
			 "cannot add the egress hook (tc clsact egress filter) on %s: %s",
			 name, strerror(-ret));
		egress_detach(ifindex, via);
		return ret;
	}
	return 0;
}

/* libbpf prints the kernel's words for what is expected here (no clsact
 * qdisc yet, no filter of ours to remove): the callers say what failed. */
int rl_egress_attach(int prog_fd, int ifindex, const __u32 via[RL_MAX_REPLIES_VIA],
		     char *err, size_t errlen)
{
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	int ret = egress_attach(prog_fd, ifindex, via, err, errlen);

	libbpf_set_print(print);
	return ret;
}

static int egress_detach(int ifindex, const __u32 via[RL_MAX_REPLIES_VIA])
{
	int hooks[RL_MAX_REPLIES_VIA], n = rl_egress_hooks(ifindex, via, hooks);
	struct bpf_tc_hook h;
	struct bpf_tc_opts o;
	int first = 0, ret;

	for (int i = 0; i < n; i++) {
		hook_of(&h, hooks[i]);
		filter_of(&o, ifindex);
		ret = bpf_tc_detach(&h, &o);
		/* gone with its interface, or never added */
		if (ret && ret != -ENOENT && ret != -ENODEV && ret != -EINVAL && !first)
			first = ret;
	}
	return first;
}

int rl_egress_detach(int ifindex, const __u32 via[RL_MAX_REPLIES_VIA])
{
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	int ret = egress_detach(ifindex, via);

	libbpf_set_print(print);
	return ret;
}

int rl_egress_prog_id(int ifindex, int hook_ifindex)
{
	struct bpf_tc_hook h;
	struct bpf_tc_opts o;
	int ret;

	libbpf_print_fn_t print = libbpf_set_print(NULL);

	hook_of(&h, hook_ifindex);
	filter_of(&o, ifindex);
	ret = bpf_tc_query(&h, &o);
	libbpf_set_print(print);
	return ret ? ret : (int)o.prog_id;
}
