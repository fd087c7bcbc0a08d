/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A host's value in the fleet's Redis (user/cli/sync_agent.c), written
 * with its MAC and judged on reading. Redis is outside the trust
 * boundary: anyone who can write a key could otherwise make every host
 * count passes that never happened and drop a source. Each value carries
 * an HMAC-SHA256 (OpenSSL's libcrypto) under the fleet key, which only
 * the hosts hold, over the Redis key (fleet, source, rule, bucket width),
 * the field (host, fleet bucket) and the value itself, so that a value
 * cannot be forged, nor replayed onto another source, host or bucket. A
 * field that fails any check is ignored and counted by why: at worst a
 * host counts less of the fleet, never more than its own passes.
 *
 * Field: HOST:BUCKET. Value: "x1 PKTS BYTES START MAC": x1 the format,
 * START the bucket's start (CLOCK_REALTIME ns; BUCKET = START / WIDTH),
 * MAC 64 hex digits.
 */
#ifndef RL_SYNC_VALUE_H
#define RL_SYNC_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "ratelimit.h"

#define RL_FLEET_KEY_MIN	32	/* bytes of the fleet key */
#define RL_FLEET_KEY_MAX	1024
#define RL_SYNC_VALUE_LEN	128	/* a value, with its MAC and NUL */

/* The fleet key, ready to MAC with (opaque: libcrypto's state). */
struct rl_fleet_mac;

/* 0 and *out, or -ENOSYS with err (libcrypto without HMAC-SHA256). */
int rl_fleet_mac_new(const unsigned char *key, size_t len, struct rl_fleet_mac **out,
		     char *err, size_t errlen);
void rl_fleet_mac_free(struct rl_fleet_mac *m);

/* The value of this host's field `field` of Redis key `key`: 0, -ENOSPC
 * (outlen is too short) or -EIO (libcrypto failed). */
int rl_sync_value_write(struct rl_fleet_mac *m, const char *key, const char *field,
			__u64 pkts, __u64 bytes, __u64 start, char *out, size_t outlen);

/* What a reader makes of a field, by why it is not counted. */
enum rl_field_verdict {
	RL_FIELD_COUNTED,
	RL_FIELD_OWN,		/* this host's: not counted, maybe stale */
	RL_FIELD_OLD,		/* left the window here: aged out */
	RL_FIELD_FORMAT,	/* not HOST:BUCKET, or a value of another format */
	RL_FIELD_MAC,		/* not written with the fleet key */
	RL_FIELD_RANGE,		/* a count no bucket can hold, or not a number */
	RL_FIELD_DATE,		/* dated in the future, or before this host's boot */
	RL_FIELD_NVERDICTS
};

/* The sync state counts the rejections, from RL_FIELD_FORMAT on. */
_Static_assert(RL_FIELD_NVERDICTS - RL_FIELD_FORMAT == RL_SYNC_REJECTS,
	       "struct rl_sync_state's rejected[] by verdict");

/* The reader: its key, host and clocks at this exchange. */
struct rl_field_ctx {
	struct rl_fleet_mac *mac;
	const char *key;	/* the Redis key read */
	const char *host;	/* this host's field prefix */
	__u64 width;		/* bucket width, ns */
	__u64 off;		/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	__u64 real;		/* CLOCK_REALTIME now */
	__u64 cur;		/* local bucket of now */
	__u32 nbuckets;
};

/* A counted field: its passes, under local bucket `lb`; an own field's
 * fleet bucket (to delete it when stale). */
struct rl_field {
	__u64 lb, pkts, bytes;
	__u64 fleet_bucket;
};

/* Judge field/value (not NUL-terminated: Redis strings are binary). */
enum rl_field_verdict rl_sync_field_judge(const struct rl_field_ctx *c,
					  const char *field, size_t flen,
					  const char *val, size_t vlen,
					  struct rl_field *out);

/* "mac", "range", ... (status --json: sync.rejected) */
const char *rl_field_verdict_name(enum rl_field_verdict v);

#endif /* RL_SYNC_VALUE_H */
