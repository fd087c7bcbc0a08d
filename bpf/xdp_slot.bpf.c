// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What libxdp's dispatcher runs of xdp-ratelimit (user/lib/xdp_multi.c): a
 * stub that tail-calls the real program in the one entry of `slot`. The
 * dispatcher's freplace link cannot change its program, but the slot can
 * (one bpf_map_update_elem, atomic per packet): that is how `reload`
 * swaps the program under the dispatcher without a gap. The stub is
 * named like the program and carries its XDP_RUN_CONFIG, so libxdp and
 * xdp-loader see xdp_ratelimit at its priority.
 *
 * The stub uses no map but the slot: a reload onto new maps puts a
 * program on other maps in the slot, and the stub (which cannot change)
 * then holds nothing of the old ones, and is found among the dispatcher's
 * programs as the one on the interface's slot (user/lib/xdp_multi.c). An
 * empty slot (never, while attach fills it first and reload only replaces
 * it; its pins removed by hand) drops: no frame passes unjudged.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "ratelimit.h"
#include "run_config.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} slot SEC(".maps");

SEC("xdp")
int xdp_ratelimit(struct xdp_md *ctx)
{
	bpf_tail_call(ctx, &slot, 0);
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
