/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * How the program runs among other XDP programs under libxdp's dispatcher
 * (xdp-tools' convention, read by libxdp from the object's BTF): its
 * default priority (lower runs first; `attach --priority` overrides it)
 * and the verdicts after which the next program runs. A frame this
 * program passes goes on to the programs after it; one it drops does not.
 */
#ifndef RL_RUN_CONFIG_BPF_H
#define RL_RUN_CONFIG_BPF_H

#include <xdp/xdp_helpers.h>

#define RL_RUN_PRIO 20	/* user/lib/xdp_multi.h states it too */

struct {
	__uint(priority, RL_RUN_PRIO);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xdp_ratelimit);

#endif /* RL_RUN_CONFIG_BPF_H */
