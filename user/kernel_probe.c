// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Before attach loads the program: does this kernel have what it calls?
 * Without this, an old kernel's answer is a verifier log ("unknown func"),
 * not what is missing and what would work. Newest first, so that the
 * message names the version to upgrade to (README "Kernels").
 */
#include <linux/bpf.h>
#include <bpf/libbpf.h>
#include <stddef.h>
#include "kernel_probe.h"

static const struct rl_kernel_need needs[] = {
	{ "bpf_map_lookup_percpu_elem()", "5.19", BPF_FUNC_map_lookup_percpu_elem, 0 },
	{ "bpf_loop()", "5.17", BPF_FUNC_loop, 0 },
	{ "bpf_ktime_get_coarse_ns()", "5.11", BPF_FUNC_ktime_get_coarse_ns, 0 },
	{ "BPF_MAP_TYPE_RINGBUF", "5.8", 0, BPF_MAP_TYPE_RINGBUF },
};

const struct rl_kernel_need *rl_kernel_missing(rl_kernel_probe_fn probe)
{
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
		if (probe(&needs[i]) == 0)
			return &needs[i];
	return NULL;
}

int rl_kernel_probe(const struct rl_kernel_need *n)
{
	if (n->helper)
		return libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, n->helper, NULL);
	return libbpf_probe_bpf_map_type(n->map_type, NULL);
}
