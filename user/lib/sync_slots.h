/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Redis Cluster's routing, as plain C (unit-tested on the host): the key
 * slot of a key (CRC16 of its hash tag, 16384 slots), the slot map that
 * CLUSTER SLOTS answers (which master serves which slots), and the
 * MOVED/ASK redirections a node answers for a slot it does not serve.
 * The connections themselves are sync_redis.c's.
 */
#ifndef RL_SYNC_SLOTS_H
#define RL_SYNC_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <hiredis/hiredis.h>
#include "lib/sync_conf.h"

#define RL_SLOTS		16384
#define RL_SLOT_NODES_MAX	64	/* masters of one cluster */
#define RL_SLOT_NONE		0xff	/* a slot no master serves */

struct rl_slot_node {
	char host[RL_SYNC_HOST_MAX];
	int port;
};

struct rl_slot_map {
	int nnodes;
	struct rl_slot_node node[RL_SLOT_NODES_MAX];
	unsigned char owner[RL_SLOTS];	/* index into node, or RL_SLOT_NONE */
};

/* The slot of a key: CRC16 (XMODEM) of the part between the first '{'
 * and the next '}' when that is not empty, else of the whole key. */
unsigned int rl_key_slot(const char *key, size_t len);

/* An empty map: no node, no slot served. */
void rl_slot_map_init(struct rl_slot_map *m);

/* The index of node HOST:PORT, added when new: -ENOSPC when the map is full. */
int rl_slot_map_node(struct rl_slot_map *m, const char *host, int port);
/* The index of node HOST:PORT, or -ENOENT when the map has no such node. */
int rl_slot_map_find(const struct rl_slot_map *m, const char *host, int port);

/*
 * Fill `m` from a CLUSTER SLOTS reply (each element: first slot, last
 * slot, the master [host, port, ...], its replicas). A master announced
 * without an address ("" or "?") is `seed_host`, the one asked. 0, or
 * -EPROTO (a malformed reply) or -ENOSPC (too many masters) with what is
 * wrong in err.
 */
int rl_slot_map_parse(struct rl_slot_map *m, const redisReply *r,
		      const char *seed_host, char *err, size_t errlen);

/* A redirection: "MOVED SLOT HOST:PORT" or "ASK SLOT HOST:PORT". */
struct rl_redirect {
	bool ask;
	unsigned int slot;
	char host[RL_SYNC_HOST_MAX];
	int port;
};

/* Parse an error reply as a redirection (an empty HOST is `seed_host`):
 * true, or false for any other error. */
bool rl_redirect_parse(const char *s, const char *seed_host,
		       struct rl_redirect *out);

#endif /* RL_SYNC_SLOTS_H */
