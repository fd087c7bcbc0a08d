/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What `xdp-ratelimit stats` shows, as one struct, and its two renderings:
 * aligned tables for people (table.h) and the JSON object of
 * xdp-ratelimit(8) (json_writer.h). Reading the maps is stats_read.c's
 * job; nothing here touches them.
 */
#ifndef RL_STATS_VIEW_H
#define RL_STATS_VIEW_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <net/if.h>
#include "lib/attached_state.h"
#include "lib/ban_map.h"
#include "lib/maps.h"
#include "lib/source_sum.h"
#include "lib/scope_opts.h"
#include "lib/values.h"

/* Per-second rates over the interval since the previous --watch frame;
 * !valid when there is no previous reading to compare with. Bytes per
 * second are "bps", as in `quota set --bps`. */
struct rl_rates {
	bool valid;
	double passed_pps, passed_bps, dropped_pps, dropped_bps;
};

struct rl_stats_source {
	struct rl_source_sum sum;
	bool tracked;			/* has a window; else only refused */
	bool has_rule;			/* some rule covers the source */
	char rule[RL_PREFIX_STRLEN];	/* that rule's prefix */
	/* a scoped rule's window of the source (its own row): the scope
	 * text, "tcp syn"; "" for the source's own window */
	char scope[RL_SCOPE_STRLEN];
	struct rl_rates rates;
	bool nested;			/* shown under its source's row */
	bool verified;			/* the host answered it (Verified sources) */
	bool banned;			/* a ban holds, for ban_ms_left more */
	__u64 ban_ms_left;
};

/* A rule and what it judged (Prometheus' per-rule counters). */
struct rl_stats_rule {
	char prefix[RL_PREFIX_STRLEN];
	char scope[RL_SCOPE_STRLEN];	/* "" when unscoped */
	struct rl_rule_counters c;
};

struct rl_stats_iface {
	char name[IF_NAMESIZE];
	struct rl_settings set;
	__u64 max_sources;		/* size of the source table */
	__u64 now;			/* CLOCK_MONOTONIC ns of the reading */
	struct rl_counters tot;
	struct rl_rates rates;		/* of tot */
	__u64 rates_ns;			/* interval the rates are over */
	__u64 tracked;			/* entries in the table */
	__u64 scoped_windows;		/* of them, scoped rules' windows */
	__u64 refused_only;		/* refused, never in the table */
	__u64 refused;			/* entries in `refused` */
	__u64 refused_max;		/* its size */
	__u64 verified_sources;		/* verified now */
	__u64 sync_rejected[RL_SYNC_REJECTS];	/* the sync agent's (ratelimit.h) */
	__u64 sync_key_errors;
	__u64 verified_entries;		/* entries of `verified`, lapsed or not */
	__u64 verified_evicted;		/* rl_verified_evicted */
	struct rl_stats_source *src;	/* shown sources, busiest first */
	size_t nsrc;
	struct rl_ban_row *bans;	/* banned sources, soonest free first */
	size_t nbans;
	struct rl_stats_rule *rules;	/* read for Prometheus only */
	size_t nrules;
};

/* An attached interface as status judges it (Prometheus only). */
struct rl_stats_attached {
	char name[IF_NAMESIZE];
	enum rl_attached_state state;
};

struct rl_stats_view {
	struct rl_stats_iface *ifs;
	size_t n;
	const struct rl_stats_attached *attached;	/* also those not read */
	size_t nattached;
	bool watch;			/* a frame of --watch: a title line */
	bool rates;			/* show rates */
	__u64 interval_ns;		/* of --watch */
	time_t wall;			/* when read, for the title */
	bool wide;			/* every column, numbers exact */
	int width;			/* of the tables (rl_view_width) */
};

/* An IPv4 source as "198.18.0.7"; an IPv6 one as its tracked prefix
 * "2001:db8:1:2::/64", or the bare address when tracked per /128. A
 * scoped window's key prints as its source (include/scope.h). */
#define RL_SOURCE_STRLEN 64
void rl_stats_format_source(const struct rl_key *key, __u32 v6_prefix,
			    char *buf, size_t len);

void rl_stats_print_table(FILE *f, const struct rl_stats_view *v);
/* The JSON object on one line; 0, or -EIO when writing failed. */
int rl_stats_print_json(FILE *f, const struct rl_stats_view *v);
/* The Prometheus text exposition format (stats_prom.c): HELP and TYPE
 * lines, counters named *_total, the shown sources only. 0 or -EIO. */
int rl_stats_print_prometheus(FILE *f, const struct rl_stats_view *v);

/* Banned sources as a table (ADDRESS, TIME_LEFT, RULE) within `width`
 * (rl_view_width; 0: every column, nothing wrapped), shared by stats and
 * `ban list`, and one as the object of their JSON ("address", "rule",
 * "ms_left"). */
struct rl_json;
void rl_bans_print_table(FILE *f, const struct rl_ban_row *rows, size_t n,
			 __u32 v6_prefix, int width);
void rl_ban_json(struct rl_json *j, const struct rl_ban_row *row,
		 __u32 v6_prefix);

#endif /* RL_STATS_VIEW_H */
