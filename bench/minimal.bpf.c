// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The minimal limiter: the floor of any "hash map per source" limiter,
 * what `make bench` measures xdp-ratelimit's data layout against. Its
 * definition, pinned here so that every figure "x the minimal limiter"
 * means the same thing:
 *
 * - one lookup of one BPF_MAP_TYPE_LRU_PERCPU_HASH, keyed by the source
 *   address as xdp-ratelimit keys it (16 bytes, IPv4 v4-mapped), sized by
 *   the benchmark for the whole population it sends (min_sources'
 *   max_entries, set before load): no eviction while it measures;
 * - the same clock as the program: bpf_ktime_get_coarse_ns() when the
 *   attach of the program under comparison chose it (min_coarse, set by
 *   the benchmark from the program's own settings), else
 *   bpf_ktime_get_ns();
 * - a fixed window from the source's first packet on this CPU, and a
 *   count against min_limit: no buckets, no cross-CPU sum, no rules, no
 *   history; a new source is inserted and passes.
 *
 * Untagged Ethernet, IPv4 and IPv6; anything else passes.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u64 min_limit = 1;		/* packets per window */
const volatile __u64 min_window_ns = 1000000000ULL;
const volatile __u32 min_coarse;		/* the program's clock */

struct min_key {
	__u8 addr[16];
};

struct min_entry {
	__u64 start;
	__u64 count;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 65536);		/* the population: set at load */
	__type(key, struct min_key);
	__type(value, struct min_entry);
} min_sources SEC(".maps");

SEC("xdp")
int xdp_minimal(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct min_key key = { 0 };
	struct min_entry *e;
	__u64 now;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > data_end)
			return XDP_PASS;
		key.addr[10] = 0xff;
		key.addr[11] = 0xff;
		__builtin_memcpy(&key.addr[12], &ip->saddr, 4);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end)
			return XDP_PASS;
		__builtin_memcpy(key.addr, &ip6->saddr, 16);
	} else {
		return XDP_PASS;
	}
	/* a constant at load: the verifier drops the other branch */
	now = min_coarse ? bpf_ktime_get_coarse_ns() : bpf_ktime_get_ns();
	e = bpf_map_lookup_elem(&min_sources, &key);
	if (!e) {
		struct min_entry n = { .start = now, .count = 1 };

		bpf_map_update_elem(&min_sources, &key, &n, BPF_ANY);
		return XDP_PASS;
	}
	if (now - e->start >= min_window_ns) {
		e->start = now;
		e->count = 0;
	}
	if (e->count >= min_limit)
		return XDP_DROP;
	e->count++;
	return XDP_PASS;
}
