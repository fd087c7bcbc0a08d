// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fleet's values in Redis (user/lib/sync_value.c) against crafted
 * fields, as a Redis writer without the fleet key could plant them: only
 * a value written with the key, for this key, field and bucket, in range
 * and dated inside what this host can judge, is counted. Also the
 * escaping of a server's text (user/lib/values.c).
 */
#include <stdio.h>
#include <string.h>
#include "lib/sync_value.h"
#include "lib/values.h"
#include "harness.h"

#define W	100000000ULL		/* bucket width: 100 ms */
#define BOOT	1700000000000000000ULL	/* CLOCK_REALTIME at this host's boot */
#define UP	(3600 * 1000000000ULL)	/* up an hour */
#define KEY	"xrl:{f1|198.18.0.7}:100000000"

static const unsigned char fleet_key[32] = "0123456789abcdef0123456789abcde";
static const unsigned char other_key[32] = "0123456789abcdef0123456789abcdX";

struct fixture {
	struct rl_fleet_mac *mac, *other;
	struct rl_field_ctx c;
};

static bool setup(struct fixture *f)
{
	char err[RL_ERR_LEN];

	memset(f, 0, sizeof(*f));
	if (!CHECK(!rl_fleet_mac_new(fleet_key, sizeof(fleet_key), &f->mac, err, sizeof(err)) &&
		   !rl_fleet_mac_new(other_key, sizeof(other_key), &f->other, err, sizeof(err)),
		   "HMAC-SHA256: %s", err))
		return false;
	f->c = (struct rl_field_ctx){
		.mac = f->mac, .key = KEY, .host = "here/eth0", .width = W,
		.off = BOOT, .real = BOOT + UP, .cur = UP / W, .nbuckets = 10,
	};
	return true;
}

static void teardown(struct fixture *f)
{
	rl_fleet_mac_free(f->mac);
	rl_fleet_mac_free(f->other);
}

/* Judge field/value as Redis would hand them over. */
static enum rl_field_verdict judge(const struct fixture *f, const char *field,
				   const char *val, struct rl_field *out)
{
	return rl_sync_field_judge(&f->c, field, strlen(field), val, strlen(val), out);
}

/* A field of host `host` for the bucket `ago` buckets before now, and its
 * value written with `mac` for key `key`. */
static void write_field(struct rl_fleet_mac *mac, const char *key, const char *host,
			__u64 start, __u64 pkts, __u64 bytes, char *field, char *val)
{
	snprintf(field, 512, "%s:%llu", host, (unsigned long long)(start / W));
	rl_sync_value_write(mac, key, field, pkts, bytes, start, val, RL_SYNC_VALUE_LEN);
}

TEST(sync_value_counted)
{
	struct fixture f;
	struct rl_field got;
	char field[512], val[RL_SYNC_VALUE_LEN];
	__u64 start = BOOT + UP - 3 * W;

	if (!setup(&f))
		return;
	write_field(f.mac, KEY, "there/eth1", start, 7, 700, field, val);
	CHECK(!strncmp(val, "x1 7 700 ", 9), "value: %s", val);
	CHECK_EQ(strlen(val), strlen("x1 7 700 ") + 19 + 1 + 64, "value with its MAC");
	CHECK_EQ(judge(&f, field, val, &got), RL_FIELD_COUNTED, field);
	CHECK_EQ(got.pkts, 7, "packets");
	CHECK_EQ(got.bytes, 700, "bytes");
	/* filed under the local bucket holding the end of the publisher's (in
	 * phase here: the same bucket) */
	CHECK_EQ(got.lb, UP / W - 3, "local bucket");
	teardown(&f);
}

TEST(sync_value_mac_binds_key_field_and_value)
{
	struct fixture f;
	struct rl_field got;
	char field[512], val[RL_SYNC_VALUE_LEN], forged[RL_SYNC_VALUE_LEN], other[512];
	__u64 start = BOOT + UP - 3 * W;

	if (!setup(&f))
		return;
	write_field(f.mac, KEY, "there/eth1", start, 7, 700, field, val);
	/* another key: replayed onto another source */
	f.c.key = "xrl:{f1|198.18.0.8}:100000000";
	CHECK_EQ(judge(&f, field, val, &got), RL_FIELD_MAC, "replayed onto another source");
	f.c.key = KEY;
	/* another host's field */
	snprintf(other, sizeof(other), "elsewhere/eth0:%llu", (unsigned long long)(start / W));
	CHECK_EQ(judge(&f, other, val, &got), RL_FIELD_MAC, "replayed onto another host");
	/* another bucket, the start moved with it */
	{
		char moved[RL_SYNC_VALUE_LEN], mfield[512];

		snprintf(mfield, sizeof(mfield), "there/eth1:%llu",
			 (unsigned long long)(start / W + 1));
		snprintf(moved, sizeof(moved), "x1 7 700 %llu %s", (unsigned long long)(start + W),
			 val + strlen(val) - 64);
		CHECK_EQ(judge(&f, mfield, moved, &got), RL_FIELD_MAC, "replayed onto another bucket");
	}
	/* a count changed, the MAC kept */
	snprintf(forged, sizeof(forged), "x1 9999 999900 %llu %s", (unsigned long long)start,
		 val + strlen(val) - 64);
	CHECK_EQ(judge(&f, field, forged, &got), RL_FIELD_MAC, "a count rewritten");
	/* written with another key */
	write_field(f.other, KEY, "there/eth1", start, 7, 700, field, forged);
	CHECK_EQ(judge(&f, field, forged, &got), RL_FIELD_MAC, "another fleet key");
	/* a MAC cut, or in capitals */
	forged[strlen(forged) - 1] = '\0';
	CHECK_EQ(judge(&f, field, forged, &got), RL_FIELD_MAC, "a short MAC");
	snprintf(forged, sizeof(forged), "%s", val);
	for (char *p = forged + strlen(forged) - 64; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	CHECK_EQ(judge(&f, field, forged, &got), strcmp(forged, val) ? RL_FIELD_MAC : RL_FIELD_COUNTED,
		 "a MAC in capitals");
	teardown(&f);
}

TEST(sync_value_range)
{
	struct fixture f;
	struct rl_field got;
	char field[512], val[RL_SYNC_VALUE_LEN];
	__u64 start = BOOT + UP - 3 * W;
	char forged[RL_SYNC_VALUE_LEN];

	if (!setup(&f))
		return;
	/* with the key, but more than a bucket holds */
	write_field(f.mac, KEY, "there/eth1", start, 1ULL << 32, 1ULL << 33, field, val);
	CHECK_EQ(judge(&f, field, val, &got), RL_FIELD_RANGE, "2^32 packets");
	write_field(f.mac, KEY, "there/eth1", start, 10, 9, field, val);
	CHECK_EQ(judge(&f, field, val, &got), RL_FIELD_RANGE, "fewer bytes than packets");
	write_field(f.mac, KEY, "there/eth1", start, 0xffffffffULL, 0xffffffffULL, field, val);
	CHECK_EQ(judge(&f, field, val, &got), RL_FIELD_COUNTED, "2^32 - 1: the most a bucket holds");
	/* negative or not numbers (as -1 once parsed as 2^64 - 1) */
	snprintf(forged, sizeof(forged), "x1 -1 -1 %llu %064d", (unsigned long long)start, 0);
	CHECK_EQ(judge(&f, field, forged, &got), RL_FIELD_RANGE, "negative text");
	snprintf(forged, sizeof(forged), "x1 +5 500 %llu %064d", (unsigned long long)start, 0);
	CHECK_EQ(judge(&f, field, forged, &got), RL_FIELD_RANGE, "a sign");
	snprintf(forged, sizeof(forged), "x1 18446744073709551616 5 %llu %064d",
		 (unsigned long long)start, 0);
	CHECK_EQ(judge(&f, field, forged, &got), RL_FIELD_RANGE, "2^64");
	snprintf(forged, sizeof(forged), "x1 5 500");
	CHECK_EQ(judge(&f, field, forged, &got), RL_FIELD_RANGE, "no start");
	teardown(&f);
}

TEST(sync_value_formats)
{
	struct fixture f;
	struct rl_field got;
	char field[512], val[RL_SYNC_VALUE_LEN], old[128];
	__u64 start = BOOT + UP - 3 * W;

	if (!setup(&f))
		return;
	write_field(f.mac, KEY, "there/eth1", start, 7, 700, field, val);
	/* the format before MACs, and another format */
	snprintf(old, sizeof(old), "7 700 %llu", (unsigned long long)start);
	CHECK_EQ(judge(&f, field, old, &got), RL_FIELD_FORMAT, "an unauthenticated value");
	CHECK_EQ(judge(&f, field, "x2 7 700 1 00", &got), RL_FIELD_FORMAT, "format x2");
	CHECK_EQ(judge(&f, field, "", &got), RL_FIELD_FORMAT, "empty");
	/* fields not HOST:BUCKET */
	CHECK_EQ(judge(&f, "there/eth1", val, &got), RL_FIELD_FORMAT, "no bucket");
	CHECK_EQ(judge(&f, ":123", val, &got), RL_FIELD_FORMAT, "no host");
	CHECK_EQ(judge(&f, "there/eth1:12x", val, &got), RL_FIELD_FORMAT, "bucket not a number");
	CHECK_EQ(judge(&f, "the re:123", val, &got), RL_FIELD_FORMAT, "a space in the host");
	CHECK_EQ(judge(&f, "th\x1b[2Jere:123", val, &got), RL_FIELD_FORMAT, "an escape in the host");
	/* this host's own: not counted, its bucket given */
	snprintf(field, sizeof(field), "here/eth0:%llu", (unsigned long long)(start / W));
	CHECK_EQ(judge(&f, field, val, &got), RL_FIELD_OWN, "our own field");
	CHECK_EQ(got.fleet_bucket, start / W, "its bucket");
	teardown(&f);
}

TEST(sync_value_dates)
{
	struct fixture f;
	struct rl_field got;
	char field[512], val[RL_SYNC_VALUE_LEN];
	__u64 now = BOOT + UP;

	if (!setup(&f))
		return;
	/* in the future: the clamp counted it */
	write_field(f.mac, KEY, "there/eth1", now + 5 * W, 7, 700, field, val);
	CHECK_EQ(judge(&f, field, val, &got), RL_FIELD_DATE, "5 buckets ahead");
	write_field(f.mac, KEY, "there/eth1", now + W / 2, 7, 700, field, val);
	CHECK_EQ(judge(&f, field, val, &got), RL_FIELD_COUNTED, "a clock half a bucket ahead");
	CHECK_LE(got.lb, f.c.cur + 1, "filed no later than the next bucket");
	/* before this host's boot: its grid would wrap to a current bucket */
	write_field(f.mac, KEY, "there/eth1", BOOT - 7 * W, 7, 700, field, val);
	CHECK_EQ(judge(&f, field, val, &got), RL_FIELD_DATE, "before boot");
	f.c.cur = 2;	/* just booted: the same field */
	f.c.real = BOOT + 2 * W;
	CHECK_EQ(judge(&f, field, val, &got), RL_FIELD_DATE, "before boot, just booted");
	f.c.cur = UP / W;
	f.c.real = now;
	/* left the window: aged out, not an attack */
	write_field(f.mac, KEY, "there/eth1", now - 20 * W, 7, 700, field, val);
	CHECK_EQ(judge(&f, field, val, &got), RL_FIELD_OLD, "20 buckets ago");
	/* the start and the field's bucket disagree */
	{
		char f2[512];

		write_field(f.mac, KEY, "there/eth1", now - 3 * W, 7, 700, field, val);
		snprintf(f2, sizeof(f2), "there/eth1:%llu", (unsigned long long)((now - 3 * W) / W + 1));
		rl_sync_value_write(f.mac, KEY, f2, 7, 700, now - 3 * W, val, sizeof(val));
		CHECK_EQ(judge(&f, f2, val, &got), RL_FIELD_DATE, "start outside its bucket");
	}
	teardown(&f);
}

TEST(escape_server_text)
{
	char out[64];

	rl_escape("WRONGTYPE \x1b[2J\\n\xff", 17, out, sizeof(out));
	CHECK(!strcmp(out, "WRONGTYPE \\x1b[2J\\\\n\\xff"), "escaped: %s", out);
	rl_escape("abc\x01", 4, out, 6);
	CHECK(!strcmp(out, "abc"), "cut at a whole escape: %s", out);
}
