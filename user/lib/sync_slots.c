// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Redis Cluster's key slots, slot map and redirections (sync_slots.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/sync_slots.h"

/* CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), as Redis Cluster
 * hashes keys (cluster specification, "Keys distribution model"). */
static unsigned int crc16(const char *buf, size_t len)
{
	unsigned int crc = 0;

	for (size_t i = 0; i < len; i++) {
		crc ^= (unsigned int)(unsigned char)buf[i] << 8;
		for (int b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
		crc &= 0xffff;
	}
	return crc;
}

unsigned int rl_key_slot(const char *key, size_t len)
{
	const char *open = memchr(key, '{', len), *close;

	if (open) {
		size_t rest = len - (size_t)(open - key) - 1;

		close = memchr(open + 1, '}', rest);
		if (close && close > open + 1)
			return crc16(open + 1, (size_t)(close - open - 1)) & (RL_SLOTS - 1);
	}
	return crc16(key, len) & (RL_SLOTS - 1);
}

void rl_slot_map_init(struct rl_slot_map *m)
{
	m->nnodes = 0;
	memset(m->owner, RL_SLOT_NONE, sizeof(m->owner));
}

int rl_slot_map_find(const struct rl_slot_map *m, const char *host, int port)
{
	for (int i = 0; i < m->nnodes; i++)
		if (m->node[i].port == port && !strcmp(m->node[i].host, host))
			return i;
	return -ENOENT;
}

int rl_slot_map_node(struct rl_slot_map *m, const char *host, int port)
{
	int i = rl_slot_map_find(m, host, port);

	if (i >= 0)
		return i;
	if (m->nnodes == RL_SLOT_NODES_MAX)
		return -ENOSPC;
	snprintf(m->node[m->nnodes].host, sizeof(m->node[0].host), "%s", host);
	m->node[m->nnodes].port = port;
	return m->nnodes++;
}

/* A host name or address as a server sent it: printable, no space (it is
 * printed, and connected to). */
static bool host_ok(const char *h, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (h[i] <= ' ' || h[i] > '~')
			return false;
	return true;
}

/* "" and "?" (Redis 7: an endpoint it does not know) are the seed. */
static const char *endpoint(const redisReply *h, const char *seed_host)
{
	if (!h->len || !strcmp(h->str, "?"))
		return seed_host;
	return h->str;
}

int rl_slot_map_parse(struct rl_slot_map *m, const redisReply *r,
		      const char *seed_host, char *err, size_t errlen)
{
	rl_slot_map_init(m);
	if (r->type != REDIS_REPLY_ARRAY) {
		snprintf(err, errlen, "CLUSTER SLOTS: not an array");
		return -EPROTO;
	}
	for (size_t i = 0; i < r->elements; i++) {
		const redisReply *e = r->element[i], *n;
		long long lo, hi;
		int idx;

		if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
		    e->element[0]->type != REDIS_REPLY_INTEGER ||
		    e->element[1]->type != REDIS_REPLY_INTEGER ||
		    e->element[2]->type != REDIS_REPLY_ARRAY) {
			snprintf(err, errlen, "CLUSTER SLOTS: range %zu is malformed", i);
			return -EPROTO;
		}
		lo = e->element[0]->integer;
		hi = e->element[1]->integer;
		n = e->element[2];
		if (lo < 0 || hi < lo || hi >= RL_SLOTS || n->elements < 2 ||
		    n->element[0]->type != REDIS_REPLY_STRING ||
		    !host_ok(n->element[0]->str, n->element[0]->len) ||
		    n->element[1]->type != REDIS_REPLY_INTEGER ||
		    n->element[1]->integer <= 0 || n->element[1]->integer > 65535) {
			snprintf(err, errlen, "CLUSTER SLOTS: range %zu is malformed", i);
			return -EPROTO;
		}
		idx = rl_slot_map_node(m, endpoint(n->element[0], seed_host),
				       (int)n->element[1]->integer);
		if (idx < 0) {
			snprintf(err, errlen, "CLUSTER SLOTS: more than %d masters",
				 RL_SLOT_NODES_MAX);
			return -ENOSPC;
		}
		memset(m->owner + lo, idx, (size_t)(hi - lo + 1));
	}
	if (!m->nnodes) {
		snprintf(err, errlen, "CLUSTER SLOTS: no slot is served");
		return -EPROTO;
	}
	return 0;
}

bool rl_redirect_parse(const char *s, const char *seed_host, struct rl_redirect *out)
{
	const char *p, *colon;
	char *end;
	unsigned long slot;
	long port;
	size_t hl;

	out->ask = !strncmp(s, "ASK ", 4);
	if (out->ask)
		p = s + 4;
	else if (!strncmp(s, "MOVED ", 6))
		p = s + 6;
	else
		return false;
	slot = strtoul(p, &end, 10);
	if (end == p || *end != ' ' || slot >= RL_SLOTS)
		return false;
	p = end + 1;
	colon = strrchr(p, ':');	/* the last: an IPv6 host has more */
	if (!colon)
		return false;
	port = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || *end || port <= 0 || port > 65535)
		return false;
	hl = (size_t)(colon - p);
	if (hl >= sizeof(out->host) || !host_ok(p, hl))
		return false;
	if (hl)
		snprintf(out->host, sizeof(out->host), "%.*s", (int)hl, p);
	else
		snprintf(out->host, sizeof(out->host), "%s", seed_host);
	out->slot = (unsigned int)slot;
	out->port = (int)port;
	return true;
}
