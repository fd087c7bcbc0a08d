/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Pins of attached interfaces (SPEC "Pins"): /sys/fs/bpf/xdp-ratelimit/
 * IFACE/{link,config,counters,...}. Mounting bpffs, refusing private mount
 * namespaces, the lock that serialises changes, and opening an interface's
 * maps with every pin checked before it is trusted.
 */
#ifndef RL_PIN_H
#define RL_PIN_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include "maps.h"

#define RL_PIN_ROOT	RL_BPFFS "/" RL_PIN_SUBDIR
#define RL_MAX_IFACES	64

/*
 * Make pinning possible: refuse a private mount namespace (ip netns exec),
 * mount bpffs on /sys/fs/bpf when none is there, create RL_PIN_ROOT (0700).
 * For commands that write; readers use rl_pins_present().
 */
int rl_pins_prepare(char *err, size_t errlen);

/* Exclusive lock over every change under RL_PIN_ROOT (attach, detach,
 * quota set/del); released by rl_unlock or exit. Returns an fd or -1. */
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
/* Path of a pin: RL_PIN_ROOT/IFACE/NAME (NAME NULL: the directory). */
void rl_pin_path(char *buf, size_t len, const char *iface, const char *name);

/* Unpin everything in RL_PIN_ROOT/NAME and remove the directory (the
 * link pin going away detaches the program). 0 or -errno. */
int rl_pin_dir_remove(const char *name);

/*
 * attach pins into RL_PIN_ROOT/"IFACE attaching PID" and renames it to
 * IFACE when complete. Interface names never contain spaces.
 */
#define RL_STAGE_TAG	" attaching "
void rl_pin_stage_name(char *buf, size_t len, const char *iface, int pid);

/* A staging directory's name "IFACE attaching PID" ('.' as ':') as its
 * interface and pid; false when it is no staging directory. */
bool rl_pin_stage_parse(const char *dir, char iface[NAME_MAX + 1], int *pid);

/* The staging directories of attaches that died, as names for
 * rl_pin_dir_remove ("IFACE attaching PID", '.' as ':'), sorted, at most
 * max; all interfaces when iface is NULL. Count or -errno. */
int rl_pin_stale_stages(const char *iface, char names[][NAME_MAX + 1], int max);

/* Remove those staging directories (call with the lock held): how many,
 * or the first -errno (the others are still tried). */
int rl_pin_dirs_reap(const char *iface);

/* Names of the interfaces with a pin directory, sorted; count or -errno. */
int rl_ifaces_list(char names[][IF_NAMESIZE], int max);

/*
 * The interface a command works on: `iface` when given (it must be
 * attached), otherwise the only attached one. Fills `out`; on error, a
 * message that says what to do.
 */
int rl_iface_resolve(const char *iface, char out[IF_NAMESIZE], char *err,
		     size_t errlen);

/* An attached interface, opened from its pins. */
struct rl_iface {
	char name[IF_NAMESIZE];
	struct rl_maps m;
	struct rl_config cfg;
	__u32 sources_max_entries;
};

/*
 * Open every map pinned for `name`, checking that each pin is a map of the
 * expected type, key and value size, and that config was written by this
 * layout (RL_LAYOUT_VERSION); refuses (and writes nothing) otherwise.
 */
int rl_iface_open(const char *name, struct rl_iface *ifc, char *err,
		  size_t errlen);
void rl_iface_close(struct rl_iface *ifc);

/* State of the pinned link: attached ifindex (0 when the interface went
 * away), or -errno when the pin is missing or not a link. */
int rl_link_ifindex(const char *name, __u32 *prog_id);

#endif /* RL_PIN_H */
