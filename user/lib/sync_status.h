/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the sync agent of an interface is doing, for `status`: the one
 * entry of the interface's `sync` map (struct rl_sync_state), which the
 * agent claims with its pid, writes after every exchange with Redis, and
 * gives back (pid 0) when it stops. An entry whose agent is gone (killed)
 * says so.
 */
#ifndef RL_SYNC_STATUS_H
#define RL_SYNC_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "ratelimit.h"

struct rl_maps;

/* The agent's side: claim the state of an interface (refusing when a live
 * agent holds it: -EEXIST, its pid in *other) and write `st` (whose pid is
 * this process), write it again, give it back when stopping. */
int rl_sync_state_claim(const struct rl_maps *m, const struct rl_sync_state *st,
			__u32 *other);
int rl_sync_state_write(const struct rl_maps *m, const struct rl_sync_state *st);
void rl_sync_state_release(const struct rl_maps *m);

/* `status`'s side: the state of the interface's agent, if one runs or ran
 * without giving it back: 1 (with *alive: is its process still there), 0
 * when none, or -errno. */
int rl_sync_state_read(const struct rl_maps *m, struct rl_sync_state *st,
		       bool *alive);

/* One line for humans: "ok, fleet web (last exchange 40 ms ago, 3
 * sources)", "degraded since 2026-11-23 22:10:05 (redis: ...), fleet web:
 * local counts only", either followed by "; ignored: N fields (format N,
 * mac N, range N, date N), N key errors" once anything was. */
void rl_sync_state_format(const struct rl_sync_state *st, bool alive,
			  char *buf, size_t len);
/* "ok", "degraded", "starting" or "gone" (status --json: sync.state). */
const char *rl_sync_health_name(const struct rl_sync_state *st, bool alive);

#endif /* RL_SYNC_STATUS_H */
