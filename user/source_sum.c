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
	/* the CPU's newest bucket and the one before; older ones are in
	 * the history */
	rl_window_usage_at(&src->st.win, now, s->bucket_ns, s->nbuckets, &p, &b);
	out->window_pkts += p;
	out->window_bytes += b;
	rl_past_usage(&src->st.past, now / s->bucket_ns, s->nbuckets,
		      &out->window_pkts, &out->window_bytes);
	if (rl_marker_live(src->st.flushed, now / s->bucket_ns, s->nbuckets))
		out->past = true;
}

void rl_source_sum_history(struct rl_source_sum *out, int history_fd,
			   const struct rl_settings *s, __u64 now)
{
	struct rl_history h;

	/* read after every CPU's value, as the program does (window.h): a
	 * roll in between is counted twice, never missed */
	if (!out->past || bpf_map_lookup_elem(history_fd, &out->key, &h))
		return;
	rl_hist_usage(&h, now / s->bucket_ns, s->nbuckets, &out->window_pkts,
		      &out->window_bytes);
}

void rl_source_sum_cpus(const struct rl_key *key, const void *vals, int ncpus,
			int history_fd, const struct rl_settings *s,
			__u32 rules_gen, __u64 now, struct rl_source_sum *out,
			bool *rule_cached, __u32 *rule_id)
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
	rl_source_sum_history(out, history_fd, s, now);
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
	rl_source_sum_history(out, m->history, s, now);
out:
	free(v);
	return err;
}
