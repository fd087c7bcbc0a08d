// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The crash-safe attach protocol (attach_txn.h): stage, commit, repair. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include "lib/attach_txn.h"
#include "lib/egress.h"
#include "lib/iface.h"
#include "lib/pin.h"
#include "lib/xdp_multi.h"

static void stage_name(char *buf, size_t len, const char *iface, int pid)
{
	snprintf(buf, len, "%s" RL_STAGE_TAG "%d", iface, pid);
}

/* The bpf_link in the asked mode; auto falls back to generic, noting why
 * native failed in res. */
static int attach_link(int prog_fd, int ifindex, enum rl_xdp_mode mode,
		       struct rl_attach_result *res)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	int fd;

	if (mode != RL_XDP_GENERIC) {
		opts.flags = XDP_FLAGS_DRV_MODE;
		fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &opts);
		if (fd >= 0) {
			res->mode = RL_MODE_NATIVE;
			return fd;
		}
		if (mode == RL_XDP_NATIVE || (errno != EOPNOTSUPP && errno != EINVAL))
			return -errno;
		res->native_err = errno;
	}
	opts.flags = XDP_FLAGS_SKB_MODE;
	fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &opts);
	if (fd < 0)
		return -errno;
	res->mode = RL_MODE_GENERIC;
	return fd;
}

static void link_error(int ret, const char *iface, enum rl_xdp_mode mode,
		       char *err, size_t errlen)
{
	int multi = rl_xdp_multi_support();
	char why[96] = "";

	if (multi == -EOPNOTSUPP)
		snprintf(why, sizeof(why), "; one XDP program per interface here (LIBXDP_SKIP_DISPATCHER=1)");
	else if (multi)
		snprintf(why, sizeof(why), "; this kernel runs one XDP program per interface (freplace: %s)",
			 strerror(-multi));
	if (ret == -EBUSY || ret == -EEXIST)
		snprintf(err, errlen,
			 "%s already has an XDP program attached by another tool: remove it first (ip link set dev %s xdp off), then attach again%s",
			 iface, iface, why);
	else if (mode == RL_XDP_NATIVE && (ret == -EOPNOTSUPP || ret == -EINVAL))
		snprintf(err, errlen,
			 "%s does not support native XDP (%s): use --mode generic or --mode auto",
			 iface, strerror(-ret));
	else
		snprintf(err, errlen, "cannot attach to %s: %s", iface,
			 strerror(-ret));
}

/* The mode is informational (status, stats): set before it is visible. */
static int record_mode(const struct rl_maps *m, int ifindex, enum rl_mode mode)
{
	struct rl_config cfg;
	int ret = rl_config_read(m, &cfg);

	if (ret)
		return ret;
	cfg.set.mode = mode;
	cfg.set.ifindex = (__u32)ifindex;
	return rl_config_write(m, &cfg);
}

int rl_attach_unhook(const char *dir)
{
	char path[PATH_MAX];
	struct rl_config cfg;
	__u32 zero = 0;
	int fd, ret;

	rl_pin_path(path, sizeof(path), dir, RL_MAP_NAME(config));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	ret = bpf_map_lookup_elem(fd, &zero, &cfg) ? -errno : 0;
	close(fd);
	if (ret || !cfg.set.ifindex)
		return ret;	/* no hook was added before ifindex was set */
	return rl_egress_detach((int)cfg.set.ifindex, cfg.set.replies_via,
				cfg.set.flags & RL_F_OWN_CLSACT_ALL);
}

/* The interface, and the clsact qdiscs created for its hook, are recorded
 * before the egress hook is added, so that whatever an interrupted attach
 * leaves can be unhooked (rl_attach_unhook). */
static int record_ifindex(const struct rl_maps *m, int ifindex, __u32 own,
			  struct rl_config *cfg)
{
	cfg->set.ifindex = (__u32)ifindex;
	cfg->set.flags = (cfg->set.flags & ~RL_F_OWN_CLSACT_ALL) | own;
	return rl_config_write(m, cfg);
}

/* Attach: under libxdp's dispatcher where the kernel runs it (the fd of
 * the program, committed as RL_PIN_PROG), else a bpf_link of our own
 * (RL_PIN_LINK), as on kernels without freplace. */
static int attach_prog(const struct rl_attach_prog *p, const char *stage,
		       int ifindex, struct rl_attach_result *res, const char **commit,
		       char *err, size_t errlen)
{
	char slot[PATH_MAX];
	int fd;

	if (rl_xdp_multi_support() == 0) {
		*commit = RL_PIN_PROG;
		rl_pin_path(slot, sizeof(slot), stage, RL_PIN_SLOT);
		fd = rl_xdp_multi_attach(p->iface, ifindex, p->prio, p->prog_fd,
					 slot, p->mode, res, err, errlen);
		if (fd == -EBUSY && !*err)	/* a program not of libxdp's */
			link_error(fd, p->iface, p->mode, err, errlen);
		return fd;
	}
	*commit = RL_PIN_LINK;
	fd = attach_link(p->prog_fd, ifindex, p->mode, res);
	if (fd < 0)
		link_error(fd, p->iface, p->mode, err, errlen);
	return fd;
}

int rl_attach_commit(const struct rl_attach_prog *p, int ifindex,
		     const struct rl_maps *m, struct rl_attach_result *res,
		     char *err, size_t errlen)
{
	struct rl_config cfg;
	bool hooked = false;
	char stage[PATH_MAX], path[PATH_MAX], final[PATH_MAX], name[NAME_MAX];
	const char *pinned = NULL;	/* the directory to remove on failure */
	const char *iface = p->iface, *commit = RL_PIN_LINK;
	int link_fd = -1, own, ret;

	memset(res, 0, sizeof(*res));
	stage_name(name, sizeof(name), iface, (int)getpid());
	rl_pin_path(stage, sizeof(stage), name, NULL);
	if (mkdir(stage, 0700)) {
		ret = -errno;
		snprintf(err, errlen, "cannot create %s: %s", stage, strerror(-ret));
		return ret;
	}
	pinned = name;
	for (int i = 0; i < RL_NR_MAPS; i++) {
		rl_pin_path(path, sizeof(path), name, rl_map_defs[i].name);
		if (bpf_obj_pin(m->fd[i], path)) {
			ret = -errno;
			snprintf(err, errlen, "cannot pin %s: %s", path, strerror(-ret));
			goto unpin;
		}
	}
	/* before any filter runs it: a pin names it while one does */
	rl_pin_path(path, sizeof(path), name, RL_PIN_EGRESS);
	if (bpf_obj_pin(p->egress_fd, path)) {
		ret = -errno;
		snprintf(err, errlen, "cannot pin %s: %s", path, strerror(-ret));
		goto unpin;
	}
	ret = rl_config_read(m, &cfg);
	if (ret) {
		snprintf(err, errlen, "cannot read the config map: %s",
			 strerror(-ret));
		goto unpin;
	}
	own = rl_egress_qdiscs(ifindex, cfg.set.replies_via, err, errlen);
	if (own < 0) {
		ret = own;
		goto unpin;
	}
	/* from here what fails removes the filters and the qdiscs it made */
	hooked = true;
	ret = record_ifindex(m, ifindex, (__u32)own, &cfg);
	if (ret) {
		snprintf(err, errlen, "cannot write the config map: %s",
			 strerror(-ret));
		goto unpin;
	}
	/* answers are seen before the first packet is judged */
	ret = rl_egress_attach(p->egress_fd, ifindex, cfg.set.replies_via, err, errlen);
	if (ret)
		goto unpin;
	link_fd = attach_prog(p, name, ifindex, res, &commit, err, errlen);
	if (link_fd < 0) {
		ret = link_fd;
		goto unpin;
	}
	ret = record_mode(m, ifindex, res->mode);
	if (ret) {
		snprintf(err, errlen, "cannot write the config map: %s",
			 strerror(-ret));
		goto unpin;
	}
	rl_pin_path(final, sizeof(final), iface, NULL);
	if (rename(stage, final)) {
		ret = -errno;
		snprintf(err, errlen, "cannot move %s to %s: %s", stage, final,
			 strerror(-ret));
		goto unpin;
	}
	pinned = iface;
	rl_pin_path(path, sizeof(path), iface, commit);
	if (bpf_obj_pin(link_fd, path)) {
		ret = -errno;
		snprintf(err, errlen, "cannot pin %s: %s", path, strerror(-ret));
		goto unpin;
	}
	close(link_fd);		/* the pin keeps it attached */
	return 0;
unpin:
	/* what a failed removal leaves, status reports and detach removes */
	if (link_fd >= 0 && strcmp(commit, RL_PIN_LINK))
		rl_xdp_multi_release(pinned);
	if (hooked)
		rl_egress_detach(ifindex, cfg.set.replies_via,
				 cfg.set.flags & RL_F_OWN_CLSACT_ALL);
	rl_pin_dir_remove(pinned);
	if (link_fd >= 0)
		close(link_fd);
	return ret;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

int rl_attach_stale_stages(const char *iface, bool locked,
			   char names[][NAME_MAX + 1], int max)
{
	DIR *d = opendir(rl_pin_root());
	char owner[NAME_MAX + 1];
	struct dirent *e;
	int n = 0, pid;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) && n < max) {
		if (!rl_pin_stage_parse(e->d_name, owner, &pid) ||
		    (iface && strcmp(owner, iface)))
			continue;
		if (rl_pin_stage_live(pid, locked))
			continue;	/* its attach may still run */
		snprintf(names[n++], NAME_MAX + 1, "%s", e->d_name);
	}
	closedir(d);
	qsort(names, n, NAME_MAX + 1, cmp_names);
	return n;
}

int rl_attach_repair(const char *iface)
{
	char names[RL_MAX_IFACES][NAME_MAX + 1];
	int n, ret, removed = 0, err = 0;

	do {
		n = rl_attach_stale_stages(iface, true, names, RL_MAX_IFACES);
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			/* its program, when libxdp attached it before the
			 * death, and its egress hook */
			ret = rl_xdp_multi_release(names[i]);
			if (ret >= 0)
				ret = rl_attach_unhook(names[i]);
			if (!ret)
				ret = rl_pin_dir_remove(names[i]);
			if (ret && !err)
				err = ret;	/* still try the others */
			else if (!ret)
				removed++;
		}
	} while (n == RL_MAX_IFACES && !err);
	return err ? err : removed;
}

