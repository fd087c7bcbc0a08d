/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Pins of attached interfaces (xdp-ratelimit(8), PINS):
 * /sys/fs/bpf/xdp-ratelimit/NETNS/IFACE/{link,config,counters,...}, one
 * NETNS directory per network namespace. Their paths
 * and names, mounting bpffs, refusing private mount namespaces, the lock
 * that serialises changes, and the list of attached interfaces. Opening
 * an interface's maps is iface.h; the attach protocol is attach_txn.h.
 */
#ifndef RL_PIN_H
#define RL_PIN_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include "ratelimit.h"

#define RL_PIN_TOP	RL_BPFFS "/" RL_PIN_SUBDIR
#define RL_MAX_IFACES	64
/* A namespace's directory under RL_PIN_TOP: "netns:INODE:COOKIE" (no
 * interface name has a ':'; a dotted one's directory has, but never this
 * prefix and two numbers). */
#define RL_NETNS_DIR_PREFIX	"netns:"

/* A network namespace: its inode (lsns, /proc/PID/ns/net) and its cookie
 * (SO_NETNS_COOKIE: unique while the machine runs; 0 if unknown). */
struct rl_netns {
	__u64 inode;
	__u64 cookie;
};

/* The caller's network namespace: 0 or -errno. */
int rl_netns_self(struct rl_netns *ns);
/* Its directory's name under RL_PIN_TOP, and back (false: not one). */
void rl_netns_dir(const struct rl_netns *ns, char *buf, size_t len);
bool rl_netns_parse(const char *dir, struct rl_netns *ns);

/* The caller's namespace's pin directory, RL_PIN_TOP/netns:INODE:COOKIE:
 * every pin and the lock of the commands run here are under it. */
const char *rl_pin_root(void);

/* Another namespace's attachments, as status shows them. */
struct rl_netns_pins {
	struct rl_netns ns;
	int n;
	char names[RL_MAX_IFACES][IF_NAMESIZE];
	/* its link says the interface is gone (deleted, or with its
	 * namespace): the pins only hold memory now. Under libxdp's
	 * dispatcher there is no link to ask: never set. */
	bool gone[RL_MAX_IFACES];
};

/* The namespaces other than the caller's with an attached interface;
 * count or -errno. */
int rl_netns_others(struct rl_netns_pins *out, int max);
/* Interfaces whose pins an earlier release left in its flat layout
 * (RL_PIN_TOP/IFACE): reload moves them into the namespace's directory. */
int rl_pins_legacy(char names[][IF_NAMESIZE], int max);
/* Move IFACE's pins of the flat layout into rl_pin_root() (back: out
 * again): 1 if moved, 0 if there were none, -errno. The caller checks that
 * the attachment is this namespace's (the pins say nothing of it). */
int rl_pins_legacy_move(const char *iface, bool back);

/*
 * Make pinning possible: refuse a private mount namespace (ip netns exec),
 * mount bpffs on /sys/fs/bpf when none is there, create rl_pin_root() (0700).
 * For commands that write; readers only look (rl_iface_resolve).
 */
int rl_pins_prepare(char *err, size_t errlen);

/*
 * Whether pins may be trusted: RL_PIN_TOP, rl_pin_root() and, when `iface` is
 * given,
 * its directory must be root's with no access for group or others (as
 * this CLI makes them), or else another user could have planted pins
 * there (a bpffs mounted without mode=0700 lets anyone create
 * directories). A directory that does not exist is fine. 0, or -EPERM
 * with what to do in err.
 */
int rl_pins_trusted(const char *iface, char *err, size_t errlen);

/* Exclusive lock over every change in the namespace (attach, detach,
 * quota set/del), on rl_pin_root(), which it creates when missing, marked
 * held by RL_LOCK_HELD inside it so that no rmdir of an empty directory
 * removes it while held (pin.c); released by rl_unlock or exit. Returns
 * an fd or -errno. */
int rl_lock(char *err, size_t errlen);
/* Are we in a mount namespace of our own whose /sys/fs/bpf is not the
 * machine's (ip netns exec mounts a sysfs of its own on /sys), so that
 * pins made here vanish with the command and pins made elsewhere are not
 * seen? A mount namespace that shares the machine's bpffs (a systemd
 * unit's ProtectSystem=) is not. */
bool rl_private_mount_ns(void);
#define RL_PRIVATE_MOUNT_NS_ERR \
	"this command runs in a private mount namespace (as 'ip netns exec' gives), whose /sys/fs/bpf is not the machine's: pins made here vanish when it exits, and those of attached interfaces are not seen; run it as 'nsenter --net=/run/netns/NAME xdp-ratelimit ...' instead"
/* Does some CLI hold that lock right now (a change in progress)? */
bool rl_change_running(void);
/* Release the lock (fd < 0: none): its mark out, then rl_pin_root() if
 * nothing is left in it: no command leaves the namespace an empty
 * directory. A lock taken on it meanwhile is taken again (rl_lock). */
void rl_unlock(int fd);

/*
 * Whether `name` can be an interface name, as the kernel's dev_valid_name
 * judges (1 to IF_NAMESIZE - 1 characters, not '.' or '..', no '/', ':' or
 * whitespace): 0, or -EINVAL with what is wrong in err. A name that passes
 * is a single path component under rl_pin_root() and maps to its own pins.
 */
int rl_iface_name_check(const char *name, char *err, size_t errlen);
/* Path of a pin: rl_pin_root()/IFACE/NAME (NAME NULL: the directory).
 * IFACE may also be the name of a staging directory (attach_txn.h). */
void rl_pin_path(char *buf, size_t len, const char *iface, const char *name);

/* The interface whose pins a directory under rl_pin_root() holds (the
 * directory says ':' for '.'). */
void rl_pin_dir_iface(const char *dir, char *iface, size_t len);

/* Unpin everything in rl_pin_root()/NAME and remove the directory (the
 * link pin going away detaches the program). 0 or -errno. */
int rl_pin_dir_remove(const char *name);

/* Names of the interfaces with a pin directory, sorted; count or -errno. */
int rl_ifaces_list(char names[][IF_NAMESIZE], int max);

/*
 * The interface a command works on: `iface` when given (it must be
 * attached), otherwise the only attached one. Fills `out`; on error, a
 * message that says what to do.
 */
int rl_iface_resolve(const char *iface, char out[IF_NAMESIZE], char *err,
		     size_t errlen);

/* The mark of a held lock in rl_pin_root() (rl_lock): a directory, named
 * with a space as no interface can be, never listed as one. */
#define RL_LOCK_HELD	"lock held"

/* Staging directories of attaches in progress ("IFACE attaching PID"). */
#define RL_STAGE_TAG	" attaching "

/* A staging directory's name "IFACE attaching PID" ('.' as ':') as its
 * interface and pid; false when it is no staging directory. */
bool rl_pin_stage_parse(const char *dir, char iface[NAME_MAX + 1], int *pid);
/* May the change whose staging directory names `pid` still run? Not when
 * the caller holds the lock (`locked`), nor when no change holds it: only
 * a change holding the lock makes one, and pins in it until it is done.
 * Only a reader that finds a change running goes by the pid, which is
 * the change's in its own PID namespace and may name another process
 * here (or none). */
bool rl_pin_stage_live(int pid, bool locked);

/* Whether the object fd refers to is of the kind whose fdinfo has `field`
 * ("map_type:", "link_type:"): a pin can hold a map, program or link, and
 * bpf_obj_get_info_by_fd cannot tell them apart. */
bool rl_pin_is(int fd, const char *field);

/* The XDP link pinned at `path`: the ifindex it is attached to (0 when
 * its interface went away: the kernel detaches the link), or -errno
 * (-EPROTO: the pin is no XDP link). prog_id: its program. */
int rl_link_pin_ifindex(const char *path, __u32 *prog_id);

/* Open a pinned map that must be of this type, key and value size: its
 * fd, or -EPROTO when it is something else, or -errno. */
int rl_map_pin_open(const char *path, __u32 type, __u32 key_size,
		    __u32 value_size, __u32 *max_entries);
/* The same with the fd's file_flags: BPF_F_RDONLY for a reader, whom the
 * kernel then refuses every write through it. */
int rl_map_pin_open_flags(const char *path, __u32 file_flags, __u32 type,
			  __u32 key_size, __u32 value_size, __u32 *max_entries);

/* The id of the map pinned as `pin` in NAME's directory, or 0; *err (when
 * given) 0 if there is no such pin, else -errno of what failed. */
__u32 rl_pinned_map_id(const char *name, const char *pin, int *err);
/* Whether program prog_fd uses map map_id. */
bool rl_prog_uses_map(int prog_fd, __u32 map_id);
/* The id of the map fd refers to, or 0: of the maps one holds, to compare
 * with rl_iface_config_id() (taken from the fd, not the pin, so that a
 * reload between the open and the read cannot hide from the holder). */
__u32 rl_map_id(int fd);

#endif /* RL_PIN_H */
