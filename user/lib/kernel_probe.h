/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the program needs of the kernel, probed before attach loads it. */
#ifndef RL_KERNEL_PROBE_H
#define RL_KERNEL_PROBE_H

#include <stddef.h>

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

/* What says a kernel is PREEMPT_RT, where two XDP runs can interleave on
 * one CPU's state (rl_preempt_rt). */
enum rl_rt_sign {
	RL_RT_NONE = 0,		/* nothing: not PREEMPT_RT */
	RL_RT_REALTIME,		/* /sys/kernel/realtime is 1: the RT patch set */
	RL_RT_VERSION,		/* uname -v names PREEMPT_RT: mainline (6.12+)
				 * too, which has no /sys/kernel/realtime */
	RL_RT_CONFIG,		/* the kernel's config: CONFIG_PREEMPT_RT=y */
};

/* Where to look, each NULL to skip: this kernel's in rl_rt_probe_init(),
 * a test's own files and text otherwise. */
struct rl_rt_probe {
	const char *realtime_path;	/* /sys/kernel/realtime */
	const char *version;		/* uname -v */
	const char *config_paths[2];	/* /proc/config.gz, /boot/config-RELEASE:
					 * gzip or plain text */
};

/* This kernel's places (`release`: uname -r, `buf` holds the config's
 * path). */
void rl_rt_probe_init(struct rl_rt_probe *p, const char *version,
		      const char *release, char *buf, size_t size);

/* The first sign that the kernel is PREEMPT_RT, in the order of struct
 * rl_rt_probe (the config: the first path that can be read); RL_RT_NONE. */
enum rl_rt_sign rl_preempt_rt(const struct rl_rt_probe *p);

#endif /* RL_KERNEL_PROBE_H */
