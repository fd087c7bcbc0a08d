/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The sync agent's Redis, one server or a Redis Cluster, through hiredis.
 * Connecting asks CLUSTER SLOTS: a server that answers it is a cluster,
 * and the agent keeps its slot map (sync_slots.h) and one connection per
 * master; any other is one server, a map whose every slot is that server.
 * Callers route each key to its node, pipeline to each node, flush all,
 * then read each node's replies in order. Any failure (a node down, slow,
 * refusing): the caller closes everything and opens again later. Every
 * reply is due within timeout_ms and the exchange's deadline, and read at
 * most reply_max bytes, so a server that trickles or floods its replies
 * costs a failed exchange, never a hung agent; a set *stop ends any wait
 * within 100 ms. The password goes to the URL's server and to the masters
 * its CLUSTER SLOTS names, never to a redirection's target elsewhere.
 */
#ifndef RL_SYNC_REDIS_H
#define RL_SYNC_REDIS_H

#include <signal.h>
#include <stdbool.h>
#include <hiredis/hiredis.h>
#include <linux/types.h>
#include "lib/sync_slots.h"
#include "lib/values.h"

struct rl_redis {
	const struct rl_redis_url *url;
	const char *user;		/* ACL user, "" or NULL: default */
	const char *password;		/* "" for none */
	__u64 timeout_ms;		/* a reply slower than this fails */
	__u64 deadline_ms;		/* CLOCK_MONOTONIC ms the exchange
					 * ends by, 0: none */
	size_t reply_max;		/* bytes of one reply, 0: any */
	volatile sig_atomic_t *stop;	/* set: every wait ends */
	bool open;
	bool cluster;
	bool connecting;		/* replies due in a connect's time */
	bool too_long;			/* the last reply failed as longer
					 * than reply_max */
	struct rl_slot_map map;		/* one server: node 0, every slot */
	redisContext *ctx[RL_SLOT_NODES_MAX];	/* by node of map; NULL:
						 * connected when used */
	struct rl_slot_map known;	/* the last cluster's masters: seeds
					 * when the URL's node is down */
	char err[RL_ERR_LEN];		/* what failed last */
};

/* Connect (AUTH, cluster or SELECT, PING): 0, or -errno with r->err
 * (-ETIMEDOUT: no reply in time, -EINTR: stopped, -EIO: the server failed
 * or refused, -EINVAL: a database with a cluster). Every function here
 * returns -errno so with r->err. */
int rl_redis_open(struct rl_redis *r);
void rl_redis_close(struct rl_redis *r);

/* The node serving `key`: its index, or -ENOENT (r->err). */
int rl_redis_route(struct rl_redis *r, const char *key, size_t len);
/* The node at HOST:PORT (an ASK redirection's target) when it is a
 * master of the cluster's slot map: its index, or -EPERM (r->err: not a
 * cluster) or -ENOENT (not one of its masters). */
int rl_redis_node(struct rl_redis *r, const char *host, int port);
/* Ask the cluster for its slot map again (after a MOVED): 0, or -errno. */
int rl_redis_refresh(struct rl_redis *r);

/* Queue a command to node `node` (connecting it first if need be): 0, or
 * -errno (r->err). */
int rl_redis_append(struct rl_redis *r, int node, int argc, const char **argv);
/* Send what every node has queued, so that they all work at once. */
int rl_redis_flush(struct rl_redis *r);
/* Node `node`'s next reply (an error reply is a reply), or NULL (r->err). */
redisReply *rl_redis_reply(struct rl_redis *r, int node);
/* PING every master serving slots: 0, or -errno (r->err). */
int rl_redis_ping(struct rl_redis *r);

#endif /* RL_SYNC_REDIS_H */
