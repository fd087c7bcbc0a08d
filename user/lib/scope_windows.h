/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The windows of scoped rules that are gone. A scoped window is keyed by
 * its rule's slot (include/scope.h rl_scoped_key): when the rule is
 * deleted its windows would stay in the table, taking entries, until a
 * new rule in that slot inherited what is left of them. They go with
 * their rule instead.
 */
#ifndef RL_SCOPE_WINDOWS_H
#define RL_SCOPE_WINDOWS_H

#include <stdbool.h>
#include "lib/maps.h"

/* Delete from `sources` and `newcomers` every scoped window whose slot
 * is not live[slot] (RL_MAX_RULES entries). The number deleted, or
 * -errno. A packet judged by the rule on another CPU as it was deleted
 * may still make one window after the sweep; it holds at most a window's
 * counts. */
long rl_scoped_windows_drop(const struct rl_maps *m, const bool *live);

#endif /* RL_SCOPE_WINDOWS_H */
