/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The egress hook (xdp-ratelimit(8), "Verified sources"): the program's
 * rl_egress as a tc clsact egress filter on the interface, or on each
 * --replies-via interface, so that the host's answers mark their peers
 * verified. The filter of XDP interface X is the one with handle X's
 * ifindex and priority RL_TC_PRIORITY on each of those interfaces: attach
 * adds it before the XDP link is pinned, detach and the repair of an
 * interrupted attach remove it. One program runs in every filter of an
 * interface: it is pinned once, as RL_PIN_EGRESS in the XDP interface's
 * directory (the hook interfaces of --replies-via have none), before the
 * first filter runs it, and unpinned only after the last filter stopped
 * running it, so that a pin always names each program a filter runs.
 */
#ifndef RL_EGRESS_H
#define RL_EGRESS_H

#include <stddef.h>
#include "ratelimit.h"

#define RL_PIN_EGRESS		"egress"
/* reload: the new program, pinned beside the old one until every filter
 * runs it, then renamed over RL_PIN_EGRESS (bpffs refuses dots in names) */
#define RL_PIN_EGRESS_NEXT	"egress_next"

/* The interfaces the hook of XDP interface `ifindex` sits on: `via`
 * (0-terminated, up to RL_MAX_REPLIES_VIA), or the interface itself. */
int rl_egress_hooks(int ifindex, const __u32 via[RL_MAX_REPLIES_VIA],
		    int out[RL_MAX_REPLIES_VIA]);

/* Before rl_egress_attach: create the clsact qdisc of each hook interface
 * that has none. Returns the RL_F_OWN_CLSACT bits of those it created (to
 * record in the config before the filters are added), or a negative errno
 * with err set. */
int rl_egress_qdiscs(int ifindex, const __u32 via[RL_MAX_REPLIES_VIA],
		     char *err, size_t errlen);

/* Add the hook of XDP interface `ifindex` running `prog_fd`; on failure
 * nothing stays and err says why. */
int rl_egress_attach(int prog_fd, int ifindex, const __u32 via[RL_MAX_REPLIES_VIA],
		     char *err, size_t errlen);

/* reload: the hook of XDP interface `ifindex` runs `prog_fd` on each of
 * its interfaces, each filter's program replaced in place (added where
 * there is none), and the filters of interfaces no longer in `via` go
 * (rl_egress_sweep). The pins of `dir` (for rl_pin_path) follow:
 * `prog_fd` pinned as RL_PIN_EGRESS_NEXT first, renamed over
 * RL_PIN_EGRESS last. An RL_PIN_EGRESS_NEXT found (a reload that failed
 * or died half way) is completed first. On failure the filters done so
 * far keep the new program, the others the old one, each pinned; err
 * says what failed. */
int rl_egress_replace(int prog_fd, int ifindex, const __u32 via[RL_MAX_REPLIES_VIA],
		      const char *dir, char *err, size_t errlen);

/* The id of the program pinned as RL_PIN_EGRESS in `dir`, 0 when there
 * is none (attached by a version that did not pin it), or -errno. */
int rl_egress_pinned_id(const char *dir);

/* Remove the filter of XDP interface `ifindex` from every interface here
 * but the hook interfaces of `via` (what a reload that changed
 * --replies-via no longer uses, even when one was killed half way):
 * 0 or the first error. */
int rl_egress_sweep(int ifindex, const __u32 via[RL_MAX_REPLIES_VIA]);

/* Remove the hook of XDP interface `ifindex` (what is not there is fine),
 * and the clsact qdiscs of `own` (RL_F_OWN_CLSACT bits) that no filter
 * uses any more: 0 or the first error. */
int rl_egress_detach(int ifindex, const __u32 via[RL_MAX_REPLIES_VIA], __u32 own);

/* The program id of the hook of XDP interface `ifindex` on `hook_ifindex`,
 * or a negative errno (-ENOENT: none). */
int rl_egress_prog_id(int ifindex, int hook_ifindex);

#endif /* RL_EGRESS_H */
