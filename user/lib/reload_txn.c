// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The crash-safe protocol of a reload onto new maps (reload_txn.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/fs.h>
#include <bpf/bpf.h>
#include "lib/egress.h"
#include "lib/iface.h"
#include "lib/pin.h"
#include "lib/reload_txn.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE	(1 << 1)
#endif

/* The egress hook's pins of IFACE, as they are (reload's finish replaces
 * them): the filters run those programs until then, whichever directory
 * is IFACE's. */
static int stage_egress(const char *iface, const char *stage)
{
	static const char *const names[] = { RL_PIN_EGRESS, RL_PIN_EGRESS_NEXT };
	char path[PATH_MAX];
	int fd, ret = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !ret; i++) {
		rl_pin_path(path, sizeof(path), iface, names[i]);
		fd = bpf_obj_get(path);
		if (fd < 0) {
			ret = errno == ENOENT ? 0 : -errno;
			continue;
		}
		rl_pin_path(path, sizeof(path), stage, names[i]);
		ret = bpf_obj_pin(fd, path) ? -errno : 0;
		close(fd);
	}
	return ret;
}

int rl_reload_stage(const char *iface, const struct rl_maps *m,
		    const struct rl_reload_pin *att, int natt,
		    char stage[NAME_MAX + 1], char *err, size_t errlen)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int ret;

	snprintf(stage, NAME_MAX + 1, "%s" RL_RELOAD_TAG "%d", iface, (int)getpid());
	rl_pin_path(dir, sizeof(dir), stage, NULL);
	if (mkdir(dir, 0700)) {
		ret = -errno;
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(-ret));
		return ret;
	}
	ret = stage_egress(iface, stage);
	if (ret) {
		snprintf(err, errlen, "cannot pin the egress hook's program in %s: %s",
			 dir, strerror(-ret));
		rl_pin_dir_remove(stage);
		return ret;
	}
	for (int i = 0; i < RL_NR_MAPS + natt; i++) {
		/* the attachment last: a staging directory with it is complete */
		const char *name = i < RL_NR_MAPS ? rl_map_defs[i].name :
				   att[i - RL_NR_MAPS].name;

		rl_pin_path(path, sizeof(path), stage, name);
		if (bpf_obj_pin(i < RL_NR_MAPS ? m->fd[i] : att[i - RL_NR_MAPS].fd, path)) {
			ret = -errno;
			snprintf(err, errlen, "cannot pin %s: %s", path, strerror(-ret));
			rl_pin_dir_remove(stage);
			return ret;
		}
	}
	return 0;
}

static int exchange(const char *a, const char *b)
{
	char pa[PATH_MAX], pb[PATH_MAX];

	rl_pin_path(pa, sizeof(pa), a, NULL);
	rl_pin_path(pb, sizeof(pb), b, NULL);
	return syscall(SYS_renameat2, AT_FDCWD, pa, AT_FDCWD, pb, RENAME_EXCHANGE) ?
	       -errno : 0;
}

int rl_reload_swap(const char *iface, const char *stage, char *err,
		   size_t errlen)
{
	int ret = exchange(stage, iface);

	if (ret) {
		snprintf(err, errlen, "cannot exchange the pin directories %s and %s: %s",
			 stage, iface, strerror(-ret));
		return ret;
	}
	ret = rl_pin_dir_remove(stage);	/* the old maps now */
	if (ret)
		snprintf(err, errlen, "cannot unpin the old maps in %s/%s: %s",
			 rl_pin_root(), stage, strerror(-ret));
	return ret;
}

/* Does the program IFACE's link runs (under libxdp's dispatcher: the
 * program in its slot) use the config map pinned in `stage`? */
static bool link_uses_stage(const char *iface, const char *stage)
{
	__u32 prog_id = 0, map_id;
	bool found;
	int fd;

	if (rl_link_ifindex(iface, &prog_id) < 0 || !prog_id)
		return false;
	map_id = rl_iface_config_id(stage);
	fd = map_id ? bpf_prog_get_fd_by_id(prog_id) : -1;
	if (fd < 0)
		return false;
	found = rl_prog_uses_map(fd, map_id);
	close(fd);
	return found;
}

/* The pids of the staging directories of dead reloads of `iface` (all,
 * when the caller holds the lock: rl_pin_stage_live): how many (at most
 * max), or -errno. */
static int stale_pids(const char *iface, bool locked, int *pids, int max)
{
	char prefix[NAME_MAX + 1];
	struct dirent *e;
	size_t plen;
	int n = 0;
	DIR *d;

	/* directory names say ':' for '.' (pin.c) */
	snprintf(prefix, sizeof(prefix), "%s" RL_RELOAD_TAG, iface);
	for (char *c = prefix; *c; c++)
		if (*c == '.')
			*c = ':';
	plen = strlen(prefix);
	d = opendir(rl_pin_root());
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) && n < max) {
		int pid;

		if (strncmp(e->d_name, prefix, plen))
			continue;
		pid = atoi(e->d_name + plen);
		if (rl_pin_stage_live(pid, locked))
			continue;	/* its reload may still run */
		pids[n++] = pid;
	}
	closedir(d);
	return n;
}

bool rl_reload_stale(const char *iface)
{
	int pid;

	return stale_pids(iface, false, &pid, 1) > 0;
}

int rl_reload_repair(const char *iface)
{
	int removed = 0, err = 0, ret, pids[RL_MAX_IFACES];
	int n = stale_pids(iface, true, pids, RL_MAX_IFACES);	/* listed first: the repair renames */
	char name[NAME_MAX + 1];

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s" RL_RELOAD_TAG "%d", iface, pids[i]);
		/* committed, not exchanged: forward */
		ret = link_uses_stage(iface, name) ? exchange(name, iface) : 0;
		if (!ret)
			ret = rl_pin_dir_remove(name);
		if (ret && !err)
			err = ret;
		else if (!ret)
			removed++;
	}
	return err ? err : removed;
}
