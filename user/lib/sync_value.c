// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The fleet's values in Redis: written with a MAC, judged on reading
 * (sync_value.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "remote.h"
#include "lib/sync_value.h"

#define FORMAT		"x1"
#define MAC_LEN		32	/* SHA-256 */
#define MAX_DIGITS	20	/* of a __u64 */

struct rl_fleet_mac {
	EVP_MAC *mac;
	EVP_MAC_CTX *ctx;	/* keyed once: each MAC re-inits it */
};

void rl_fleet_mac_free(struct rl_fleet_mac *m)
{
	if (!m)
		return;
	EVP_MAC_CTX_free(m->ctx);
	EVP_MAC_free(m->mac);
	free(m);
}

int rl_fleet_mac_new(const unsigned char *key, size_t len, struct rl_fleet_mac **out,
		     char *err, size_t errlen)
{
	struct rl_fleet_mac *m = calloc(1, sizeof(*m));
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
		OSSL_PARAM_construct_end(),
	};

	if (m)
		m->mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (m && m->mac)
		m->ctx = EVP_MAC_CTX_new(m->mac);
	if (!m || !m->ctx || !EVP_MAC_init(m->ctx, key, len, params)) {
		snprintf(err, errlen, "libcrypto has no HMAC-SHA256");
		rl_fleet_mac_free(m);
		return -ENOSYS;
	}
	*out = m;
	return 0;
}

/* HMAC-SHA256 of key \0 field \0 text, as 64 hex digits in hex[65]. */
static int mac_hex(struct rl_fleet_mac *m, const char *key, const char *field,
		   size_t flen, const char *text, size_t tlen, char *hex)
{
	unsigned char md[MAC_LEN];
	size_t kl = strlen(key), n = 0;
	const unsigned char zero = 0;

	if (!EVP_MAC_init(m->ctx, NULL, 0, NULL) ||
	    !EVP_MAC_update(m->ctx, (const unsigned char *)key, kl) ||
	    !EVP_MAC_update(m->ctx, &zero, 1) ||
	    !EVP_MAC_update(m->ctx, (const unsigned char *)field, flen) ||
	    !EVP_MAC_update(m->ctx, &zero, 1) ||
	    !EVP_MAC_update(m->ctx, (const unsigned char *)text, tlen) ||
	    !EVP_MAC_final(m->ctx, md, &n, sizeof(md)) || n != MAC_LEN)
		return -EIO;
	for (size_t i = 0; i < MAC_LEN; i++) {	/* not snprintf: it cost more than the MAC */
		hex[2 * i] = "0123456789abcdef"[md[i] >> 4];
		hex[2 * i + 1] = "0123456789abcdef"[md[i] & 15];
	}
	hex[2 * MAC_LEN] = '\0';
	return 0;
}

int rl_sync_value_write(struct rl_fleet_mac *m, const char *key, const char *field,
			__u64 pkts, __u64 bytes, __u64 start, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, FORMAT " %llu %llu %llu", (unsigned long long)pkts,
			 (unsigned long long)bytes, (unsigned long long)start);

	if (n < 0 || (size_t)n + 2 + 2 * MAC_LEN > outlen)
		return -ENOSPC;
	out[n] = ' ';
	return mac_hex(m, key, field, strlen(field), out, (size_t)n, out + n + 1);
}

/* A decimal of 1 to 20 digits at *p, ended by a space (consumed) or the
 * end: 0, or -EINVAL (a sign, another character, or more than 2^64 - 1). */
static int number(const char **p, const char *end, __u64 *out)
{
	const char *s = *p;
	__u64 v = 0;
	int n = 0;

	for (; s < end && *s >= '0' && *s <= '9'; s++, n++) {
		if (n == MAX_DIGITS || v > (~0ULL - (__u64)(*s - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (__u64)(*s - '0');
	}
	if (!n || (s < end && *s != ' '))
		return -EINVAL;
	*p = s < end ? s + 1 : s;
	*out = v;
	return 0;
}

enum rl_field_verdict rl_sync_field_judge(const struct rl_field_ctx *c,
					  const char *field, size_t flen,
					  const char *val, size_t vlen,
					  struct rl_field *out)
{
	const char *colon = flen ? memrchr(field, ':', flen) : NULL, *p, *end = val + vlen;
	size_t hl = strlen(c->host);
	char hex[2 * MAC_LEN + 1];
	__u64 fb, pkts, bytes, start;

	/* HOST:BUCKET, HOST printable and without ':' */
	if (!colon || colon == field || flen > 512)
		return RL_FIELD_FORMAT;
	for (p = field; p < colon; p++)
		if (*p <= ' ' || *p > '~' || *p == ':')
			return RL_FIELD_FORMAT;
	p = colon + 1;
	if (number(&p, field + flen, &fb) || p != field + flen)
		return RL_FIELD_FORMAT;
	out->fleet_bucket = fb;
	if ((size_t)(colon - field) == hl && !memcmp(field, c->host, hl))
		return RL_FIELD_OWN;
	/* "x1 PKTS BYTES START MAC" */
	if (vlen < sizeof(FORMAT) || memcmp(val, FORMAT " ", sizeof(FORMAT)))
		return RL_FIELD_FORMAT;
	p = val + sizeof(FORMAT);
	if (number(&p, end, &pkts) || number(&p, end, &bytes) || number(&p, end, &start))
		return RL_FIELD_RANGE;
	if ((size_t)(end - p) != 2 * MAC_LEN || p[-1] != ' ' ||
	    mac_hex(c->mac, c->key, field, flen, val, (size_t)(p - 1 - val), hex) ||
	    CRYPTO_memcmp(hex, p, 2 * MAC_LEN))
		return RL_FIELD_MAC;
	/* a bucket holds 32-bit counts, and a packet is a byte at least */
	if (pkts > 0xffffffffULL || bytes > 0xffffffffULL || bytes < pkts)
		return RL_FIELD_RANGE;
	/* the start names the field's bucket; not ahead of this host's
	 * clock by more than a bucket (clocks agree: NTP); not before this
	 * host's boot, where its grid would wrap */
	if (start / c->width != fb || start > c->real + c->width || start < c->off)
		return RL_FIELD_DATE;
	out->lb = rl_local_bucket(start, c->width, c->off);
	if ((__s64)(c->cur - out->lb) >= (__s64)c->nbuckets)
		return RL_FIELD_OLD;
	if ((__s64)(out->lb - c->cur) > 1)
		out->lb = c->cur + 1;	/* a clock a little ahead */
	out->pkts = pkts;
	out->bytes = bytes;
	return RL_FIELD_COUNTED;
}

const char *rl_field_verdict_name(enum rl_field_verdict v)
{
	static const char *const names[RL_FIELD_NVERDICTS] = {
		[RL_FIELD_COUNTED] = "counted", [RL_FIELD_OWN] = "own",
		[RL_FIELD_OLD] = "old", [RL_FIELD_FORMAT] = "format",
		[RL_FIELD_MAC] = "mac", [RL_FIELD_RANGE] = "range",
		[RL_FIELD_DATE] = "date",
	};

	return (unsigned)v < RL_FIELD_NVERDICTS ? names[v] : "?";
}
