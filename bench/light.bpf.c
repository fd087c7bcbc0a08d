// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The light-source driver of `ratelimit-bench cpus`: a source that sends
 * one packet per bucket, so that each of its packets rolls the bucket and
 * refreshes its lease. BPF_PROG_TEST_RUN cannot move time, so this moves
 * the test build's clock (ratelimit_test.bpf.o: rl_config.test_now_ns, read
 * instead of the kernel's clock when set) one bucket forward on every
 * repeat, then tail-calls the program under test. `config` is the
 * program's own map (userspace reuses its fd before load); the target is
 * the program, or xdp_pass for the driver's own cost.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "ratelimit.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u64 light_step_ns = 100000000ULL;	/* one bucket */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rl_config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} light_target SEC(".maps");

SEC("xdp")
int xdp_light(struct xdp_md *ctx)
{
	struct rl_config *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cfg)
		return XDP_ABORTED;
	/* one pinned CPU runs it: no race */
	cfg->test_now_ns += light_step_ns;
	bpf_tail_call(ctx, &light_target, 0);
	return XDP_ABORTED;
}

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}
