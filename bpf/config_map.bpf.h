/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The config map, alone: in the program's maps (maps.bpf.h) and in the
 * stub the dispatcher runs (xdp_slot.bpf.c), which reads its flags.
 */
#ifndef RL_CONFIG_MAP_BPF_H
#define RL_CONFIG_MAP_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "ratelimit.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rl_config);
} config SEC(".maps");

#endif /* RL_CONFIG_MAP_BPF_H */
