/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The program's settings fixed at load and every map, each named once here:
 * the other bpf/NAME.bpf.h headers and the program use them by these names, and
 * the loader (user/lib/loader.c) sizes and pins them by the same (RL_MAPS).
 */
#ifndef RL_MAPS_BPF_H
#define RL_MAPS_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "ratelimit.h"

/* Fixed at load by the loader (user/lib/loader.c); a copy sits in `config`. */
const volatile struct rl_settings settings = {
	.window_ns = RL_DEFAULT_WINDOW_NS,
	.bucket_ns = RL_DEFAULT_WINDOW_NS / RL_DEFAULT_BUCKETS,
	.nbuckets = RL_DEFAULT_BUCKETS,
	.ncpus = 1,
	.v6_mask = { ~0U, ~0U, 0, 0 },
};

/* Set only by the benchmark (bench/cost.c): the program without events,
 * the baseline their cost is measured against. */
const volatile __u32 no_events;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rl_config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rl_counters);
} counters SEC(".maps");

/* Tracked sources: each one's per-CPU state in a slot of `sources`, its
 * key in the same slot of `source_keys`, found through `source_index`
 * (include/source_index.h); `source_pool` counts the slots handed out.
 * max_entries are set by the loader from --max-sources
 * (user/lib/loader.c): the index's buckets, and a slot per way of them. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
	__type(key, __u32);
	__type(value, struct rl_source);
} sources SEC(".maps");

/* mmapable: userspace empties a way with one compare-and-swap of its
 * word (user/lib/source_index_map.c), as the program changes them */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES / RL_INDEX_WAYS);
	__type(key, __u32);
	__type(value, struct rl_index_bucket);
} source_index SEC(".maps");

/* mmapable: a walk reads every slot's key in place, not by a syscall each */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
	__type(key, __u32);
	__type(value, struct rl_key);
} source_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rl_source_pool);
} source_pool SEC(".maps");

/* This CPU's last source found and last scoped window found (struct
 * rl_source_front). Not one of RL_MAPS: never pinned nor carried, a cache
 * of the program's own. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct rl_source_front);
} source_front SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_MAX_RULES);
	__type(key, __u32);
	__type(value, struct rl_rule);
} rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_lpm_v4);
	__type(value, __u32);
} rules_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_lpm_v6);
	__type(value, __u32);
} rules_v6 SEC(".maps");

/* A rule's aggregate and newcomer windows, indexed by its budget slot
 * (rl_agg_index, rl_new_index in include/newcomer.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RL_AGGREGATE_ENTRIES);
	__type(key, __u32);
	__type(value, struct rl_state);
} aggregates SEC(".maps");

/* Drops of sources refused before they took a `sources` entry: a small
 * table of their own, so refused packets never evict a tracked source. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RL_REFUSED_ENTRIES);
	__type(key, struct rl_key);
	__type(value, struct rl_refused);
} refused SEC(".maps");

/* Banned sources and until when: one entry for every CPU to see. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RL_BAN_ENTRIES);
	__type(key, struct rl_key);
	__type(value, struct rl_ban);
} bans SEC(".maps");

/* The older buckets of each source, all CPUs together (struct
 * rl_history): shared, written only when a CPU rolls a third bucket of one
 * window (its past bucket goes here). max_entries is set by the loader:
 * that of `sources`. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
	__type(key, struct rl_key);
	__type(value, struct rl_history);
} history SEC(".maps");

/* The older buckets of each rule window, indexed like `aggregates`. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_AGGREGATE_ENTRIES);
	__type(key, __u32);
	__type(value, struct rl_history);
} agg_history SEC(".maps");

/* What the program reports (include/events.h), read by xdp-ratelimit events. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RL_EVENTS_RING_BYTES);
} events SEC(".maps");

/* What the other hosts of the fleet passed per source (include/remote.h),
 * written by the sync agent; max_entries is set by the loader (the
 * sources the table holds). Not preallocated: a host without an agent
 * pays no memory, and a replaced element is freed only after its readers. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_key);
	__type(value, struct rl_remote);
} remote SEC(".maps");

/* The state of the interface's sync agent, for `status`: written by the
 * agent (user/lib/sync_status.c), never by the program; here so that it is
 * pinned with the others, with its BTF. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rl_sync_state);
} sync SEC(".maps");

/* Verified sources (include/verified.h): written on proof only (the
 * peer's ACK of a SYN-ACK the host sent, by the XDP program; segments of
 * an established connection, by the egress hook); max_entries is set by
 * the loader (that of `sources`). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
	__type(key, struct rl_key);
	__type(value, struct rl_verified);
} verified SEC(".maps");

/* Connections the host established and the receive window it last
 * advertised on each, written once a rule bans: the packets that may
 * count toward a ban. max_entries is set by the loader (that of
 * `sources`). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
	__type(key, struct rl_flow);
	__type(value, struct rl_answered);
} answered SEC(".maps");

/* SYN-ACKs the host's own stack sent, until the peer acknowledges one
 * (include/verified.h): written by the egress hook, read and deleted by
 * the XDP program. Only SYNs that passed (a newcomer's paid the newcomer
 * budget) are answered, so a flood churns it at most at that rate.
 * max_entries is set by the loader (rl_synacks_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES / 4);
	__type(key, struct rl_flow);
	__type(value, struct rl_synack);
} synacks SEC(".maps");

/* Every source ever verified here, as a Bloom filter: an unknown source
 * that it says was never verified is not, without a lookup in `verified`
 * (a cache miss per packet of a spoofed flood). It cannot forget, so it
 * fills with the sources verified since attach: once they outnumber
 * max_entries (set by the loader: --max-sources) it answers "maybe" more
 * often, which costs the lookup it saves, never a wrong verdict. Written
 * by the egress hook only. */
struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
	__uint(map_extra, RL_VERIFIED_BLOOM_HASHES);
	__type(value, struct rl_key);
} verified_bloom SEC(".maps");

/* The unverified sources a newcomer budget admitted, and their history:
 * tables of their own, so that they never push a verified source's state
 * out of `sources` and `history`. max_entries is set by the loader
 * (rl_newcomers_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES / 4);
	__type(key, struct rl_key);
	__type(value, struct rl_source);
} newcomers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES / 4);
	__type(key, struct rl_key);
	__type(value, struct rl_history);
} new_history SEC(".maps");

/* Rule scopes (include/scope.h): the scopes in use, and the scoped rules
 * by scope and prefix (struct rl_lpm_scoped_v4/v6 -> slot in `rules`).
 * Written by userspace only. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_MAX_SCOPES);
	__type(key, __u32);
	__type(value, struct rl_scope);
} scopes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_lpm_scoped_v4);
	__type(value, __u32);
} scoped_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_lpm_scoped_v6);
	__type(value, __u32);
} scoped_v6 SEC(".maps");

/* What each rule judged (struct rl_rule_counters), by slot in `rules`:
 * per CPU, so the exit of the verdict counts without an atomic. Zeroed by
 * userspace when it gives a slot to a new rule. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RL_MAX_RULES);
	__type(key, __u32);
	__type(value, struct rl_rule_counters);
} rule_counters SEC(".maps");

/* The CPUs that have written a budget's state (include/cpus.h): a
 * refresh reads only those. Written by the program only. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rl_cpus);
} cpus SEC(".maps");

/* Values for new entries: an update needs a full value, too big for the
 * stack. */
static const struct rl_source new_source;
static const struct rl_history empty_history;
#endif /* RL_MAPS_BPF_H */
