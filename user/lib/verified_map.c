// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <bpf/bpf.h>
#include "lib/verified_map.h"
#include "verified.h"

bool rl_source_is_verified(const struct rl_maps *m, const struct rl_settings *s,
			   const struct rl_key *key, __u64 now)
{
	struct rl_verified v;

	return m->verified >= 0 && !bpf_map_lookup_elem(m->verified, key, &v) &&
	       rl_verified_holds(v.answered_ns, now, s->verified_ttl_ns);
}

int rl_verified_count(const struct rl_maps *m, const struct rl_settings *s,
		      __u64 now, __u64 *count, __u64 *entries)
{
	struct rl_key k, next;
	struct rl_verified v;
	void *prev = NULL;
	/* bounded: an LRU being written to may hand back keys again */
	__u64 steps = 4ULL * s->max_sources + 16;

	*count = 0;
	if (entries)
		*entries = 0;
	if (m->verified < 0)
		return 0;
	while (steps-- && !bpf_map_get_next_key(m->verified, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(m->verified, &k, &v))
			continue;
		if (entries)
			(*entries)++;
		if (rl_verified_holds(v.answered_ns, now, s->verified_ttl_ns))
			(*count)++;
	}
	return errno == ENOENT || !steps ? 0 : -errno;
}

__u64 rl_verified_evicted(__u64 inserts, __u64 entries)
{
	return inserts > entries ? inserts - entries : 0;
}
