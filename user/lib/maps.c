// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/maps.h"

const struct rl_map_def rl_map_defs[RL_NR_MAPS] = {
#define RL_MAP_DEF(name, type, key, value) \
	[RL_MAP_IDX_##name] = { RL_MAP_NAME(name), type, sizeof(key), sizeof(value) },
	RL_MAPS(RL_MAP_DEF)
#undef RL_MAP_DEF
};

void rl_maps_init(struct rl_maps *m)
{
	for (int i = 0; i < RL_NR_MAPS; i++)
		m->fd[i] = -1;
}

int rl_maps_from_obj(struct bpf_object *obj, struct rl_maps *m)
{
	for (int i = 0; i < RL_NR_MAPS; i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(obj, rl_map_defs[i].name);

		if (!map)
			return -ENOENT;
		m->fd[i] = bpf_map__fd(map);
	}
	return 0;
}

void rl_maps_close(struct rl_maps *m)
{
	for (int i = 0; i < RL_NR_MAPS; i++) {
		if (m->fd[i] >= 0)
			close(m->fd[i]);
		m->fd[i] = -1;
	}
}

int rl_ncpus(void)
{
	static int n;

	if (!n)
		n = libbpf_num_possible_cpus();
	return n;
}

int rl_cpu_ids(void)
{
	static int n;
	char buf[4096];
	FILE *f;

	if (n)
		return n;
	f = fopen("/sys/devices/system/cpu/possible", "r");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	n = rl_cpu_mask_bound(buf);
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

__u64 rl_prog_now_ns(const struct rl_settings *s)
{
	struct timespec ts;

	clock_gettime(s->flags & RL_F_COARSE_CLOCK ? CLOCK_MONOTONIC_COARSE :
		      CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * RL_NSEC_PER_SEC + ts.tv_nsec;
}

__u64 rl_coarse_tick_ns(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res))
		return 0;
	return (__u64)res.tv_sec * RL_NSEC_PER_SEC + res.tv_nsec;
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

		/* every row of RL_COUNTERS (a bookkeeping row's sum, a
		 * period or a count within one, is read by nobody) */
#define COUNTER_SUM(field, ...) sum->field += c->field;
		RL_COUNTERS(COUNTER_SUM)
#undef COUNTER_SUM
	}
out:
	free(v);
	return err;
}

int rl_rule_counters_sum(const struct rl_maps *m, __u32 slot,
			 struct rl_rule_counters *sum)
{
	struct rl_rule_counters *v = rl_percpu_alloc(sizeof(*v));
	int err = 0;

	memset(sum, 0, sizeof(*sum));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(m->rule_counters, &slot, v)) {
		err = -errno;
		goto out;
	}
	for (int cpu = 0; cpu < rl_ncpus(); cpu++) {
		const struct rl_rule_counters *c = RL_PERCPU_VAL(v, sizeof(*v), cpu);

		sum->passed_pkts += c->passed_pkts;
		sum->passed_bytes += c->passed_bytes;
		sum->dropped_pkts += c->dropped_pkts;
		sum->dropped_bytes += c->dropped_bytes;
	}
out:
	free(v);
	return err;
}

int rl_cpu_mask_bound(const char *text)
{
	const char *p = text;
	long hi = -1;

	/* "0-3,8-11\n": ranges and single ids, ascending */
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0)
			return -EINVAL;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a)
				return -EINVAL;
		}
		if (b > hi)
			hi = b;
		p = end;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return hi < 0 || hi >= 0x7fffffff ? -EINVAL : (int)hi + 1;
}
