// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Pins under /sys/fs/bpf/xdp-ratelimit/IFACE/ (SPEC "Pins"). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include "cli.h"
#include "pin.h"
#include "settings.h"
#include "units.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

/*
 * bpffs refuses names with a dot, which interface names may have
 * (eth0.100): the directory uses ':' instead, which interface names can
 * never contain, so the mapping is one to one.
 */
static void dir_name(char *out, size_t len, const char *iface, char from,
		     char to)
{
	size_t i;

	for (i = 0; iface[i] && i + 1 < len; i++)
		out[i] = iface[i] == from ? to : iface[i];
	out[i] = '\0';
}

void rl_pin_path(char *buf, size_t len, const char *iface, const char *name)
{
	char dir[NAME_MAX + 1];

	dir_name(dir, sizeof(dir), iface, '.', ':');
	if (name)
		snprintf(buf, len, "%s/%s/%s", RL_PIN_ROOT, dir, name);
	else
		snprintf(buf, len, "%s/%s", RL_PIN_ROOT, dir);
}

void rl_pin_stage_name(char *buf, size_t len, const char *iface, int pid)
{
	snprintf(buf, len, "%s" RL_STAGE_TAG "%d", iface, pid);
}

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == BPF_FS_MAGIC;
}

/*
 * `ip netns exec NAME` unshares the mount namespace and mounts a sysfs
 * named NAME on /sys: pins made there live in a bpffs that disappears
 * with the command, and the program with them. Compare with init's mount
 * namespace when we may read it; else look for that sysfs.
 */
static bool sysfs_from_ip_netns(void)
{
	char line[512], src[256], path[PATH_MAX];
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - sysfs ");

		if (!strstr(line, " /sys ") || !sep ||
		    sscanf(sep, " - sysfs %255s", src) != 1 || !strcmp(src, "sysfs"))
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", src);
		found = access(path, F_OK) == 0;
	}
	fclose(f);
	return found;
}

bool rl_private_mount_ns(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/mnt", &self) == 0 &&
	    stat("/proc/1/ns/mnt", &init) == 0)
		return self.st_ino != init.st_ino || self.st_dev != init.st_dev;
	return sysfs_from_ip_netns();
}

int rl_pins_prepare(char *err, size_t errlen)
{
	if (rl_private_mount_ns()) {
		snprintf(err, errlen,
			 "this command runs in a private mount namespace (as 'ip netns exec' gives), where pins vanish when it exits and the program would detach: run it as 'nsenter --net=/run/netns/NAME xdp-ratelimit ...' instead");
		return -EPERM;
	}
	if (!is_bpffs(RL_BPFFS)) {
		if (mount("bpf", RL_BPFFS, "bpf", 0, "mode=0700")) {
			int e = errno;

			snprintf(err, errlen,
				 "no bpffs at %s and mounting one failed (%s): mount it with 'mount -t bpf bpf %s'",
				 RL_BPFFS, strerror(e), RL_BPFFS);
			return -e;
		}
	}
	if (mkdir(RL_PIN_ROOT, 0700) && errno != EEXIST) {
		int e = errno;

		snprintf(err, errlen, "cannot create %s: %s", RL_PIN_ROOT,
			 strerror(e));
		return -e;
	}
	return 0;
}

int rl_lock(char *err, size_t errlen)
{
	int fd = open(RL_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || flock(fd, LOCK_EX)) {
		snprintf(err, errlen, "cannot lock %s: %s", RL_PIN_ROOT,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

bool rl_change_running(void)
{
	int fd = open(RL_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool busy;

	if (fd < 0)
		return false;
	busy = flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);	/* drops the flock if we took it */
	return busy;
}

void rl_unlock(int fd)
{
	if (fd >= 0)
		close(fd);	/* drops the flock */
}

int rl_pin_dir_remove(const char *name)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *e;
	int ret = 0;
	DIR *d;

	rl_pin_path(dir, sizeof(dir), name, NULL);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		rl_pin_path(path, sizeof(path), name, e->d_name);
		if (unlink(path) && !ret)
			ret = -errno;
	}
	closedir(d);
	if (rmdir(dir) && !ret)
		ret = -errno;
	return ret;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

bool rl_pin_stage_parse(const char *dir, char iface[NAME_MAX + 1], int *pid)
{
	const char *tag = strstr(dir, RL_STAGE_TAG);
	char owner[NAME_MAX + 1];

	if (!tag)
		return false;
	snprintf(owner, sizeof(owner), "%.*s", (int)(tag - dir), dir);
	dir_name(iface, NAME_MAX + 1, owner, ':', '.');
	*pid = atoi(tag + strlen(RL_STAGE_TAG));
	return true;
}

int rl_pin_stale_stages(const char *iface, char names[][NAME_MAX + 1], int max)
{
	DIR *d = opendir(RL_PIN_ROOT);
	char owner[NAME_MAX + 1];
	struct dirent *e;
	int n = 0, pid;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) && n < max) {
		if (!rl_pin_stage_parse(e->d_name, owner, &pid) ||
		    (iface && strcmp(owner, iface)))
			continue;
		if (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM))
			continue;	/* its attach is still running */
		snprintf(names[n++], NAME_MAX + 1, "%s", e->d_name);
	}
	closedir(d);
	qsort(names, n, NAME_MAX + 1, cmp_names);
	return n;
}

int rl_pin_dirs_reap(const char *iface)
{
	char names[RL_MAX_IFACES][NAME_MAX + 1];
	int n, ret, removed = 0, err = 0;

	do {
		n = rl_pin_stale_stages(iface, names, RL_MAX_IFACES);
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			ret = rl_pin_dir_remove(names[i]);
			if (ret && !err)
				err = ret;	/* still try the others */
			else if (!ret)
				removed++;
		}
	} while (n == RL_MAX_IFACES && !err);
	return err ? err : removed;
}

int rl_ifaces_list(char names[][IF_NAMESIZE], int max)
{
	DIR *d = opendir(RL_PIN_ROOT);
	struct dirent *e;
	int n = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) && n < max) {
		/* names with a space are attach's staging directories */
		if (e->d_name[0] == '.' || strchr(e->d_name, ' ') ||
		    e->d_type != DT_DIR || strlen(e->d_name) >= IF_NAMESIZE)
			continue;
		dir_name(names[n++], IF_NAMESIZE, e->d_name, ':', '.');
	}
	closedir(d);
	qsort(names, n, IF_NAMESIZE, cmp_names);
	return n;
}

int rl_iface_resolve(const char *iface, char out[IF_NAMESIZE], char *err,
		     size_t errlen)
{
	char names[RL_MAX_IFACES][IF_NAMESIZE];
	char path[PATH_MAX];
	struct stat st;
	int n;

	if (iface) {
		if (rl_iface_name_check(iface, err, errlen))
			return -EINVAL;
		rl_pin_path(path, sizeof(path), iface, NULL);
		if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
			if (rl_private_mount_ns())
				snprintf(err, errlen,
					 "%s is not attached in this private mount namespace, which hides the pins: run as 'nsenter --net=/run/netns/NAME xdp-ratelimit ...' instead of 'ip netns exec'",
					 iface);
			else
				snprintf(err, errlen,
					 "%s is not attached: run 'xdp-ratelimit attach %s' first (see 'xdp-ratelimit status')",
					 iface, iface);
			return -ENOENT;
		}
		strcpy(out, iface);
		return 0;
	}
	n = rl_ifaces_list(names, RL_MAX_IFACES);
	if (n < 0) {
		snprintf(err, errlen, "cannot read %s: %s", RL_PIN_ROOT,
			 strerror(-n));
		return n;
	}
	if (n == 0) {
		snprintf(err, errlen, rl_private_mount_ns() ?
			 "no interface is attached in this private mount namespace, which hides the pins: run as 'nsenter --net=/run/netns/NAME xdp-ratelimit ...' instead of 'ip netns exec'" :
			 "no interface is attached: run 'xdp-ratelimit attach IFACE' first");
		return -ENOENT;
	}
	if (n > 1) {
		snprintf(err, errlen,
			 "%d interfaces are attached (%s, %s%s): name one with --iface",
			 n, names[0], names[1], n > 2 ? ", ..." : "");
		return -EINVAL;
	}
	strcpy(out, names[0]);
	return 0;
}

/* What each pinned map must be before the CLI reads or writes it. */
struct map_shape {
	__u32 type;
	__u32 key_size;
	__u32 value_size;
};

static const struct map_shape shapes[RL_NR_MAPS] = {
	/* rl_map_names order */
	{ BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct rl_config) },
	{ BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(struct rl_counters) },
	{ BPF_MAP_TYPE_LRU_PERCPU_HASH, sizeof(struct rl_key), sizeof(struct rl_source) },
	{ BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct rl_rule) },
	{ BPF_MAP_TYPE_LPM_TRIE, sizeof(struct rl_lpm_v4), sizeof(__u32) },
	{ BPF_MAP_TYPE_LPM_TRIE, sizeof(struct rl_lpm_v6), sizeof(__u32) },
	{ BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(struct rl_state) },
	{ BPF_MAP_TYPE_LRU_HASH, sizeof(struct rl_key), sizeof(struct rl_refused) },
	{ BPF_MAP_TYPE_LRU_HASH, sizeof(struct rl_key), sizeof(struct rl_ban) },
};

/* A pin can hold a map, program or link, and bpf_obj_get_info_by_fd
 * cannot tell them apart: only a map's fdinfo has map_type, only a link's
 * link_type. */
static bool fd_is(int fd, const char *field)
{
	char path[64], line[128];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, field, strlen(field));
	fclose(f);
	return found;
}

static int open_map(const char *iface, int i, int *fd, __u32 *max_entries,
		    char *err, size_t errlen)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	char path[PATH_MAX];

	rl_pin_path(path, sizeof(path), iface, rl_map_names[i]);
	*fd = bpf_obj_get(path);
	if (*fd < 0) {
		int e = errno;

		snprintf(err, errlen,
			 "cannot open %s (%s): the pins of %s are incomplete; check 'xdp-ratelimit status', then 'xdp-ratelimit detach %s' and attach again",
			 path, strerror(e), iface, iface);
		return -e;
	}
	if (!fd_is(*fd, "map_type:") ||
	    bpf_obj_get_info_by_fd(*fd, &info, &info_len) ||
	    info.type != shapes[i].type ||
	    info.key_size != shapes[i].key_size ||
	    info.value_size != shapes[i].value_size) {
		snprintf(err, errlen,
			 "%s is not a map this version of xdp-ratelimit made (wrong type or layout): refusing to use it; 'xdp-ratelimit detach %s' removes it",
			 path, iface);
		return -EPROTO;
	}
	if (max_entries)
		*max_entries = info.max_entries;
	return 0;
}

/* Map ids the program behind IFACE's link uses; 0 when there is no
 * usable link (status reports that), else how many (or -errno). */
static int linked_map_ids(const char *iface, __u32 *ids, __u32 max)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), prog_id = 0;
	int fd, ret;

	if (rl_link_ifindex(iface, &prog_id) < 0 || !prog_id)
		return 0;
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return -errno;
	info.nr_map_ids = max;
	info.map_ids = (__u64)(unsigned long)ids;
	ret = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno :
	      (int)(info.nr_map_ids < max ? info.nr_map_ids : max);
	close(fd);
	return ret;
}

/*
 * Every pinned map must be one the linked program uses: a map put under
 * the pin path by hand, even of the right shape, is never written to.
 */
static int maps_of_link(const char *iface, struct rl_maps *m, char *err,
			size_t errlen)
{
	__u32 ids[32] = { 0 };	/* valgrind cannot see the kernel fill it */
	int n = linked_map_ids(iface, ids, 32);

	if (n < 0) {
		snprintf(err, errlen, "cannot read the program attached to %s: %s",
			 iface, strerror(-n));
		return n;
	}
	for (int i = 0; n && i < RL_NR_MAPS; i++) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		bool found = false;

		if (bpf_obj_get_info_by_fd(*rl_maps_fd(m, i), &info, &len))
			return -errno;
		for (int k = 0; k < n && !found; k++)
			found = ids[k] == info.id;
		if (!found) {
			snprintf(err, errlen,
				 "the pinned map '%s' of %s is not one the attached program uses (replaced by hand?): refusing to use it; 'xdp-ratelimit detach %s' and attach again",
				 rl_map_names[i], iface, iface);
			return -EPROTO;
		}
	}
	return 0;
}

/* Settings read back from a pin: what attach could have written. */
static bool settings_sane(const struct rl_settings *s)
{
	struct rl_attach_req req = {
		.window_ns = s->window_ns, .nbuckets = s->nbuckets,
		.v6_prefix = s->v6_prefix, .max_sources = s->max_sources,
		.flags = s->flags,
	};
	struct rl_settings again;
	char err[RL_ERR_LEN];

	return rl_settings_build(&again, &req, rl_ncpus(), err, sizeof(err)) == 0 &&
	       again.bucket_ns == s->bucket_ns && s->ncpus == (__u32)rl_ncpus();
}

/*
 * The layout version in IFACE's config pin, read before its shape is
 * checked: another layout's config may have another size, and its user
 * must hear "detach and attach again", not "not a map we made". Relies on
 * `layout` keeping its offset in struct rl_config across versions. 0 when
 * the pin cannot tell (open_map then says what is wrong).
 */
static __u32 pinned_layout(const char *iface)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info), zero = 0, layout = 0;
	size_t off = offsetof(struct rl_config, layout);
	char path[PATH_MAX];
	void *val;
	int fd;

	rl_pin_path(path, sizeof(path), iface, RL_MAP_CONFIG);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (fd_is(fd, "map_type:") && !bpf_obj_get_info_by_fd(fd, &info, &info_len) &&
	    info.type == BPF_MAP_TYPE_ARRAY && info.key_size == sizeof(__u32) &&
	    info.value_size >= off + sizeof(layout) && info.value_size <= 4096) {
		val = calloc(1, info.value_size);
		if (val && !bpf_map_lookup_elem(fd, &zero, val))
			memcpy(&layout, (char *)val + off, sizeof(layout));
		free(val);
	}
	close(fd);
	return layout;
}

int rl_iface_open(const char *name, struct rl_iface *ifc, char *err,
		  size_t errlen)
{
	__u32 layout = pinned_layout(name);

	int ret;

	memset(ifc, 0, sizeof(*ifc));
	rl_maps_init(&ifc->m);
	snprintf(ifc->name, sizeof(ifc->name), "%s", name);
	if (layout && layout != RL_LAYOUT_VERSION) {
		snprintf(err, errlen,
			 "%s was attached by a different version of xdp-ratelimit (layout %u, this one reads %u): detach and attach it again with this version",
			 name, layout, RL_LAYOUT_VERSION);
		return -EPROTO;
	}
	/* config first: another layout version may pin other maps */
	ret = open_map(name, 0, &ifc->m.config, NULL, err, errlen);
	if (ret)
		goto fail;
	ret = rl_config_read(&ifc->m, &ifc->cfg);
	if (ret) {
		snprintf(err, errlen, "cannot read the config of %s: %s", name,
			 strerror(-ret));
		goto fail;
	}
	if (ifc->cfg.layout != RL_LAYOUT_VERSION) {
		snprintf(err, errlen,
			 "%s was attached by a different version of xdp-ratelimit (layout %u, this one reads %u): detach and attach it again with this version",
			 name, ifc->cfg.layout, RL_LAYOUT_VERSION);
		ret = -EPROTO;
		goto fail;
	}
	for (int i = 1; i < RL_NR_MAPS; i++) {
		ret = open_map(name, i, rl_maps_fd(&ifc->m, i),
			       i == 2 ? &ifc->sources_max_entries : NULL,
			       err, errlen);
		if (ret)
			goto fail;
	}
	ret = maps_of_link(name, &ifc->m, err, errlen);
	if (ret)
		goto fail;
	if (!settings_sane(&ifc->cfg.set)) {
		snprintf(err, errlen,
			 "the config map of %s holds settings out of range (changed by hand?): refusing to use it; 'xdp-ratelimit detach %s' and attach again",
			 name, name);
		ret = -EPROTO;
		goto fail;
	}
	return 0;
fail:
	rl_maps_close(&ifc->m);
	return ret;
}

void rl_iface_close(struct rl_iface *ifc)
{
	rl_maps_close(&ifc->m);
}

int rl_link_ifindex(const char *name, __u32 *prog_id)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, ret = 0;

	rl_pin_path(path, sizeof(path), name, RL_PIN_LINK);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (!fd_is(fd, "link_type:"))
		ret = -EPROTO;
	else if (bpf_obj_get_info_by_fd(fd, &info, &len))
		ret = -errno;
	else if (info.type != BPF_LINK_TYPE_XDP)
		ret = -EPROTO;
	else
		ret = (int)info.xdp.ifindex;
	if (prog_id)
		*prog_id = info.prog_id;
	close(fd);
	return ret;
}
