// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Sharing an interface through libxdp's dispatcher (xdp_multi.h). */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "lib/xdp_multi.h"
#include "lib/loader.h"
#include "lib/pin.h"
#include "xdp_probe.skel.h"
#include "xdp_slot.skel.h"

_Static_assert(RL_MIN_PRIO >= 1 && RL_RUN_PRIO <= RL_MAX_PRIO, "priorities");

static bool quiet;	/* while auto mode tries native XDP */

/* libxdp's warnings (why an attach failed), unless we expect them. */
static int libxdp_print(enum libxdp_print_level level, const char *fmt,
			va_list ap)
{
	if (level != LIBXDP_WARN || quiet)
		return 0;
	fputs("libxdp: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

static void libxdp_setup(void)
{
	static bool done;

	if (!done)
		libxdp_set_print(libxdp_print);
	done = true;
}

static int probe(void)
{
	libbpf_print_fn_t old = libbpf_set_print(NULL);	/* a refusal is an answer */
	struct xdp_probe *t = xdp_probe__open(), *e = xdp_probe__open();
	struct bpf_link *l = NULL;
	int ret, tgt;

	if (!t || !e) {
		ret = -errno;
		goto out;
	}
	bpf_program__set_autoload(t->progs.rl_probe_ext, false);
	bpf_program__set_autoload(e->progs.rl_probe_target, false);
	ret = xdp_probe__load(t);
	if (ret)
		goto out;
	tgt = bpf_program__fd(t->progs.rl_probe_target);
	ret = bpf_program__set_attach_target(e->progs.rl_probe_ext, tgt,
					     "rl_probe_target");
	if (!ret)
		ret = xdp_probe__load(e);
	if (!ret) {
		l = bpf_program__attach_freplace(e->progs.rl_probe_ext, tgt,
						 "rl_probe_target");
		ret = l ? 0 : -errno;
	}
out:
	bpf_link__destroy(l);
	xdp_probe__destroy(e);
	xdp_probe__destroy(t);
	libbpf_set_print(old);
	return ret;
}

int rl_xdp_multi_support(void)
{
	static int known = 1;
	const char *skip = getenv("LIBXDP_SKIP_DISPATCHER");

	/* libxdp's own switch: one program, no dispatcher */
	if (known == 1)
		known = skip && !strcmp(skip, "1") ? -EOPNOTSUPP : probe();
	return known;
}

static enum rl_mode mode_of(enum xdp_attach_mode m)
{
	return m == XDP_MODE_SKB ? RL_MODE_GENERIC : RL_MODE_NATIVE;
}

static void prog_of(struct rl_xdp_prog *p, const struct xdp_program *x,
		    bool chained)
{
	snprintf(p->name, sizeof(p->name), "%s", xdp_program__name(x));
	p->id = xdp_program__id(x);
	p->prio = chained ? xdp_program__run_prio(x) : 0;
	p->actions = 0;
	for (unsigned int a = XDP_ABORTED; chained && a <= XDP_REDIRECT; a++)
		if (xdp_program__chain_call_enabled(x, a))
			p->actions |= 1u << a;
}

/* The interface's libxdp view: NULL when nothing is attached (0 in ret). */
static struct xdp_multiprog *multiprog(int ifindex, int *ret)
{
	struct xdp_multiprog *mp;
	long err;

	libxdp_setup();
	mp = xdp_multiprog__get_from_ifindex(ifindex);
	err = libxdp_get_error(mp);
	*ret = 0;
	if (!mp && !err)
		err = -ENOENT;
	if (err) {
		*ret = err == -ENOENT ? 0 : (int)err;
		return NULL;
	}
	return mp;
}

int rl_xdp_progs_read(int ifindex, struct rl_xdp_progs *out)
{
	struct xdp_program *p = NULL;
	struct xdp_multiprog *mp;
	int ret;

	memset(out, 0, sizeof(*out));
	mp = multiprog(ifindex, &ret);
	if (!mp)
		return ret;
	out->mode = mode_of(xdp_multiprog__attach_mode(mp));
	if (xdp_multiprog__is_legacy(mp)) {
		if (xdp_multiprog__main_prog(mp))
			prog_of(&out->p[out->n++], xdp_multiprog__main_prog(mp), false);
	} else {
		out->dispatcher = true;
		out->dispatcher_id = xdp_program__id(xdp_multiprog__main_prog(mp));
		while ((p = xdp_multiprog__next_prog(p, mp)) && out->n < RL_XDP_MAX_PROGS)
			prog_of(&out->p[out->n++], p, true);
	}
	xdp_multiprog__close(mp);
	return 0;
}

void rl_xdp_actions_format(__u32 actions, char *buf, size_t len)
{
	static const char *const names[] = { "XDP_ABORTED", "XDP_DROP",
		"XDP_PASS", "XDP_TX", "XDP_REDIRECT" };
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned int a = 0; a < 5 && off < len; a++)
		if (actions & (1u << a))
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? "," : "", names[a]);
}

/* Attach in `mode`; auto: the dispatcher's mode when joining one, else
 * native and then generic. */
static int attach_in_mode(struct xdp_program *prog, int ifindex,
			  const struct rl_xdp_progs *cur, enum rl_xdp_mode mode,
			  struct rl_attach_result *res)
{
	int ret;

	if (cur->n) {	/* joining: libxdp keeps the dispatcher's mode */
		res->mode = cur->mode;
		return xdp_program__attach(prog, ifindex, cur->mode == RL_MODE_GENERIC ?
					   XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	}
	if (mode != RL_XDP_GENERIC) {
		quiet = mode == RL_XDP_AUTO;
		ret = xdp_program__attach(prog, ifindex, XDP_MODE_NATIVE, 0);
		quiet = false;
		res->mode = RL_MODE_NATIVE;
		if (!ret || mode == RL_XDP_NATIVE ||
		    (ret != -EOPNOTSUPP && ret != -EINVAL))
			return ret;
		res->native_err = -ret;
	}
	res->mode = RL_MODE_GENERIC;
	return xdp_program__attach(prog, ifindex, XDP_MODE_SKB, 0);
}

/* The interface's programs allow ours beside them: 0, else a message. */
static int may_join(const char *iface, const struct rl_xdp_progs *cur,
		    enum rl_xdp_mode mode, char *err, size_t errlen)
{
	if (!cur->n)
		return 0;
	if (!cur->dispatcher)
		return -EBUSY;	/* attach_txn.c says what to do */
	if (cur->n >= RL_XDP_MAX_PROGS) {
		snprintf(err, errlen,
			 "%s already runs %d XDP programs under libxdp's dispatcher, the most it holds: remove one first (xdp-loader status %s; xdp-loader unload %s --id ID)",
			 iface, cur->n, iface, iface);
		return -E2BIG;
	}
	if ((mode == RL_XDP_NATIVE && cur->mode != RL_MODE_NATIVE) ||
	    (mode == RL_XDP_GENERIC && cur->mode != RL_MODE_GENERIC)) {
		snprintf(err, errlen,
			 "%s runs its XDP programs in %s mode, and every program under one dispatcher runs in the same mode: attach with --mode %s or --mode auto",
			 iface, cur->mode == RL_MODE_GENERIC ? "generic" : "native",
			 cur->mode == RL_MODE_GENERIC ? "generic" : "native");
		return -EINVAL;
	}
	return 0;
}

/*
 * The slot (a prog array of one entry) holding prog_fd, pinned at
 * slot_pin before anything runs it: the pin keeps the entry (a prog
 * array is emptied when its last pin or fd goes). The fd, or -errno.
 */
static int slot_create(int prog_fd, const char *slot_pin)
{
	__u32 zero = 0;
	int fd = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, "slot", sizeof(__u32),
				sizeof(__u32), 1, NULL);

	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(fd, &zero, &prog_fd, BPF_ANY) ||
	    bpf_obj_pin(fd, slot_pin)) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	return fd;
}

/* The stub libxdp loads itself, as an freplace program of its
 * dispatcher, on the slot (its one map). */
static struct xdp_slot *open_stub(int slot_fd, int *ret)
{
	struct xdp_slot *skel = xdp_slot__open();

	if (!skel) {
		*ret = -errno;
		return NULL;
	}
	*ret = bpf_map__reuse_fd(skel->maps.slot, slot_fd);
	if (*ret) {
		xdp_slot__destroy(skel);
		return NULL;
	}
	return skel;
}

static bool runs_in(const struct rl_xdp_progs *cur, __u32 id)
{
	for (int i = 0; cur->dispatcher && i < cur->n; i++)
		if (cur->p[i].id == id)
			return true;
	return false;
}

int rl_xdp_multi_attach(const char *iface, int ifindex, unsigned int prio,
			int prog_fd, const char *slot_pin, enum rl_xdp_mode mode, struct rl_attach_result *res,
			char *err, size_t errlen)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, opts, .prog_name = "xdp_ratelimit");
	struct xdp_program *prog = NULL;
	struct rl_xdp_progs cur;
	struct xdp_slot *skel;
	int ret, fd = -1, slot_fd;

	libxdp_setup();
	*err = '\0';
	ret = rl_xdp_progs_read(ifindex, &cur);
	if (ret) {
		snprintf(err, errlen, "cannot read the XDP programs of %s: %s",
			 iface, strerror(-ret));
		return ret;
	}
	ret = may_join(iface, &cur, mode, err, errlen);
	if (ret)
		return ret;
	slot_fd = slot_create(prog_fd, slot_pin);
	if (slot_fd < 0) {
		snprintf(err, errlen, "cannot make the program's slot %s: %s",
			 slot_pin, strerror(-slot_fd));
		return slot_fd;
	}
	skel = open_stub(slot_fd, &ret);
	close(slot_fd);		/* the pin and the stub's object hold it */
	if (!skel) {
		snprintf(err, errlen, "cannot open the stub's BPF object: %s",
			 strerror(-ret));
		return ret;
	}
	opts.obj = skel->obj;
	prog = xdp_program__create(&opts);
	ret = (int)libxdp_get_error(prog);
	if (!ret && prio)
		ret = xdp_program__set_run_prio(prog, prio);
	if (ret) {
		snprintf(err, errlen, "libxdp cannot use the BPF object: %s",
			 strerror(-ret));
		prog = NULL;
		goto out;
	}
	ret = attach_in_mode(prog, ifindex, &cur, mode, res);
	if (ret) {
		char why[128];

		libxdp_strerror(ret, why, sizeof(why));
		if (mode == RL_XDP_NATIVE && (ret == -EOPNOTSUPP || ret == -EINVAL))
			snprintf(err, errlen,
				 "%s does not support native XDP (%s): use --mode generic or --mode auto",
				 iface, why);
		else
			snprintf(err, errlen,
				 "cannot attach to %s through libxdp's dispatcher: %s",
				 iface, why);
		goto out;
	}
	/* libxdp falls back to a lone program when the dispatcher fails:
	 * we share or refuse, never take the interface for ourselves */
	ret = rl_xdp_progs_read(ifindex, &cur);
	if (!ret && !runs_in(&cur, xdp_program__id(prog)))
		ret = -EOPNOTSUPP;
	if (!ret) {
		res->prio = xdp_program__run_prio(prog);
		fd = dup(xdp_program__fd(prog));
		ret = fd < 0 ? -errno : 0;
	}
	if (ret) {
		snprintf(err, errlen,
			 "attached to %s through libxdp, but not under its dispatcher as asked (%s): detached again",
			 iface, strerror(-ret));
		xdp_program__detach(prog, ifindex, res->mode == RL_MODE_GENERIC ?
				    XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
out:
	xdp_program__close(prog);
	xdp_slot__destroy(skel);
	return fd >= 0 ? fd : ret;
}

/* The interface a pin directory (or staging directory) is for. */
static int dir_ifindex(const char *name)
{
	char ifname[NAME_MAX + 1];
	int pid;

	if (!rl_pin_stage_parse(name, ifname, &pid))
		rl_pin_dir_iface(name, ifname, sizeof(ifname));
	return (int)if_nametoindex(ifname);
}

/*
 * Our stub under the dispatcher of NAME's interface: the program that
 * uses the slot pinned in NAME's directory (an attach's staging directory
 * has it before libxdp attaches the stub; after a reload onto new maps
 * the slot is the one map the stub and the directory still share), or in
 * a directory of a version before the slot, the one that uses its config
 * map. NULL when none (*ret 0) or on an error (*ret -errno); else it is
 * one of *mp's, which the caller closes.
 */
static struct xdp_program *owner(const char *name, int *ifindex,
				 struct xdp_multiprog **mp, int *ret)
{
	struct xdp_program *p = NULL;
	__u32 id;

	*mp = NULL;
	id = rl_pinned_map_id(name, RL_PIN_SLOT, ret);
	if (!id && !*ret)
		id = rl_pinned_map_id(name, rl_map_defs[RL_MAP_IDX_config].name, ret);
	if (!id)
		return NULL;
	*ifindex = dir_ifindex(name);
	if (!*ifindex)
		return NULL;
	*mp = multiprog(*ifindex, ret);
	if (*mp && !xdp_multiprog__is_legacy(*mp))
		while ((p = xdp_multiprog__next_prog(p, *mp)))
			if (rl_prog_uses_map(xdp_program__fd(p), id))
				break;
	return p;
}

int rl_xdp_multi_release(const char *name)
{
	struct xdp_multiprog *mp;
	int ifindex, ret;
	struct xdp_program *p = owner(name, &ifindex, &mp, &ret);

	/* in the dispatcher's mode: libxdp replaces it in that mode's slot */
	if (p)
		ret = xdp_program__detach(p, ifindex, xdp_multiprog__attach_mode(mp), 0);
	xdp_multiprog__close(mp);
	return ret ? ret : p != NULL;
}

bool rl_xdp_multi_runs(const char *name)
{
	struct xdp_multiprog *mp;
	int ifindex, ret;
	bool runs = owner(name, &ifindex, &mp, &ret) != NULL;

	xdp_multiprog__close(mp);
	return runs;
}

int rl_xdp_multi_where(const char *name, __u32 *prog_id)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct rl_xdp_progs cur;
	char path[PATH_MAX];
	int fd, ifindex, ret;

	rl_pin_path(path, sizeof(path), name, RL_PIN_PROG);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	ret = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	if (prog_id)
		*prog_id = info.id;
	ifindex = dir_ifindex(name);
	if (!ifindex)
		return 0;
	ret = rl_xdp_progs_read(ifindex, &cur);
	if (ret)
		return ret;
	return runs_in(&cur, info.id) ? ifindex : -ENOLINK;
}

int rl_xdp_multi_slot(const char *name, __u32 *prog_id)
{
	char path[PATH_MAX];
	__u32 zero = 0, max = 0;
	int fd, stub, ret;

	rl_pin_path(path, sizeof(path), name, RL_PIN_SLOT);
	fd = rl_map_pin_open(path, BPF_MAP_TYPE_PROG_ARRAY, sizeof(__u32),
			     sizeof(__u32), &max);
	if (fd < 0)
		return fd;
	ret = max == 1 ? 0 : -EPROTO;
	/* the slot the stub pinned as RL_PIN_PROG runs, not a stray one */
	if (!ret) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		ret = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
		rl_pin_path(path, sizeof(path), name, RL_PIN_PROG);
		stub = ret ? -1 : bpf_obj_get(path);
		if (!ret && stub < 0)
			ret = -errno;
		if (!ret) {
			ret = rl_prog_uses_map(stub, info.id) ? 0 : -EPROTO;
			close(stub);
		}
	}
	/* a prog array's entry reads as the id of its program */
	if (!ret && prog_id && bpf_map_lookup_elem(fd, &zero, prog_id))
		ret = errno == ENOENT ? -ENOENT : -errno;
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int rl_xdp_multi_judge(const char *name, __u32 *prog_id)
{
	__u32 slot_id = 0;
	int at = rl_xdp_multi_where(name, prog_id), fd;

	if (at <= 0 || !prog_id)
		return at;
	fd = rl_xdp_multi_slot(name, &slot_id);
	if (fd >= 0) {
		*prog_id = slot_id;
		close(fd);
	}
	return at;
}

bool rl_xdp_multi_stub_on_maps(const char *name)
{
	char path[PATH_MAX];
	__u32 id;
	bool on;
	int fd, ret;

	id = rl_pinned_map_id(name, rl_map_defs[RL_MAP_IDX_config].name, &ret);
	rl_pin_path(path, sizeof(path), name, RL_PIN_PROG);
	fd = id ? bpf_obj_get(path) : -1;
	if (fd < 0)
		return false;
	on = rl_prog_uses_map(fd, id);
	close(fd);
	return on;
}

void rl_xdp_multi_slot_prog(struct bpf_program *prog)
{
	/* libxdp loads the stub as an freplace program, whose expected
	 * attach type is 0; a prog array takes only programs that agree on
	 * it (kernels with "bpf: Enforce expected_attach_type for tailcall
	 * compatibility", Debian's 6.1 among them), and libbpf gives a
	 * SEC("xdp") program BPF_XDP. XDP needs none to attach. */
	bpf_program__set_expected_attach_type(prog, 0);
}

int rl_xdp_multi_swap(int slot_fd, int prog_fd)
{
	__u32 zero = 0;

	/* one store of the entry: each packet runs the old or the new (a
	 * prog array takes BPF_ANY only) */
	return bpf_map_update_elem(slot_fd, &zero, &prog_fd, BPF_ANY) ? -errno : 0;
}

unsigned int rl_xdp_multi_prio(const char *name)
{
	struct rl_xdp_progs cur;
	__u32 id = 0;
	int ifindex = rl_xdp_multi_where(name, &id);

	if (ifindex > 0 && !rl_xdp_progs_read(ifindex, &cur))
		for (int i = 0; i < cur.n; i++)
			if (cur.p[i].id == id)
				return cur.p[i].prio;
	return RL_RUN_PRIO;
}

bool rl_run_config_note(int level, const char *fmt)
{
	return level == LIBBPF_INFO &&
	       strstr(fmt, "skipping unrecognized data section");
}
