/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Sharing an interface with other XDP programs through libxdp's
 * multi-program dispatcher (xdp-tools' convention: xdp-filter,
 * xdp-loader). The dispatcher is one XDP program on the interface that
 * calls each program in turn by priority, through freplace links that
 * libxdp pins under /sys/fs/bpf/xdp/dispatch-IFINDEX-ID/.
 *
 * Under the dispatcher what libxdp attaches is a stub (bpf/xdp_slot.bpf.c)
 * that tail-calls our program from a prog array of one entry, the slot
 * (RL_PIN_SLOT): freplace links cannot change their program, the slot's
 * entry can (reload). Attach pins the stub as RL_PIN_PROG in the
 * interface's directory as its commit point (attach_txn.h). The stub uses
 * the slot alone, so that a reload onto new maps swaps only the slot's
 * entry and the stub holds nothing of the old maps: it is found among the
 * dispatcher's programs as the one on the directory's slot.
 */
#ifndef RL_XDP_MULTI_H
#define RL_XDP_MULTI_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/bpf.h>
#include "lib/attach.h"
#include "lib/maps.h"

#define RL_PIN_PROG	"prog"	/* the commit point under the dispatcher */
#define RL_PIN_SLOT	"slot"	/* the program the stub under it runs */
#define RL_RUN_PRIO	20	/* the object's own (bpf/run_config.bpf.h) */
#define RL_MIN_PRIO	1
#define RL_MAX_PRIO	1000
#define RL_XDP_MAX_PROGS 10	/* libxdp's dispatcher holds at most this many */

/*
 * Whether libxdp's dispatcher can run here: freplace works (0), else
 * -errno of the test (-EPERM on kernels that refuse it; -EOPNOTSUPP with
 * LIBXDP_SKIP_DISPATCHER=1, libxdp's switch). Tested once.
 */
int rl_xdp_multi_support(void);

/* One XDP program on an interface, as `xdp-loader status` lists it. */
struct rl_xdp_prog {
	char name[BPF_OBJ_NAME_LEN];
	__u32 id;
	unsigned int prio;		/* 0 when not under the dispatcher */
	__u32 actions;			/* 1 << XDP_* after which the next runs */
};

struct rl_xdp_progs {
	bool dispatcher;		/* under libxdp's dispatcher */
	__u32 dispatcher_id;
	enum rl_mode mode;		/* native or generic; 0: nothing attached */
	int n;
	struct rl_xdp_prog p[RL_XDP_MAX_PROGS];
};

/* The XDP programs on ifindex (n 0 when none). 0 or -errno. */
int rl_xdp_progs_read(int ifindex, struct rl_xdp_progs *out);

/* "pass,drop" and so on: the chain-call actions, in libxdp's words. */
void rl_xdp_actions_format(__u32 actions, char *buf, size_t len);

/*
 * Attach our program prog_fd (its maps already initialised) to ifindex under libxdp's dispatcher at prio (the
 * object's default when 0), joining the libxdp programs already there.
 * What libxdp attaches is the stub of bpf/xdp_slot.bpf.c, which
 * tail-calls prog_fd from the slot (a prog array of one entry) pinned at
 * slot_pin before the stub is attached: reload swaps the slot's entry.
 * The fd of the stub now running (the caller closes it), or -errno with
 * a message in err; -EBUSY with none: the interface runs a program not
 * under libxdp's dispatcher. On failure nothing is attached (the
 * caller removes slot_pin).
 */
int rl_xdp_multi_attach(const char *iface, int ifindex, unsigned int prio,
			int prog_fd, const char *slot_pin, enum rl_xdp_mode mode, struct rl_attach_result *res,
			char *err, size_t errlen);

/*
 * Remove from the dispatcher of its interface our stub of rl_pin_root()/NAME
 * (an interface or an attach's staging directory): the program on its
 * slot (before the slot: on its config map),
 * if one runs there: what detach and the repair of a dead attach do
 * before they unpin. 1 when one was removed, 0 when none, or -errno.
 */
int rl_xdp_multi_release(const char *name);

/* Whether such a program runs there (what a dead attach left running). */
bool rl_xdp_multi_runs(const char *name);

/*
 * The state of a program pinned as RL_PIN_PROG in NAME's directory: the
 * ifindex it runs on under the dispatcher, -ENOLINK when it no longer
 * runs there, 0 when the interface is gone, -ENOENT when there is no such
 * pin (prog_id: the pinned program's id).
 */
int rl_xdp_multi_where(const char *name, __u32 *prog_id);

/*
 * The slot pinned in NAME's directory (RL_PIN_SLOT), checked to be a
 * prog array of one entry that the stub pinned as RL_PIN_PROG runs: its
 * fd, -ENOENT when there is none (attached by a version without it),
 * -EPROTO when it is not that; prog_id: the program in it (the one
 * judging packets).
 */
int rl_xdp_multi_slot(const char *name, __u32 *prog_id);

/* rl_xdp_multi_where(), but prog_id is the program that judges the
 * frames: the one in the slot (the stub's own id without a slot). */
int rl_xdp_multi_judge(const char *name, __u32 *prog_id);

/* Whether the stub pinned in NAME's directory uses its config map: one
 * attached by a version whose stub held every map (a reload onto new maps
 * would leave the old ones allocated under it until detach). */
bool rl_xdp_multi_stub_on_maps(const char *name);

/* Before its load: make prog a program the slot takes beside the stub. */
struct bpf_program;
void rl_xdp_multi_slot_prog(struct bpf_program *prog);

/* Put prog_fd in the slot in place of its program, in one step: 0 or
 * -errno (then the old program still runs). */
int rl_xdp_multi_swap(int slot_fd, int prog_fd);

/* libbpf's note, at every open of the object, that it skips the
 * .xdp_run_config section (libxdp's, not libbpf's): for quiet printers. */
bool rl_run_config_note(int level, const char *fmt);

/* The priority of the program pinned in NAME's directory under the
 * dispatcher, RL_RUN_PRIO when it runs without one (save writes it). */
unsigned int rl_xdp_multi_prio(const char *name);

#endif /* RL_XDP_MULTI_H */
