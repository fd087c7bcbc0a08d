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

/* Index of each map in RL_MAPS order: RL_MAP_IDX_config, ... */
enum rl_map_idx {
#define RL_MAP_IDX(name, type, key, value) RL_MAP_IDX_##name,
	RL_MAPS(RL_MAP_IDX)
#undef RL_MAP_IDX
	RL_NR_MAPS
};

/* An fd per map: by name (m.sources) or by index (m.fd[i]). */
struct rl_maps {
	union {
		struct {
#define RL_MAP_FD(name, type, key, value) int name;
			RL_MAPS(RL_MAP_FD)
#undef RL_MAP_FD
		};
		int fd[RL_NR_MAPS];
	};
};

/* What each map is: its name (and pin name) and the shape a pin of it
 * must have, in RL_MAPS order. */
struct rl_map_def {
	const char *name;
	__u32 type;
	__u32 key_size;
	__u32 value_size;
};
extern const struct rl_map_def rl_map_defs[RL_NR_MAPS];

/* Borrow the fds of a loaded object (not to be closed with rl_maps_close). */
int rl_maps_from_obj(struct bpf_object *obj, struct rl_maps *m);
void rl_maps_init(struct rl_maps *m);	/* every fd -1 */
void rl_maps_close(struct rl_maps *m);

int rl_ncpus(void);	/* possible CPUs, as per-CPU map reads are sized */
/* Highest possible CPU id + 1 (the bound of a loop over CPU ids, which a
 * non-contiguous possible mask makes larger than rl_ncpus()), or -errno. */
int rl_cpu_ids(void);

int rl_config_read(const struct rl_maps *m, struct rl_config *cfg);
int rl_config_write(const struct rl_maps *m, const struct rl_config *cfg);

/* Sum of the per-CPU interface counters. */
int rl_counters_sum(const struct rl_maps *m, struct rl_counters *sum);

/* Sum of the per-CPU counters of the rule in slot `slot`. */
int rl_rule_counters_sum(const struct rl_maps *m, __u32 slot,
			 struct rl_rule_counters *sum);

/* Per-CPU values of one entry (ncpus x value size, 8-byte aligned). */
void *rl_percpu_alloc(size_t value_size);
#define RL_PERCPU_VAL(base, size, cpu) \
	((void *)((char *)(base) + (cpu) * (((size) + 7) & ~(size_t)7)))

/* CLOCK_MONOTONIC in ns */
__u64 rl_now_ns(void);
/* Now on the clock of the program's windows and bans (RL_F_COARSE_CLOCK:
 * CLOCK_MONOTONIC_COARSE, which bpf_ktime_get_coarse_ns() reads), so that a
 * bucket or a ban is not taken for over up to a tick before it is. */
__u64 rl_prog_now_ns(const struct rl_settings *s);
/* The tick of bpf_ktime_get_coarse_ns() (CLOCK_MONOTONIC_COARSE), 0 if
 * unknown: what attach's choice of clock rests on (rl_settings_clock). */
__u64 rl_coarse_tick_ns(void);

/* Highest CPU id + 1 in a kernel CPU list ("0-3,8-11" gives 12), or
 * -EINVAL. Per-CPU map slots are addressed by id, so this, not the count,
 * bounds a loop over them. */
int rl_cpu_mask_bound(const char *text);

#endif /* RL_MAPS_H */
