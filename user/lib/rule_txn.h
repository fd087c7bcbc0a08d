/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Replacing an interface's whole rule set at once (restore), crash-safe:
 * the rule set wanted is pinned first as a map of its own,
 * rl_pin_root()/IFACE/RL_PIN_RESTORING, and that pin is the commit point;
 * then the rule maps are brought to it (rl_rule_replace) and the pin is
 * removed. Killed before the pin, nothing changed; killed after it, the
 * new set is what `quota list` and `save` show (they read the pin while
 * it exists), status reports the replacement cut short, and the next
 * restore or quota set/del of the interface completes it.
 */
#ifndef RL_RULE_TXN_H
#define RL_RULE_TXN_H

#include <stddef.h>
#include "lib/iface.h"
#include "lib/rule.h"

#define RL_PIN_RESTORING	"restoring"

/* Under the lock: complete a replacement cut short, if any. 1 when there
 * was one, 0 when none, or a negative errno with err set. */
int rl_rule_txn_finish(const struct rl_iface *ifc, char *err, size_t errlen);

/* Under the lock, after rl_rule_txn_finish: make the rules `want` (n).
 * Returns how many rules were added, changed or deleted (0: nothing was
 * written), or a negative errno with err set. */
int rl_rule_txn_replace(const struct rl_iface *ifc, const struct rl_rule *want,
			 int n, char *err, size_t errlen);

/* Is a replacement of the rules of `iface` pinned (in progress or cut
 * short)? */
bool rl_rule_txn_pending(const char *iface);

/*
 * The rule set as `quota list` shows it, for readers that take no lock:
 * the one a replacement in progress is bringing in, else rl_rule_list()
 * read again until no change ran meanwhile. Count (at most max, sorted as
 * rl_rule_list) or a negative errno.
 */
int rl_rules_read(const struct rl_iface *ifc, struct rl_rule *out, int max);

#endif /* RL_RULE_TXN_H */
