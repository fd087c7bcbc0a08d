/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The busiest sources of an interface (xdp-ratelimit(8), stats): one pass
 * over the per-CPU `sources` and `newcomers` LRU hashes, in batches, keeping only the top N
 * so memory stays proportional to N plus one batch, however many sources
 * are tracked (up to RL_MAX_MAX_SOURCES); the drops in `refused` (at most
 * RL_REFUSED_ENTRIES) are added to their source, or shown as sources of
 * their own when the source has no window. Reads only.
 */
#ifndef RL_SOURCE_TABLE_H
#define RL_SOURCE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/maps.h"
#include "lib/source_sum.h"

/* A source as read, with the rule its CPUs cached for it. */
struct rl_source_row {
	struct rl_source_sum sum;
	__u32 rule_id;		/* slot in `rules`, or RL_NO_RULE */
	bool rule_cached;	/* rule_id was resolved under rules_gen */
	bool tracked;		/* in `sources`; else only refused (no window) */
	/* what "busiest" compares, descending: the first, then the second
	 * (struct rl_source_order) */
	__u64 rank[2];
};

/*
 * The order of "busiest": rank(ctx, row) sets row->rank for each row read
 * (every source, once its counters are complete), 0 or -errno (which ends
 * the read). NULL: dropped then passed packets. Ties go to the lower
 * address, so that output is stable.
 */
struct rl_source_order {
	int (*rank)(void *ctx, struct rl_source_row *row);
	void *ctx;
};

struct rl_source_top {
	struct rl_source_row *rows;	/* busiest first */
	size_t n;
	__u64 tracked;			/* entries in the table when read */
	__u64 scoped_windows;		/* of them, scoped rules' windows */
	__u64 refused_only;		/* refused sources not in the table */
	__u64 refused;			/* entries in `refused` when read */
};

/*
 * Read every source, summed over CPUs with windows taken at `now`, and keep
 * the `limit` busiest (0: all), busiest first. `rules_gen` is config's
 * current rules generation: a rule id cached under it is still right.
 * Returns 0 or a negative errno; free with rl_source_top_free() either way.
 */
int rl_source_top_read(const struct rl_maps *m, const struct rl_settings *s,
		       __u32 rules_gen, __u64 now, size_t limit,
		       struct rl_source_top *top);
/* The same, busiest by `order` (NULL: as rl_source_top_read). */
int rl_source_top_read_by(const struct rl_maps *m, const struct rl_settings *s,
			  __u32 rules_gen, __u64 now, size_t limit,
			  const struct rl_source_order *order,
			  struct rl_source_top *top);
void rl_source_top_free(struct rl_source_top *top);

#endif /* RL_SOURCE_TABLE_H */
