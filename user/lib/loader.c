// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <bpf/bpf.h>
#include "lib/cookie_host.h"
#include "lib/loader.h"
#include "lib/rule.h"
#include "lib/rule_store.h"
#include "lib/settings.h"
#include "verified.h"

int rl_loader_prepare(struct bpf_object *obj, struct rl_settings *rodata,
		      const struct rl_settings *s)
{
	struct bpf_map *sources = bpf_object__find_map_by_name(obj, RL_MAP_NAME(sources));
	struct bpf_map *index = bpf_object__find_map_by_name(obj, RL_MAP_NAME(source_index));
	struct bpf_map *keys = bpf_object__find_map_by_name(obj, RL_MAP_NAME(source_keys));
	struct bpf_map *history = bpf_object__find_map_by_name(obj, RL_MAP_NAME(history));
	struct bpf_map *remote = bpf_object__find_map_by_name(obj, RL_MAP_NAME(remote));
	struct bpf_map *verified = bpf_object__find_map_by_name(obj, RL_MAP_NAME(verified));
	struct bpf_map *answered = bpf_object__find_map_by_name(obj, RL_MAP_NAME(answered));
	struct bpf_map *synacks = bpf_object__find_map_by_name(obj, RL_MAP_NAME(synacks));
	struct bpf_map *newcomers = bpf_object__find_map_by_name(obj, RL_MAP_NAME(newcomers));
	struct bpf_map *new_history = bpf_object__find_map_by_name(obj, RL_MAP_NAME(new_history));
	struct bpf_map *bloom = bpf_object__find_map_by_name(obj, RL_MAP_NAME(verified_bloom));
	__u32 entries = rl_sources_map_size(s->max_sources, s->ncpus);
	__u32 slots = rl_pool_slots(rl_index_buckets(s->max_sources));
	__u32 new_entries = rl_sources_map_size(rl_newcomers_entries(s->max_sources),
						s->ncpus);
	int err;

	if (!sources || !index || !keys || !history || !remote || !verified || !answered || !synacks ||
	    !newcomers || !new_history || !bloom)
		return -ENOENT;
	*rodata = *s;
	/* an index three quarters full at --max-sources, and a slot per
	 * way of it (include/source_index.h); a source's history is an LRU
	 * entry of its own, sized as the LRU needs */
	err = bpf_map__set_max_entries(index, rl_index_buckets(s->max_sources));
	if (!err)
		err = bpf_map__set_max_entries(sources, slots);
	if (!err)
		err = bpf_map__set_max_entries(keys, slots);
	if (!err)
		err = bpf_map__set_max_entries(history, entries);
	/* verified sources and answered connections: one per source the
	 * table keeps (shared LRUs, so no per-CPU headroom) */
	if (!err)
		err = bpf_map__set_max_entries(verified, (__u32)s->max_sources);
	if (!err)
		err = bpf_map__set_max_entries(answered, (__u32)s->max_sources);
	if (!err)
		err = bpf_map__set_max_entries(synacks,
					       (__u32)rl_synacks_entries(s->max_sources));
	if (!err)
		err = bpf_map__set_max_entries(bloom, (__u32)(4 * s->max_sources));
	if (!err)
		err = bpf_map__set_max_entries(newcomers, new_entries);
	if (!err)
		err = bpf_map__set_max_entries(new_history, new_entries);
	/* a remote share per source the table keeps (not preallocated) */
	return err ? err : bpf_map__set_max_entries(remote, (__u32)s->max_sources);
}

int rl_loader_init(const struct rl_maps *m, const struct rl_settings *s,
		   __u64 default_pps, __u64 default_bps, char *err,
		   size_t errlen)
{
	struct rl_config cfg = { .set = *s, .rules_gen = 2,
				.layout = RL_LAYOUT_VERSION };
	struct rl_prefix def = { .is_default = true };
	struct rl_rule_change c;
	char why[RL_ERR_LEN];
	int ret;

	rl_cookie_opts((int)s->ifindex, &cfg.cookie_mss, &cfg.cookie_wscale);
	cfg.index_buckets = rl_index_buckets(s->max_sources);
	/* the index's seed: unknown outside, so that nobody can aim sources
	 * at one bucket (include/source_index.h) */
	if (getrandom(&cfg.index_seed, sizeof(cfg.index_seed), 0) !=
	    sizeof(cfg.index_seed)) {
		ret = -errno;
		snprintf(err, errlen,
			 "cannot draw the seed of the sources' index (getrandom: %s): a guessable seed would let a sender aim sources at one bucket; check the kernel's random source",
			 strerror(errno));
		return ret;
	}
	ret = rl_config_write(m, &cfg);

	if (ret) {
		snprintf(err, errlen, "cannot write the config map: %s",
			 strerror(-ret));
		return ret;
	}
	if (!rl_rule_change_default(&c, default_pps, default_bps))
		return 0;
	ret = rl_rule_set(m, s, &def, &c, why, sizeof(why));
	if (ret)
		snprintf(err, errlen, "cannot set the default rule: %s", why);
	return ret;
}

/*
 * Every map of RL_MAPS bound to the program: `sync` is the agent's, never
 * read by the program, and is bound all the same, so that it is among the
 * program's maps, as every pinned map must be (user/lib/iface.c); binding a
 * map the program uses already changes nothing.
 */
int rl_maps_bind(int prog_fd, const struct rl_maps *m)
{
	/* a map the program already uses is bound already: 0 */
	for (int i = 0; i < RL_NR_MAPS; i++)
		if (bpf_prog_bind_map(prog_fd, m->fd[i], NULL))
			return -errno;
	return 0;
}

static int bind_maps(struct bpf_object *obj, const struct rl_maps *m)
{
	struct bpf_program *p;
	int ret;

	bpf_object__for_each_program(p, obj) {
		ret = rl_maps_bind(bpf_program__fd(p), m);
		if (ret)
			return ret;
	}
	return 0;
}

/* The maps of `obj` become those of `pinned` (reload): every map of
 * RL_MAPS, by name. */
static int reuse_maps(struct bpf_object *obj, const struct rl_maps *pinned)
{
	for (int i = 0; i < RL_NR_MAPS; i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(obj, rl_map_defs[i].name);
		int ret;

		if (!map)
			return -ENOENT;
		ret = bpf_map__reuse_fd(map, pinned->fd[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int load_with(struct bpf_object_skeleton *sk, struct rl_settings *rodata,
		     const struct rl_settings *s, const struct rl_maps *pinned,
		     struct rl_maps *m, char *err, size_t errlen)
{
	struct bpf_object *obj = *sk->obj;
	int ret = rl_loader_prepare(obj, rodata, s);

	if (!ret && pinned) {
		ret = reuse_maps(obj, pinned);
		if (ret) {
			snprintf(err, errlen, "cannot reuse the pinned maps: %s",
				 strerror(-ret));
			return ret;
		}
	}
	if (!ret)
		ret = bpf_object__load_skeleton(sk);
	if (ret) {
		snprintf(err, errlen,
			 "cannot load the XDP program: %s (the kernel log above says why)",
			 strerror(-ret));
		return ret;
	}
	rl_maps_init(m);
	ret = rl_maps_from_obj(obj, m);
	if (ret) {
		snprintf(err, errlen, "the BPF object lacks a map of this version: %s",
			 strerror(-ret));
		return ret;
	}
	ret = bind_maps(obj, m);
	if (ret) {
		snprintf(err, errlen, "cannot bind the maps to the program: %s",
			 strerror(-ret));
		return ret;
	}
	return 0;
}

int rl_load(struct bpf_object_skeleton *sk, struct rl_settings *rodata,
	    const struct rl_settings *s, __u64 default_pps, __u64 default_bps,
	    struct rl_maps *m, char *err, size_t errlen)
{
	int ret = load_with(sk, rodata, s, NULL, m, err, errlen);

	return ret ? ret : rl_loader_init(m, s, default_pps, default_bps, err, errlen);
}

int rl_load_reusing(struct bpf_object_skeleton *sk, struct rl_settings *rodata,
		    const struct rl_settings *s, const struct rl_maps *pinned,
		    char *err, size_t errlen)
{
	struct rl_maps m;

	return load_with(sk, rodata, s, pinned, &m, err, errlen);
}
