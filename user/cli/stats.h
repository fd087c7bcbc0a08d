/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xdp-ratelimit stats in parts: cmd_stats.c (options), stats_read.c (a
 * reading of every interface asked for), stats_rank.c (the order of the
 * sources, and the previous reading rates come from), stats_watch.c
 * (drawing frames, --watch) and stats_view.c (tables and JSON).
 */
#ifndef RL_STATS_H
#define RL_STATS_H

#include <stdbool.h>
#include "lib/pin.h"
#include "lib/source_table.h"
#include "cli/stats_view.h"

/* --sort: which sources are the busiest, descending. */
enum rl_stats_sort {
	RL_SORT_DROPPED,	/* dropped, then passed packets since attach */
	RL_SORT_PASSED,		/* passed, then dropped packets */
	RL_SORT_DROPPED_RATE,	/* packets dropped, then seen, per second now */
	RL_SORT_RATE,		/* packets seen, then dropped, per second now */
};

struct rl_stats_opts {
	const char *iface;	/* NULL: every attached interface */
	bool json;
	bool prometheus;
	__u64 top;		/* 0: every source */
	bool watch;
	__u64 interval_ns;
	enum rl_stats_sort sort;
	bool wide;		/* every column */
};

/* Does the order need rates, that is two readings? */
static inline bool rl_stats_sort_rates(enum rl_stats_sort s)
{
	return s == RL_SORT_DROPPED_RATE || s == RL_SORT_RATE;
}

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

/* The previous reading of each interface: every source's counters, for
 * rates and the rate orders (stats_rank.c). */
struct rl_stats_prev;
struct rl_stats_prev *rl_stats_prev_new(void);
void rl_stats_prev_free(struct rl_stats_prev *p);

/* How a reading of `ifname` orders its sources (o->sort), remembering
 * each in `p` (NULL: no rates) for the next reading. rank must live as
 * long as the read; ord points to it. */
struct rl_stats_rank {
	enum rl_stats_sort sort;
	struct rl_stats_prev_iface *pi;	/* NULL: no previous reading kept */
};
void rl_stats_order(struct rl_stats_prev *p, const struct rl_stats_opts *o,
		    const char *ifname, struct rl_stats_rank *rank,
		    struct rl_source_order *ord);
/* The rates of s (totals and shown sources) against p's previous reading,
 * then s becomes the previous reading. */
void rl_stats_rates(struct rl_stats_prev *p, struct rl_stats_snapshot *s);

/*
 * Read --iface, or every attached interface, ranked and remembered in `p`
 * (NULL: one reading, no rates). Those that cannot be read are reported
 * and left out; the exit status says whether any was.
 */
int rl_stats_snapshot_read(const struct rl_stats_opts *o,
			   struct rl_stats_prev *p,
			   struct rl_stats_snapshot *s);
void rl_stats_snapshot_free(struct rl_stats_snapshot *s);

/* Print a reading on stdout: a frame redrawn in place on a terminal
 * (tty), else following the previous one. Exit status. */
int rl_stats_output(const struct rl_stats_opts *o, struct rl_stats_snapshot *s,
		    bool tty, bool first);

/* --watch: read and print every interval until SIGINT or SIGTERM; without
 * --watch, two readings an interval apart, the second shown with rates. */
int rl_stats_watch(const struct rl_stats_opts *o, struct rl_stats_snapshot *s);

#endif /* RL_STATS_H */
