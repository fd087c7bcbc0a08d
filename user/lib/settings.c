// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/settings.h"
#include "lib/values.h"

const char *rl_mode_name(__u32 mode)
{
	switch (mode) {
	case RL_MODE_NATIVE:
		return "native";
	case RL_MODE_GENERIC:
		return "generic";
	default:
		return "unknown";
	}
}

void rl_attach_req_defaults(struct rl_attach_req *r)
{
	memset(r, 0, sizeof(*r));
	r->window_ns = RL_DEFAULT_WINDOW_NS;
	r->nbuckets = RL_DEFAULT_BUCKETS;
	r->v6_prefix = RL_DEFAULT_V6_PREFIX;
	r->max_sources = RL_DEFAULT_MAX_SOURCES;
	r->verified_ttl_ns = RL_DEFAULT_VERIFIED_TTL_NS;
}

int rl_parse_replies_via(const char *arg, __u32 via[RL_MAX_REPLIES_VIA],
			 char *err, size_t errlen)
{
	char buf[RL_MAX_REPLIES_VIA * (IF_NAMESIZE + 1) + 1], *save = NULL, *name;
	int n = 0;

	memset(via, 0, RL_MAX_REPLIES_VIA * sizeof(*via));
	if (strlen(arg) >= sizeof(buf)) {
		snprintf(err, errlen, "'%s' is too long: name at most %d interfaces, separated by commas",
			 arg, RL_MAX_REPLIES_VIA);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", arg);
	for (name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		unsigned int idx = if_nametoindex(name);

		if (n == RL_MAX_REPLIES_VIA) {
			snprintf(err, errlen, "more than %d interfaces: name at most %d, separated by commas",
				 RL_MAX_REPLIES_VIA, RL_MAX_REPLIES_VIA);
			return -EINVAL;
		}
		if (!idx) {
			snprintf(err, errlen, "no interface named '%s' here: name interfaces from 'ip link', separated by commas",
				 name);
			return -ENODEV;
		}
		for (int i = 0; i < n; i++)
			if (via[i] == idx) {
				snprintf(err, errlen, "'%s' is named twice: name each interface once",
					 name);
				return -EINVAL;
			}
		via[n++] = idx;
	}
	if (!n) {
		snprintf(err, errlen, "no interface: name one or more, IFACE[,IFACE]");
		return -EINVAL;
	}
	return 0;
}

void rl_format_replies_via(const __u32 via[RL_MAX_REPLIES_VIA], char *buf,
			   size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; i < RL_MAX_REPLIES_VIA && via[i] && off < len; i++) {
		char name[IF_NAMESIZE];

		if (!if_indextoname(via[i], name))
			snprintf(name, sizeof(name), "#%u", via[i]);
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "," : "", name);
	}
}

static void v6_mask(__u32 mask[4], __u32 prefix)
{
	__u8 *b = (__u8 *)mask;

	memset(mask, 0, 16);
	for (__u32 i = 0; i < 16; i++) {
		if (prefix >= 8 * (i + 1))
			b[i] = 0xff;
		else if (prefix > 8 * i)
			b[i] = (__u8)(0xff << (8 - (prefix - 8 * i)));
	}
}

int rl_settings_build(struct rl_settings *s, const struct rl_attach_req *r,
		      int ncpus, char *err, size_t errlen)
{
	char w[32], minw[32];

	memset(s, 0, sizeof(*s));
	if (r->nbuckets < 1 || r->nbuckets > RL_MAX_BUCKETS) {
		snprintf(err, errlen, "--buckets %u is out of range: use 1 to %u",
			 r->nbuckets, RL_MAX_BUCKETS);
		return -EINVAL;
	}
	rl_format_duration(r->window_ns, w, sizeof(w));
	if (r->window_ns > RL_MAX_WINDOW_NS) {
		snprintf(err, errlen, "--window %s is too long: use at most 1m", w);
		return -EINVAL;
	}
	if (r->window_ns / r->nbuckets < RL_MIN_BUCKET_NS) {
		rl_format_duration(RL_MIN_BUCKET_NS * r->nbuckets, minw, sizeof(minw));
		snprintf(err, errlen,
			 "--window %s is too short for %u buckets: each bucket must be at least 1ms wide; use --window %s or more, or fewer --buckets",
			 w, r->nbuckets, minw);
		return -EINVAL;
	}
	if (r->v6_prefix < 1 || r->v6_prefix > 128) {
		snprintf(err, errlen, "--ipv6-prefix %u is out of range: use 1 to 128",
			 r->v6_prefix);
		return -EINVAL;
	}
	if (r->max_sources < RL_MIN_MAX_SOURCES || r->max_sources > RL_MAX_MAX_SOURCES) {
		snprintf(err, errlen, "--max-sources %llu is out of range: use %u to %u",
			 (unsigned long long)r->max_sources, RL_MIN_MAX_SOURCES,
			 RL_MAX_MAX_SOURCES);
		return -EINVAL;
	}
	if (r->verified_ttl_ns < RL_MIN_VERIFIED_TTL_NS ||
	    r->verified_ttl_ns > RL_MAX_VERIFIED_TTL_NS) {
		rl_format_duration(r->verified_ttl_ns, w, sizeof(w));
		snprintf(err, errlen, "--verified-ttl %s is out of range: use 1s to 24h (default 10m)",
			 w);
		return -EINVAL;
	}
	if (ncpus < 1 || ncpus > RL_MAX_CPUS) {
		snprintf(err, errlen,
			 "possible CPU ids up to %d: xdp-ratelimit supports ids 0 to %u",
			 ncpus - 1, RL_MAX_CPUS - 1);
		return -EINVAL;
	}
	s->window_ns = r->window_ns;
	s->bucket_ns = r->window_ns / r->nbuckets;
	s->nbuckets = r->nbuckets;
	s->ncpus = ncpus;
	s->v6_prefix = r->v6_prefix;
	s->flags = r->flags;
	s->max_sources = r->max_sources;
	s->verified_ttl_ns = r->verified_ttl_ns;
	memcpy(s->replies_via, r->replies_via, sizeof(s->replies_via));
	v6_mask(s->v6_mask, r->v6_prefix);
	return 0;
}

/*
 * max_entries of the `sources` LRU per-CPU hash for --max-sources N.
 *
 * The kernel's common LRU hands out free elements through a free list per
 * CPU, refilled up to target_free = min(128, max_entries / (2 * ncpus)) at a
 * time, and a refill that finds the global free list short evicts from the
 * inactive tail to make up the batch. So up to ~target_free idle elements
 * per CPU sit outside the table, plus a refill batch: a map of exactly N
 * entries cycling N sources with churn missed 93-100% of lookups (the
 * eviction cascades through the cycle). Measured on 6.18, 2 CPUs, from XDP
 * via BPF_PROG_TEST_RUN with the sources on one CPU, sticky per CPU or
 * roaming between CPUs, 0-50% one-shot sources (/tmp/lru, see
 * doc/design/memory.md): >= 99.9% of N stay tracked from N + 262 at
 * N = 1000, N + 696 at 16k, N + 205 at 64k, N + 161 at 256k. We give
 * N/16 headroom plus 256 entries per CPU (the free batch and one refill),
 * the per-CPU term capped at N + 64 since the kernel caps target_free at
 * max_entries / (2 * ncpus) anyway (a few sources on many CPUs would
 * otherwise cost ncpus^2 memory).
 */
__u32 rl_sources_map_size(__u64 max_sources, int ncpus)
{
	__u64 per_cpu = (__u64)(ncpus > 0 ? ncpus : 1) * 256;
	__u64 n;

	if (per_cpu > max_sources + 64)
		per_cpu = max_sources + 64;
	n = max_sources + max_sources / 16 + per_cpu;
	return n > 0xffffffffULL ? 0xffffffffU : (__u32)n;
}

__u64 rl_budget(__u64 rate, __u64 window_ns)
{
	unsigned __int128 b;

	if (rate == RL_UNLIMITED)
		return RL_UNLIMITED;
	if (rate == 0)
		return 0;
	b = (unsigned __int128)rate * window_ns / RL_NSEC_PER_SEC;
	if (b == 0)
		return 1;
	if (b >= RL_UNLIMITED)
		return RL_UNLIMITED - 1;
	return (__u64)b;
}


void rl_settings_clock(struct rl_settings *s, __u64 coarse_tick_ns)
{
	s->flags &= ~RL_F_COARSE_CLOCK;
	if (coarse_tick_ns && s->bucket_ns / coarse_tick_ns >= RL_COARSE_MIN_TICKS)
		s->flags |= RL_F_COARSE_CLOCK;
}

int rl_cpu_ordered(const char *machine)
{
	return !strcmp(machine, "x86_64");
}

