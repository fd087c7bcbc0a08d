/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What `xdp-ratelimit sync` is told (xdp-ratelimit(8), sync): the Redis
 * URL, the fleet name, the interval, the password, checked before the
 * agent touches anything. Pure parsing: unit-tested on the host.
 */
#ifndef RL_SYNC_CONF_H
#define RL_SYNC_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define RL_SYNC_FLEET_MAX	64	/* characters of a fleet name */
#define RL_SYNC_DEFAULT_FLEET	"default"
#define RL_SYNC_PATH_MAX	108	/* sun_path */
#define RL_SYNC_HOST_MAX	256
#define RL_SYNC_MIN_INTERVAL_NS	1000000ULL	/* 1 ms */
#define RL_SYNC_MAX_DB		1000000
#define RL_SYNC_PASSWORD_MAX	255	/* bytes of a password */
#define RL_SYNC_USER_MAX	64	/* of an ACL user name */

/* A Redis server: redis://HOST:PORT[/DB] or unix:///PATH[?db=N]. */
struct rl_redis_url {
	bool unix_socket;
	char host[RL_SYNC_HOST_MAX];		/* TCP */
	int port;
	char path[RL_SYNC_PATH_MAX];		/* Unix socket */
	int db;
};

/* Parse a Redis URL: 0, or -EINVAL with what is wrong and the accepted forms
 * in err. */
int rl_redis_url_parse(const char *s, struct rl_redis_url *u, char *err,
		       size_t errlen);

/* A fleet name: 1 to RL_SYNC_FLEET_MAX of [A-Za-z0-9_.-] (it is part of
 * every Redis key). 0, or -EINVAL with err. */
int rl_sync_fleet_check(const char *name, char *err, size_t errlen);

/* --interval against the attached window: at least 1 ms, at most the
 * window. 0, or -ERANGE with err. */
int rl_sync_interval_check(__u64 interval_ns, __u64 window_ns, char *err,
			   size_t errlen);

/*
 * The Redis key of a window (user/cli/sync_agent.c): a source's own,
 * xrl:{FLEET|SOURCE}:WIDTH, or with `rule` (the text of a scoped rule,
 * "0.0.0.0/0 tcp syn"; NULL: none) that rule's window of the source,
 * xrl:{FLEET|SOURCE}|RULE:WIDTH, named by what names the rule on every
 * host rather than by its slot, which differs between them.
 */
void rl_sync_window_key(const char *fleet, const char *source,
			const char *rule, __u64 width_ns, char *buf, size_t len);

/*
 * The password: the first line of `file` when given (owned by root, no
 * permission for group or others; a longer line than outlen - 1 is
 * refused, never cut), else the REDISCLI_AUTH environment variable (as
 * redis-cli reads it), else none (*out empty). 0, or -errno with err.
 */
int rl_sync_password(const char *file, char *out, size_t outlen, char *err,
		     size_t errlen);

/*
 * The fleet key (sync_value.h): FILE's bytes, 32 to outlen, any bytes,
 * one trailing newline dropped; FILE owned by root, no permission for
 * group or others. 0 and *len, or -errno with err (-EPERM: not root's alone).
 */
int rl_sync_fleet_key(const char *file, unsigned char *out, size_t outlen, size_t *len,
		      char *err, size_t errlen);

#endif /* RL_SYNC_CONF_H */
