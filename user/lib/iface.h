/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * An attached interface opened from its pins, every pin checked before it
 * is trusted: each map of the shape RL_MAPS gives, config written by this
 * layout, every map one the linked program uses, settings in range.
 */
#ifndef RL_IFACE_H
#define RL_IFACE_H

#include <net/if.h>
#include <stdbool.h>
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
/* rl_iface_open with every map fd read-only (BPF_F_RDONLY): for the
 * readers (stats, the exporter), so that the kernel refuses any write. */
int rl_iface_open_read_only(const char *name, struct rl_iface *ifc, char *err,
			    size_t errlen);

/* The most map ids of the attached program that opening an interface
 * reads to check every pin against (the program's maps with every map
 * of RL_MAPS bound: tests/prog/test_attach.c checks that they fit). */
#define RL_LINKED_MAPS_MAX	64

/* The oldest layout whose pins reload carries into this one's maps (8:
 * no rule_counters; 8 and 9: the sync state without its rejected fields;
 * 8 to 10: `answered` without the window, the counters without
 * verified_inserts, no `synacks`; 11: the counters without SYN
 * cookies'). */
#define RL_LAYOUT_OLDEST_CARRIED	8

/* The value size a map of RL_MAPS index `i` has in pins of `layout`
 * (RL_LAYOUT_OLDEST_CARRIED to RL_LAYOUT_VERSION); -ENOENT when that
 * layout has no such map. */
int rl_layout_value_size(__u32 layout, int i);
/* The type and key size map i had in `layout`. */
__u32 rl_layout_map_type(__u32 layout, int i);
__u32 rl_layout_key_size(__u32 layout, int i);

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

/* Do NAME's pins hold the program that runs on this network namespace's
 * interface NAME? (An ifindex alone does not say: each namespace numbers
 * its own.) */
bool rl_iface_runs_here(const char *name);

/*
 * Pins an earlier release left in its flat layout (RL_PIN_TOP/IFACE, before
 * each network namespace had a directory of its own) move into this
 * namespace's directory when the program they hold runs on this
 * namespace's IFACE: reload and detach carry them so. 1 if moved (the CLI
 * says so: rl_print_pins_moved), 0 if there were none, -errno with err
 * (-EXDEV: another namespace's).
 */
int rl_pins_carry_flat(const char *iface, char *err, size_t errlen);

/* Is the interface of NAME's attachment gone (deleted, or moved to
 * another network namespace), so that its program no longer runs? */
bool rl_iface_gone(const char *name);

/* What to say of such an interface: "eth0 no longer exists (...): ...". */
void rl_iface_gone_text(const char *name, char *buf, size_t len);

/* The id of the config map pinned for `name`, or 0: what names one set of
 * maps. A reload in place keeps it; a reload onto new maps, or a detach
 * and attach, changes it. */
__u32 rl_iface_config_id(const char *name);
#endif /* RL_IFACE_H */
