/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Loading the XDP program: everything between open and attach. rl_load()
 * is what attach runs; the program tests and the benchmark run its steps
 * (rl_loader_prepare, rl_loader_init) around their own load. They work on
 * any skeleton of bpf/ratelimit.bpf.c (the real one and the test-clock
 * build).
 */
#ifndef RL_LOADER_H
#define RL_LOADER_H

#include <bpf/libbpf.h>
#include "lib/maps.h"

/* Before load: fix the settings in .rodata and size the sources map.
 * `rodata` is &skel->rodata->settings. */
int rl_loader_prepare(struct bpf_object *obj, struct rl_settings *rodata,
		      const struct rl_settings *s);

/* After load: the config map (settings, first rules generation) and the
 * default rule when a default rate was given (RL_UNLIMITED: none). */
int rl_loader_init(const struct rl_maps *m, const struct rl_settings *s,
		   __u64 default_pps, __u64 default_bps, char *err,
		   size_t errlen);

/*
 * Load an opened skeleton `sk` with settings `s` (`rodata` as for
 * rl_loader_prepare), fill `m` with the fds of its maps (owned by the
 * object) and initialise them as rl_loader_init does. 0, or -errno with
 * a message in err.
 */
int rl_load(struct bpf_object_skeleton *sk, struct rl_settings *rodata,
	    const struct rl_settings *s, __u64 default_pps, __u64 default_bps,
	    struct rl_maps *m, char *err, size_t errlen);

/*
 * reload: load `sk` with settings `s` whose maps are those of `pinned`
 * (an attached interface's, of the same sizes: bpf_map__reuse_fd), so
 * that the program it makes shares every rule, ban, window and counter.
 * Writes no map. 0, or -errno with a message in err.
 */
int rl_load_reusing(struct bpf_object_skeleton *sk, struct rl_settings *rodata,
		    const struct rl_settings *s, const struct rl_maps *pinned,
		    char *err, size_t errlen);

/*
 * Bind every map of `m` to the program `prog_fd`: a map it never reads
 * (`sync`, the agent's; a map a later program version reads) is among the
 * program's maps all the same, as every pinned map must be (user/lib/iface.c).
 * 0 or -errno.
 */
int rl_maps_bind(int prog_fd, const struct rl_maps *m);

#endif /* RL_LOADER_H */
