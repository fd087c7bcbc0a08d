/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Pins of attached interfaces (xdp-ratelimit(8), PINS):
 * /sys/fs/bpf/xdp-ratelimit/IFACE/{link,config,counters,...}. Their paths
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

#define RL_PIN_ROOT	RL_BPFFS "/" RL_PIN_SUBDIR
#define RL_MAX_IFACES	64

/*
 * Make pinning possible: refuse a private mount namespace (ip netns exec),
 * mount bpffs on /sys/fs/bpf when none is there, create RL_PIN_ROOT (0700).
 * For commands that write; readers only look (rl_iface_resolve).
 */
int rl_pins_prepare(char *err, size_t errlen);

/* Exclusive lock over every change under RL_PIN_ROOT (attach, detach,
 * quota set/del); released by rl_unlock or exit. Returns an fd or -errno. */
int rl_lock(char *err, size_t errlen);
/* Are we in a mount namespace of our own (ip netns exec), which hides
 * the machine's pins? */
bool rl_private_mount_ns(void);
/* Does some CLI hold that lock right now (a change in progress)? */
bool rl_change_running(void);
void rl_unlock(int fd);

/*
 * Whether `name` can be an interface name, as the kernel's dev_valid_name
 * judges (1 to IF_NAMESIZE - 1 characters, not '.' or '..', no '/', ':' or
 * whitespace): 0, or -EINVAL with what is wrong in err. A name that passes
 * is a single path component under RL_PIN_ROOT and maps to its own pins.
 */
int rl_iface_name_check(const char *name, char *err, size_t errlen);
/* Path of a pin: RL_PIN_ROOT/IFACE/NAME (NAME NULL: the directory).
 * IFACE may also be the name of a staging directory (attach_txn.h). */
void rl_pin_path(char *buf, size_t len, const char *iface, const char *name);

/* The interface whose pins a directory under RL_PIN_ROOT holds (the
 * directory says ':' for '.'). */
void rl_pin_dir_iface(const char *dir, char *iface, size_t len);

/* Unpin everything in RL_PIN_ROOT/NAME and remove the directory (the
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

/* Staging directories of attaches in progress ("IFACE attaching PID"). */
#define RL_STAGE_TAG	" attaching "

/* A staging directory's name "IFACE attaching PID" ('.' as ':') as its
 * interface and pid; false when it is no staging directory. */
bool rl_pin_stage_parse(const char *dir, char iface[NAME_MAX + 1], int *pid);

/* Whether the object fd refers to is of the kind whose fdinfo has `field`
 * ("map_type:", "link_type:"): a pin can hold a map, program or link, and
 * bpf_obj_get_info_by_fd cannot tell them apart. */
bool rl_pin_is(int fd, const char *field);

/* Open a pinned map that must be of this type, key and value size: its
 * fd, or -EPROTO when it is something else, or -errno. */
int rl_map_pin_open(const char *path, __u32 type, __u32 key_size,
		    __u32 value_size, __u32 *max_entries);

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
