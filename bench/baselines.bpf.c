// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What `make bench` measures xdp-ratelimit against, built like it:
 *
 * - xdp_pass, xdp_drop: bare programs, the floor of any XDP program;
 *   xdp_clock: the clock read alone.
 * (The minimal per-source limiter, the floor the program is compared
 * with, is an object of its own: bench/minimal.bpf.c.)
 * - xdp_churn: writes a new IPv6 source (one /64 per index, cycling through
 *   churn_n of them inside 2001:db8::/32) into the frame, then tail-calls
 *   the program under test: BPF_PROG_TEST_RUN repeats one frame, this makes
 *   every repeat (or every 2^churn_shift repeats) a different source.
 * - xdp_tcp_churn: the same for TCP frames a program may answer in place
 *   (XDP_TX rewrites the frame BPF_PROG_TEST_RUN repeats): the frame is
 *   copied from tcp_frame on every repeat before its source is written.
 * - xdp_xcpu: the refresh and confirm steps of the verdict (include/quota.h) on every
 *   packet, with the other CPUs' values read in a bpf_loop as the program
 *   does (a per-CPU array's slot, the source's owner checked), for
 *   xcpu_loops iterations: its cost and how it grows per CPU.
 * - sock_record: a socket filter on the accuracy receiver's UDP socket:
 *   records (time, source) of every packet that got through the limiter
 *   under test, and drops it (nobody reads the socket).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "ratelimit.h"
#include "window.h"
#include "quota.h"
#include "bench_bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

SEC("xdp")
int xdp_drop(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_DROP;
}

/* The clock alone: what bpf_ktime_get_ns() costs here (kvm-clock in a VM
 * is not the few ns of a bare-metal TSC read). */
__u64 clock_sink;

SEC("xdp")
int xdp_clock(struct xdp_md *ctx)
{
	(void)ctx;
	clock_sink = bpf_ktime_get_ns();
	return XDP_PASS;
}

/* The jiffies clock, for comparison: what a coarser window could use. */
SEC("xdp")
int xdp_clock_coarse(struct xdp_md *ctx)
{
	(void)ctx;
	clock_sink = bpf_ktime_get_coarse_ns();
	return XDP_PASS;
}

/* ---- churn driver ----------------------------------------------------- */

const volatile __u32 churn_n = 1000000;
/* each source 2^churn_shift frames in a row (events: a pass, then a drop) */
const volatile __u32 churn_shift;
__u32 churn_next;	/* one pinned CPU runs it: no race */

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} churn_target SEC(".maps");

SEC("xdp")
int xdp_churn(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	/* Ethernet, then the IPv6 source address at 8: its bytes 4..7 are
	 * bits 32..63, so source i is 2001:db8:HHHH:LLLL::/64 */
	__u8 *saddr = data + BENCH_V6_SADDR_OFF;
	__u32 i = churn_next;

	if ((void *)(saddr + 16) > data_end)
		return XDP_ABORTED;
	churn_next = i + 1 >= (churn_n << churn_shift) ? 0 : i + 1;
	*(__u32 *)(saddr + 4) = bpf_htonl(i >> churn_shift);
	bpf_tail_call(ctx, &churn_target, 0);
	return XDP_ABORTED;
}

/* The frame xdp_tcp_churn starts every repeat from, set by the bench. */
__u8 tcp_frame[BENCH_TCP_LEN];

SEC("xdp")
int xdp_tcp_churn(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 i = churn_next;

	if (data + BENCH_TCP_LEN > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(data, tcp_frame, BENCH_TCP_LEN);
	churn_next = i + 1 >= (churn_n << churn_shift) ? 0 : i + 1;
	*(__u32 *)(data + BENCH_V6_SADDR_OFF + 4) = bpf_htonl(i >> churn_shift);
	bpf_tail_call(ctx, &churn_target, 0);
	return XDP_ABORTED;
}

/* ---- the refresh step (cross-CPU part of the verdict) ------------------ */

const volatile __u32 xcpu_loops;	/* iterations of the loop, 0: none */
/* skip this CPU's iteration, as the program's loop does: iteration
 * self % loops, which is this CPU's own when loops = ncpus (the program's
 * loop), and exactly one iteration of an emulated loop of any length */
const volatile __u32 xcpu_skip_self;
const volatile __u32 xcpu_ncpus = 1;	/* possible CPUs */
const volatile __u64 xcpu_bucket_ns = 100000000ULL;
const volatile __u32 xcpu_nbuckets = 10;

/* as `sources`: a per-CPU array, the source in slot BENCH_XCPU_SLOT */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct rl_source);
} xcpu_sources SEC(".maps");

struct xcpu_ctx {
	struct rl_usage acc;
	__u64 now;
	__u64 bucket;
	__u32 self;
	__u32 slot;
	struct rl_key key;
};

static long xcpu_one(__u32 i, struct xcpu_ctx *c)
{
	struct rl_source *o;
	__u32 cpu = i % xcpu_ncpus;

	if (xcpu_skip_self && i == c->self % xcpu_loops)
		return 0;
	o = bpf_map_lookup_percpu_elem(&xcpu_sources, &c->slot, cpu);
	/* the owner check of the program's owned_by() */
	if (o && ((volatile __u64 *)&o->owner)[0] == ((__u64 *)&c->key)[0] &&
	    ((volatile __u64 *)&o->owner)[1] == ((__u64 *)&c->key)[1])
		rl_usage_add(&c->acc, &o->st, c->now, c->bucket, xcpu_bucket_ns,
			     xcpu_nbuckets, 1);
	return 0;
}

SEC("xdp")
int xdp_xcpu(struct xdp_md *ctx)
{
	struct xcpu_ctx c = { .key = { .addr = { [10] = 0xff, [11] = 0xff,
						  [12] = 198, [13] = 18, [15] = 1 } },
			       .slot = BENCH_XCPU_SLOT };
	struct rl_budget b = { .pkts = 1000000000ULL, .bytes = RL_UNLIMITED };
	struct rl_source *src;

	(void)ctx;
	src = bpf_map_lookup_elem(&xcpu_sources, &c.slot);
	if (!src || ((volatile __u64 *)&src->owner)[0] != ((__u64 *)&c.key)[0])
		return XDP_ABORTED;	/* userspace writes the slot */
	c.now = bpf_ktime_get_ns();
	rl_state_roll(&src->st, NULL, c.now, xcpu_bucket_ns, xcpu_nbuckets);
	c.bucket = src->st.win.bucket;
	c.self = bpf_get_smp_processor_id();
	if (xcpu_loops)
		bpf_loop(xcpu_loops, xcpu_one, &c, 0);
	if (rl_quota_refresh(&src->st, &b, &c.acc, 64, 1, xcpu_ncpus) != RL_FITS)
		return XDP_DROP;
	/* the confirm step, as refresh() does it (bpf/judge.bpf.h): barrier, second reads */
	if (xcpu_loops) {
		if (__sync_fetch_and_add(&src->st.win.bucket, 0) != c.bucket)
			return XDP_ABORTED;
		__builtin_memset(&c.acc, 0, sizeof(c.acc));
		bpf_loop(xcpu_loops, xcpu_one, &c, 0);
	}
	return rl_quota_confirm(&src->st, &b, &c.acc, 64) == RL_FITS ?
	       XDP_PASS : XDP_DROP;
}

/* ---- accuracy: what got through ---------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} passed SEC(".maps");

__u64 record_lost;
/* stamp with bpf_ktime_get_coarse_ns(), the clock of xdp-ratelimit's
 * windows when its attach chose it (ratelimit-bench recv --program-clock) */
const volatile __u32 record_coarse;

SEC("socket")
int sock_record(struct __sk_buff *skb)
{
	struct bench_pass ev;

	ev.ts = record_coarse ? bpf_ktime_get_coarse_ns() : bpf_ktime_get_ns();
	ev.saddr = 0;
	ev.len = skb->len;
	/* IPv4 source address: 12 bytes into the network header */
	if (bpf_skb_load_bytes_relative(skb, 12, &ev.saddr, 4,
					BPF_HDR_START_NET) == 0 &&
	    bpf_ringbuf_output(&passed, &ev, sizeof(ev), 0))
		__sync_fetch_and_add(&record_lost, 1);
	return 0;	/* recorded; nobody reads the socket */
}
