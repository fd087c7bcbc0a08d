// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Per-CPU values of a source, summed (source_sum.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "maps.h"
#include "window.h"

void rl_source_sum_add(struct rl_source_sum *out, const struct rl_source *src,
		       const struct rl_settings *s, __u64 now)
{
	__u64 p, b;

	/* another key's state left on this CPU by a reused entry (struct
	 * rl_source `owner`), or none: the program ignores it too */
	if (memcmp(&src->owner, &out->key, sizeof(out->key)))
		return;
	out->passed_pkts += src->passed_pkts;
	out->passed_bytes += src->passed_bytes;
	out->dropped_pkts += src->dropped_pkts;
	out->dropped_bytes += src->dropped_bytes;
	rl_window_usage_at(&src->st.win, now, s->bucket_ns, s->nbuckets, &p, &b);
	out->window_pkts += p;
	out->window_bytes += b;
}

void rl_source_sum_cpus(const struct rl_key *key, const void *vals, int ncpus,
			const struct rl_settings *s, __u32 rules_gen, __u64 now,
			struct rl_source_sum *out, bool *rule_cached,
			__u32 *rule_id)
{
	memset(out, 0, sizeof(*out));
	*rule_cached = false;
	*rule_id = RL_NO_RULE;
	out->key = *key;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		const struct rl_source *src =
			RL_PERCPU_VAL(vals, sizeof(struct rl_source), cpu);

		/* a CPU that never saw the source holds zeroes; generation
		 * 0 is never a resolved one */
		if (!*rule_cached && rules_gen && !RL_RULES_CHANGING(rules_gen) &&
		    src->rule_gen == rules_gen &&
		    !memcmp(&src->owner, key, sizeof(*key)) &&
		    (src->passed_pkts || src->dropped_pkts)) {
			*rule_cached = true;
			*rule_id = src->rule_id;
		}
		rl_source_sum_add(out, src, s, now);
	}
}

void rl_source_sum_buckets(const struct rl_key *key, const void *vals,
			   int ncpus, const struct rl_settings *s, __u64 now,
			   struct rl_source_sum *sum,
			   struct rl_bucket by_age[RL_MAX_BUCKETS])
{
	__u64 cur = now / s->bucket_ns;

	memset(sum, 0, sizeof(*sum));
	memset(by_age, 0, RL_MAX_BUCKETS * sizeof(*by_age));
	sum->key = *key;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		const struct rl_source *src =
			RL_PERCPU_VAL(vals, sizeof(struct rl_source), cpu);
		const struct rl_window *w = &src->st.win;

		if (memcmp(&src->owner, key, sizeof(*key)))
			continue;	/* another key's leftovers, or unused */
		rl_source_sum_add(sum, src, s, now);
		/* the ring's live buckets: the newest and nbuckets - 1 before
		 * it, those still in the window at now (a window ahead of now
		 * counts in the newest bucket, as the program counts it) */
		for (__u32 i = 0; w->pkts && i < s->nbuckets; i++) {
			__u64 b = w->bucket - i;
			__s64 age = (__s64)(cur - b);
			const struct rl_bucket *slot = &w->ring[RL_SLOT(b)];

			if (age >= (__s64)s->nbuckets)
				break;
			if (age < 0)
				age = 0;
			by_age[age].pkts = rl_sat_add(by_age[age].pkts, slot->pkts);
			by_age[age].bytes = rl_sat_add(by_age[age].bytes, slot->bytes);
		}
	}
}

int rl_source_read(const struct rl_maps *m, const struct rl_settings *s,
		   const struct rl_key *key, __u64 now, struct rl_source_sum *out)
{
	struct rl_source *v = rl_percpu_alloc(sizeof(*v));
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->key = *key;
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(m->sources, key, v)) {
		err = -errno;
		goto out;
	}
	for (int cpu = 0; cpu < rl_ncpus(); cpu++)
		rl_source_sum_add(out, RL_PERCPU_VAL(v, sizeof(*v), cpu), s, now);
out:
	free(v);
	return err;
}
