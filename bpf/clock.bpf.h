/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Time: the clock every window is read on (xdp-ratelimit(8) Window).
 */
#ifndef RL_CLOCK_BPF_H
#define RL_CLOCK_BPF_H

#include "maps.bpf.h"

static __always_inline __u64 rl_now(const struct rl_config *cfg)
{
#ifdef RL_TEST_CLOCK
	/* test build only: BPF_PROG_TEST_RUN cannot move time */
	if (cfg->test_now_ns)
		return cfg->test_now_ns;
#endif
	/* a constant at load: the verifier drops the other branch */
	if (settings.flags & RL_F_COARSE_CLOCK)
		return bpf_ktime_get_coarse_ns();
	return bpf_ktime_get_ns();
}
#endif /* RL_CLOCK_BPF_H */
