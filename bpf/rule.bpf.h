/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Rule lookup: the rule covering a source, cached in its entry by rules
 * generation so that the LPM trie is read only after a change; a rule's
 * aggregate budget.
 */
#ifndef RL_RULE_BPF_H
#define RL_RULE_BPF_H

#include "maps.bpf.h"
#include "quota.h"

/* The aggregate budget of rule `r` in `b`. */
static __always_inline void agg_budget(struct rl_budget *b,
				       const struct rl_rule *r)
{
	*b = (struct rl_budget){ r->agg_pkt_budget, r->agg_byte_budget };
}

/* The rule covering the source; the LPM trie is only consulted when the
 * rules changed since the source last resolved it, or while they change. */
static __always_inline __u32 find_rule(struct rl_source *src,
				       const struct rl_key *key, int kind,
				       __u32 gen)
{
	__u32 *id;

	if (src && src->rule_gen == gen && !RL_RULES_CHANGING(gen))
		return src->rule_id;
	if (kind == RL_PKT_V4) {
		struct rl_lpm_v4 k = { .prefixlen = 32 };

		__builtin_memcpy(k.addr, &key->addr[12], 4);
		id = bpf_map_lookup_elem(&rules_v4, &k);
	} else {
		struct rl_lpm_v6 k = { .prefixlen = 128 };

		__builtin_memcpy(k.addr, key->addr, 16);
		id = bpf_map_lookup_elem(&rules_v6, &k);
	}
	if (src) {
		src->rule_gen = gen;
		src->rule_id = id ? *id : RL_NO_RULE;
	}
	return id ? *id : RL_NO_RULE;
}
#endif /* RL_RULE_BPF_H */
