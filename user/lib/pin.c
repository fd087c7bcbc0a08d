// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Pins under /sys/fs/bpf/xdp-ratelimit/IFACE/ (xdp-ratelimit(8), PINS):
 * their paths, bpffs, the lock, and the directories of attached
 * interfaces.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include "lib/pin.h"
#include "lib/values.h"

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

_Static_assert(IF_NAMESIZE == 16, "the message below says 15 characters");

int rl_iface_name_check(const char *name, char *err, size_t errlen)
{
	const char *why = NULL;

	if (!*name)
		why = "it is empty";
	else if (strlen(name) >= IF_NAMESIZE)
		why = "it is longer than 15 characters";	/* IF_NAMESIZE - 1 */
	else if (!strcmp(name, ".") || !strcmp(name, ".."))
		why = "'.' and '..' are reserved";
	for (const unsigned char *c = (const unsigned char *)name; !why && *c; c++)
		if (*c == '/')
			why = "it contains '/'";
		else if (*c == ':')
			why = "it contains ':'";
		else if (isspace(*c) || *c == 0xa0)	/* the kernel's isspace */
			why = "it contains whitespace";
	if (!why)
		return 0;
	snprintf(err, errlen,
		 "'%s' is not an interface name (%s): name it as 'ip link' shows it",
		 name, why);
	return -EINVAL;
}

void rl_pin_dir_iface(const char *dir, char *iface, size_t len)
{
	dir_name(iface, len, dir, ':', '.');
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
		int e = -errno;

		snprintf(err, errlen, "cannot lock %s: %s", RL_PIN_ROOT,
			 strerror(-e));
		if (fd >= 0)
			close(fd);
		return e;
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
		rl_pin_dir_iface(e->d_name, names[n++], IF_NAMESIZE);
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

bool rl_pin_is(int fd, const char *field)
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

int rl_map_pin_open(const char *path, __u32 type, __u32 key_size,
		    __u32 value_size, __u32 *max_entries)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	int fd = bpf_obj_get(path);

	if (fd < 0)
		return -errno;
	if (!rl_pin_is(fd, "map_type:") ||
	    bpf_obj_get_info_by_fd(fd, &info, &info_len) ||
	    info.type != type || info.key_size != key_size ||
	    info.value_size != value_size) {
		close(fd);
		return -EPROTO;
	}
	if (max_entries)
		*max_entries = info.max_entries;
	return fd;
}

__u32 rl_map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ? info.id : 0;
}

__u32 rl_pinned_map_id(const char *name, const char *pin, int *err)
{
	char path[PATH_MAX];
	__u32 id;
	int fd, e;

	rl_pin_path(path, sizeof(path), name, pin);
	fd = bpf_obj_get(path);
	e = fd < 0 && errno != ENOENT ? -errno : 0;
	id = rl_map_id(fd);
	if (fd >= 0 && !id)
		e = -errno;
	if (fd >= 0)
		close(fd);
	if (err)
		*err = e;
	return id;
}

bool rl_prog_uses_map(int prog_fd, __u32 map_id)
{
	struct bpf_prog_info info = {};
	__u32 ids[64] = { 0 }, len = sizeof(info);

	info.nr_map_ids = 64;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return false;
	for (__u32 i = 0; i < info.nr_map_ids && i < 64; i++)
		if (ids[i] == map_id)
			return true;
	return false;
}

bool rl_pin_stage_parse(const char *dir, char iface[NAME_MAX + 1], int *pid)
{
	const char *tag = strstr(dir, RL_STAGE_TAG);
	char owner[NAME_MAX + 1];

	if (!tag)
		return false;
	snprintf(owner, sizeof(owner), "%.*s", (int)(tag - dir), dir);
	rl_pin_dir_iface(owner, iface, NAME_MAX + 1);
	*pid = atoi(tag + strlen(RL_STAGE_TAG));
	return true;
}
