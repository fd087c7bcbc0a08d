/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Shared by bench/baselines.bpf.c and the benchmark's userspace. */
#ifndef RL_BENCH_BPF_H
#define RL_BENCH_BPF_H

#include <linux/types.h>

/* Offset of the IPv6 source address in an untagged frame. */
#define BENCH_V6_SADDR_OFF	(14 + 8)

/* The TCP frames of the SYN cookie cases (xdp_tcp_churn): IPv6, a SYN
 * with Linux's 20 bytes of options, or an ACK padded to the same length. */
#define BENCH_TCP_LEN		94

/* The slot of xdp_xcpu's one source in its per-CPU array (as a slot
 * of `sources`; any but 0, so that a slot is really looked up). */
#define BENCH_XCPU_SLOT		37

/* One packet that reached the accuracy receiver's socket. */
struct bench_pass {
	__u64 ts;	/* bpf_ktime_get_ns(): the clock of the limiter's windows */
	__u32 saddr;	/* IPv4 source, network order */
	__u32 len;
};

#endif /* RL_BENCH_BPF_H */
