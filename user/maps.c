// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "maps.h"
#include "window.h"

const char *const rl_map_names[RL_NR_MAPS] = {
	RL_MAP_CONFIG, RL_MAP_COUNTERS, RL_MAP_SOURCES, RL_MAP_RULES,
	RL_MAP_RULES_V4, RL_MAP_RULES_V6, RL_MAP_AGGREGATES, RL_MAP_REFUSED,
	RL_MAP_BANS,
};

int *rl_maps_fd(struct rl_maps *m, int i)
{
	int *fds[RL_NR_MAPS] = {
		&m->config, &m->counters, &m->sources, &m->rules,
		&m->rules_v4, &m->rules_v6, &m->aggregates, &m->refused,
		&m->bans,
	};

	return fds[i];
}

void rl_maps_init(struct rl_maps *m)
{
	for (int i = 0; i < RL_NR_MAPS; i++)
		*rl_maps_fd(m, i) = -1;
}

int rl_maps_from_obj(struct bpf_object *obj, struct rl_maps *m)
{
	for (int i = 0; i < RL_NR_MAPS; i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(obj, rl_map_names[i]);

		if (!map)
			return -ENOENT;
		*rl_maps_fd(m, i) = bpf_map__fd(map);
	}
	return 0;
}

void rl_maps_close(struct rl_maps *m)
{
	for (int i = 0; i < RL_NR_MAPS; i++) {
		int *fd = rl_maps_fd(m, i);

		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

int rl_ncpus(void)
{
	static int n;

	if (!n)
		n = libbpf_num_possible_cpus();
	return n;
}

void *rl_percpu_alloc(size_t value_size)
{
	return calloc(rl_ncpus(), (value_size + 7) & ~(size_t)7);
}

__u64 rl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * RL_NSEC_PER_SEC + ts.tv_nsec;
}

int rl_config_read(const struct rl_maps *m, struct rl_config *cfg)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(m->config, &zero, cfg) ? -errno : 0;
}

int rl_config_write(const struct rl_maps *m, const struct rl_config *cfg)
{
	__u32 zero = 0;

	return bpf_map_update_elem(m->config, &zero, cfg, BPF_EXIST) ? -errno : 0;
}

int rl_counters_sum(const struct rl_maps *m, struct rl_counters *sum)
{
	struct rl_counters *v = rl_percpu_alloc(sizeof(*v));
	__u32 zero = 0;
	int err = 0;

	memset(sum, 0, sizeof(*sum));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(m->counters, &zero, v)) {
		err = -errno;
		goto out;
	}
	for (int cpu = 0; cpu < rl_ncpus(); cpu++) {
		const struct rl_counters *c = RL_PERCPU_VAL(v, sizeof(*v), cpu);

		sum->passed_pkts += c->passed_pkts;
		sum->passed_bytes += c->passed_bytes;
		sum->dropped_pkts += c->dropped_pkts;
		sum->dropped_bytes += c->dropped_bytes;
		sum->malformed_pkts += c->malformed_pkts;
		sum->non_ip_pkts += c->non_ip_pkts;
		sum->new_sources += c->new_sources;
		sum->untracked_pkts += c->untracked_pkts;
		sum->refused_unlisted_pkts += c->refused_unlisted_pkts;
		sum->banned_pkts += c->banned_pkts;
	}
out:
	free(v);
	return err;
}

void rl_source_sum_add(struct rl_source_sum *out, const struct rl_source *src,
		       const struct rl_settings *s, __u64 now)
{
	__u64 p, b;

	out->passed_pkts += src->passed_pkts;
	out->passed_bytes += src->passed_bytes;
	out->dropped_pkts += src->dropped_pkts;
	out->dropped_bytes += src->dropped_bytes;
	rl_window_usage_at(&src->st.win, now, s->bucket_ns, s->nbuckets, &p, &b);
	out->window_pkts += p;
	out->window_bytes += b;
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
