// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The rule of a source, as the program finds it (rule_lookup.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "lib/rule_lookup.h"
#include "lib/rule_store.h"

int rl_rule_lookup(const struct rl_maps *m, const struct rl_key *key,
		   bool v6, struct rl_rule *out)
{
	struct rl_prefix p = { .v6 = v6, .len = v6 ? 128 : 32 };
	rl_lpm_key_t k;
	__u32 id;

	memcpy(p.addr, v6 ? key->addr : key->addr + 12, v6 ? 16 : 4);
	if (bpf_map_lookup_elem(rl_store_lpm_key(m, &p, RL_NO_SCOPE, &k), &k, &id))
		return -ENOENT;
	if (bpf_map_lookup_elem(m->rules, &id, out))
		return -errno;
	return (out->flags & RL_RULE_F_USED) ? 0 : -ENOENT;
}

static const struct rl_rule *cached_rule(const struct rl_maps *m,
					 struct rl_rule_cache *rc, __u32 id)
{
	if (id >= RL_MAX_RULES)
		return NULL;
	if (!rc->rules) {
		rc->rules = calloc(RL_MAX_RULES, sizeof(*rc->rules));
		rc->state = calloc(RL_MAX_RULES, sizeof(*rc->state));
		if (!rc->rules || !rc->state)
			return NULL;
	}
	if (rc->state[id] == RL_SLOT_UNREAD)
		rc->state[id] = !bpf_map_lookup_elem(m->rules, &id, &rc->rules[id]) &&
				(rc->rules[id].flags & RL_RULE_F_USED) ?
				RL_SLOT_USED : RL_SLOT_UNUSABLE;
	return rc->state[id] == RL_SLOT_USED ? &rc->rules[id] : NULL;
}

void rl_rule_cache_free(struct rl_rule_cache *rc)
{
	free(rc->rules);
	free(rc->state);
	rc->rules = NULL;
	rc->state = NULL;
}

const struct rl_rule *rl_rule_of_source(const struct rl_maps *m,
					struct rl_rule_cache *rc,
					const struct rl_key *key,
					bool rule_cached, __u32 rule_id,
					struct rl_rule *found)
{
	const struct rl_rule *rule = NULL;

	if (rule_cached && rule_id == RL_NO_RULE)
		return NULL;
	if (rule_cached)
		rule = cached_rule(m, rc, rule_id);
	if (!rule && !rl_rule_lookup(m, key, !rl_key_is_v4(key), found))
		rule = found;
	return rule;
}
