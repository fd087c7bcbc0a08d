/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What an attach asks for and what it got: the types attach_txn.h (the
 * transaction) and xdp_multi.h (libxdp's dispatcher) share, apart from
 * either so that neither needs the other's header.
 */
#ifndef RL_ATTACH_H
#define RL_ATTACH_H

#include "lib/maps.h"

enum rl_xdp_mode { RL_XDP_AUTO, RL_XDP_NATIVE, RL_XDP_GENERIC };

/* How the program got attached. */
struct rl_attach_result {
	enum rl_mode mode;	/* native or generic */
	int native_err;		/* auto fell back to generic: why native failed */
	unsigned int prio;	/* under libxdp's dispatcher at this priority; 0: not */
};

/* What to attach. */

#endif /* RL_ATTACH_H */
