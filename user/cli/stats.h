/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xdp-ratelimit stats in parts: cmd_stats.c (options), stats_read.c (a
 * reading of every interface asked for), stats_watch.c (drawing frames,
 * --watch and its rates) and stats_view.c (tables and JSON).
 */
#ifndef RL_STATS_H
#define RL_STATS_H

#include <stdbool.h>
#include "lib/pin.h"
#include "lib/source_table.h"
#include "cli/stats_view.h"

struct rl_stats_opts {
	const char *iface;	/* NULL: every attached interface */
	bool json;
	bool prometheus;
	__u64 top;		/* 0: every source */
	bool watch;
	__u64 interval_ns;
};

/* One interface as read: what is shown, and every source kept. */
struct rl_stats_read {
	struct rl_stats_iface view;
	struct rl_source_top top;
};

struct rl_stats_snapshot {
	struct rl_stats_read ifs[RL_MAX_IFACES];
	size_t n;
	/* --prometheus: the state of each interface asked for, read or not */
	struct rl_stats_attached attached[RL_MAX_IFACES];
	size_t nattached;
};

/*
 * Read --iface, or every attached interface. Those that cannot be read are
 * reported and left out; the exit status says whether any was.
 */
int rl_stats_snapshot_read(const struct rl_stats_opts *o,
			   struct rl_stats_snapshot *s);
void rl_stats_snapshot_free(struct rl_stats_snapshot *s);

/* Print a reading on stdout: a frame redrawn in place on a terminal
 * (tty), else following the previous one. Exit status. */
int rl_stats_output(const struct rl_stats_opts *o, struct rl_stats_snapshot *s,
		    bool tty, bool first);

/* --watch: read and print every interval until SIGINT or SIGTERM. */
int rl_stats_watch(const struct rl_stats_opts *o, struct rl_stats_snapshot *s);

#endif /* RL_STATS_H */
