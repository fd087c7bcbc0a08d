/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The program's maps as userspace sees them: file descriptors taken from a
 * freshly loaded object or from the pins of an attached interface, and the
 * per-CPU reads that sum what each CPU counted.
 */
#ifndef RL_MAPS_H
#define RL_MAPS_H

#include <stddef.h>
#include <bpf/libbpf.h>
#include "ratelimit.h"

struct rl_maps {
	int config;
	int counters;
	int sources;
	int rules;
	int rules_v4;
	int rules_v6;
	int aggregates;
	int refused;
	int bans;
};

/* Names of the maps in struct rl_maps order, for loops over all of them. */
extern const char *const rl_map_names[];
#define RL_NR_MAPS 9

/* fd of map i in rl_map_names order */
int *rl_maps_fd(struct rl_maps *m, int i);

/* Borrow the fds of a loaded object (not to be closed with rl_maps_close). */
int rl_maps_from_obj(struct bpf_object *obj, struct rl_maps *m);
void rl_maps_init(struct rl_maps *m);	/* every fd -1 */
void rl_maps_close(struct rl_maps *m);

int rl_ncpus(void);	/* possible CPUs, as per-CPU maps are sized */

int rl_config_read(const struct rl_maps *m, struct rl_config *cfg);
int rl_config_write(const struct rl_maps *m, const struct rl_config *cfg);

/* Sum of the per-CPU interface counters. */
int rl_counters_sum(const struct rl_maps *m, struct rl_counters *sum);

/*
 * A source's state summed over CPUs: totals, and what its windows hold at
 * `now` (CLOCK_MONOTONIC ns, the clock bpf_ktime_get_ns() reads).
 * `percpu` is scratch of rl_ncpus() values, or NULL to allocate.
 */
struct rl_source_sum {
	struct rl_key key;
	__u64 passed_pkts;
	__u64 passed_bytes;
	__u64 dropped_pkts;
	__u64 dropped_bytes;
	__u64 window_pkts;
	__u64 window_bytes;
};
/* Add one CPU's value of a source to `out` (window usage as of `now`). */
void rl_source_sum_add(struct rl_source_sum *out, const struct rl_source *src,
		       const struct rl_settings *s, __u64 now);
int rl_source_read(const struct rl_maps *m, const struct rl_settings *s,
		   const struct rl_key *key, __u64 now, struct rl_source_sum *out);

/* Per-CPU values of one entry (ncpus x value size, 8-byte aligned). */
void *rl_percpu_alloc(size_t value_size);
#define RL_PERCPU_VAL(base, size, cpu) \
	((void *)((char *)(base) + (cpu) * (((size) + 7) & ~(size_t)7)))

/* CLOCK_MONOTONIC in ns */
__u64 rl_now_ns(void);

#endif /* RL_MAPS_H */
