/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A tracked source as userspace reads it: the per-CPU values of struct
 * rl_source (the `sources` map) summed into totals and what the windows
 * hold now. The one place that reads a struct rl_source field by field.
 */
#ifndef RL_SOURCE_SUM_H
#define RL_SOURCE_SUM_H

#include <stdbool.h>
#include "ratelimit.h"

struct rl_maps;

/* A source's state summed over CPUs: totals, and what its windows hold at
 * `now` (CLOCK_MONOTONIC ns, the clock bpf_ktime_get_ns() reads). */
struct rl_source_sum {
	struct rl_key key;
	__u64 passed_pkts;
	__u64 passed_bytes;
	__u64 dropped_pkts;
	__u64 dropped_bytes;
	__u64 window_pkts;
	__u64 window_bytes;
	/* some CPU added buckets still inside the window to the source's
	 * history: rl_source_sum_history() adds them */
	bool past;
};

/* Add one CPU's value of a source to `out` (window usage as of `now`: its
 * newest bucket and the one before); a value not owned by out->key (stale,
 * or unused on that CPU) adds nothing. */
void rl_source_sum_add(struct rl_source_sum *out, const struct rl_source *src,
		       const struct rl_settings *s, __u64 now);
/* Then the source's past buckets from `history` (fd), if a CPU's marker
 * says it holds any of the window. */
void rl_source_sum_history(struct rl_source_sum *out, int history_fd,
			   const struct rl_settings *s, __u64 now);

/*
 * The ncpus values of `key` as one lookup returns them (`vals`, stride
 * RL_PERCPU_VAL) and its history, summed into `out`; and the rule any CPU resolved for the
 * source in the current rules generation `rules_gen`: *rule_cached and
 * *rule_id (RL_NO_RULE when there is none).
 */
void rl_source_sum_cpus(const struct rl_key *key, const void *vals, int ncpus,
			int history_fd, const struct rl_settings *s,
			__u32 rules_gen, __u64 now, struct rl_source_sum *out,
			bool *rule_cached, __u32 *rule_id);

/* What a source passed here in one bucket, all CPUs together (at most
 * RL_COUNT_MAX each: saturating). */
struct rl_bucket {
	__u32 pkts;
	__u32 bytes;
};

/*
 * What the source passed here per bucket of the window that ends in the
 * bucket containing `now`, summed over its ncpus values `vals` (as
 * rl_source_sum_cpus takes them) and its history (`history_fd`, read after
 * them: a roll in between is counted twice, never missed): by_age[i] for
 * bucket (now's bucket - i), i < s->nbuckets. Fills `sum` as
 * rl_source_sum_cpus does. What the fleet sync publishes
 * (user/cli/sync_agent.c).
 */
void rl_source_sum_buckets(const struct rl_key *key, const void *vals,
			   int ncpus, int history_fd, const struct rl_settings *s,
			   __u64 now, struct rl_source_sum *sum,
			   struct rl_bucket by_age[RL_MAX_BUCKETS]);

/* Look up `key` in `sources` and sum it: 0 or -errno (-ENOENT: not
 * tracked). */
int rl_source_read(const struct rl_maps *m, const struct rl_settings *s,
		   const struct rl_key *key, __u64 now, struct rl_source_sum *out);

#endif /* RL_SOURCE_SUM_H */
