/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the program needs of the kernel, probed before attach loads it. */
#ifndef RL_KERNEL_PROBE_H
#define RL_KERNEL_PROBE_H

/* One kernel feature the program needs, and the Linux version it came in. */
struct rl_kernel_need {
	const char *what;	/* as doc/design/kernels.md's table names it */
	const char *since;	/* "5.19" */
	int helper;		/* enum bpf_func_id, or 0 for a map type */
	int map_type;		/* enum bpf_map_type when helper is 0 */
};

/* Probe for need `n`: 1 present, 0 absent, < 0 cannot tell. */
typedef int (*rl_kernel_probe_fn)(const struct rl_kernel_need *n);

/* The first need the kernel lacks by `probe` (NULL: all present, or the
 * probe could not tell: then loading says what is wrong). */
const struct rl_kernel_need *rl_kernel_missing(rl_kernel_probe_fn probe);

/* The probe of this kernel, through libbpf for an XDP program. */
int rl_kernel_probe(const struct rl_kernel_need *n);

#endif /* RL_KERNEL_PROBE_H */
