/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Attach-time settings: validated here, before anything reaches a map. */
#ifndef RL_SETTINGS_H
#define RL_SETTINGS_H

#include <stddef.h>
#include "ratelimit.h"

/* What the operator asked for at attach (xdp-ratelimit(8), attach). */
struct rl_attach_req {
	__u64 window_ns;
	__u32 nbuckets;
	__u32 v6_prefix;
	__u64 max_sources;
	__u32 flags;		/* RL_F_* */
	__u64 verified_ttl_ns;
	/* --replies-via: ifindexes, 0-terminated (none: the interface) */
	__u32 replies_via[RL_MAX_REPLIES_VIA];
};

/* enum rl_mode as status and stats show it: "native", "generic". */
const char *rl_mode_name(__u32 mode);

void rl_attach_req_defaults(struct rl_attach_req *r);

/* --replies-via IFACE[,IFACE]: each an interface here, none twice, at
 * most RL_MAX_REPLIES_VIA; their ifindexes, 0-terminated. */
int rl_parse_replies_via(const char *arg, __u32 via[RL_MAX_REPLIES_VIA],
			 char *err, size_t errlen);

/* --replies-via as typed: names joined by commas ("" when none). */
void rl_format_replies_via(const __u32 via[RL_MAX_REPLIES_VIA], char *buf,
			   size_t len);

/* Check every value's range and fill `s`; on error, a message that names
 * the option and its allowed range. */
int rl_settings_build(struct rl_settings *s, const struct rl_attach_req *r,
		      int ncpus, char *err, size_t errlen);

/* max_entries of the `sources` LRU for `max_sources` tracked sources: the
 * per-CPU LRU evicts well before it is full, so it needs headroom
 * (measured: doc/design/memory.md). */
__u32 rl_sources_map_size(__u64 max_sources, int ncpus);

/* Budget per window for a rate per second (xdp-ratelimit(8), quota): rounded down, at
 * least 1 when the rate is not 0; RL_UNLIMITED stays unlimited. */
__u64 rl_budget(__u64 rate, __u64 window_ns);


/* Use the coarse clock when a bucket spans RL_COARSE_MIN_TICKS of its
 * ticks (coarse_tick_ns: clock_getres of CLOCK_MONOTONIC_COARSE). */
void rl_settings_clock(struct rl_settings *s, __u64 coarse_tick_ns);

/* 1 if a CPU of this `machine` (uname -m) orders memory as the program's
 * cross-CPU reads need: x86_64 (TSO). A weakly ordered CPU (aarch64 and
 * the others) may show a reader a roll's stores out of order. */
int rl_cpu_ordered(const char *machine);


#endif /* RL_SETTINGS_H */
