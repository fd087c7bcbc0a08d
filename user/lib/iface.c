// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* An attached interface opened from its pins, each checked (iface.h). */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/iface.h"
#include "lib/pin.h"
#include "lib/settings.h"
#include "lib/values.h"
#include "lib/xdp_multi.h"

#define RL_CONFIG_SIZE_UP_TO_13 \
	((int)((offsetof(struct rl_config, index_buckets) + 7) & ~(size_t)7))

int rl_layout_value_size(__u32 layout, int i)
{
	/* layout 14: the same shapes; config.scope_skip a pad byte */
	if (layout >= 14)
		return (int)rl_map_defs[i].value_size;
	/* up to layout 13: `sources` an LRU per-CPU hash, no index, no
	 * keys, no pool, and the config ended before the index's fields */
	if (i == RL_MAP_IDX_source_index || i == RL_MAP_IDX_source_keys ||
	    i == RL_MAP_IDX_source_pool)
		return -ENOENT;
	if (i == RL_MAP_IDX_config)
		return RL_CONFIG_SIZE_UP_TO_13;
	if (layout == 13)
		return (int)rl_map_defs[i].value_size;
	/* up to layout 12: no `cpus` (a refresh read every possible CPU) */
	if (i == RL_MAP_IDX_cpus)
		return -ENOENT;
	if (layout == 12)
		return (int)rl_map_defs[i].value_size;
	/* layout 11: the counters ended before SYN cookies' */
	if (layout == 11)
		return i == RL_MAP_IDX_counters ?
		       (int)offsetof(struct rl_counters, cookies_sent) :
		       (int)rl_map_defs[i].value_size;
	/* layouts 8 to 10: `answered` held only when the host last answered,
	 * the counters ended before verified_inserts; no `synacks` (layout 11) */
	switch (i) {
	case RL_MAP_IDX_answered:
		return sizeof(__u64);
	case RL_MAP_IDX_counters:
		return offsetof(struct rl_counters, verified_inserts);
	case RL_MAP_IDX_synacks:
		return -ENOENT;
	}
	/* layouts 8 and 9: the sync state ended before the rejected fields
	 * layout 10 added at its end */
	if (layout < 10 && i == RL_MAP_IDX_sync)
		return offsetof(struct rl_sync_state, rejected);
	/* layout 8: no rule_counters */
	if (layout < 9 && i == RL_MAP_IDX_rule_counters)
		return -ENOENT;
	return (int)rl_map_defs[i].value_size;
}

/* Up to layout 13, `sources` was an LRU per-CPU hash keyed by the source. */
__u32 rl_layout_map_type(__u32 layout, int i)
{
	if (layout < 14 && i == RL_MAP_IDX_sources)
		return BPF_MAP_TYPE_LRU_PERCPU_HASH;
	return rl_map_defs[i].type;
}

__u32 rl_layout_key_size(__u32 layout, int i)
{
	if (layout < 14 && i == RL_MAP_IDX_sources)
		return sizeof(struct rl_key);
	return rl_map_defs[i].key_size;
}

static int open_map(const char *iface, __u32 layout, __u32 file_flags, int i,
		    int *fd, __u32 *max_entries, char *err, size_t errlen)
{
	const struct rl_map_def *def = &rl_map_defs[i];
	char path[PATH_MAX];

	rl_pin_path(path, sizeof(path), iface, def->name);
	*fd = rl_map_pin_open_flags(path, file_flags,
				    rl_layout_map_type(layout, i),
				    rl_layout_key_size(layout, i),
				    (__u32)rl_layout_value_size(layout, i),
				    max_entries);
	if (*fd == -EPROTO) {
		snprintf(err, errlen,
			 "%s is not a map this version of xdp-ratelimit made (wrong type or layout): refusing to use it; 'xdp-ratelimit detach %s' removes it",
			 path, iface);
		return -EPROTO;
	}
	if (*fd < 0) {
		snprintf(err, errlen,
			 "cannot open %s (%s): the pins of %s are incomplete; check 'xdp-ratelimit status', then 'xdp-ratelimit detach %s' and attach again",
			 path, strerror(-*fd), iface, iface);
		return *fd;
	}
	return 0;
}

/* Map ids the program behind IFACE's link uses; 0 when there is no
 * usable link (status reports that), else how many (or -errno: -E2BIG
 * for more than `max`, which a program of this version never has). */
static int linked_map_ids(const char *iface, __u32 *ids, __u32 max)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), prog_id = 0;
	int fd, ret;

	if (rl_link_ifindex(iface, &prog_id) < 0 || !prog_id)
		return 0;
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return -errno;
	info.nr_map_ids = max;
	info.map_ids = (__u64)(unsigned long)ids;
	ret = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno :
	      info.nr_map_ids > max ? -E2BIG : (int)info.nr_map_ids;
	close(fd);
	return ret;
}

/*
 * Every pinned map must be one the linked program uses: a map put under
 * the pin path by hand, even of the right shape, is never written to.
 */
static int maps_of_link(const char *iface, struct rl_maps *m, char *err,
			size_t errlen)
{
	__u32 ids[RL_LINKED_MAPS_MAX] = { 0 };	/* valgrind cannot see the kernel fill it */
	int n = linked_map_ids(iface, ids, RL_LINKED_MAPS_MAX);

	if (n < 0) {
		snprintf(err, errlen, "cannot read the program attached to %s: %s",
			 iface, strerror(-n));
		return n;
	}
	for (int i = 0; n && i < RL_NR_MAPS; i++) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		bool found = false;

		if (m->fd[i] < 0)
			continue;	/* not in an older layout */
		if (bpf_obj_get_info_by_fd(m->fd[i], &info, &len))
			return -errno;
		for (int k = 0; k < n && !found; k++)
			found = ids[k] == info.id;
		if (!found) {
			snprintf(err, errlen,
				 "the pinned map '%s' of %s is not one the attached program uses (replaced by hand?): refusing to use it; 'xdp-ratelimit detach %s' and attach again",
				 rl_map_defs[i].name, iface, iface);
			return -EPROTO;
		}
	}
	return 0;
}

/* Settings read back from a pin: what attach could have written. */
static bool settings_sane(const struct rl_settings *s)
{
	struct rl_attach_req req = {
		.window_ns = s->window_ns, .nbuckets = s->nbuckets,
		.v6_prefix = s->v6_prefix, .max_sources = s->max_sources,
		.flags = s->flags, .verified_ttl_ns = s->verified_ttl_ns,
	};
	struct rl_settings again;
	char err[RL_ERR_LEN];

	return rl_settings_build(&again, &req, rl_cpu_ids(), err, sizeof(err)) == 0 &&
	       again.bucket_ns == s->bucket_ns && s->ncpus == (__u32)rl_cpu_ids();
}

/*
 * The layout version in IFACE's config pin, read before its shape is
 * checked: another layout's config may have another size, and its user
 * must hear "detach and attach again", not "not a map we made". `layout`
 * sat at byte 68 of struct rl_config up to layout 6 (before the settings
 * grew the verified TTL and --replies-via): a config shorter than layout
 * 7's is read there. 0 when the pin cannot tell (open_map then says what is wrong).
 */
#define RL_LAYOUT_OFFSET_UP_TO_6	68
/* layout 7's config ended where scopes_used begins */
#define RL_LAYOUT_7_CONFIG_SIZE		offsetof(struct rl_config, scopes_used)
__u32 rl_iface_pinned_layout(const char *iface)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info), zero = 0, layout = 0;
	size_t off = offsetof(struct rl_config, layout);
	LIBBPF_OPTS(bpf_obj_get_opts, ro, .file_flags = BPF_F_RDONLY);
	char path[PATH_MAX];
	void *val;
	int fd;

	rl_pin_path(path, sizeof(path), iface, rl_map_defs[RL_MAP_IDX_config].name);
	fd = bpf_obj_get_opts(path, &ro);	/* a look, never a write */
	if (fd < 0)
		return 0;
	if (rl_pin_is(fd, "map_type:") && !bpf_obj_get_info_by_fd(fd, &info, &info_len) &&
	    info.type == BPF_MAP_TYPE_ARRAY && info.key_size == sizeof(__u32) &&
	    info.value_size <= 4096) {
		/* layout 7 and later only grew config at its end */
		if (info.value_size < RL_LAYOUT_7_CONFIG_SIZE)
			off = RL_LAYOUT_OFFSET_UP_TO_6;
		if (info.value_size < off + sizeof(layout)) {
			close(fd);
			return 0;
		}
		val = calloc(1, info.value_size);
		if (val && !bpf_map_lookup_elem(fd, &zero, val))
			memcpy(&layout, (char *)val + off, sizeof(layout));
		free(val);
	}
	close(fd);
	return layout;
}

static int wrong_layout(const char *name, __u32 layout, char *err, size_t errlen)
{
	if (layout >= RL_LAYOUT_OLDEST_CARRIED && layout < RL_LAYOUT_VERSION)
		snprintf(err, errlen,
			 "%s was attached by a different version of xdp-ratelimit (layout %u, this one reads %u): 'xdp-ratelimit reload %s' carries it over to this version, keeping its state",
			 name, layout, RL_LAYOUT_VERSION, name);
	else
		snprintf(err, errlen,
			 "%s was attached by a different version of xdp-ratelimit (layout %u, this one reads %u): detach and attach it again with this version",
			 name, layout, RL_LAYOUT_VERSION);
	return -EPROTO;
}

static int open_layout(const char *name, __u32 layout, __u32 file_flags,
		       struct rl_iface *ifc, char *err, size_t errlen);

static int open_current(const char *name, __u32 file_flags, struct rl_iface *ifc,
			char *err, size_t errlen)
{
	__u32 layout = rl_iface_pinned_layout(name);

	if (layout && layout != RL_LAYOUT_VERSION) {
		memset(ifc, 0, sizeof(*ifc));
		rl_maps_init(&ifc->m);
		/* a planted config must not choose the message */
		if (rl_pins_trusted(name, err, errlen))
			return -EPERM;
		return wrong_layout(name, layout, err, errlen);
	}
	return open_layout(name, RL_LAYOUT_VERSION, file_flags, ifc, err, errlen);
}

int rl_iface_open(const char *name, struct rl_iface *ifc, char *err,
		  size_t errlen)
{
	return open_current(name, 0, ifc, err, errlen);
}

int rl_iface_open_read_only(const char *name, struct rl_iface *ifc, char *err,
			    size_t errlen)
{
	return open_current(name, BPF_F_RDONLY, ifc, err, errlen);
}

int rl_iface_open_layout(const char *name, __u32 layout, struct rl_iface *ifc,
			 char *err, size_t errlen)
{
	return open_layout(name, layout, 0, ifc, err, errlen);
}

static int open_layout(const char *name, __u32 layout, __u32 file_flags,
		       struct rl_iface *ifc, char *err, size_t errlen)
{
	int ret;

	memset(ifc, 0, sizeof(*ifc));
	rl_maps_init(&ifc->m);
	snprintf(ifc->name, sizeof(ifc->name), "%s", name);
	ret = rl_pins_trusted(name, err, errlen);
	if (ret)
		goto fail;
	/* config first: another layout version may pin other maps */
	ret = open_map(name, layout, file_flags, RL_MAP_IDX_config,
		       &ifc->m.config, NULL, err, errlen);
	if (ret)
		goto fail;
	/* an older config is shorter: the lookup fills its size, the rest
	 * stays zero (what layout 8 added means "none" as zero) */
	ret = rl_config_read(&ifc->m, &ifc->cfg);
	if (ret) {
		snprintf(err, errlen, "cannot read the config of %s: %s", name,
			 strerror(-ret));
		goto fail;
	}
	if (ifc->cfg.layout != layout) {
		ret = wrong_layout(name, ifc->cfg.layout, err, errlen);
		goto fail;
	}
	for (int i = 0; i < RL_NR_MAPS; i++) {
		if (i == RL_MAP_IDX_config || rl_layout_value_size(layout, i) < 0)
			continue;	/* open already, or not in that layout */
		ret = open_map(name, layout, file_flags, i, &ifc->m.fd[i],
			       i == RL_MAP_IDX_sources ? &ifc->sources_max_entries : NULL,
			       err, errlen);
		if (ret)
			goto fail;
	}
	ret = maps_of_link(name, &ifc->m, err, errlen);
	if (ret)
		goto fail;
	if (!settings_sane(&ifc->cfg.set)) {
		snprintf(err, errlen,
			 "the config map of %s holds settings out of range (changed by hand?): refusing to use it; 'xdp-ratelimit detach %s' and attach again",
			 name, name);
		ret = -EPROTO;
		goto fail;
	}
	return 0;
fail:
	rl_maps_close(&ifc->m);
	return ret;
}

void rl_iface_close(struct rl_iface *ifc)
{
	rl_maps_close(&ifc->m);
}

__u32 rl_iface_config_id(const char *name)
{
	return rl_pinned_map_id(name, rl_map_defs[RL_MAP_IDX_config].name, NULL);
}

bool rl_iface_runs_here(const char *name)
{
	char path[PATH_MAX];
	struct rl_xdp_progs cur;
	__u32 prog_id = 0;
	int at = rl_link_ifindex(name, &prog_id);

	if (at <= 0 || (unsigned int)at != if_nametoindex(name))
		return false;
	rl_pin_path(path, sizeof(path), name, RL_PIN_LINK);
	if (access(path, F_OK))
		return true;	/* the dispatcher's: rl_xdp_multi_where looked here */
	/* an ifindex is only unique within a namespace: is the link's
	 * program the one on this namespace's interface? */
	if (rl_xdp_progs_read(at, &cur))
		return false;
	for (int i = 0; i < cur.n; i++)
		if (cur.p[i].id == prog_id)
			return true;
	return false;
}

int rl_pins_carry_flat(const char *iface, char *err, size_t errlen)
{
	int moved = rl_pins_legacy_move(iface, false);

	if (moved < 0) {
		snprintf(err, errlen, "cannot move the pins of %s from %s into %s: %s",
			 iface, RL_PIN_TOP, rl_pin_root(), strerror(-moved));
		return moved;
	}
	if (!moved)
		return 0;
	if (!rl_iface_runs_here(iface)) {
		moved = rl_pins_legacy_move(iface, true);
		snprintf(err, errlen,
			 "the pins of %s in %s are not those of the program on %s in this network namespace%s: run the command in the namespace where it is attached ('nsenter --net=/run/netns/NAME xdp-ratelimit ...')",
			 iface, RL_PIN_TOP, iface,
			 moved < 0 ? " (and they could not be put back)" : "");
		return -EXDEV;
	}
	return 1;
}

bool rl_iface_gone(const char *name)
{
	return rl_link_ifindex(name, NULL) == 0;
}

void rl_iface_gone_text(const char *name, char *buf, size_t len)
{
	snprintf(buf, len,
		 "%s no longer exists (deleted, or moved to another network namespace): its program no longer runs, and its pins hold the last rules and counters; 'xdp-ratelimit detach %s' removes them",
		 name, name);
}

int rl_link_ifindex(const char *name, __u32 *prog_id)
{
	char path[PATH_MAX];
	int ret;

	rl_pin_path(path, sizeof(path), name, RL_PIN_LINK);
	ret = rl_link_pin_ifindex(path, prog_id);
	if (ret == -ENOENT)	/* under libxdp's dispatcher? */
		return rl_xdp_multi_judge(name, prog_id);
	return ret;
}
