// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The state of an attached interface (attached_state.h). */
#include <errno.h>
#include <stdio.h>
#include <net/if.h>
#include "lib/attached_state.h"
#include "lib/egress.h"
#include "lib/pin.h"
#include "lib/reload_txn.h"
#include "lib/rule_txn.h"

static const char *const names[RL_ATTACHED_NR_STATES] = {
	[RL_ATTACHED_OK] = "ok",
	[RL_ATTACHED_BROKEN] = "broken",
	[RL_ATTACHED_GONE] = "gone",
};

const char *rl_attached_state_name(enum rl_attached_state s)
{
	return (unsigned int)s < RL_ATTACHED_NR_STATES ? names[s] : "broken";
}

static enum rl_attached_state broken(char *why, size_t len, const char *what)
{
	snprintf(why, len, "%s", what);
	return RL_ATTACHED_BROKEN;
}

/* The egress hook on every interface it sits on (a filter removed by
 * hand leaves nothing verified). */
static enum rl_attached_state hooks_state(const char *name, const struct rl_iface *ifc,
					  char *why, size_t len)
{
	int hooks[RL_MAX_REPLIES_VIA];
	int n = rl_egress_hooks((int)ifc->cfg.set.ifindex, ifc->cfg.set.replies_via, hooks);

	for (int i = 0; i < n; i++) {
		char hook[IF_NAMESIZE] = "?";

		if (rl_egress_prog_id((int)ifc->cfg.set.ifindex, hooks[i]) > 0)
			continue;
		if_indextoname((unsigned int)hooks[i], hook);
		snprintf(why, len,
			 "its egress hook on %s is missing (removed by hand?): no source gets verified; 'xdp-ratelimit detach %s' and attach again",
			 hook, name);
		return RL_ATTACHED_BROKEN;
	}
	return RL_ATTACHED_OK;
}

enum rl_attached_state rl_attached_state(const char *name, struct rl_iface *ifc,
					 bool *opened, char *why, size_t len)
{
	/* judging writes nothing: read-only fds, as the exporter holds */
	*opened = rl_iface_open_read_only(name, ifc, why, len) == 0;
	if (!*opened && rl_reload_stale(name) && !rl_change_running())
		return broken(why, len, "a reload onto new maps was cut short after its swap (CLI killed?): the new program runs, its maps wait in a staging directory; run 'xdp-ratelimit reload IFACE' (or detach) to complete it");
	if (!*opened)
		return RL_ATTACHED_BROKEN;	/* rl_iface_open said why */
	return rl_attached_state_of(name, ifc, why, len);
}

enum rl_attached_state rl_attached_state_of(const char *name,
					    const struct rl_iface *ifc,
					    char *why, size_t len)
{
	int ifindex = rl_link_ifindex(name, NULL);

	if (ifindex == -ENOENT)
		return broken(why, len, "the link pin is missing, so the program is not attached, or runs uncommitted under libxdp's dispatcher (an attach was interrupted, or the pin was removed)");
	if (ifindex == -ENOLINK)
		return broken(why, len, "the program is no longer among the XDP programs of the interface (removed with xdp-loader?), so it does not run");
	if (ifindex < 0)
		return broken(why, len, "the link pin is not an XDP link");
	if (ifindex == 0) {
		snprintf(why, len, "the interface is gone (deleted or moved); the program no longer runs");
		return RL_ATTACHED_GONE;
	}
	if ((__u32)ifindex != ifc->cfg.set.ifindex)
		return broken(why, len, "the link is attached to another interface than recorded");
	if (rl_rule_txn_pending(name) && !rl_change_running())
		return broken(why, len, "a restore was cut short (CLI killed?): 'quota list' shows the rule set it was applying, not all enforced yet; run the restore again, or any 'quota set/del' on this interface, to complete it");
	if (RL_RULES_CHANGING(ifc->cfg.rules_gen) && !rl_change_running())
		return broken(why, len, "a quota change was cut short (CLI killed?): the rules 'quota list' shows are enforced; repeat that change to complete it");
	return hooks_state(name, ifc, why, len);
}
