/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The crash-safe protocol of a reload that builds new maps (a setting
 * that sizes them changed, or pins of an older layout): what it pins, its
 * commit point, and the repair of what a reload killed half way leaves.
 *
 * The new maps and the interface's link are pinned in a staging directory
 * rl_pin_root()/"IFACE reloading PID", with IFACE's egress hook pins as
 * they are (the old program's: the filters run it until the reload
 * replaces them after the exchange, egress.h). The commit point is bpf_link_update()
 * of the link to the program on those maps. Under libxdp's dispatcher the
 * directory holds the interface's slot and stub instead of a link
 * (xdp_multi.h), and the commit point is the update of the slot's entry.
 * Then the staging directory and
 * rl_pin_root()/IFACE are exchanged in one rename (RENAME_EXCHANGE), and
 * what was IFACE's (the old maps) is unpinned. A staging directory whose
 * reload died is the truth exactly when the linked program uses its maps:
 * the repair then completes the exchange (forward), else it only unpins
 * the staging directory (back: the old program never stopped, or the
 * exchange was done). The link (or the slot and the stub) stays pinned at
 * IFACE throughout.
 */
#ifndef RL_RELOAD_TXN_H
#define RL_RELOAD_TXN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include "lib/maps.h"

/* Interface names never contain spaces: a directory name with this tag
 * is a reload's staging directory. */
#define RL_RELOAD_TAG	" reloading "

/* One pin of the attachment: RL_PIN_LINK, or RL_PIN_SLOT and RL_PIN_PROG. */
struct rl_reload_pin {
	const char *name;
	int fd;
};

/* Pin IFACE's egress hook pins again, every map of `m`, then the
 * attachment's `natt` pins of `att` (the last one completes the
 * directory), in this process's staging directory
 * of `iface`, whose name goes to `stage` (for rl_pin_path). 0, or -errno
 * with a message in err and nothing left. */
int rl_reload_stage(const char *iface, const struct rl_maps *m,
		    const struct rl_reload_pin *att, int natt,
		    char stage[NAME_MAX + 1], char *err, size_t errlen);

/* After the commit point: exchange `stage` and IFACE's directory, then
 * unpin what was IFACE's. 0, or -errno with a message in err. */
int rl_reload_swap(const char *iface, const char *stage, char *err,
		   size_t errlen);

/* Is a staging directory of a reload of `iface` that died left? */
bool rl_reload_stale(const char *iface);

/* Complete or undo the staging directories of reloads of `iface` that
 * died (call with the lock held): how many, or the first -errno. */
int rl_reload_repair(const char *iface);

#endif /* RL_RELOAD_TXN_H */
