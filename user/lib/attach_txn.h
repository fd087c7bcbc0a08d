/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The crash-safe attach protocol: what attach pins, in which order, its
 * commit point, and the repair of what an attach killed half way leaves.
 *
 * The maps are pinned in a staging directory rl_pin_root()/"IFACE attaching
 * PID", renamed to rl_pin_root()/IFACE once complete, and the link is pinned
 * last, directly under IFACE: that pin is the commit point. Killed before
 * it, the link dies with the process (the program detaches) and what is
 * left is either a staging directory or an IFACE directory without a
 * link, both reported by status and removed by detach; killed after it,
 * the attach is complete. Under libxdp's dispatcher (xdp_multi.h) the
 * program is pinned instead of the link, and it outlives a killed attach
 * in libxdp's pins: the repair and detach remove it from the dispatcher,
 * found by the maps it uses, before they unpin.
 */
#ifndef RL_ATTACH_TXN_H
#define RL_ATTACH_TXN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include "lib/attach.h"
#include "lib/maps.h"
#include "lib/settings.h"

/* Interface names never contain spaces: a directory name with this tag
 * is a staging directory. */
struct rl_attach_prog {
	const char *iface;
	int prog_fd;			/* loaded: a bpf_link's or the slot's */
	unsigned int prio;		/* under the dispatcher; 0: the object's */
	enum rl_xdp_mode mode;
	int egress_fd;			/* the egress hook's program (egress.h) */
};

/*
 * Pin the maps `m` of a loaded program, attach it to `ifindex` in `mode`
 * (auto: native, else generic) under libxdp's dispatcher when the kernel
 * runs it (xdp_multi.h: a stub tail-calling `prog_fd` from the slot),
 * else `prog_fd` as a bpf_link, record the mode in config and commit by
 * pinning the stub (dispatcher) or the link. The
 * interface must not be attached and the caller holds the lock. 0, or
 * -errno with a message in err; on failure nothing stays pinned or
 * attached.
 */
int rl_attach_commit(const struct rl_attach_prog *p, int ifindex,
		     const struct rl_maps *m, struct rl_attach_result *res,
		     char *err, size_t errlen);

/* The staging directories of attaches that died, as names for
 * rl_pin_dir_remove ("IFACE attaching PID", '.' as ':'), sorted, at most
 * max; all interfaces when iface is NULL; `locked`: the caller holds the
 * lock, so every one is (rl_pin_stage_live). Count or -errno. */
int rl_attach_stale_stages(const char *iface, bool locked,
			   char names[][NAME_MAX + 1], int max);

/* Remove those staging directories (call with the lock held): how many,
 * or the first -errno (the others are still tried). */
int rl_attach_repair(const char *iface);

/* Remove the egress hook (user/lib/egress.h) of the pin directory `dir` of
 * rl_pin_root() (an interface's, or a staging one), as its config pin
 * names it; nothing to do without one. 0 or a negative errno. */
int rl_attach_unhook(const char *dir);

#endif /* RL_ATTACH_TXN_H */
