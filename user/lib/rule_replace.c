// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A whole rule set in one change (rule_replace.h): what restore applies. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "lib/rule_replace.h"
#include "lib/rule_store.h"

/* The live rules, as userspace holds them (rule_scope.h), with their slots. */
struct live {
	struct rl_rule *r;
	__u32 *id;
	int *sidx;		/* its scope's index in the maps */
	bool *kept;		/* wanted as it is, or rewritten in place */
	int *match;		/* per wanted rule: its live rule, or -ENOENT */
	int n;
};

int rl_rule_find(const struct rl_rule *rules, int n, const struct rl_rule *r)
{
	for (int i = 0; i < n; i++)
		if (rl_rule_same_key(&rules[i], r))
			return i;
	return -ENOENT;
}

void rl_rule_diff(const struct rl_rule *have, int nhave,
		  const struct rl_rule *want, int nwant, int *match,
		  bool *kept, struct rl_rule_diff *d)
{
	memset(d, 0, sizeof(*d));
	memset(kept, 0, nhave * sizeof(*kept));
	for (int i = 0; i < nwant; i++) {
		int k = rl_rule_find(have, nhave, &want[i]);

		match[i] = k;
		if (k < 0) {
			d->added++;
			continue;
		}
		kept[k] = true;
		if (memcmp(&have[k], &want[i], sizeof(want[i])))
			d->changed++;
	}
	for (int i = 0; i < nhave; i++)
		d->deleted += !kept[i];
}

/* Apply the plan: deletions first, which free slots for the new rules. */
static int replace_apply(const struct rl_maps *m, const struct live *live,
			 bool *used, const struct rl_rule *want, int n)
{
	bool had_default = false;
	struct rl_prefix p;
	__u32 next = 0;
	int ret;

	/* the default's windows stay while any half of it was set, even
	 * one deleted below */
	for (int i = 0; i < live->n; i++)
		had_default |= !live->r[i].prefixlen && !live->r[i].scope;
	for (int i = 0; i < live->n; i++) {
		if (live->kept[i])
			continue;
		rl_rule_prefix(&live->r[i], &p);
		ret = rl_store_del(m, &p, live->sidx[i], live->id[i]);
		if (ret)
			return ret;
		used[live->id[i]] = false;
	}
	for (int i = 0; i < n; i++) {
		int k = live->match[i];

		if (k >= 0 && !memcmp(&live->r[k], &want[i], sizeof(want[i])))
			continue;
		if (k >= 0) {
			ret = rl_store_put(m, &want[i], live->id[k], false);
		} else {
			while (next < RL_MAX_RULES && used[next])
				next++;
			if (next == RL_MAX_RULES)
				return -ENOSPC;
			used[next] = true;
			ret = rl_store_counters_reset(m, next);
			if (ret)
				return ret;
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

static void live_free(struct live *l)
{
	free(l->r);
	free(l->id);
	free(l->sidx);
	free(l->kept);
	free(l->match);
}

/* Every live rule of the maps, with its slot and scope index. */
static int live_read(const struct rl_maps *m, struct live *l, int nwant)
{
	struct rl_scope table[RL_MAX_SCOPES];
	struct rl_rule r;
	int ret;

	l->r = calloc(RL_MAX_RULES, sizeof(*l->r));
	l->id = calloc(RL_MAX_RULES, sizeof(*l->id));
	l->sidx = calloc(RL_MAX_RULES, sizeof(*l->sidx));
	l->kept = calloc(RL_MAX_RULES, sizeof(*l->kept));
	l->match = calloc(nwant ? nwant : 1, sizeof(*l->match));
	if (!l->r || !l->id || !l->sidx || !l->kept || !l->match)
		return -ENOMEM;
	ret = rl_rule_scopes_read(m, table);
	if (ret)
		return ret;
	for (__u32 id = 0; id < RL_MAX_RULES; id++) {
		if (bpf_map_lookup_elem(m->rules, &id, &r))
			return -errno;
		if (!rl_store_slot_live(m, id, &r))
			continue;
		/* compared with the wanted rules without the flag that
		 * rl_store_default_share() keeps */
		r.flags &= ~RL_RULE_F_APART;
		l->sidx[l->n] = rl_store_map_scope(&r);
		rl_rule_from_map(&r, table);
		l->r[l->n] = r;
		l->id[l->n++] = id;
	}
	return 0;
}

int rl_rule_replace(const struct rl_maps *m, const struct rl_rule *want,
		    int n, char *err, size_t errlen)
{
	struct live live = { 0 };
	bool *used = calloc(RL_MAX_RULES, sizeof(*used));
	struct rl_rule_diff d;
	int changes = 0, ret = -ENOMEM;

	if (!used)
		goto out;
	ret = live_read(m, &live, n);
	if (ret)
		goto out;
	for (int i = 0; i < live.n; i++)
		used[live.id[i]] = true;
	rl_rule_diff(live.r, live.n, want, n, live.match, live.kept, &d);
	changes = d.added + d.deleted + d.changed;
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
		ret = replace_apply(m, &live, used, want, n);
	if (!ret)
		ret = rl_store_default_share(m);
	if (!ret || ret == -EMLINK || ret == -ENOSPC)
		(void)rl_store_scopes_collect(m);
	/* over, as far as it got (as in rl_rule_set) */
	if (rl_store_mark_change(m, false) && !ret)
		ret = -EIO;
	for (int i = 0; i < live.n && !ret; i++)
		if (!live.kept[i] && live.sidx[i] != RL_NO_SCOPE) {
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
	live_free(&live);
	free(used);
	return ret < 0 ? ret : changes;
}
