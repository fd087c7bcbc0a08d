// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The egress hook: tc clsact filters of rl_egress (egress.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/egress.h"
#include "lib/pin.h"

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

static int egress_detach(int ifindex, const __u32 via[RL_MAX_REPLIES_VIA], __u32 own);

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
				egress_detach(ifindex, via, 0);
			return ret;
		}
	}
	return 0;
}

int rl_egress_qdiscs(int ifindex, const __u32 via[RL_MAX_REPLIES_VIA],
		     char *err, size_t errlen)
{
	int hooks[RL_MAX_REPLIES_VIA], n = rl_egress_hooks(ifindex, via, hooks);
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	struct bpf_tc_hook h;
	int own = 0, ret;

	for (int i = 0; i < n; i++) {
		hook_of(&h, hooks[i]);
		ret = bpf_tc_hook_create(&h);
		if (!ret) {
			own |= (int)RL_F_OWN_CLSACT(i);
		} else if (ret != -EEXIST) {
			egress_detach(ifindex, via, (__u32)own);
			own = hook_error(ret, hooks[i], err, errlen);
			break;
		}
	}
	libbpf_set_print(print);
	return own;
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

static int pin_error(int ret, const char *what, const char *path, char *err,
		     size_t errlen)
{
	snprintf(err, errlen, "cannot %s %s: %s", what, path, strerror(-ret));
	return ret;
}

/* Every filter runs the program pinned as RL_PIN_EGRESS_NEXT (`prog_fd`),
 * none of those of interfaces not in `via` is left, then the pin is
 * renamed over RL_PIN_EGRESS: until then the old program, which filters
 * not yet done run, keeps its pin. */
static int replace_pinned(int prog_fd, int ifindex, const __u32 via[RL_MAX_REPLIES_VIA],
			  const char *dir, char *err, size_t errlen)
{
	char next[PATH_MAX], pin[PATH_MAX];
	int ret = egress_attach(prog_fd, ifindex, via, false, err, errlen);

	if (ret)
		return ret;
	ret = rl_egress_sweep(ifindex, via);
	if (ret) {
		snprintf(err, errlen,
			 "an egress hook filter of an interface no longer in --replies-via could not be removed (%s)",
			 strerror(-ret));
		return ret;
	}
	rl_pin_path(next, sizeof(next), dir, RL_PIN_EGRESS_NEXT);
	rl_pin_path(pin, sizeof(pin), dir, RL_PIN_EGRESS);
	return rename(next, pin) ? pin_error(-errno, "rename to " RL_PIN_EGRESS, next,
					     err, errlen) : 0;
}

int rl_egress_replace(int prog_fd, int ifindex, const __u32 via[RL_MAX_REPLIES_VIA],
		      const char *dir, char *err, size_t errlen)
{
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	char next[PATH_MAX];
	int ret = 0, fd;

	rl_pin_path(next, sizeof(next), dir, RL_PIN_EGRESS_NEXT);
	/* a reload that failed or died half way: its program, which some
	 * filters may run, everywhere first, so that the pin can take ours */
	fd = bpf_obj_get(next);
	if (fd >= 0) {
		ret = replace_pinned(fd, ifindex, via, dir, err, errlen);
		close(fd);
	} else if (errno != ENOENT) {
		ret = pin_error(-errno, "open", next, err, errlen);
	}
	if (!ret && bpf_obj_pin(prog_fd, next))
		ret = pin_error(-errno, "pin", next, err, errlen);
	if (!ret)
		ret = replace_pinned(prog_fd, ifindex, via, dir, err, errlen);
	libbpf_set_print(print);
	return ret;
}

int rl_egress_pinned_id(const char *dir)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, ret;

	rl_pin_path(path, sizeof(path), dir, RL_PIN_EGRESS);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	ret = !rl_pin_is(fd, "prog_type:") ? -EPROTO :
	      bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : (int)info.id;
	close(fd);
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

/* Does any tc filter sit under the clsact qdisc of `hook_ifindex`, in
 * either direction? libbpf's tc API asks for one filter by handle and
 * priority; a netlink dump lists them all. 1, 0 or -errno. */
static int clsact_used(int hook_ifindex)
{
	static const __u32 dirs[] = { TC_H_MIN_INGRESS, TC_H_MIN_EGRESS };
	struct {
		struct nlmsghdr n;
		struct tcmsg t;
	} req = {
		.n = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg)),
		       .nlmsg_type = RTM_GETTFILTER,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.t = { .tcm_family = AF_UNSPEC, .tcm_ifindex = hook_ifindex },
	};
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int used = 0, ret = 0;

	if (fd < 0)
		return -errno;
	for (int d = 0; d < 2 && !used && !ret; d++) {
		bool done = false;

		req.n.nlmsg_seq = (__u32)d + 1;
		req.t.tcm_parent = TC_H_MAKE(TC_H_CLSACT, dirs[d]);
		if (send(fd, &req, req.n.nlmsg_len, 0) < 0) {
			ret = -errno;
			break;
		}
		while (!done && !ret) {
			ssize_t len = recv(fd, buf, sizeof(buf), 0);
			struct nlmsghdr *h = (struct nlmsghdr *)buf;

			if (len < 0)
				ret = -errno;
			for (; len > 0 && NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
				if (h->nlmsg_type == NLMSG_DONE)
					done = true;
				else if (h->nlmsg_type == NLMSG_ERROR)
					ret = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
				else if (h->nlmsg_type == RTM_NEWTFILTER)
					used = 1;
			}
		}
	}
	close(fd);
	return ret ? ret : used;
}

static int egress_detach(int ifindex, const __u32 via[RL_MAX_REPLIES_VIA], __u32 own)
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
		if (ret && ret != -ENOENT && ret != -EINVAL)
			continue;
		if (!(own & RL_F_OWN_CLSACT(i)) || clsact_used(hooks[i]))
			continue;	/* not ours, or in use (or unreadable) */
		/* both directions: the qdisc itself (one alone would flush
		 * that direction's filters) */
		h.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		ret = bpf_tc_hook_destroy(&h);
		if (ret && ret != -ENOENT && ret != -EINVAL && !first)
			first = ret;
	}
	return first;
}

int rl_egress_detach(int ifindex, const __u32 via[RL_MAX_REPLIES_VIA], __u32 own)
{
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	int ret = egress_detach(ifindex, via, own);

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
