// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The traffic generator's XDP program, run by BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES: XDP_TX there is a redirect to the ingress
 * device given in the context, so every run transmits one frame. The
 * program only gives each frame its source address (see frames.h for
 * why it writes the address and checksum in full).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "frames.h"

/* Mutable globals (.bss) rather than const volatile: userspace reads the
 * state back, and the test runs all happen on the one pinned CPU, so the
 * program's updates never race. */
struct tg_settings settings;
struct tg_state state;

static __always_inline __u32 next_index(void)
{
	__u64 x;
	__u32 i;

	if (settings.mode == TG_MODE_CYCLE) {
		i = state.next;
		state.next = i + 1 >= settings.nsources ? 0 : i + 1;
		return i;
	}
	if (settings.mode == TG_MODE_SHUFFLE) {
		__u32 mask = (__u32)((1ULL << (settings.shuffle_bits & 31)) - 1);

		if (settings.shuffle_bits >= 32)
			mask = 0xffffffffu;
		for (int t = 0; t < TG_SHUFFLE_TRIES; t++) {
			i = tg_shuffle(state.next, settings.shuffle_bits,
				       settings.shuffle_key);
			state.next = (state.next + 1) & mask;
			if (i < settings.nsources)
				return i;
		}
		return i % settings.nsources;
	}
	x = state.rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	state.rng = x;
	x *= 0x2545F4914F6CDD1DULL;
	/* High 32 bits scaled to [0, nsources): multiply-shift, no modulo bias
	 * worth the name for nsources far below 2^32. */
	return ((x >> 32) * settings.nsources) >> 32;
}

static __always_inline __u16 csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

SEC("xdp")
int trafficgen_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 src_off = settings.src_off & TG_OFF_MASK;
	__u32 csum_off = settings.csum_off & TG_OFF_MASK;
	__u8 *src = data + src_off;
	__u16 *csum = data + csum_off;
	__u32 i, sum;

	if (settings.mode == TG_MODE_FIXED)
		return XDP_TX;
	if ((void *)(src + 16) > data_end || (void *)(csum + 1) > data_end)
		return XDP_ABORTED;
	i = next_index();
	sum = settings.csum_base;
	if (!settings.ipv6) {
		__u32 a = settings.v4_base + i;

		*(__u32 *)src = bpf_htonl(a);
		sum += (a >> 16) + (a & 0xffff);
		*csum = bpf_htons(csum_fold(sum));
	} else {
		__u32 shift = settings.shift & 127;
		__u64 add_hi, add_lo, lo, hi;
		__u16 c;

		if (shift >= 64) {
			add_hi = (__u64)i << (shift - 64);
			add_lo = 0;
		} else if (shift == 0) {
			add_hi = 0;
			add_lo = i;
		} else {
			add_hi = (__u64)i >> (64 - shift);
			add_lo = (__u64)i << shift;
		}
		lo = settings.v6_base_lo + add_lo;
		hi = settings.v6_base_hi + add_hi + (lo < add_lo);
		((__u32 *)src)[0] = bpf_htonl(hi >> 32);
		((__u32 *)src)[1] = bpf_htonl(hi & 0xffffffff);
		((__u32 *)src)[2] = bpf_htonl(lo >> 32);
		((__u32 *)src)[3] = bpf_htonl(lo & 0xffffffff);
		sum += (hi >> 48) + ((hi >> 32) & 0xffff) +
		       ((hi >> 16) & 0xffff) + (hi & 0xffff) +
		       (lo >> 48) + ((lo >> 32) & 0xffff) +
		       ((lo >> 16) & 0xffff) + (lo & 0xffff);
		c = csum_fold(sum);
		*csum = bpf_htons(c ? c : 0xffff);
	}
	return XDP_TX;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
