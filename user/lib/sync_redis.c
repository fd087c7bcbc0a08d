// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* One Redis server or a Redis Cluster, for the sync agent (sync_redis.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "lib/sync_redis.h"

#define CONNECT_TIMEOUT_MS	1000

static void __attribute__((format(printf, 2, 3))) fail(struct rl_redis *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
}

static struct timeval tv_ms(__u64 ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	return tv;
}

/* hiredis's error of c, a timeout said as such */
static const char *ctx_err(const redisContext *c)
{
	return c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK) ?
		"no reply in time (slow or stopped)" : c->errstr;
}

/* A command's reply on c, or NULL with r->err (an error reply too). */
static redisReply *cmd(struct rl_redis *r, redisContext *c, const char *what,
		       int argc, const char **argv)
{
	redisReply *rep = redisCommandArgv(c, argc, argv, NULL);

	if (!rep) {
		fail(r, "redis: %s", ctx_err(c));
		return NULL;
	}
	if (rep->type == REDIS_REPLY_ERROR) {
		fail(r, "redis %s: %s", what, rep->str);
		freeReplyObject(rep);
		return NULL;
	}
	return rep;
}

static int cmd_ok(struct rl_redis *r, redisContext *c, const char *what,
		  int argc, const char **argv)
{
	redisReply *rep = cmd(r, c, what, argc, argv);

	if (!rep)
		return -1;
	freeReplyObject(rep);
	return 0;
}

/* Connect to a TCP node (or the URL's Unix socket: path) and AUTH. */
static redisContext *connect_node(struct rl_redis *r, const char *host, int port,
				  const char *path)
{
	redisContext *c = path ?
		redisConnectUnixWithTimeout(path, tv_ms(CONNECT_TIMEOUT_MS)) :
		redisConnectWithTimeout(host, port, tv_ms(CONNECT_TIMEOUT_MS));

	if (!c || c->err) {
		if (path)
			fail(r, "redis: cannot connect to %s: %s", path,
			     c ? c->errstr : "out of memory");
		else
			fail(r, "redis: cannot connect to %s:%d: %s", host, port,
			     c ? c->errstr : "out of memory");
		if (c)
			redisFree(c);
		return NULL;
	}
	redisSetTimeout(c, tv_ms(r->timeout_ms));
	if (r->password[0]) {
		const char *argv[] = { "AUTH", r->password };

		if (cmd_ok(r, c, "AUTH", 2, argv)) {
			redisFree(c);
			return NULL;
		}
	}
	return c;
}

void rl_redis_close(struct rl_redis *r)
{
	for (int i = 0; i < RL_SLOT_NODES_MAX; i++) {
		if (r->ctx[i])
			redisFree(r->ctx[i]);
		r->ctx[i] = NULL;
	}
	r->open = false;
}

/*
 * CLUSTER SLOTS on c: 1 (a cluster: r->map filled), 0 (not a cluster:
 * the command is refused), -1 (the connection failed).
 */
static int ask_slots(struct rl_redis *r, redisContext *c, const char *seed_host)
{
	const char *argv[] = { "CLUSTER", "SLOTS" };
	redisReply *rep = redisCommandArgv(c, 2, argv, NULL);
	char err[RL_ERR_LEN];
	int ret;

	if (!rep) {
		fail(r, "redis: %s", ctx_err(c));
		return -1;
	}
	if (rep->type == REDIS_REPLY_ERROR) {
		/* "cluster support disabled" (or NOAUTH: PING says it) */
		freeReplyObject(rep);
		return 0;
	}
	ret = rl_slot_map_parse(&r->map, rep, seed_host, err, sizeof(err));
	freeReplyObject(rep);
	if (ret) {
		fail(r, "redis: %s", err);
		return -1;
	}
	return 1;
}

/* The seed: the URL's server, else (a cluster met before) any master of
 * the last map. NULL with r->err (the URL's failure). */
static redisContext *seed(struct rl_redis *r, const char **host)
{
	const struct rl_redis_url *u = r->url;
	char first[RL_ERR_LEN];
	redisContext *c;

	*host = u->unix_socket ? "127.0.0.1" : u->host;
	c = connect_node(r, u->host, u->port, u->unix_socket ? u->path : NULL);
	if (c)
		return c;
	memcpy(first, r->err, sizeof(first));
	for (int i = 0; i < r->known.nnodes; i++) {
		c = connect_node(r, r->known.node[i].host, r->known.node[i].port, NULL);
		if (c) {
			*host = r->known.node[i].host;
			return c;
		}
	}
	memcpy(r->err, first, sizeof(first));
	return NULL;
}

int rl_redis_open(struct rl_redis *r)
{
	const char *ping[] = { "PING" }, *host;
	redisContext *c;
	int cl;

	rl_redis_close(r);
	c = seed(r, &host);
	if (!c)
		return -1;
	cl = ask_slots(r, c, host);
	if (cl < 0)
		goto fail;
	r->cluster = cl;
	if (!cl) {
		rl_slot_map_init(&r->map);
		rl_slot_map_node(&r->map, host, r->url->port);
		memset(r->map.owner, 0, sizeof(r->map.owner));
		r->ctx[0] = c;
		if (r->url->db) {
			const char *argv[] = { "SELECT", "" };
			char db[16];

			snprintf(db, sizeof(db), "%d", r->url->db);
			argv[1] = db;
			if (cmd_ok(r, c, "SELECT", 2, argv))
				goto fail_all;
		}
		if (cmd_ok(r, c, "PING", 1, ping))
			goto fail_all;
		r->open = true;
		return 0;
	}
	redisFree(c);
	if (r->url->db) {
		fail(r, "redis: a Redis Cluster has database 0 only: drop /%d from the URL",
		     r->url->db);
		return -1;
	}
	r->known = r->map;
	r->open = true;
	if (rl_redis_ping(r)) {
		rl_redis_close(r);
		return -1;
	}
	return 0;
fail:
	redisFree(c);
	return -1;
fail_all:
	rl_redis_close(r);
	return -1;
}

int rl_redis_route(struct rl_redis *r, const char *key, size_t len)
{
	unsigned int slot = rl_key_slot(key, len);

	if (r->map.owner[slot] == RL_SLOT_NONE) {
		fail(r, "redis cluster: no master serves slot %u (of %s)", slot, key);
		return -1;
	}
	return r->map.owner[slot];
}

int rl_redis_node(struct rl_redis *r, const char *host, int port)
{
	int i = rl_slot_map_node(&r->map, host, port);

	if (i < 0)
		fail(r, "redis cluster: more than %d masters", RL_SLOT_NODES_MAX);
	return i;
}

int rl_redis_refresh(struct rl_redis *r)
{
	redisContext *old[RL_SLOT_NODES_MAX], *c = NULL;
	struct rl_slot_map was = r->map;
	const char *host = NULL;
	int got;

	/* any connected master answers for the whole cluster */
	for (int i = 0; i < was.nnodes && !c; i++) {
		c = r->ctx[i];
		host = was.node[i].host;
	}
	if (!c) {
		fail(r, "redis cluster: no master connected to ask for slots");
		return -1;
	}
	got = ask_slots(r, c, host);
	if (got != 1) {
		if (!got)
			fail(r, "redis cluster: %s refused CLUSTER SLOTS", host);
		r->map = was;
		return -1;
	}
	/* keep the connections of masters that stay */
	memcpy(old, r->ctx, sizeof(old));
	memset(r->ctx, 0, sizeof(r->ctx));
	for (int i = 0; i < was.nnodes; i++) {
		int j;

		if (!old[i])
			continue;
		for (j = 0; j < r->map.nnodes; j++)
			if (r->map.node[j].port == was.node[i].port &&
			    !strcmp(r->map.node[j].host, was.node[i].host))
				break;
		if (j < r->map.nnodes)
			r->ctx[j] = old[i];
		else
			redisFree(old[i]);
	}
	r->known = r->map;
	return 0;
}

/* Node i's connection, made when first used. */
static redisContext *node_ctx(struct rl_redis *r, int i)
{
	if (!r->ctx[i])
		r->ctx[i] = connect_node(r, r->map.node[i].host, r->map.node[i].port, NULL);
	return r->ctx[i];
}

int rl_redis_append(struct rl_redis *r, int node, int argc, const char **argv)
{
	redisContext *c = node_ctx(r, node);

	if (!c)
		return -1;
	if (redisAppendCommandArgv(c, argc, argv, NULL) == REDIS_OK)
		return 0;
	fail(r, "redis: %s", c->errstr);
	return -1;
}

int rl_redis_flush(struct rl_redis *r)
{
	for (int i = 0; i < r->map.nnodes; i++) {
		int done = 0;

		while (r->ctx[i] && !done)
			if (redisBufferWrite(r->ctx[i], &done) != REDIS_OK) {
				fail(r, "redis %s:%d: %s", r->map.node[i].host,
				     r->map.node[i].port, ctx_err(r->ctx[i]));
				return -1;
			}
	}
	return 0;
}

redisReply *rl_redis_reply(struct rl_redis *r, int node)
{
	redisReply *rep = NULL;

	if (r->ctx[node] && redisGetReply(r->ctx[node], (void **)&rep) == REDIS_OK && rep)
		return rep;
	if (!r->cluster)
		fail(r, "redis: %s", r->ctx[node] ? ctx_err(r->ctx[node]) : "not connected");
	else
		fail(r, "redis %s:%d: %s", r->map.node[node].host, r->map.node[node].port,
		     r->ctx[node] ? ctx_err(r->ctx[node]) : "not connected");
	return NULL;
}

int rl_redis_ping(struct rl_redis *r)
{
	const char *argv[] = { "PING" };
	bool serves[RL_SLOT_NODES_MAX] = { false };

	for (int s = 0; s < RL_SLOTS; s++)
		if (r->map.owner[s] != RL_SLOT_NONE)
			serves[r->map.owner[s]] = true;
	for (int i = 0; i < r->map.nnodes; i++) {
		redisContext *c;

		if (!serves[i])
			continue;	/* a redirection's target, not a master */
		c = node_ctx(r, i);
		if (!c || cmd_ok(r, c, "PING", 1, argv))
			return -1;
	}
	return 0;
}
