// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The egress hook: tc clsact filters of rl_egress (egress.h). */
#include <errno.h>
#include <stdbool.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "lib/egress.h"

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

/* The filter of XDP interface `ifindex` on `hook_ifindex` runs `prog_fd`:
 * added, or its program replaced in place (BPF_TC_F_REPLACE). */
static int attach_one(int prog_fd, int ifindex, int hook_ifindex)
{
	struct bpf_tc_hook h;
	struct bpf_tc_opts o;
	int ret;

	hook_of(&h, hook_ifindex);
	filter_of(&o, ifindex);
	o.prog_fd = prog_fd;
	/* a filter of ours (left by a killed attach, or reload's) is replaced */
	o.flags = BPF_TC_F_REPLACE;
	ret = bpf_tc_attach(&h, &o);
	if (ret) {
		/* no clsact qdisc yet (asked first: libbpf complains
		 * aloud of one that exists) */
		ret = bpf_tc_hook_create(&h);
		if (ret && ret != -EEXIST)
			return ret;
		filter_of(&o, ifindex);
		o.prog_fd = prog_fd;
		o.flags = BPF_TC_F_REPLACE;
		ret = bpf_tc_attach(&h, &o);
	}
	return ret;
}

static int hook_error(int ret, int hook_ifindex, char *err, size_t errlen)
{
	char name[IF_NAMESIZE] = "?";

	if_indextoname((unsigned int)hook_ifindex, name);
	snprintf(err, errlen,
		 "cannot add the egress hook (tc clsact egress filter) on %s: %s",
		 name, strerror(-ret));
	return ret;
}

static int egress_attach(int prog_fd, int ifindex, const __u32 via[RL_MAX_REPLIES_VIA],
			 bool undo, char *err, size_t errlen)
{
	int hooks[RL_MAX_REPLIES_VIA], n = rl_egress_hooks(ifindex, via, hooks);
	int ret;

	for (int i = 0; i < n; i++) {
		ret = attach_one(prog_fd, ifindex, hooks[i]);
		if (ret) {
			hook_error(ret, hooks[i], err, errlen);
			if (undo)
				egress_detach(ifindex, via);
			return ret;
		}
	}
	return 0;
}

/* libbpf prints the kernel's words for what is expected here (no clsact
 * qdisc yet, no filter of ours to remove): the callers say what failed. */
int rl_egress_attach(int prog_fd, int ifindex, const __u32 via[RL_MAX_REPLIES_VIA],
		     char *err, size_t errlen)
{
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	int ret = egress_attach(prog_fd, ifindex, via, true, err, errlen);

	libbpf_set_print(print);
	return ret;
}

int rl_egress_replace(int prog_fd, int ifindex, const __u32 via[RL_MAX_REPLIES_VIA],
		      char *err, size_t errlen)
{
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	int ret = egress_attach(prog_fd, ifindex, via, false, err, errlen);

	libbpf_set_print(print);
	return ret;
}

int rl_egress_sweep(int ifindex, const __u32 via[RL_MAX_REPLIES_VIA])
{
	int hooks[RL_MAX_REPLIES_VIA], n = rl_egress_hooks(ifindex, via, hooks);
	libbpf_print_fn_t print;
	struct if_nameindex *all = if_nameindex(), *i;
	struct bpf_tc_hook h;
	struct bpf_tc_opts o;
	int first = 0, ret;
	bool keep;

	if (!all)
		return -errno;
	print = libbpf_set_print(NULL);
	for (i = all; i->if_index; i++) {
		keep = false;
		for (int k = 0; k < n && !keep; k++)
			keep = hooks[k] == (int)i->if_index;
		if (keep)
			continue;
		hook_of(&h, (int)i->if_index);
		filter_of(&o, ifindex);
		ret = bpf_tc_detach(&h, &o);
		if (ret && ret != -ENOENT && ret != -ENODEV && ret != -EINVAL && !first)
			first = ret;
	}
	libbpf_set_print(print);
	if_freenameindex(all);
	return first;
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
