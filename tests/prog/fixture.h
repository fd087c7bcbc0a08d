/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Program tests: the test-clock build of bpf/ratelimit.bpf.c loaded with
 * the loader's own steps, and frames run through BPF_PROG_TEST_RUN on a
 * chosen CPU at a chosen time.
 */
#ifndef RL_PROG_FIXTURE_H
#define RL_PROG_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include "lib/maps.h"
#include "lib/source_sum.h"
#include "lib/rule.h"
#include "lib/rule_store.h"
#include "lib/settings.h"
#include "xdp_hold.h"

struct fixture {
	struct ratelimit_test *skel;
	struct rl_maps m;
	struct rl_settings s;
	int prog_fd;
	struct xdp_hold hold;	/* see fixture_hold() */
};

/* Load with `req` (NULL: defaults); false (and a failed check) on error. */
bool fixture_open(struct fixture *f, const struct rl_attach_req *req);
/* Released again (and its veth pair deleted) by fixture_close(). */
void fixture_close(struct fixture *f);

/*
 * Make fixture_run() cheap, for tests of thousands of frames: a test run
 * of an XDP program adds it to the XDP dispatcher and removes it again,
 * each an RCU grace period (~17 ms when busy). Held in the dispatcher by a
 * native attachment to a veth pair nobody sends on (tests/xdp_hold.h), a
 * run costs microseconds. Best effort: without it runs are only slower.
 */
void fixture_hold(struct fixture *f);

/* Run one frame on `cpu` at time `now`; returns the XDP verdict or -1. */
int fixture_run(struct fixture *f, const void *frame, size_t len, int cpu,
		__u64 now);

/* fixture_run of `fr`, which becomes the frame the program left (a
 * SYN-ACK it answers with, an ACK it marked). */
struct frame;
int fixture_run_frame(struct fixture *f, struct frame *fr, int cpu, __u64 now);

/* fixture_run, and what the frame added to the interface totals. */
int fixture_run_counted(struct fixture *f, const void *frame, size_t len,
			int cpu, __u64 now, struct rl_counters *moved);

/* The CPUs this process could run on when it started (fixture_run pins
 * the thread to one): fills up to max, returns how many. */
int fixture_cpus(int *cpus, int max);

/* quota set PREFIX with the given rates (RL_UNLIMITED: leave unset). */
bool fixture_quota(struct fixture *f, const char *prefix, __u64 pps,
		   __u64 bps, __u64 agg_pps, __u64 agg_bps);

/* quota set PREFIX --pps PPS, nothing else (RL_UNLIMITED: allow-list). */
bool fixture_pps(struct fixture *f, const char *prefix, __u64 pps);

/* quota set PREFIX with every field of `c` (newcomer budget, ban, ...). */
bool fixture_rule(struct fixture *f, const char *prefix,
		  const struct rl_rule_change *c);
/* The same for the rule of PREFIX and `scope` (NULL: unscoped), as quota
 * set writes it; `c` NULL: quota del. */
bool fixture_rule_scoped(struct fixture *f, const char *prefix,
			 const struct rl_scope *scope,
			 const struct rl_rule_change *c);

struct rl_counters fixture_totals(struct fixture *f);
/* Until `until` (the program's clock) the kernel may have SYN cookies
 * out, as the egress hook says on seeing a SYN-ACK from no socket
 * (kernel_cookies_until: a test run's skb always has one). */
void fixture_kernel_cookies(struct fixture *f, __u64 until);
/* Does the program ask refuse_first() at `now` (its hint that a newcomer
 * budget refuses: bpf/refuse_first.bpf.h)? */
bool fixture_refusing(struct fixture *f, __u64 now);
/* The drops `refused` holds for `addr` (0: no entry). */
__u64 fixture_refused(struct fixture *f, const char *addr);
/* The tracked source for `addr` (IPv4 or IPv6 text, already masked). */
bool fixture_source(struct fixture *f, const char *addr, __u64 now,
		    struct rl_source_sum *out);
/*
 * `sources` as the program finds it: a source's slot through `source_index`
 * (user/lib/source_index_map.h), never a lookup by key in `sources` itself.
 */
struct rl_index;
/* The index of the fixture's maps (its seed and buckets from the config):
 * false, and a failed check, when the config cannot be read. */
bool fixture_index(struct fixture *f, struct rl_index *x);
/* The per-CPU values of source `key` (rl_percpu_alloc(sizeof(struct
 * rl_source))): 0, -ENOENT (not tracked), -errno. */
int fixture_source_vals(struct fixture *f, const struct rl_key *key, void *vals);
/* Evict `key` as the program evicts a source: its way emptied, its values
 * left in its slot (their `owner` still `key`). 0, -ENOENT, -errno. */
int fixture_evict(struct fixture *f, const struct rl_key *key);
/* Place `key` in an empty way of its buckets with the per-CPU values
 * `vals` (rl_index_place): 0, -EEXIST, -ENOSPC, -errno. */
int fixture_place(struct fixture *f, const struct rl_key *key, const void *vals,
		  bool verified);
/* Each tracked source, as rl_index_walk() meets it: its return. */
int fixture_walk(struct fixture *f,
		 int (*each)(void *ctx, const struct rl_key *key, __u32 slot,
			     const void *vals),
		 void *ctx);
/* How many sources `sources` tracks, or -errno. */
long fixture_tracked(struct fixture *f);

/*
 * The tracked source for `addr` at `now` has passed, dropped and holds in
 * its window these packets: each checked ("WHAT: passed" ...), all three
 * even when one fails; false when one fails or the source is not tracked.
 * A macro, so that a failure names the test's line.
 */
#define CHECK_SOURCE(f, addr, now, passed, dropped, window, what) ({	\
	struct rl_source_sum __src;					\
	fixture_source((f), (addr), (now), &__src) &&			\
		(CHECK_EQ(__src.passed_pkts, (passed), what ": passed") &	\
		 CHECK_EQ(__src.dropped_pkts, (dropped), what ": dropped") &	\
		 CHECK_EQ(__src.window_pkts, (window), what ": window"));	\
})

/* ---- frames ---- */
#define FRAME_MAX 2048
struct frame {
	__u8 _align[2];		/* as NET_IP_ALIGN: IP headers 4-byte aligned */
	__u8 data[FRAME_MAX];
	size_t len;
};

/* UDP over IPv4 or IPv6 (by the address family of `src`), `len` bytes in
 * all (padded), behind `nvlan` tags (0..3; 802.1ad outer when 2 or more):
 * tg_frame_udp() of tests/gen/frames.h, which trafficgen and bench use. */
void frame_udp(struct frame *fr, const char *src, size_t len, int nvlan);
void frame_arp(struct frame *fr);
/* frame_udp() of 100 bytes from `src`, no tag, with EtherType `proto` and
 * the `hlen` bytes of `hdr` between Ethernet and IP: an encapsulation
 * (PPPoE session, MPLS) the program does not read. */
void frame_encap(struct frame *fr, const char *src, __u16 proto,
		 const void *hdr, size_t hlen);

/* A TCP segment of 20 header bytes, no payload (`flags`: TCP_*). */
#define TCP_FIN	0x01
#define TCP_SYN	0x02
#define TCP_RST	0x04
#define TCP_ACK	0x10
void frame_tcp(struct frame *fr, const char *src, const char *dst,
	       __u16 sport, __u16 dport, __u8 flags);

/* The host's end of the connections the tests answer: HOST_ADDR(peer) is
 * 198.18.255.1 or 2001:db8:ffff::1 (by the peer's family), port 80; the
 * peer's port is PEER_PORT. */
#define HOST_ADDR(peer)	(strchr((peer), ':') ? "2001:db8:ffff::1" : "198.18.255.1")
#define HOST_PORT	80
#define PEER_PORT	40000

/* Run `fr` through the egress hook (rl_egress) on `cpu` at `now`: its
 * return code (TC_ACT_UNSPEC, -1), or -1 and a failed check. */
int fixture_egress(struct fixture *f, const struct frame *fr, int cpu, __u64 now);

/* Sequence numbers of the handshakes the tests make: the host's SYN-ACK
 * carries HOST_ISN; the peer's segments start at PEER_ISN + 1 (0, so
 * that frame_tcp()'s segments of the peer are within the host's window). */
#define HOST_ISN	1000U
#define PEER_ISN	0xffffffffU
#define TC_ACT_UNSPEC	(-1)

/* Set the sequence and acknowledgment numbers of frame_tcp() frame `fr`. */
void frame_tcp_numbers(struct frame *fr, __u32 seq, __u32 ack);

/* The host's stack sends `peer` a SYN-ACK (HOST_ADDR:HOST_PORT to
 * peer:PEER_PORT, HOST_ISN) through the egress hook. */
bool fixture_synack(struct fixture *f, const char *peer, int cpu, __u64 now);

/* The peer's ACK on that connection acknowledging `ack`, through the XDP
 * program (judged like any of its packets): its verdict, or -1. */
int fixture_handshake_ack(struct fixture *f, const char *peer, __u32 ack, int cpu,
			  __u64 now);

/* `peer` proves its return path: the host's SYN-ACK, then the peer's ACK
 * of it, a window and a bucket before `now` (so that at `now` the ACK is
 * out of the peer's window, as a handshake is before its connection's
 * data): verified, and its connection established for bans. Nothing
 * when `peer` is verified at `now`: its connection goes on. */
bool fixture_answer(struct fixture *f, const char *peer, int cpu, __u64 now);

/* Run `fr` n times on `cpu` at `now`: how many passed, or -1 (and a
 * failed check) when a run fails or returns neither pass nor drop. */
int fixture_send(struct fixture *f, const struct frame *fr, int n, int cpu,
		 __u64 now);

#define NSEC_MS 1000000ULL
#define NSEC_S 1000000000ULL
/* A clock far from 0 so that nothing depends on starting at zero. */
#define T0 (1000 * NSEC_S)

#endif /* RL_PROG_FIXTURE_H */
