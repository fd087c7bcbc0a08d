// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Pins under /sys/fs/bpf/xdp-ratelimit/NETNS/IFACE/ (xdp-ratelimit(8),
 * PINS): their paths, bpffs, the lock, and the directories of attached
 * interfaces. An attachment belongs to its network namespace: each
 * namespace has a directory of its own (rl_pin_root), named by the
 * namespace's inode (what lsns and /proc/PID/ns/net show) and its cookie
 * (never reused while the machine runs, so a dead namespace's leftovers
 * are never taken for a later namespace that got the same inode).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/socket.h>
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
		snprintf(buf, len, "%s/%s/%s", rl_pin_root(), dir, name);
	else
		snprintf(buf, len, "%s/%s", rl_pin_root(), dir);
}

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

int rl_netns_self(struct rl_netns *ns)
{
	socklen_t len = sizeof(ns->cookie);
	struct stat st;
	int fd;

	memset(ns, 0, sizeof(*ns));
	if (stat("/proc/self/ns/net", &st))
		return -errno;
	ns->inode = st.st_ino;
	/* 5.14+: a kernel without it names the namespace by its inode only */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &ns->cookie, &len))
			ns->cookie = 0;
		close(fd);
	}
	return 0;
}

void rl_netns_dir(const struct rl_netns *ns, char *buf, size_t len)
{
	snprintf(buf, len, RL_NETNS_DIR_PREFIX "%llu:%llu",
		 (unsigned long long)ns->inode, (unsigned long long)ns->cookie);
}

bool rl_netns_parse(const char *dir, struct rl_netns *ns)
{
	unsigned long long ino, cookie;
	int end = 0;

	if (sscanf(dir, RL_NETNS_DIR_PREFIX "%llu:%llu%n", &ino, &cookie, &end) != 2 ||
	    dir[end])
		return false;
	ns->inode = ino;
	ns->cookie = cookie;
	return true;
}

const char *rl_pin_root(void)
{
	static char root[PATH_MAX];
	char dir[NAME_MAX + 1];
	struct rl_netns ns;

	if (!root[0]) {
		if (rl_netns_self(&ns))
			memset(&ns, 0, sizeof(ns));	/* no procfs: one shared directory */
		rl_netns_dir(&ns, dir, sizeof(dir));
		snprintf(root, sizeof(root), "%s/%s", RL_PIN_TOP, dir);
	}
	return root;
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
	    stat("/proc/1/ns/mnt", &init) == 0) {
		if (self.st_ino == init.st_ino && self.st_dev == init.st_dev)
			return false;
		/* a mount namespace of its own that still sees the machine's
		 * bpffs (a systemd unit's ProtectSystem=, PrivateTmp=) pins
		 * where everyone else reads */
		return !(is_bpffs(RL_BPFFS) &&
			 stat(RL_BPFFS, &self) == 0 &&
			 stat("/proc/1/root" RL_BPFFS, &init) == 0 &&
			 self.st_dev == init.st_dev);
	}
	return sysfs_from_ip_netns();
}

static int dir_trusted(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode) && st.st_uid == 0 && !(st.st_mode & 077))
		return 0;
	snprintf(err, errlen,
		 "%s is not a directory of root's with mode 0700 (owner uid %u, mode %04o): another user could have planted pins there, so they are not trusted. Check what it holds; if its pins are root's, 'chown -R root:root %s && chmod 0700 %s', else 'rm -r %s'; and mount bpffs with 'mount -t bpf -o mode=0700 bpf " RL_BPFFS "'",
		 path, (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777),
		 path, path, path);
	return -EPERM;
}

int rl_pins_trusted(const char *iface, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int ret = dir_trusted(RL_PIN_TOP, err, errlen);

	if (!ret)
		ret = dir_trusted(rl_pin_root(), err, errlen);
	if (ret || !iface)
		return ret;
	rl_pin_path(path, sizeof(path), iface, NULL);
	return dir_trusted(path, err, errlen);
}

int rl_pins_prepare(char *err, size_t errlen)
{
	if (rl_private_mount_ns()) {
		snprintf(err, errlen, "%s", RL_PRIVATE_MOUNT_NS_ERR);
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
	if ((mkdir(RL_PIN_TOP, 0700) && errno != EEXIST) ||
	    (mkdir(rl_pin_root(), 0700) && errno != EEXIST)) {
		int e = errno;

		snprintf(err, errlen, "cannot create %s: %s", rl_pin_root(),
			 strerror(e));
		return -e;
	}
	return rl_pins_trusted(NULL, err, errlen);
}

/*
 * The lock is an flock on the namespace's directory itself, and a
 * directory can go while it is locked: an rmdir by someone else (a
 * script's cleanup of every empty netns:* directory) would leave the
 * holder working in a removed directory ("cannot create ...: No such file
 * or directory") and let the next change lock a new one beside it. So the
 * holder marks the lock held with RL_LOCK_HELD, a directory inside, and
 * only then works: from then on the directory is not empty, and no rmdir
 * removes it until rl_unlock took the mark out. Made in the directory
 * locked (mkdirat on the fd), the mark also proves that directory is
 * still the one at the path: in a removed one it fails with ENOENT, and
 * the lock is taken again on the new directory. A mark a killed holder
 * left is taken over (EEXIST) by the next holder, which removes it.
 */
int rl_lock(char *err, size_t errlen)
{
	int fd, e = ENOENT;

	for (int tries = 0; tries < 8; tries++) {
		fd = open(rl_pin_root(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			e = errno;
			/* removed (empty) since it was made: make it again */
			if (e == ENOENT) {
				if (!mkdir(rl_pin_root(), 0700) || errno == EEXIST)
					continue;
				e = errno;
			}
			break;
		}
		if (flock(fd, LOCK_EX))
			e = errno;
		else if (!mkdirat(fd, RL_LOCK_HELD, 0700) || errno == EEXIST)
			return fd;
		else
			e = errno;
		close(fd);
		if (e != ENOENT)
			break;
		/* removed while we waited for it (the holder's rl_unlock,
		 * or someone's rmdir as it went free): a lock taken on it
		 * is no lock; take the new one */
	}
	snprintf(err, errlen, "cannot lock %s: %s", rl_pin_root(), strerror(e));
	return -e;
}

bool rl_change_running(void)
{
	int fd = open(rl_pin_root(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool busy;

	if (fd < 0)
		return false;
	busy = flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);	/* drops the flock if we took it */
	return busy;
}

void rl_unlock(int fd)
{
	if (fd < 0)
		return;
	/* Still under the lock, so nothing is being added: with the mark
	 * out, an empty directory means nothing is attached here (a last
	 * detach, or a command that found nothing and made it only to lock
	 * it, a failed attach's rollback). rmdir removes only an empty one,
	 * and only this namespace's; RL_PIN_TOP stays, since no lock covers
	 * the namespaces that share it. Should the path name another
	 * directory by now (ours removed once empty, a new one made), it is
	 * either marked held or not yet locked: rmdir fails on the first,
	 * and the second's rl_lock takes the lock again. */
	(void)unlinkat(fd, RL_LOCK_HELD, AT_REMOVEDIR);
	(void)rmdir(rl_pin_root());
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

/* The interface directories in `dir` (sorted): attached interfaces, or
 * with `legacy`, those of an earlier release's flat layout (RL_PIN_TOP/
 * IFACE, holding pins rather than namespaces). */
static int list_ifaces(const char *dir, bool legacy, char names[][IF_NAMESIZE],
		       int max)
{
	char path[PATH_MAX];
	DIR *d = opendir(dir);
	struct dirent *e;
	struct rl_netns ns;
	int n = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) && n < max) {
		/* names with a space are staging directories or the
		 * lock's mark (RL_LOCK_HELD): no interface's */
		if (e->d_name[0] == '.' || strchr(e->d_name, ' ') ||
		    e->d_type != DT_DIR || strlen(e->d_name) >= IF_NAMESIZE)
			continue;
		if (legacy) {
			snprintf(path, sizeof(path), "%s/%s/config", dir, e->d_name);
			if (rl_netns_parse(e->d_name, &ns) || access(path, F_OK))
				continue;
		}
		rl_pin_dir_iface(e->d_name, names[n++], IF_NAMESIZE);
	}
	closedir(d);
	qsort(names, n, IF_NAMESIZE, cmp_names);
	return n;
}

int rl_ifaces_list(char names[][IF_NAMESIZE], int max)
{
	return list_ifaces(rl_pin_root(), false, names, max);
}

static void legacy_dir(char *buf, size_t len, const char *iface)
{
	char dir[NAME_MAX + 1];

	dir_name(dir, sizeof(dir), iface, '.', ':');
	snprintf(buf, len, "%s/%s", RL_PIN_TOP, dir);
}

int rl_pins_legacy_move(const char *iface, bool back)
{
	char flat[PATH_MAX], here[PATH_MAX], cfg[PATH_MAX + 8];

	legacy_dir(flat, sizeof(flat), iface);
	rl_pin_path(here, sizeof(here), iface, NULL);
	if (back)
		return rename(here, flat) ? -errno : 1;
	snprintf(cfg, sizeof(cfg), "%s/config", flat);
	if (!access(here, F_OK) || access(cfg, F_OK))
		return 0;	/* this namespace's own, or none */
	return rename(flat, here) ? -errno : 1;
}

int rl_pins_legacy(char names[][IF_NAMESIZE], int max)
{
	return list_ifaces(RL_PIN_TOP, true, names, max);
}

int rl_link_pin_ifindex(const char *path, __u32 *prog_id)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int fd, ret;

	memset(&info, 0, sizeof(info));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (!rl_pin_is(fd, "link_type:"))
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

/* Does the XDP link pinned for `iface` in `dir` say its interface is
 * gone? The kernel detaches a link whose device goes (ifindex 0). */
static bool link_gone(const char *dir, const char *iface)
{
	char sub[NAME_MAX + 1], path[PATH_MAX];

	dir_name(sub, sizeof(sub), iface, '.', ':');
	return snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, RL_PIN_LINK) <
	       (int)sizeof(path) && rl_link_pin_ifindex(path, NULL) == 0;
}

int rl_netns_others(struct rl_netns_pins *out, int max)
{
	char path[PATH_MAX];
	struct dirent *e;
	struct rl_netns ns;
	int n = 0, k;
	DIR *d;

	d = opendir(RL_PIN_TOP);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) && n < max) {
		snprintf(path, sizeof(path), "%s/%s", RL_PIN_TOP, e->d_name);
		if (!rl_netns_parse(e->d_name, &ns) || !strcmp(path, rl_pin_root()))
			continue;
		k = list_ifaces(path, false, out[n].names, RL_MAX_IFACES);
		if (k <= 0)
			continue;	/* left empty by the last detach there */
		out[n].ns = ns;
		out[n].n = k;
		for (int i = 0; i < k; i++)
			out[n].gone[i] = link_gone(path, out[n].names[i]);
		n++;
	}
	closedir(d);
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
			legacy_dir(path, sizeof(path), iface);
			if (!stat(path, &st) && S_ISDIR(st.st_mode))
				snprintf(err, errlen,
					 "%s has the pins of an earlier release in %s: run 'xdp-ratelimit reload %s' in its network namespace to move them into the namespace's directory",
					 iface, path, iface);
			else
				snprintf(err, errlen,
					 "%s is not attached in this network namespace: run 'xdp-ratelimit attach %s' first (see 'xdp-ratelimit status')",
					 iface, iface);
			return -ENOENT;
		}
		strcpy(out, iface);
		return 0;
	}
	n = rl_ifaces_list(names, RL_MAX_IFACES);
	if (n < 0) {
		snprintf(err, errlen, "cannot read %s: %s", rl_pin_root(),
			 strerror(-n));
		return n;
	}
	if (n == 0) {
		snprintf(err, errlen,
			 "no interface is attached in this network namespace: run 'xdp-ratelimit attach IFACE' first");
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
	return rl_map_pin_open_flags(path, 0, type, key_size, value_size,
				     max_entries);
}

int rl_map_pin_open_flags(const char *path, __u32 file_flags, __u32 type,
			  __u32 key_size, __u32 value_size, __u32 *max_entries)
{
	LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = file_flags);
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	int fd = bpf_obj_get_opts(path, &opts);

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

bool rl_pin_stage_live(int pid, bool locked)
{
	if (locked || !rl_change_running())
		return false;
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}
