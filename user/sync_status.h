/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the sync agent of an interface is doing, for `status`: a one-entry
 * array map the agent creates and pins as RL_PIN_ROOT/IFACE/RL_PIN_SYNC,
 * writes after every exchange with Redis, and unpins when it stops
 * (detach removes it with the other pins). A pin whose agent is gone
 * (killed) says so.
 */
#ifndef RL_SYNC_STATUS_H
#define RL_SYNC_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define RL_PIN_SYNC		"sync"
#define RL_SYNC_ERR_MAX		96

enum rl_sync_health {
	RL_SYNC_STARTING = 0,	/* no exchange yet */
	RL_SYNC_OK = 1,
	RL_SYNC_DEGRADED = 2,	/* Redis slow or gone: local counts only */
};

/* The pinned value (bpftool map dump shows it as bytes: no BTF). */
struct rl_sync_state {
	__u32 pid;
	__u32 health;		/* enum rl_sync_health */
	__u64 interval_ns;
	__u64 last_ok_ns;	/* CLOCK_REALTIME of the last exchange, 0: none */
	__u64 degraded_ns;	/* CLOCK_REALTIME since when, 0: not degraded */
	__u64 sources;		/* sources exchanged in the last interval */
	__u64 exchanges;	/* intervals that exchanged with Redis */
	__u64 failures;		/* intervals that could not */
	__u64 round_trips;	/* pipelined batches sent to Redis */
	__u64 busy_ns;		/* the last interval's work, read to written */
	char fleet[72];
	char error[RL_SYNC_ERR_MAX];	/* why degraded */
};

/* The agent's side: create and pin the state of `iface` (refusing when a
 * live agent holds it: -EEXIST, its pid in *other), write it. */
int rl_sync_state_create(const char *iface, const struct rl_sync_state *st,
			 __u32 *other);
int rl_sync_state_write(int fd, const struct rl_sync_state *st);
void rl_sync_state_remove(const char *iface, int fd);

/* `status`'s side: the state of `iface`'s agent, if one was started:
 * 1 (with *alive: is its process still there), 0 when none, or -errno. */
int rl_sync_state_read(const char *iface, struct rl_sync_state *st,
		       bool *alive);

/* One line for humans: "ok, fleet web (last exchange 40 ms ago, 3
 * sources)", "degraded since 2026-11-23 22:10:05 (redis: ...), fleet web:
 * local counts only". */
void rl_sync_state_format(const struct rl_sync_state *st, bool alive,
			  char *buf, size_t len);
/* "ok", "degraded", "starting" or "gone" (status --json: sync.state). */
const char *rl_sync_health_name(const struct rl_sync_state *st, bool alive);

#endif /* RL_SYNC_STATUS_H */
