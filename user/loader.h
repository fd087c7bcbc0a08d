/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Loading the XDP program: the steps between open and attach that the CLI
 * (cmd_attach.c) and the program tests share. They work on any skeleton of
 * bpf/ratelimit.bpf.c (the real one and the test-clock build).
 */
#ifndef RL_LOADER_H
#define RL_LOADER_H

#include <bpf/libbpf.h>
#include "maps.h"

/* Before load: fix the settings in .rodata and size the sources map.
 * `rodata` is &skel->rodata->settings. */
int rl_loader_prepare(struct bpf_object *obj, struct rl_settings *rodata,
		      const struct rl_settings *s);

/* After load: the config map (settings, first rules generation) and the
 * default rule when a default rate was given (RL_UNLIMITED: none). */
int rl_loader_init(const struct rl_maps *m, const struct rl_settings *s,
		   __u64 default_pps, __u64 default_bps, char *err,
		   size_t errlen);

#endif /* RL_LOADER_H */
