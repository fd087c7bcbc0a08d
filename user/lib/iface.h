/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * An attached interface opened from its pins, every pin checked before it
 * is trusted: each map of the shape RL_MAPS gives, config written by this
 * layout, every map one the linked program uses, settings in range.
 */
#ifndef RL_IFACE_H
#define RL_IFACE_H

#include <net/if.h>
#include <stddef.h>
#include "lib/maps.h"

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

/* The oldest layout whose pins reload carries into this one's maps. */
#define RL_LAYOUT_OLDEST_CARRIED	8

/* The value size a map of RL_MAPS index `i` has in pins of `layout`
 * (RL_LAYOUT_OLDEST_CARRIED to RL_LAYOUT_VERSION); -1 when that layout
 * has no such map. */
int rl_layout_value_size(__u32 layout, int i);

/*
 * rl_iface_open for pins of `layout` (RL_LAYOUT_OLDEST_CARRIED or later),
 * for reload to carry them: each map checked against that layout's shape
 * (a map it lacks stays -1 in ifc->m), ifc->cfg zero-extended from the
 * older config (so rl_config_write must not be used on it). Read only.
 */
int rl_iface_open_layout(const char *name, __u32 layout, struct rl_iface *ifc,
			 char *err, size_t errlen);
void rl_iface_close(struct rl_iface *ifc);

/* The layout version (RL_LAYOUT_VERSION of the CLI that attached) in
 * NAME's config pin, whatever its size; 0 when the pin cannot tell. */
__u32 rl_iface_pinned_layout(const char *name);

/* State of the pinned link: attached ifindex (0 when the interface went
 * away), or -errno when the pin is missing or not a link. `name` is an
 * interface or a staging directory (attach_txn.h). Without a link pin,
 * the state of a program pinned under libxdp's dispatcher
 * (rl_xdp_multi_where: -ENOLINK when it no longer runs there), and
 * prog_id the program in its slot, the one that judges and uses the maps. */
int rl_link_ifindex(const char *name, __u32 *prog_id);

/* The id of the config map pinned for `name`, or 0: what names one set of
 * maps. A reload in place keeps it; a reload onto new maps, or a detach
 * and attach, changes it. */
__u32 rl_iface_config_id(const char *name);
#endif /* RL_IFACE_H */
