// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Per-CPU values of a source, summed (source_sum.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "lib/maps.h"
#include "lib/source_index_map.h"
#include "lib/source_sum.h"
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

/* Add `pkts`/`bytes` of bucket `b` to by_age, if `b` is in the window
 * that ends in bucket `cur` (a bucket ahead of `cur` counts as now's, as
 * the program counts it). */
static void bucket_add(struct rl_bucket *by_age, const struct rl_settings *s,
		       __u64 cur, __u64 b, __u32 pkts, __u32 bytes)
{
	__s64 age = (__s64)(cur - b);

	if (age >= (__s64)s->nbuckets)
		return;
	if (age < 0)
		age = 0;
	by_age[age].pkts = rl_sat_add(by_age[age].pkts, pkts);
	by_age[age].bytes = rl_sat_add(by_age[age].bytes, bytes);
}

void rl_source_sum_buckets(const struct rl_key *key, const void *vals,
			   int ncpus, int history_fd, const struct rl_settings *s,
			   __u64 now, struct rl_source_sum *sum,
			   struct rl_bucket by_age[RL_MAX_BUCKETS])
{
	__u64 cur = now / s->bucket_ns, newest;
	struct rl_history h;

	memset(sum, 0, sizeof(*sum));
	memset(by_age, 0, RL_MAX_BUCKETS * sizeof(*by_age));
	sum->key = *key;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		const struct rl_source *src =
			RL_PERCPU_VAL(vals, sizeof(struct rl_source), cpu);
		const struct rl_state *st = &src->st;

		if (memcmp(&src->owner, key, sizeof(*key)))
			continue;	/* another key's leftovers, or unused */
		rl_source_sum_add(sum, src, s, now);
		/* the CPU's newest bucket and the one before it */
		if (rl_bucket_live(st->win.bucket, now, s->bucket_ns, s->nbuckets))
			bucket_add(by_age, s, cur, st->win.bucket, st->win.pkts,
				   st->win.bytes);
		if (rl_past_live(&st->past, cur, s->nbuckets))
			bucket_add(by_age, s, cur,
				   rl_tag_index(st->past.bucket, st->win.bucket),
				   st->past.pkts, st->past.bytes);
	}
	/* the older buckets of every CPU, if a marker says the history holds
	 * any of the window */
	if (!sum->past || bpf_map_lookup_elem(history_fd, key, &h))
		return;
	rl_hist_usage(&h, cur, s->nbuckets, &sum->window_pkts, &sum->window_bytes);
	newest = h.newest;
	for (__u32 i = 0; i < RL_MAX_BUCKETS; i++) {
		union rl_hist_count p = h.slot[i].pkts, b = h.slot[i].bytes;

		if (rl_hist_live(p, newest, cur, s->nbuckets))
			bucket_add(by_age, s, cur, rl_tag_index(p.bucket, newest - 1),
				   p.count, 0);
		if (rl_hist_live(b, newest, cur, s->nbuckets))
			bucket_add(by_age, s, cur, rl_tag_index(b.bucket, newest - 1),
				   0, b.count);
	}
}

int rl_source_read(const struct rl_maps *m, const struct rl_settings *s,
		   const struct rl_key *key, __u64 now, struct rl_source_sum *out)
{
	struct rl_source *v = rl_percpu_alloc(sizeof(*v));
	struct rl_index x;
	int err;

	memset(out, 0, sizeof(*out));
	out->key = *key;
	if (!v)
		return -ENOMEM;
	err = rl_index_open(&x, m);
	if (!err)
		err = rl_index_lookup(&x, key, v);
	if (err)
		goto out;
	for (int cpu = 0; cpu < rl_ncpus(); cpu++)
		rl_source_sum_add(out, RL_PERCPU_VAL(v, sizeof(*v), cpu), s, now);
	rl_source_sum_history(out, m->history, s, now);
out:
	free(v);
	return err;
}
