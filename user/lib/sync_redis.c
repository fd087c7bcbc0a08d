// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* One Redis server or a Redis Cluster, for the sync agent (sync_redis.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/sync_redis.h"

#define CONNECT_TIMEOUT_MS	1000
#define SLICE_MS		100	/* a wait checks *stop this often */
#define READ_CHUNK		16384

static void __attribute__((format(printf, 2, 3))) fail(struct rl_redis *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
}

/* r->err "redis: why" said of `what`: "redis WHAT: why". */
static void __attribute__((format(printf, 2, 3))) about(struct rl_redis *r, const char *fmt, ...)
{
	char why[RL_ERR_LEN], what[RL_ERR_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	memcpy(why, r->err, sizeof(why));
	fail(r, "redis %s: %s", what, why + (strncmp(why, "redis: ", 7) ? 0 : 7));
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

static __u64 mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

/* When the next reply is due: a reply's timeout (a connection's first
 * ones, CONNECT_TIMEOUT_MS: a TLS tunnel's handshake is in them), within
 * the exchange's. */
static __u64 due(const struct rl_redis *r)
{
	__u64 t = mono_ms() + (r->connecting && r->timeout_ms < CONNECT_TIMEOUT_MS ?
			       CONNECT_TIMEOUT_MS : r->timeout_ms);

	return r->deadline_ms && r->deadline_ms < t ? r->deadline_ms : t;
}

/*
 * Wait until c's socket is ready for `events`, at most until `until`
 * (monotonic ms), in slices that look at *r->stop: 0, or -errno with
 * r->err (-EINTR: stopped, -ETIMEDOUT: no reply in time).
 * hiredis's own timeout bounds one read(), not a reply a server trickles.
 */
static int wait_io(struct rl_redis *r, redisContext *c, short events, __u64 until)
{
	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = events };
		__u64 now = mono_ms();
		int ms, n;

		if (r->stop && *r->stop) {
			fail(r, "redis: stopped");
			return -EINTR;
		}
		if (now >= until) {
			fail(r, "redis: no reply in time (slow or stopped)");
			return -ETIMEDOUT;
		}
		ms = until - now > SLICE_MS ? SLICE_MS : (int)(until - now);
		n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR) {
			int e = errno;

			fail(r, "redis: poll: %s", strerror(e));
			return -e;
		}
	}
}

/* Send what c has queued, by `until`: 0, or -errno (r->err). */
static int send_queued(struct rl_redis *r, redisContext *c, __u64 until)
{
	int done = 0, ret;

	while (!done) {
		ret = wait_io(r, c, POLLOUT, until);
		if (ret)
			return ret;
		if (redisBufferWrite(c, &done) != REDIS_OK) {
			fail(r, "redis: %s", ctx_err(c));
			return -EIO;
		}
	}
	return 0;
}

/*
 * c's next reply, whole by `until` and at most r->reply_max bytes (a
 * reply is parsed as it arrives: its bytes bound what it allocates), or
 * NULL (r->err). An error reply is a reply.
 */
static redisReply *get_reply(struct rl_redis *r, redisContext *c, __u64 until)
{
	size_t got = 0;
	char buf[READ_CHUNK];

	r->too_long = false;
	for (;;) {
		void *rep = NULL;
		ssize_t n;

		if (redisReaderGetReply(c->reader, &rep) != REDIS_OK) {
			fail(r, "redis: a reply that is not Redis's protocol");
			return NULL;
		}
		if (rep)
			return rep;
		if (wait_io(r, c, POLLIN, until))
			return NULL;
		n = read(c->fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			fail(r, "redis: %s", n ? strerror(errno) : "connection closed by the server");
			return NULL;
		}
		got += (size_t)n;
		if (r->reply_max && got > r->reply_max) {
			r->too_long = true;
			fail(r, "redis: a reply longer than %zu bytes", r->reply_max);
			return NULL;
		}
		if (redisReaderFeed(c->reader, buf, (size_t)n) != REDIS_OK) {
			fail(r, "redis: out of memory");
			return NULL;
		}
	}
}

/* A command's reply on c, or NULL with r->err (an error reply too). */
static redisReply *cmd(struct rl_redis *r, redisContext *c, const char *what,
		       int argc, const char **argv)
{
	redisReply *rep;
	char text[RL_ERR_LEN];

	if (redisAppendCommandArgv(c, argc, argv, NULL) != REDIS_OK) {
		fail(r, "redis: %s", c->errstr);
		return NULL;
	}
	rep = send_queued(r, c, due(r)) ? NULL : get_reply(r, c, due(r));
	if (!rep) {
		about(r, "%s", what);
		return NULL;
	}
	if (rep->type == REDIS_REPLY_ERROR) {
		rl_escape(rep->str, rep->len, text, sizeof(text));
		fail(r, "redis %s: %s", what, text);
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
		return -EIO;
	freeReplyObject(rep);
	return 0;
}

/* Connect to a TCP node (or the URL's Unix socket: path) and AUTH. */
static redisContext *connect_node(struct rl_redis *r, const char *host, int port,
				  const char *path)
{
	redisContext *c;
	bool was;

	if (r->stop && *r->stop) {
		fail(r, "redis: stopped");
		return NULL;
	}
	c = path ? redisConnectUnixWithTimeout(path, tv_ms(CONNECT_TIMEOUT_MS)) :
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
	was = r->connecting;
	r->connecting = true;
	if (r->password[0]) {
		const char *argv[] = { "AUTH", r->user, r->password };
		bool user = r->user && r->user[0];

		/* AUTH PASSWORD is AUTH default PASSWORD (Redis 6 ACLs) */
		if (!user)
			argv[1] = r->password;
		if (cmd_ok(r, c, "AUTH", user ? 3 : 2, argv)) {
			redisFree(c);
			c = NULL;
		}
	}
	r->connecting = was;
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
 * the command is refused), -EIO (the connection failed), -EPROTO or
 * -ENOSPC (a slot map rl_slot_map_parse refuses).
 */
static int ask_slots(struct rl_redis *r, redisContext *c, const char *seed_host)
{
	const char *argv[] = { "CLUSTER", "SLOTS" };
	redisReply *rep = NULL;
	char err[RL_ERR_LEN];
	int ret;

	if (redisAppendCommandArgv(c, 2, argv, NULL) != REDIS_OK) {
		fail(r, "redis: %s", c->errstr);
		return -EIO;
	}
	if (!send_queued(r, c, due(r)))
		rep = get_reply(r, c, due(r));
	if (!rep) {
		about(r, "CLUSTER SLOTS");
		return -EIO;
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
		return ret;
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

static int open_seed(struct rl_redis *r)
{
	const char *ping[] = { "PING" }, *host;
	redisContext *c;
	int cl, ret = 0;

	rl_redis_close(r);
	c = seed(r, &host);
	if (!c)
		return -EIO;
	cl = ask_slots(r, c, host);
	if (cl < 0) {
		redisFree(c);
		return cl;
	}
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
			ret = cmd_ok(r, c, "SELECT", 2, argv);
		}
		if (!ret)
			ret = cmd_ok(r, c, "PING", 1, ping);
		if (ret)
			rl_redis_close(r);
		r->open = !ret;
		return ret;
	}
	redisFree(c);
	if (r->url->db) {
		fail(r, "redis: a Redis Cluster has database 0 only: drop /%d from the URL",
		     r->url->db);
		return -EINVAL;
	}
	r->known = r->map;
	r->open = true;
	ret = rl_redis_ping(r);
	if (ret)
		rl_redis_close(r);
	return ret;
}

int rl_redis_open(struct rl_redis *r)
{
	int ret;

	r->connecting = true;	/* every reply of it: see due() */
	ret = open_seed(r);
	r->connecting = false;
	return ret;
}

int rl_redis_route(struct rl_redis *r, const char *key, size_t len)
{
	unsigned int slot = rl_key_slot(key, len);

	if (r->map.owner[slot] == RL_SLOT_NONE) {
		fail(r, "redis cluster: no master serves slot %u (of %s)", slot, key);
		return -ENOENT;
	}
	return r->map.owner[slot];
}

int rl_redis_node(struct rl_redis *r, const char *host, int port)
{
	int i = r->cluster ? rl_slot_map_find(&r->map, host, port) : -EPERM;

	/* the password goes to the cluster's own masters only */
	if (!r->cluster)
		fail(r, "redis: a redirection to %s:%d from a server that is not a cluster: not followed",
		     host, port);
	else if (i < 0)
		fail(r, "redis cluster: a redirection to %s:%d, not a master of the cluster's slot map: not followed",
		     host, port);
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
		return -ENOTCONN;
	}
	got = ask_slots(r, c, host);
	if (got != 1) {
		if (!got)
			fail(r, "redis cluster: %s refused CLUSTER SLOTS", host);
		r->map = was;
		return got ? got : -EOPNOTSUPP;
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
		return -EIO;
	if (redisAppendCommandArgv(c, argc, argv, NULL) == REDIS_OK)
		return 0;
	fail(r, "redis: %s", c->errstr);
	return -ENOMEM;
}

int rl_redis_flush(struct rl_redis *r)
{
	for (int i = 0; i < r->map.nnodes; i++) {
		int ret = r->ctx[i] ? send_queued(r, r->ctx[i], due(r)) : 0;

		if (ret) {
			about(r, "%s:%d", r->map.node[i].host, r->map.node[i].port);
			return ret;
		}
	}
	return 0;
}

redisReply *rl_redis_reply(struct rl_redis *r, int node)
{
	redisReply *rep = r->ctx[node] ? get_reply(r, r->ctx[node], due(r)) : NULL;

	if (rep)
		return rep;
	if (!r->ctx[node])
		fail(r, "redis: not connected");
	if (r->cluster)
		about(r, "%s:%d", r->map.node[node].host, r->map.node[node].port);
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
			return -EIO;
	}
	return 0;
}
