/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Whether an attached interface's program runs as recorded: the judgement
 * `status` shows as STATE and Prometheus as xdp_ratelimit_attached.
 */
#ifndef RL_ATTACHED_STATE_H
#define RL_ATTACHED_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/iface.h"

enum rl_attached_state {
	RL_ATTACHED_OK,
	RL_ATTACHED_BROKEN,	/* pins, link or hook not as recorded */
	RL_ATTACHED_GONE,	/* the interface was deleted or moved away */
	RL_ATTACHED_NR_STATES,
};

/*
 * Judge the pins of interface `name`: anything but RL_ATTACHED_OK puts
 * what is wrong, and the repair, in `why`. `*opened` says whether `ifc`
 * holds its opened pins (then close it with rl_iface_close).
 */
enum rl_attached_state rl_attached_state(const char *name, struct rl_iface *ifc,
					 bool *opened, char *why, size_t len);
/* The same for pins already opened in `ifc`. */
enum rl_attached_state rl_attached_state_of(const char *name,
					    const struct rl_iface *ifc,
					    char *why, size_t len);

/* "ok", "broken", "gone" */
const char *rl_attached_state_name(enum rl_attached_state s);

#endif /* RL_ATTACHED_STATE_H */
