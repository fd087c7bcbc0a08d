/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The fleet sync agent (xdp-ratelimit sync): every interval, push what
 * this host passed per source and bucket to Redis and read back what the
 * other hosts passed, into the `remote` map (include/remote.h). Runs in the
 * foreground until SIGINT/SIGTERM or the interface is detached.
 */
#ifndef RL_SYNC_AGENT_H
#define RL_SYNC_AGENT_H

#include <net/if.h>
#include "lib/sync_conf.h"
#include "lib/sync_value.h"

struct rl_sync_opts {
	struct rl_redis_url url;
	char user[RL_SYNC_USER_MAX + 1];	/* ACL user, "": default */
	char password[RL_SYNC_PASSWORD_MAX + 1];
	unsigned char fleet_key[RL_FLEET_KEY_MAX];	/* sync_value.h */
	size_t fleet_key_len;
	char fleet[RL_SYNC_FLEET_MAX + 1];
	char iface[IF_NAMESIZE];	/* attached: rl_iface_resolve()d */
	__u64 interval_ns;		/* 0: one bucket width */
};

/* Connect, join, then loop until stopped: the exit status (a failure to
 * start changes nothing on the host). */
int rl_sync_run(const struct rl_sync_opts *o);

#endif /* RL_SYNC_AGENT_H */
