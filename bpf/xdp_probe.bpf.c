// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Whether this kernel lets one XDP program replace a function of another
 * (freplace), which libxdp's multi-program dispatcher is made of: the
 * same test libxdp runs before it uses its dispatcher (user/lib/xdp_multi.c).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int rl_probe_target(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("freplace/rl_probe_target")
int rl_probe_ext(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
