// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit sync --redis URL [--iface IFACE] [--fleet NAME]
 * [--interval DURATION] [--password-file FILE] [--redis-user NAME]
 * --fleet-key-file FILE: join the interface to a fleet through Redis (the
 * agent is sync_agent.c). Every value is checked, and Redis reached,
 * before anything on the host changes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "lib/pin.h"
#include "cli/sync_agent.h"
#include "lib/values.h"

struct sync_args {
	struct rl_sync_opts o;
	bool have_redis;	/* --redis given: it is required */
	const char *iface;
	const char *password_file;
	const char *fleet_key_file;
};

static void sync_defaults(void *cfg)
{
	snprintf(((struct sync_args *)cfg)->o.fleet, sizeof(((struct sync_args *)cfg)->o.fleet),
		 "%s", RL_SYNC_DEFAULT_FLEET);
}

static int parse_redis(const char *arg, void *url, char *err, size_t errlen)
{
	return rl_redis_url_parse(arg, url, err, errlen);
}

/* --fleet into rl_sync_opts.fleet */
static int parse_fleet(const char *arg, void *fleet, char *err, size_t errlen)
{
	int ret = rl_sync_fleet_check(arg, err, errlen);

	if (!ret)
		snprintf(fleet, RL_SYNC_FLEET_MAX + 1, "%s", arg);
	return ret;
}

/* --redis-user into rl_sync_opts.user: what Redis ACL names allow. */
static int parse_user(const char *arg, void *user, char *err, size_t errlen)
{
	if (!*arg || strlen(arg) > RL_SYNC_USER_MAX ||
	    strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.@-") != strlen(arg)) {
		snprintf(err, errlen, "bad name '%s': use 1 to %d of A-Z a-z 0-9 _ . @ -",
			 arg, RL_SYNC_USER_MAX);
		return -EINVAL;
	}
	snprintf(user, RL_SYNC_USER_MAX + 1, "%s", arg);
	return 0;
}

static int sync_operands(struct rl_parser *p, void *cfg, int argc, char **argv)
{
	(void)p;
	if (argc)
		return rl_usage_err("sync: unexpected '%s': see 'xdp-ratelimit sync --help'",
				    argv[0]);
	if (!((struct sync_args *)cfg)->have_redis)
		return rl_usage_err("sync: give the Redis server: --redis redis://HOST:PORT or unix:///PATH");
	if (!((struct sync_args *)cfg)->fleet_key_file)
		return rl_usage_err("sync: give the fleet key: --fleet-key-file FILE (the same 32 bytes or more on every host, root-only: head -c 32 /dev/urandom > FILE)");
	return 0;
}

static int sync_run(void *cfg)
{
	struct sync_args *a = cfg;
	char err[RL_ERR_LEN];

	if (rl_sync_fleet_key(a->fleet_key_file, a->o.fleet_key, sizeof(a->o.fleet_key),
			      &a->o.fleet_key_len, err, sizeof(err)))
		return rl_fail("sync: %s", err);
	if (rl_sync_password(a->password_file, a->o.password, sizeof(a->o.password),
			     err, sizeof(err)))
		return rl_fail("sync: %s", err);
	if (a->o.user[0] && !a->o.password[0])
		return rl_usage_err("sync: --redis-user %s needs its password: REDISCLI_AUTH or --password-file",
				    a->o.user);
	if (rl_iface_resolve(a->iface, a->o.iface, err, sizeof(err)))
		return rl_fail("sync: %s", err);
	return rl_sync_run(&a->o);
}

#define T struct sync_args
const struct rl_cmd rl_cmd_sync = {
	.name = "sync",
	.summary = "share per-source windows with a fleet through Redis",
	.doc =
		"Join IFACE to a fleet: every host enforces at its own XDP hook, and\n"
		"counts what the other hosts passed for the same source as if another\n"
		"CPU had passed it. Every interval it pushes this host's passes per\n"
		"source and bucket to Redis and reads back the others'. Runs until\n"
		"SIGINT or SIGTERM, or until IFACE is detached. If Redis is slow or\n"
		"gone, enforcement goes on with local counts ('status' says degraded)\n"
		"and the agent reconnects. The password comes from REDISCLI_AUTH or\n"
		"--password-file, never the command line. Every value is written with\n"
		"a MAC under the fleet key, which Redis never sees; a value that fails\n"
		"it, or is out of range or dated outside the window, is ignored and\n"
		"counted: a Redis writer without the key can at worst make hosts fall\n"
		"back to their local quota. For TLS, run a local TLS tunnel (stunnel4)\n"
		"and give its socket as --redis.\n",
	.opts = (const struct rl_opt[]){
		{ .name = "redis", .arg = "URL", .kind = RL_OPT_PARSE,
		  .parse = parse_redis, RL_OPT_FIELD(T, o.url), RL_OPT_HAVE(T, have_redis),
		  .help = "redis://HOST:PORT[/DB] or unix:///PATH[?db=N] (required)" },
		RL_OPT_IFACE(T, iface, "the interface (may be left out when one is attached)"),
		{ .name = "fleet", .arg = "NAME", .kind = RL_OPT_PARSE,
		  .parse = parse_fleet, RL_OPT_FIELD(T, o.fleet),
		  .help = "the fleet's name: A-Z a-z 0-9 _ . - (default: default)" },
		{ .name = "interval", .arg = "DURATION", .kind = RL_OPT_DURATION,
		  .min = RL_SYNC_MIN_INTERVAL_NS, .note = "at most the window",
		  RL_OPT_FIELD(T, o.interval_ns),
		  .help = "how often to exchange: 1ms to the window (default:\n"
			  "one bucket width)" },
		{ .name = "password-file", .arg = "FILE", .kind = RL_OPT_STRING,
		  RL_OPT_FIELD(T, password_file),
		  .help = "read the Redis password from FILE's first line\n"
			  "(else REDISCLI_AUTH); FILE root's, mode 600 or less" },
		{ .name = "redis-user", .arg = "NAME", .kind = RL_OPT_PARSE,
		  .parse = parse_user, RL_OPT_FIELD(T, o.user),
		  .help = "authenticate as this Redis ACL user (AUTH NAME PASSWORD)" },
		{ .name = "fleet-key-file", .arg = "FILE", .kind = RL_OPT_STRING,
		  RL_OPT_FIELD(T, fleet_key_file),
		  .help = "the fleet key (required): 32 to 1024 bytes, the same on\n"
			  "every host; FILE root's, mode 600 or less" },
		{ 0 }
	},
	.notes =
		"Examples:\n"
		"  xdp-ratelimit sync --redis redis://198.18.0.10:6379 --fleet web \\\n"
		"      --fleet-key-file /etc/xdp-ratelimit/fleet.key\n"
		"  REDISCLI_AUTH=secret xdp-ratelimit sync --iface eth0 \\\n"
		"      --redis unix:///run/redis.sock --interval 20ms \\\n"
		"      --fleet-key-file /etc/xdp-ratelimit/fleet.key\n",
	.flags = RL_CMD_ROOT,
	.cfg_size = sizeof(struct sync_args),
	.defaults = sync_defaults,
	.operands = sync_operands,
	.run = sync_run,
};
#undef T
