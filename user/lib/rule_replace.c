// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A whole rule set in one change (rule_replace.h): what restore applies. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "lib/rule_replace.h"
#include "lib/rule_store.h"

/* A live rule and its slot. */
struct live_rule {
	struct rl_rule r;	/* as userspace holds it (rule_scope.h) */
	__u32 id;
	int sidx;		/* its scope's index in the maps */
	bool kept;		/* wanted as it is, or rewritten in place */
};

static int find_live(const struct live_rule *live, int n,
		     const struct rl_rule *r)
{
	for (int i = 0; i < n; i++)
		if (rl_rule_same_key(&live[i].r, r))
			return i;
	return -1;
}

/* Apply the plan: deletions first, which free slots for the new rules. */
static int replace_apply(const struct rl_maps *m, struct live_rule *live,
			 int nlive, bool *used, const struct rl_rule *want,
			 int n)
{
	bool had_default = false;
	struct rl_prefix p;
	__u32 next = 0;
	int ret;

	/* the default's windows stay while any half of it was set, even
	 * one deleted below */
	for (int i = 0; i < nlive; i++)
		had_default |= !live[i].r.prefixlen && !live[i].r.scope;
	for (int i = 0; i < nlive; i++) {
		if (live[i].kept)
			continue;
		rl_rule_prefix(&live[i].r, &p);
		ret = rl_store_del(m, &p, live[i].sidx, live[i].id);
		if (ret)
			return ret;
		used[live[i].id] = false;
	}
	for (int i = 0; i < n; i++) {
		int k = find_live(live, nlive, &want[i]);

		if (k >= 0 && !memcmp(&live[k].r, &want[i], sizeof(want[i])))
			continue;
		if (k >= 0) {
			ret = rl_store_put(m, &want[i], live[k].id, false);
		} else {
			while (next < RL_MAX_RULES && used[next])
				next++;
			if (next == RL_MAX_RULES)
				return -ENOSPC;
			used[next] = true;
			ret = rl_store_put(m, &want[i], next,
				       want[i].prefixlen || want[i].scope ||
				       !had_default);
		}
		if (ret)
			return ret;
	}
	return 0;
}

static bool any_bans(const struct rl_rule *r, int n)
{
	for (int i = 0; i < n; i++)
		if (r[i].ban_ns)
			return true;
	return false;
}

int rl_rule_replace(const struct rl_maps *m, const struct rl_rule *want,
		    int n, char *err, size_t errlen)
{
	struct live_rule *live = calloc(RL_MAX_RULES, sizeof(*live));
	bool *used = calloc(RL_MAX_RULES, sizeof(*used));
	int nlive = 0, changes = 0, ret = -ENOMEM;
	struct rl_scope table[RL_MAX_SCOPES];
	struct rl_rule r;
	int sidx;

	if (!live || !used)
		goto out;
	ret = rl_rule_scopes_read(m, table);
	if (ret)
		goto out;
	for (__u32 id = 0; id < RL_MAX_RULES; id++) {
		if (bpf_map_lookup_elem(m->rules, &id, &r)) {
			ret = -errno;
			goto out;
		}
		if (!rl_store_slot_live(m, id, &r))
			continue;
		/* compared with the wanted rules without the flag that
		 * rl_store_default_share() keeps */
		r.flags &= ~RL_RULE_F_APART;
		sidx = rl_store_map_scope(&r);
		rl_rule_from_map(&r, table);
		live[nlive++] = (struct live_rule){ .r = r, .id = id,
						    .sidx = sidx };
		used[id] = true;
	}
	for (int i = 0; i < n; i++) {
		int k = find_live(live, nlive, &want[i]);

		if (k >= 0)
			live[k].kept = true;
		if (k < 0 || memcmp(&live[k].r, &want[i], sizeof(want[i])))
			changes++;
	}
	for (int i = 0; i < nlive; i++)
		changes += !live[i].kept;
	ret = 0;
	if (!changes) {
		/* no write, unless a change was cut short after its last
		 * rule: then the generation is odd, and this completes it */
		ret = rl_store_mark_change(m, false);
		goto out;
	}
	ret = rl_store_note_bans(m, any_bans(want, n));
	if (!ret)
		ret = rl_store_mark_change(m, true);
	if (!ret)
		ret = replace_apply(m, live, nlive, used, want, n);
	if (!ret)
		ret = rl_store_default_share(m);
	if (!ret || ret == -EMLINK || ret == -ENOSPC)
		(void)rl_store_scopes_collect(m);
	/* over, as far as it got (as in rl_rule_set) */
	if (rl_store_mark_change(m, false) && !ret)
		ret = -EIO;
	for (int i = 0; i < nlive && !ret; i++)
		if (!live[i].kept && live[i].sidx != RL_NO_SCOPE) {
			ret = rl_store_drop_dead_windows(m);
			break;
		}
out:
	if (ret == -ENOSPC)
		snprintf(err, errlen, "more than %u rules: the rule slots are full",
			 RL_MAX_RULES);
	else if (ret == -EMLINK)
		snprintf(err, errlen, "more than %u scopes: rules may have %u different scopes (--proto with its --dport and --syn) at most",
			 RL_MAX_SCOPES, RL_MAX_SCOPES);
	else if (ret < 0)
		snprintf(err, errlen, "cannot update the rule maps: %s",
			 strerror(-ret));
	free(live);
	free(used);
	return ret < 0 ? ret : changes;
}
