/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Every type and constant shared by the XDP program (bpf/ratelimit.bpf.c)
 * and userspace (user/, tests/). One definition, both sides: change a layout
 * here and both are rebuilt against it.
 */
#ifndef RATELIMIT_H
#define RATELIMIT_H

#include <linux/types.h>
#include "source_index.h"

#ifndef __bpf__
#include <assert.h>
#define RL_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define RL_STATIC_ASSERT(cond, msg)
#endif

/* ---- limits --------------------------------------------------------- */

/* Ring size of every window; --buckets may use 1..RL_MAX_BUCKETS of it. */
#define RL_MAX_BUCKETS		16
#define RL_DEFAULT_BUCKETS	10
#define RL_DEFAULT_WINDOW_NS	1000000000ULL		/* 1 s */
#define RL_NSEC_PER_SEC		1000000000ULL
#define RL_NSEC_PER_MSEC	1000000ULL
/* bpf_ktime_get_ns() is precise, but a bucket narrower than 1 ms would make
 * every source roll its ring on almost every packet. */
#define RL_MIN_BUCKET_NS	RL_NSEC_PER_MSEC
#define RL_MAX_WINDOW_NS	(60 * RL_NSEC_PER_SEC)
/*
 * Window counters are 32 bit (struct rl_window, union rl_hist_count): what
 * one CPU passes of one budget in one bucket, and what all CPUs passed in
 * one past bucket, is at most RL_COUNT_MAX (saturating).
 * A limited dimension never gets there, since a budget is at most
 * RL_MAX_BUDGET (quota set and attach refuse more: xdp-ratelimit(8) "Quota"); an
 * unlimited one (not judged) saturates there, which only its display
 * (window_*) sees. ~0U is kept for "unlimited" in a lease.
 */
#define RL_COUNT_MAX		0xfffffffeU
#define RL_MAX_BUDGET		((__u64)RL_COUNT_MAX)
/* The window uses bpf_ktime_get_coarse_ns() (a jiffy clock) when a bucket
 * spans at least this many of its ticks: a packet is then stamped at most
 * one tick late, so a bucket boundary moves by at most 1/RL_COARSE_MIN_TICKS
 * of a bucket (5%), the same for every CPU and every source (xdp-ratelimit(8) "Window"). */
#define RL_COARSE_MIN_TICKS	20

#define RL_MAX_RULES		4096	/* rules per interface, IPv4 + IPv6 */
/* Highest possible CPU id + 1 (bound of the cross-CPU bpf_loop, which
 * allows 2^23 iterations): NR_CPUS of the largest kernel configs. */
#define RL_MAX_CPUS		8192
#define RL_DEFAULT_MAX_SOURCES	65536
#define RL_MIN_MAX_SOURCES	16
#define RL_MAX_MAX_SOURCES	(16U << 20)
#define RL_DEFAULT_V6_PREFIX	64
/* Sources refused before they took a `sources` entry whose drops are kept
 * (the most recently refused; see struct rl_refused). */
#define RL_REFUSED_ENTRIES	16384
/* New entries in `refused` per RL_REFUSED_PERIOD_NS, for the interface: a
 * spoofed flood would otherwise pay a table insert (and eviction) per
 * packet, and churn out the refused sources that keep sending. Each CPU
 * takes its share, rounded up (rl_per_cpu_share): at most this + ncpus - 1
 * per period whatever the CPU count, so the table lasts at least
 * RL_REFUSED_ENTRIES / (256 + ncpus - 1) periods (4.3 s on 1 CPU, 3.4 s on
 * 64, 2.1 s on 512). */
#define RL_REFUSED_NEW_PER_PERIOD	256
#define RL_REFUSED_PERIOD_NS	(1ULL << 26)	/* ~67 ms: ~3,800 per s */
/* SYN-ACKs carrying a SYN cookie the program sends per RL_COOKIES_PERIOD_NS,
 * for the interface (each CPU its share, as above): each goes to whatever
 * address a SYN claimed, so a flood must not make the host a reflector at
 * its line rate. 4,096 per ~67 ms: about 61,000 per s, ~40 Mbit/s. */
#define RL_COOKIES_PER_PERIOD	4096
#define RL_COOKIES_PERIOD_NS	(1ULL << 26)
/* The window scale a cookie SYN-ACK offers when the config holds none:
 * what Linux offers with the default tcp_rmem. */
#define RL_COOKIE_DEFAULT_WSCALE	7
/* The mark of an ACK the program passed for a valid cookie, which the
 * host's SYNPROXY rule matches (user/lib/cookie_host.c): IPv4's reserved
 * flag bit (RFC 791: must be zero, so no sender sets it), IPv6's flow
 * label (0xc00c1, read only by SYNPROXY, which answers it). */
#define RL_COOKIE_MARK_V4	0x8000
#define RL_COOKIE_MARK_V6	0xc00c1
/* How long after the host last sent a SYN-ACK from no socket (the kernel's
 * own SYN cookie: its listener's SYN queue overflowed) an ACK without a
 * SYN-ACK on record is checked for one: the kernel accepts a cookie up to
 * two minute-counts old, so up to 3 minutes; 4 with room for the clocks. */
#define RL_KERNEL_COOKIES_NS	(240ULL * 1000000000ULL)

/* ---- newcomer budgets (include/newcomer.h) and bans (include/ban.h) ---- */
/* `aggregates` holds two windows per rule: its aggregate at the rule's
 * slot, its newcomer window RL_BUDGET_SLOTS further. The default rule
 * (0.0.0.0/0 and ::/0) is one rule: both halves use the extra slot
 * RL_BUDGET_DEFAULT, so IPv4 and IPv6 share one window of each kind, as
 * long as their budgets are the same (else RL_RULE_F_APART). */
#define RL_BUDGET_DEFAULT	RL_MAX_RULES
#define RL_BUDGET_SLOTS		(RL_MAX_RULES + 1)
#define RL_AGGREGATE_ENTRIES	(2 * RL_BUDGET_SLOTS)
/* Banned sources (struct rl_ban): an LRU, so the bans of sources that
 * stopped sending make room; a banned source that keeps sending is looked
 * up on every packet and stays. */
#define RL_BAN_ENTRIES		65536
#define RL_MAX_BAN_NS		(24 * 3600 * RL_NSEC_PER_SEC)	/* a day */

/* ---- verified sources (include/verified.h) ---- */
/* --verified-ttl: how long one answer from the host keeps a source
 * verified (default 10 minutes, 1 s to a day). */
#define RL_DEFAULT_VERIFIED_TTL_NS	(600 * RL_NSEC_PER_SEC)
#define RL_MIN_VERIFIED_TTL_NS		RL_NSEC_PER_SEC
#define RL_MAX_VERIFIED_TTL_NS		(24 * 3600 * RL_NSEC_PER_SEC)
/* --replies-via: interfaces the host's answers leave by, at most this many */
#define RL_MAX_REPLIES_VIA	4
/* Hash functions of `verified_bloom` (its map_extra). */
#define RL_VERIFIED_BLOOM_HASHES	1
/* tc filter of the egress hook (user/lib/egress.c): priority, and handle =
 * the XDP interface's ifindex, so that each attached interface owns one */
#define RL_TC_PRIORITY		0x5258	/* "RX" */
/* The table a source's per-CPU state lives in: verified sources (and
 * every source of rules without a newcomer budget) in `sources`, the
 * unverified sources a newcomer budget admits in `newcomers`. */
#define RL_TABLE_SOURCES	1
#define RL_TABLE_NEWCOMERS	2

/* ---- events (include/events.h) ---- */
/* The `events` ring buffer: 256 KiB, some 3,600 events of 72 bytes (the
 * record and the kernel's 8-byte header), about two seconds of what both
 * CPUs of a small machine may report at most, for a follower that fell behind. */
#define RL_EVENTS_RING_BYTES	(256 * 1024)
/* Events each CPU may report per RL_EVENTS_PERIOD_NS (~950 per s per
 * CPU); beyond, they are counted in events_lost: a flood that limits a
 * new source on every packet costs a counter, not a ring buffer write. */
#define RL_EVENTS_PER_PERIOD	64
#define RL_EVENTS_PERIOD_NS	(1ULL << 26)	/* ~67 ms */
/* The first events of a period may wake a waiting follower; the rest
 * wait for its next poll (user/cli/cmd_events.c, every 100 ms). */
#define RL_EVENTS_WAKEUPS	8

/* A rate or budget of RL_UNLIMITED means "no limit of that kind". */
#define RL_UNLIMITED		(~0ULL)
/* Bumped whenever a map key or value changes shape: a CLI refuses pins
 * written by another layout instead of misreading them. */
#define RL_LAYOUT_VERSION	15
/* A rules generation in the middle of a change: rule caches are not
 * trusted (user/lib/rule.c mark_change). */
#define RL_RULES_CHANGING(gen)	(((gen) & 1) != 0)
/* rule id stored in a source's cache when no rule covers it */
#define RL_NO_RULE		(~0U)

/* ---- pins and map names --------------------------------------------- */

#define RL_BPFFS		"/sys/fs/bpf"
#define RL_PIN_SUBDIR		"xdp-ratelimit"		/* under RL_BPFFS */
#define RL_PIN_LINK		"link"
/*
 * Every map of the program, once: X(NAME, TYPE, KEY, VALUE). NAME is the
 * map's identifier in bpf/ratelimit.bpf.c, its name in the object and its
 * pin name under RL_BPFFS/RL_PIN_SUBDIR/IFACE/; the order is the order of
 * struct rl_maps and of pinning. TYPE, KEY and VALUE are what a pin must
 * be before the CLI trusts it (user/lib/iface.c). A new map is one more row
 * (and its definition in the program).
 */
#define RL_MAPS(X)							\
	X(config,	BPF_MAP_TYPE_ARRAY,		__u32,			struct rl_config)	\
	X(counters,	BPF_MAP_TYPE_PERCPU_ARRAY,	__u32,			struct rl_counters)	\
	X(sources,	BPF_MAP_TYPE_PERCPU_ARRAY,	__u32,			struct rl_source)	\
	X(source_index,	BPF_MAP_TYPE_ARRAY,		__u32,			struct rl_index_bucket)	\
	X(source_keys,	BPF_MAP_TYPE_ARRAY,		__u32,			struct rl_key)		\
	X(source_pool,	BPF_MAP_TYPE_ARRAY,		__u32,			struct rl_source_pool)	\
	X(rules,	BPF_MAP_TYPE_ARRAY,		__u32,			struct rl_rule)		\
	X(rules_v4,	BPF_MAP_TYPE_LPM_TRIE,		struct rl_lpm_v4,	__u32)			\
	X(rules_v6,	BPF_MAP_TYPE_LPM_TRIE,		struct rl_lpm_v6,	__u32)			\
	X(aggregates,	BPF_MAP_TYPE_PERCPU_ARRAY,	__u32,			struct rl_state)	\
	X(refused,	BPF_MAP_TYPE_LRU_HASH,		struct rl_key,		struct rl_refused)	\
	X(bans,		BPF_MAP_TYPE_LRU_HASH,		struct rl_key,		struct rl_ban)		\
	X(history,	BPF_MAP_TYPE_LRU_HASH,		struct rl_key,		struct rl_history)	\
	X(agg_history,	BPF_MAP_TYPE_ARRAY,		__u32,			struct rl_history)	\
	X(events,	BPF_MAP_TYPE_RINGBUF,		struct rl_none,		struct rl_none)		\
	X(remote,	BPF_MAP_TYPE_HASH,		struct rl_key,		struct rl_remote)	\
	X(sync,		BPF_MAP_TYPE_ARRAY,		__u32,			struct rl_sync_state)	\
	X(verified,	BPF_MAP_TYPE_LRU_HASH,		struct rl_key,		struct rl_verified)	\
	X(answered,	BPF_MAP_TYPE_LRU_HASH,		struct rl_flow,		struct rl_answered)	\
	X(synacks,	BPF_MAP_TYPE_LRU_HASH,		struct rl_flow,		struct rl_synack)	\
	X(newcomers,	BPF_MAP_TYPE_LRU_PERCPU_HASH,	struct rl_key,		struct rl_source)	\
	X(new_history,	BPF_MAP_TYPE_LRU_HASH,		struct rl_key,		struct rl_history)	\
	X(verified_bloom, BPF_MAP_TYPE_BLOOM_FILTER,	struct rl_none,		struct rl_key)	\
	X(scopes,	BPF_MAP_TYPE_ARRAY,		__u32,			struct rl_scope)	\
	X(scoped_v4,	BPF_MAP_TYPE_LPM_TRIE,		struct rl_lpm_scoped_v4, __u32)			\
	X(scoped_v6,	BPF_MAP_TYPE_LPM_TRIE,		struct rl_lpm_scoped_v6, __u32)			\
	X(rule_counters, BPF_MAP_TYPE_PERCPU_ARRAY,	__u32,			struct rl_rule_counters) \
	X(cpus,		BPF_MAP_TYPE_ARRAY,		__u32,			struct rl_cpus)

/* The key and value of a map that has none (a ring buffer: size 0, as
 * the kernel reports it; an empty struct is a GNU C extension). */
struct rl_none {
};

/* A map's name as a string: RL_MAP_NAME(sources) is "sources". */
#define RL_MAP_NAME(name)	#name
/* For bench/counters.c, which names this pin outside user/ */
#define RL_MAP_COUNTERS		RL_MAP_NAME(counters)

/* ---- keys ----------------------------------------------------------- */

/* A tracked source: IPv4 as v4-mapped IPv6 (::ffff:a.b.c.d), IPv6 masked
 * to the configured prefix (/64 by default). */
struct rl_key {
	__u8 addr[16];
};

/* A TCP connection as the host's answer names it (network order): the
 * peer (the source it answers) and the host's own address and port.
 * Addresses are whole (IPv4 as v4-mapped IPv6), not masked. */
struct rl_flow {
	__u8 peer[16];
	__u8 host[16];
	__be16 peer_port;
	__be16 host_port;
};

struct rl_lpm_v4 {
	__u32 prefixlen;
	__u8 addr[4];
};

struct rl_lpm_v6 {
	__u32 prefixlen;
	__u8 addr[16];
};

/* The tries of scoped rules (include/scope.h): the scope's index in
 * `scopes`, then the address; prefixlen counts the 32 bits of `scope`
 * (always whole) and the address's prefix. */
struct rl_lpm_scoped_v4 {
	__u32 prefixlen;
	__u32 scope;
	__u8 addr[4];
};

struct rl_lpm_scoped_v6 {
	__u32 prefixlen;
	__u32 scope;
	__u8 addr[16];
};

/* ---- windows -------------------------------------------------------- */

/*
 * The newest bucket of one CPU's window (see include/window.h): what this
 * CPU passed of one budget in bucket `bucket` of the global grid (it
 * starts at bucket x width ns on the monotonic clock), at most
 * RL_COUNT_MAX each. The buckets before it are in the budget's shared
 * `history` (struct rl_history), where a roll adds them. `bucket` is the
 * field a roll publishes, last.
 */
struct rl_window {
	__u64 bucket;
	__u32 pkts;
	__u32 bytes;
};

/* rl_lease.allow_*: no limit of that kind */
#define RL_LEASE_UNLIMITED	(~0U)

/*
 * A CPU's lease on the global budget (see include/quota.h): this CPU may
 * pass packets while its newest bucket stays within allow_*, for that
 * bucket (a roll drops the lease) under rules generation `gen`. free_* is
 * an upper bound of what the whole budget still had free.
 */
struct rl_lease {
	__u32 allow_pkts;
	__u32 allow_bytes;
	__u32 free_pkts;
	__u32 free_bytes;
	__u32 gen;
	__u32 state;		/* RL_LEASE_* of quota.h */
};

/*
 * The bucket before a CPU's newest one that still counts, kept by the CPU
 * itself: a roll moves the newest bucket here, and only a third bucket of
 * the same window sends this one to the shared history. A source passing
 * in one or two buckets of a window (one packet a minute, a burst across a
 * bucket edge) never touches its history. `bucket` is the low 32 bits of
 * its index.
 */
struct rl_past {
	__u32 bucket;
	__u32 pkts;
	__u32 bytes;
};

/*
 * The per-CPU state behind one budget: lease, newest bucket, the bucket
 * before it (`past`) and `flushed`: 1 + the low 32 bits of the newest
 * bucket index this CPU added to the history (0: none). Whoever sums the
 * CPUs reads the history only when some CPU's `flushed` is inside the
 * window.
 */
struct rl_state {
	struct rl_lease lease;
	struct rl_window win;
	struct rl_past past;
	__u32 flushed;
};

/*
 * One budget's count of one bucket in the history, read and updated as one
 * __u64 (`word`, compare-and-swap): `bucket` is the low 32 bits of the
 * bucket index, so a slot holds the bucket it was last written for and
 * nothing older.
 */
union rl_hist_count {
	__u64 word;
	struct {
		__u32 count;
		__u32 bucket;
	};
};

struct rl_hist_slot {
	union rl_hist_count pkts;
	union rl_hist_count bytes;
};

/*
 * The past buckets of one budget, all CPUs together: value of the shared
 * (not per-CPU) `history` LRU hash (a source's, keyed like `sources`) and
 * `agg_history` array (a rule's aggregate and newcomer windows, indexed
 * like `aggregates`). Slot = bucket index % RL_MAX_BUCKETS. A CPU adds its
 * newest bucket here when it rolls past it, if it is still inside the
 * window; the verdict reads it only at a refresh.
 */
struct rl_history {
	/* 1 + the newest bucket index added (0: none), moved before the
	 * slot: tells a slot's bucket from one 2^32 buckets older */
	__u64 newest;
	struct rl_hist_slot slot[RL_MAX_BUCKETS];
};

/*
 * Value of the per-CPU `sources` LRU hash: one per tracked source per CPU.
 *
 * What the verdict reads is the first 64 bytes (a cache line when the
 * value is aligned): owner, rule cache, lease and newest bucket. Then the
 * bucket before it and the history marker (read at a refresh, written at
 * a roll), and what a counted packet writes: the totals, verified_ns and
 * the events marker limited_ns (read and written as the packet is counted).
 *
 * `owner` is the key the value was last (re)initialised for on this CPU:
 * the kernel may hand an evicted LRU element to a new key at once, while a
 * CPU still finishes a packet of the old key on it; a value whose owner is
 * not the key looked up is stale and reset before use (and skipped by the
 * cross-CPU sum and by userspace). All zero: never used on this CPU.
 * Every byte RL_OWNER_NOBODY: its slot went to another source since
 * (bpf/source_index.bpf.h clear_owner). Not zero, which is a key: an
 * IPv6 source's (::, or any of ::/N under --ipv6-prefix N), which would own the
 * values left; no key is all 0xff (an ff00::/8 source is malformed, a
 * v4-mapped key starts with zeros, a scoped window's second byte is 4 or 6).
 * `verified_ns` is this CPU's copy of the source's `verified` entry
 * (when the host last answered it, 0: not known to be verified), so that
 * a verified source's packets look the shared entry up once a TTL, not
 * per packet (bpf/verified.bpf.h).
 */
struct rl_source {
	struct rl_key owner;
	__u32 rule_gen;		/* rules generation rule_id was resolved in */
	__u32 rule_id;		/* index into `rules`, or RL_NO_RULE */
	struct rl_state st;
	__u64 passed_pkts;
	__u64 passed_bytes;
	__u64 dropped_pkts;
	__u64 dropped_bytes;
	__u64 verified_ns;
	/* events (include/events.h): this CPU's last drop of the source
	 * while it is reported limited here, 0 when it is not */
	__u64 limited_ns;
};

#define RL_OWNER_NOBODY		0xff

/* At most two cache lines per source per CPU (the kernel allocates one for
 * every possible CPU): a new field must make room first. */
#define RL_SOURCE_MAX_SIZE	128

/*
 * Value of the one-entry `cpus` array: the CPUs that have written a
 * budget's state, the only ones a refresh reads (include/cpus.h). Written
 * by the program only (fetching atomic ORs); never cleared.
 */
#define RL_CPUS_WORDS	4
#define RL_CPUS_BITS	(RL_CPUS_WORDS * 64)

struct rl_cpus {
	__u64 seen[RL_CPUS_WORDS];	/* bit c%64 of word c/64: CPU c joined */
	__u64 high;	/* nonzero: a CPU >= RL_CPUS_BITS joined */
};

/*
 * Value of the `refused` LRU hash: drops of a source whose packets were
 * refused before it had a `sources` entry (a blocked prefix, a full
 * aggregate budget), so that a spoofed flood cannot take table entries
 * from real sources. Shared by all CPUs, added to atomically.
 */
struct rl_refused {
	__u64 dropped_pkts;
	__u64 dropped_bytes;
};

/*
 * Value of the `bans` LRU hash, keyed by struct rl_key: the source is
 * banned until `until_ns` (the program's clock). The banning rule's
 * prefix is kept, since bans outlive rule changes. Shared by all CPUs.
 */
struct rl_ban {
	__u64 until_ns;
	__u64 banned_ns;	/* when: the drop that banned it */
	__u32 rule_flags;	/* RL_RULE_F_V6 of the banning rule */
	__u32 rule_prefixlen;
	__u8 rule_addr[16];
};

/*
 * Value of the `verified` LRU hash, keyed like `sources`: when the source
 * last proved that it receives what the host sends it (include/verified.h:
 * its ACK acknowledged a SYN-ACK the host sent, or a segment of one of its
 * established connections left the host), written only on such proof, so
 * no packet a blind forger can send creates, refreshes or pushes out an
 * entry. proven_*: what the source sent within the host's receive window
 * of connections it established (`answered`) in fixed window proven_win
 * (the low 32 bits of now / W), added to by the XDP program (only by such
 * packets): a ban needs them alone to exceed the quota.
 */
struct rl_verified {
	__u64 answered_ns;
	__u32 proven_win;
	__u32 proven_pkts;
	__u64 proven_bytes;
};

/* Value of the `answered` LRU hash (struct rl_flow): a connection the host
 * established. answered_ns: when it last sent a segment on it (or when the
 * peer's ACK proved it); ack and win: the acknowledgment number and the
 * window (scaled, in bytes) it last advertised, which bound the sequence
 * numbers the peer may send; wscale: the window scale of its SYN-ACK (0
 * when unknown: a smaller window, so fewer packets count toward a ban). */
struct rl_answered {
	__u64 answered_ns;
	__u32 ack;
	__u32 win;
	__u8 wscale;
	__u8 pad[7];
};

/* Value of the `synacks` LRU hash (struct rl_flow): a SYN-ACK the host's
 * own stack sent, until the peer's ACK acknowledges it. isn: its sequence
 * number (the proof is ack == isn + 1); ack and win: its acknowledgment
 * number and (unscaled) window, the connection's first receive window;
 * wscale: its window-scale option (0 when absent). */
struct rl_synack {
	__u32 isn;
	__u32 ack;
	__u16 win;
	__u8 wscale;
	__u8 pad;
};

/*
 * Value of the `remote` hash (fleet sync, include/remote.h): what the other
 * hosts of the fleet passed for the source, per bucket of this host's grid,
 * written whole by the sync agent (a hash update replaces the element) and
 * added by the verdict to the other CPUs' usage. A slot counts while its
 * bucket is in the judging CPU's window; empty slots are all zero.
 */
struct rl_remote_slot {
	__u64 bucket;		/* index on this host's bucket grid */
	__u32 pkts;
	__u32 bytes;
};

struct rl_remote {
	struct rl_remote_slot slot[RL_MAX_BUCKETS];	/* by RL_SLOT(bucket) */
};

/* ---- rules ---------------------------------------------------------- */

#define RL_RULE_F_USED		(1U << 0)
#define RL_RULE_F_V6		(1U << 1)
/* The IPv6 half of the default (::/0) whose aggregate or newcomer budget
 * differs from the IPv4 half's: it judges in windows of its own, at its
 * slot (rl_budget_slot), so that no lease sized for one half's budget is
 * spent on the other's packets. Set and cleared by userspace only. */
#define RL_RULE_F_APART		(1U << 2)
/* --syn-cookies: an unverified source's SYN the rule refuses is answered
 * with a SYN cookie (bpf/cookie.bpf.h), and an ACK returning a valid one
 * passes and verifies its source */
#define RL_RULE_F_COOKIES	(1U << 3)

/*
 * One slot of the `rules` array; the LPM tries map a prefix to its slot.
 * Rates are per second as the operator gave them (RL_UNLIMITED: none);
 * budgets are per window, computed by userspace with rl_budget().
 */
struct rl_rule {
	__u64 pps;
	__u64 bps;
	__u64 agg_pps;
	__u64 agg_bps;
	__u64 pkt_budget;
	__u64 byte_budget;
	__u64 agg_pkt_budget;
	__u64 agg_byte_budget;
	__u32 flags;
	__u32 prefixlen;	/* of the address family in flags */
	__u8 addr[16];		/* IPv4 in the first 4 bytes */
	/* newcomer budget (--new-pps/--new-bps) and ban (--ban) */
	__u64 new_pps;
	__u64 new_bps;
	__u64 new_pkt_budget;
	__u64 new_byte_budget;
	__u64 ban_ns;		/* 0: no bans */
	/* --burst: packets a source passes in one bucket at most, all CPUs
	 * together (include/quota.h); 0: no cap */
	__u64 burst;
	/* 1 + the rule's scope in `scopes` (include/scope.h); 0: unscoped */
	__u32 scope;
	__u32 pad;
};

/* ---- rule scope (include/scope.h) ------------------------------------ */

/* Scopes in use on an interface at once: each is one protocol, with a
 * destination port range and SYN or not; any number of rules share one. */
#define RL_MAX_SCOPES		16
#define RL_SCOPE_F_SYN		(1U << 0)	/* TCP, SYN set and ACK not */
#define RL_SCOPE_F_DPORT	(1U << 1)	/* dport_lo..dport_hi */

/* One entry of the `scopes` array, written by userspace only; rank 0: the
 * entry is free. */
struct rl_scope {
	__u8 proto;		/* IP protocol (IPv6: the upper-layer one) */
	__u8 flags;		/* RL_SCOPE_F_* */
	__u16 dport_lo;		/* host order, inclusive */
	__u16 dport_hi;
	__u16 pad;
	__u32 rank;		/* rl_scope_rank(): higher is narrower */
};

/* ---- fleet sync (xdp-ratelimit sync) ---------------------------------- */

#define RL_SYNC_ERR_MAX		96
#define RL_SYNC_REJECTS		4

enum rl_sync_health {
	RL_SYNC_STARTING = 0,	/* no exchange yet */
	RL_SYNC_OK = 1,
	RL_SYNC_DEGRADED = 2,	/* Redis slow or gone: local counts only */
};

/* The one entry of the `sync` map: the state of the interface's sync agent
 * (user/lib/sync_status.c), written by the agent only; pid 0 when none runs. */
struct rl_sync_state {
	__u32 pid;
	__u32 health;		/* enum rl_sync_health */
	__u64 interval_ns;
	__u64 last_ok_ns;	/* CLOCK_REALTIME of the last exchange, 0: none */
	__u64 degraded_ns;	/* CLOCK_REALTIME since when, 0: not degraded */
	__u64 sources;		/* sources exchanged in the last interval */
	__u64 exchanges;	/* intervals that exchanged with Redis */
	__u64 failures;		/* intervals that could not */
	__u64 round_trips;	/* pipelined batches sent to Redis */
	__u64 busy_ns;		/* the last interval's work, read to written */
	char fleet[72];
	char error[RL_SYNC_ERR_MAX];	/* why degraded */
	/* layout 10: fields of the other hosts ignored, by why (format, mac,
	 * range, date: user/lib/sync_value.h), and keys Redis answered
	 * with an error (another type: WRONGTYPE), since the agent started */
	__u64 rejected[RL_SYNC_REJECTS];
	__u64 key_errors;
};

/* ---- config and counters --------------------------------------------- */

#define RL_F_DRY_RUN		(1U << 0)
#define RL_F_PASS_MALFORMED	(1U << 1)
/* set by attach, from the bucket width (RL_COARSE_MIN_TICKS) */
#define RL_F_COARSE_CLOCK	(1U << 2)
/* set by attach: it created the clsact qdisc of egress hook i (in
 * rl_egress_hooks' order), which detach then removes once no filter is
 * left on it. A CLI that does not know the bit leaves the qdisc, as all
 * did before: the layout stays. */
#define RL_F_OWN_CLSACT(i)	(1U << (8 + (i)))
#define RL_F_OWN_CLSACT_ALL	(((1U << RL_MAX_REPLIES_VIA) - 1) << 8)

enum rl_mode {
	RL_MODE_NATIVE = 1,
	RL_MODE_GENERIC = 2,
};

/* Settings fixed at load: `const volatile` in the program, and a copy in
 * the `config` map for userspace and bpftool. */
struct rl_settings {
	__u64 window_ns;
	__u64 bucket_ns;
	__u32 nbuckets;
	__u32 ncpus;		/* highest possible CPU id + 1: bound of
				 * the cross-CPU sum */
	__u32 v6_prefix;
	__u32 flags;		/* RL_F_* */
	__u32 v6_mask[4];	/* network order mask for v6_prefix */
	__u64 max_sources;
	__u32 mode;		/* enum rl_mode, informational */
	__u32 ifindex;
	__u64 verified_ttl_ns;	/* --verified-ttl */
	/* --replies-via: ifindexes of the egress hooks, 0-terminated */
	__u32 replies_via[RL_MAX_REPLIES_VIA];
};

/* Single entry of the `config` array map. */
struct rl_config {
	struct rl_settings set;
	__u32 rules_gen;	/* moved by every quota set/del; odd while one
				 * is in progress (RL_RULES_CHANGING) */
	__u32 layout;		/* RL_LAYOUT_VERSION of the CLI that attached */
	__u64 test_now_ns;	/* only read by the test build (RL_TEST_CLOCK) */
	/* set once a rule has had --ban: from then on (bans outlive rule
	 * changes) every packet looks its source up in `bans` */
	__u32 bans_used;
	/* set by the first `sync` agent: from then on a refresh of a
	 * source's budget also looks it up in `remote` */
	__u32 remote_used;
	/* 1 + the highest index in `scopes` in use, 0: no scoped rule (a
	 * packet then pays one comparison for scopes) */
	__u32 scopes_used;
	/* what a cookie SYN-ACK offers (bpf/cookie.bpf.h), set at attach
	 * and reload from the interface's MTU and the host's receive
	 * buffers: the MSS for IPv4 (IPv6: 20 less) and the window scale
	 * the host's own listeners use, which SYNPROXY keeps (0: the
	 * defaults, 1460 and RL_COOKIE_DEFAULT_WSCALE) */
	__u16 cookie_mss;
	__u8 cookie_wscale;
	/* the protocols no scope in use names, a bit each
	 * (rl_scope_skip_bit): a packet of one walks no scope; 0: every
	 * packet walks them. From layout 15 (before, a pad byte that a CLI
	 * kept as it found it while it changed scopes: not carried) */
	__u8 scope_skip;
	/* `source_index` (include/source_index.h): its buckets
	 * (rl_index_buckets of --max-sources) and its hash's seed, drawn at
	 * attach; last, so that an older layout's config reads as before */
	__u32 index_buckets;
	__u64 index_seed;
};

/* Single entry of the per-CPU `counters` array: totals for the interface. */
/*
 * An interface's counters (per CPU, summed by readers), one row each:
 * X(field, JSON name, Prometheus family, verdict label, help). The struct,
 * `stats --json`'s totals and the Prometheus families are made from this
 * list, and the man page names every JSON name and family (make test-doc
 * checks). A row whose JSON name is NULL is the program's own bookkeeping,
 * shown nowhere. Rows of one family need not be adjacent; the order is the
 * pinned layout's (a new row goes last).
 */
#define RL_COUNTERS(X) \
	X(passed_pkts, "passed_packets", "packets_total", "passed", \
	  "Frames the XDP program passed or dropped since attach.") \
	X(passed_bytes, "passed_bytes", "bytes_total", "passed", \
	  "Bytes of the frames passed or dropped since attach (frame length seen by XDP).") \
	X(dropped_pkts, "dropped_packets", "packets_total", "dropped", NULL) \
	X(dropped_bytes, "dropped_bytes", "bytes_total", "dropped", NULL) \
	X(malformed_pkts, "malformed_packets", "malformed_packets_total", NULL, \
	  "Frames too short or bad to read a source address from (also in packets_total).") \
	X(non_ip_pkts, "non_ip_packets", "non_ip_packets_total", NULL, \
	  "Frames that are neither IPv4 nor IPv6, always passed (also in packets_total).") \
	/* sources (re)created: new or after eviction */ \
	X(new_sources, "new_sources", "sources_created_total", NULL, \
	  "Sources that got an entry in the source table (new, or again after eviction).") \
	/* judged without state: the table insert failed */ \
	X(untracked_pkts, "untracked_packets", "untracked_packets_total", NULL, \
	  "Frames judged without per-source state because the source table refused an entry.") \
	/* refused newcomers not listed in `refused` (its insert budget was \
	 * spent): dropped, counted here and in dropped_* only */ \
	X(refused_unlisted_pkts, "refused_unlisted_packets", "refused_unlisted_packets_total", NULL, \
	  "Frames refused before their source was tracked and not listed in the refused table.") \
	/* this CPU's `refused` insert budget: period and inserts in it */ \
	X(refused_period, NULL, NULL, NULL, NULL) \
	X(refused_inserts, NULL, NULL, NULL, NULL) \
	X(banned_pkts, "banned_packets", "banned_packets_total", NULL, \
	  "Frames dropped because their source was banned (quota set --ban; also in packets_total).") \
	/* events not reported (this CPU's budget spent, or the ring buffer \
	 * full), and this CPU's budget: period and events in it */ \
	X(events_lost, "events_lost", "events_lost_total", NULL, \
	  "Events the program could not report (its rate per CPU spent, or the ring buffer full).") \
	X(events_period, NULL, NULL, NULL, NULL) \
	X(events_sent, NULL, NULL, NULL, NULL) \
	/* frames in an encapsulation the parser does not read (a third VLAN \
	 * tag, PPPoE session, MPLS): dropped unless --pass-malformed */ \
	X(encap_pkts, "encap_packets", "encap_packets_total", NULL, \
	  "Frames in an encapsulation the program does not read (a third VLAN tag, PPPoE, MPLS): " \
	  "dropped unless --pass-malformed (also in packets_total).") \
	/* the egress hook: segments of the host's established connections it \
	 * saw (TCP, neither SYN nor RST); sources proved that were not \
	 * verified; entries `verified` gained (inserts: what the table no \
	 * longer holds of them it evicted, user/lib/verified_map.c) */ \
	X(replies, "replies", "replies_total", NULL, \
	  "Segments of the host's established TCP connections the egress hook saw.") \
	X(verified_new, "verified_new", "sources_verified_total", NULL, \
	  "Sources that became verified (their ACK acknowledged a SYN-ACK the host sent).") \
	X(verified_inserts, NULL, NULL, NULL, NULL) \
	/* SYN cookies (bpf/cookie.bpf.h): SYN-ACKs sent, ACKs that returned \
	 * a valid cookie and passed, ACKs of refused sources whose cookie was \
	 * not valid, and this CPU's SYN-ACK budget: its period and the \
	 * SYN-ACKs sent in it */ \
	X(cookies_sent, "syn_cookies_sent", "syn_cookies_sent_total", NULL, \
	  "SYN-ACKs carrying a SYN cookie the program sent for refused SYNs (quota set --syn-cookies).") \
	X(cookies_valid, "syn_cookies_valid", "syn_cookies_valid_total", NULL, \
	  "ACKs that returned a valid SYN cookie: passed, their source verified.") \
	X(cookies_bad, "syn_cookies_bad", "syn_cookies_bad_total", NULL, \
	  "ACKs of unverified sources under a cookie rule whose SYN cookie was not valid: judged as any packet.") \
	X(cookies_period, NULL, NULL, NULL, NULL) \
	X(cookies_in_period, NULL, NULL, NULL, NULL)

#define RL_COUNTER_FIELD(field, ...) __u64 field;
struct rl_counters {
	RL_COUNTERS(RL_COUNTER_FIELD)
};
#undef RL_COUNTER_FIELD

/*
 * Entry of the per-CPU `rule_counters` array, indexed like `rules` (a
 * slot): what the rule judged, as iptables -v counts (a banned source's
 * drops count in rl_counters.banned_pkts, not here). Kept across quota
 * set and reload; zeroed when the slot is given to a new rule.
 */
struct rl_rule_counters {
	__u64 passed_pkts;
	__u64 passed_bytes;
	__u64 dropped_pkts;
	__u64 dropped_bytes;
};

/* ---- events ------------------------------------------------------------ */

enum rl_event_type {
	RL_EVENT_NONE = 0,
	RL_EVENT_LIMITED = 1,	/* a source starts having packets dropped */
	RL_EVENT_RELEASED = 2,	/* a whole window passed without a drop */
	RL_EVENT_BANNED = 3,
	RL_EVENT_UNBANNED = 4,	/* the ban's time is up */
	RL_EVENT_VERIFIED = 5,	/* a source not verified proved its return path */
};

/* rl_event.rule_flags: a rule is named (else none covers the source) */
#define RL_EVENT_F_RULE		RL_RULE_F_USED

/*
 * A record of the `events` ring buffer. The rule's prefix is copied, as
 * struct rl_ban keeps it: rules may change before userspace reads it.
 * `time_ns` is the program's clock (CLOCK_MONOTONIC); `until_ns` the
 * ban's end for banned and unbanned, else 0.
 */
struct rl_event {
	__u64 time_ns;
	struct rl_key key;
	__u32 type;		/* enum rl_event_type */
	__u32 cpu;		/* that reported it: limited and released
				 * are per CPU (include/events.h) */
	__u32 rule_flags;	/* RL_EVENT_F_RULE | RL_RULE_F_V6 */
	__u32 rule_prefixlen;
	__u8 rule_addr[16];
	__u64 until_ns;
};

RL_STATIC_ASSERT(sizeof(struct rl_key) == 16, "rl_key layout");
RL_STATIC_ASSERT(sizeof(struct rl_window) == 16, "rl_window layout");
RL_STATIC_ASSERT(sizeof(struct rl_state) % 8 == 0, "rl_state padding");
RL_STATIC_ASSERT(sizeof(union rl_hist_count) == sizeof(__u64),
		 "rl_hist_count: one compare-and-swap");
RL_STATIC_ASSERT(sizeof(struct rl_lease) % 8 == 0, "rl_lease padding");
RL_STATIC_ASSERT(sizeof(struct rl_source) % 8 == 0, "rl_source padding");
RL_STATIC_ASSERT(__builtin_offsetof(struct rl_source, st.past) == 64,
		 "rl_source: what the verdict reads in its first 64 bytes");
RL_STATIC_ASSERT(__builtin_offsetof(struct rl_source, limited_ns) / 64 ==
		 __builtin_offsetof(struct rl_source, passed_pkts) / 64,
		 "rl_source: the events marker in the cache line of the totals");
RL_STATIC_ASSERT(sizeof(struct rl_source) <= RL_SOURCE_MAX_SIZE,
		 "rl_source: at most two cache lines");
RL_STATIC_ASSERT(sizeof(struct rl_none) == 0, "rl_none: a ring buffer's key and value");
RL_STATIC_ASSERT(sizeof(struct rl_event) == 64, "rl_event layout");
RL_STATIC_ASSERT(sizeof(struct rl_rule) % 8 == 0, "rl_rule padding");
RL_STATIC_ASSERT(sizeof(struct rl_config) % 8 == 0, "rl_config padding");
RL_STATIC_ASSERT(sizeof(struct rl_ban) % 8 == 0, "rl_ban padding");
RL_STATIC_ASSERT(sizeof(struct rl_remote) == 16 * RL_MAX_BUCKETS, "rl_remote layout");
RL_STATIC_ASSERT(sizeof(struct rl_flow) == 36, "rl_flow layout");
RL_STATIC_ASSERT(sizeof(struct rl_verified) == 24, "rl_verified layout");
RL_STATIC_ASSERT(sizeof(struct rl_answered) == 24, "rl_answered layout");
RL_STATIC_ASSERT(sizeof(struct rl_synack) == 12, "rl_synack layout");
RL_STATIC_ASSERT(sizeof(struct rl_settings) % 8 == 0, "rl_settings padding");
RL_STATIC_ASSERT(sizeof(struct rl_scope) == 12, "rl_scope layout");
RL_STATIC_ASSERT(sizeof(struct rl_rule_counters) == 32, "rl_rule_counters layout");
RL_STATIC_ASSERT(sizeof(struct rl_lpm_scoped_v4) == 12, "rl_lpm_scoped_v4 layout");
RL_STATIC_ASSERT(sizeof(struct rl_lpm_scoped_v6) == 24, "rl_lpm_scoped_v6 layout");

#endif /* RATELIMIT_H */
