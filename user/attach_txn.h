/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The crash-safe attach protocol: what attach pins, in which order, its
 * commit point, and the repair of what an attach killed half way leaves.
 *
 * The maps are pinned in a staging directory RL_PIN_ROOT/"IFACE attaching
 * PID", renamed to RL_PIN_ROOT/IFACE once complete, and the link is pinned
 * last, directly under IFACE: that pin is the commit point. Killed before
 * it, the link dies with the process (the program detaches) and what is
 * left is either a staging directory or an IFACE directory without a
 * link, both reported by status and removed by detach; killed after it,
 * the attach is complete.
 */
#ifndef RL_ATTACH_TXN_H
#define RL_ATTACH_TXN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include "maps.h"

/* Interface names never contain spaces: a directory name with this tag
 * is a staging directory. */
#define RL_STAGE_TAG	" attaching "

enum rl_xdp_mode { RL_XDP_AUTO, RL_XDP_NATIVE, RL_XDP_GENERIC };

/* How the program got attached. */
struct rl_attach_result {
	enum rl_mode mode;	/* native or generic */
	int native_err;		/* auto fell back to generic: why native failed */
};

/*
 * Pin the maps `m` of a loaded program, attach `prog_fd` to `ifindex` as
 * a bpf_link in `mode` (auto: native, else generic), record the mode in
 * config and commit by pinning the link. The interface must not be
 * attached and the caller holds the lock. 0, or -errno with a message in
 * err; on failure nothing stays pinned.
 */
int rl_attach_commit(const char *iface, int ifindex, int prog_fd, int egress_fd,
		     const struct rl_maps *m, enum rl_xdp_mode mode,
		     struct rl_attach_result *res, char *err, size_t errlen);

/* A staging directory's name "IFACE attaching PID" ('.' as ':') as its
 * interface and pid; false when it is no staging directory. */
bool rl_attach_stage_parse(const char *dir, char iface[NAME_MAX + 1], int *pid);

/* The staging directories of attaches that died, as names for
 * rl_pin_dir_remove ("IFACE attaching PID", '.' as ':'), sorted, at most
 * max; all interfaces when iface is NULL. Count or -errno. */
int rl_attach_stale_stages(const char *iface, char names[][NAME_MAX + 1],
			   int max);

/* Remove those staging directories (call with the lock held): how many,
 * or the first -errno (the others are still tried). */
int rl_attach_repair(const char *iface);

/* Remove the egress hook (user/egress.h) of the pin directory `dir` of
 * RL_PIN_ROOT (an interface's, or a staging one), as its config pin
 * names it; nothing to do without one. 0 or a negative errno. */
int rl_attach_unhook(const char *dir);

#endif /* RL_ATTACH_TXN_H */
