// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit events [--iface IFACE] [--json]: follow what the program
 * reports through its `events` ring buffer (include/events.h), one line per
 * event, like `ip monitor`, until SIGINT or SIGTERM, or until the interface
 * is detached. Which reports become lines is event_follow.h's; this file
 * reads the ring, the program's state for the sweeps, and prints. Reads
 * only, and takes no lock but its own: one follower per interface, since
 * followers would share the ring's records.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cli/cli.h"
#include "lib/events_follow.h"
#include "events.h"
#include "ban.h"
#include "lib/iface.h"
#include "cli/json_writer.h"
#include "lib/pin.h"
#include "lib/rule.h"
#include "lib/source_index_map.h"
#include "lib/rule_store.h"
#include "cli/stats_view.h"
#include "cli/table.h"
#include "cli/text.h"
#include "lib/values.h"

/* How long a poll waits: the longest an event that did not wake us
 * (RL_EVENTS_WAKEUPS), a signal or a detach waits to be seen. */
#define POLL_MS		100

_Static_assert(RL_EVENTS_PER_PERIOD * RL_NSEC_PER_SEC / RL_EVENTS_PERIOD_NS == 953,
	       "events --help states ~950 events per second per CPU");

struct events_args {
	const char *iface;
	bool json;
};

struct follower {
	char name[IF_NAMESIZE];
	struct rl_iface ifc;
	__u32 config_id;	/* of the maps followed (rl_iface_config_id) */
	bool json;
	int width;		/* of the lines (rl_view_width) */
	bool discard;		/* reading out what was there before us */
	int err;		/* of the callback, for the loop */
	struct rl_follow follow;
	void *values;		/* a source's per-CPU values, read buffer */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int events_operands(struct rl_parser *p, void *cfg, int argc, char **argv)
{
	(void)p, (void)cfg;
	if (argc)
		return rl_usage_err("events: unexpected '%s': name the interface with --iface, see 'xdp-ratelimit events --help'",
				    argv[0]);
	return 0;
}

static const char *const event_names[] = {
	[RL_EVENT_LIMITED] = "limited", [RL_EVENT_RELEASED] = "released",
	[RL_EVENT_BANNED] = "banned", [RL_EVENT_UNBANNED] = "unbanned",
	[RL_EVENT_VERIFIED] = "verified",
};

/* The wall-clock time of a time of the program's clock (CLOCK_MONOTONIC). */
static struct timespec wall_of(__u64 mono_ns)
{
	struct timespec now;
	__s64 ns;

	clock_gettime(CLOCK_REALTIME, &now);
	ns = (__s64)now.tv_sec * (__s64)RL_NSEC_PER_SEC + now.tv_nsec -
	     (__s64)(rl_now_ns() - mono_ns);
	now.tv_sec = ns / (__s64)RL_NSEC_PER_SEC;
	now.tv_nsec = ns % (__s64)RL_NSEC_PER_SEC;
	return now;
}

/* "2026-11-23 22:15:08.123" local (human), "2026-11-23T22:15:08.123Z" (JSON) */
static void time_text(__u64 mono_ns, bool utc, char *buf, size_t len)
{
	struct timespec ts = wall_of(mono_ns);
	char s[32];
	struct tm tm;

	if (utc)
		gmtime_r(&ts.tv_sec, &tm);
	else
		localtime_r(&ts.tv_sec, &tm);
	strftime(s, sizeof(s), utc ? "%Y-%m-%dT%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ld%s", s, ts.tv_nsec / 1000000, utc ? "Z" : "");
}

/* The scope of the window an event is about: a scoped rule's window has
 * a key of its own, with the rule's slot in it (include/scope.h); "" for
 * a source's own window. */
static void event_scope(const struct follower *fl, const struct rl_event *e,
			char *buf, size_t len)
{
	struct rl_key source;
	struct rl_rule r;
	struct rl_scope s;

	buf[0] = '\0';
	if (!rl_key_scoped(&e->key) ||
	    rl_rule_read_slot(&fl->ifc.m, rl_scoped_source(&e->key, &source), &r))
		return;
	rl_rule_scope_get(&r, &s);
	rl_scope_text(&s, buf, len);
}

static void print_event(void *ctx, const struct rl_event *e)
{
	struct follower *fl = ctx;
	char when[48], addr[RL_SOURCE_STRLEN], rule[RL_PREFIX_STRLEN], dur[32];
	char scope[RL_SCOPE_STRLEN], name[RL_SHOWN_LEN];
	char tail[RL_PREFIX_STRLEN + RL_SCOPE_STRLEN + 40];
	/* columns as wide as their common values (an IPv4 address; one
	 * interface: its name is as wide on every line) */
	static const int pads[] = { 0, 0, 8, 15, 0 };
	const char *fields[5];
	bool has_rule = e->rule_flags & RL_EVENT_F_RULE;
	bool banned = e->type == RL_EVENT_BANNED;
	__u64 ban_ns = e->until_ns - e->time_ns;

	time_text(e->time_ns, fl->json, when, sizeof(when));
	rl_stats_format_source(&e->key, fl->ifc.cfg.set.v6_prefix, addr, sizeof(addr));
	rl_format_rule_prefix(e->rule_flags & RL_RULE_F_V6, e->rule_prefixlen,
			      e->rule_addr, rule, sizeof(rule));
	event_scope(fl, e, scope, sizeof(scope));
	if (fl->json) {
		struct rl_json j;

		rl_json_begin(&j, stdout);
		rl_json_object_start(&j);
		rl_json_string_field(&j, "time", when);
		rl_json_string_field(&j, "ifname", fl->name);
		rl_json_string_field(&j, "event", event_names[e->type]);
		rl_json_string_field(&j, "address", addr);
		if (has_rule)
			rl_json_string_field(&j, "rule", rule);
		else
			rl_json_null_field(&j, "rule");
		if (scope[0])
			rl_json_string_field(&j, "scope", scope);
		else
			rl_json_null_field(&j, "scope");
		if (banned)
			rl_json_uint_field(&j, "ban_ms", ban_ns / RL_NSEC_PER_MSEC);
		rl_json_object_end(&j);
		rl_json_end(&j);
		return;
	}
	rl_format_duration(ban_ns - ban_ns % RL_NSEC_PER_MSEC, dur, sizeof(dur));
	snprintf(tail, sizeof(tail), "%s%s%s%s%s", has_rule ? rule : "-",
		 scope[0] ? " " : "", scope, banned ? " for " : "", banned ? dur : "");
	fields[0] = when;
	fields[1] = rl_text_shown(fl->name, name, sizeof(name));
	fields[2] = event_names[e->type];
	fields[3] = addr;
	fields[4] = tail;
	rl_print_row(stdout, fields, pads, 5, fl->width);
}

/* ---- the program's state, for the sweeps (event_follow.h) ---- */

static int source_limited(void *ctx, const struct rl_key *key, __u64 now,
			  __u64 *last)
{
	struct follower *fl = ctx;
	struct rl_index x;
	int found = 0;
	int err;

	rl_index_of(&x, &fl->ifc.m, &fl->ifc.cfg);
	err = rl_index_lookup(&x, key, fl->values);
	if (err)
		return err == -ENOENT ? 0 : err;	/* evicted: no window */
	for (int cpu = 0; cpu < rl_ncpus(); cpu++) {
		const struct rl_source *v = RL_PERCPU_VAL(fl->values, sizeof(*v), cpu);

		if (memcmp(&v->owner, key, sizeof(*key)) ||
		    !rl_event_limited(v->limited_ns, now, fl->ifc.cfg.set.window_ns))
			continue;	/* another key's leftovers, or not limited */
		if (!found || (__s64)(v->limited_ns - *last) > 0)
			*last = v->limited_ns;
		found = 1;
	}
	return found;
}

static int source_banned(void *ctx, const struct rl_key *key, __u64 now,
			 __u64 *until)
{
	struct follower *fl = ctx;
	struct rl_ban b;

	if (bpf_map_lookup_elem(fl->ifc.m.bans, key, &b))
		return errno == ENOENT ? 0 : -errno;
	if (!rl_ban_holds(&b, now))
		return 0;
	*until = b.until_ns;
	return 1;
}

static const struct rl_follow_ops follow_ops = {
	.limited = source_limited, .banned = source_banned, .print = print_event,
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct follower *fl = ctx;

	if (fl->discard || size < sizeof(struct rl_event))
		return 0;
	fl->err = rl_follow_event(&fl->follow, data,
				  rl_prog_now_ns(&fl->ifc.cfg.set));
	return fl->err;	/* an error stops the poll */
}

/* ---- the command ---- */

/* Are the maps we follow still the interface's? 0; 1 when it runs on
 * other maps now (a reload onto new maps, or a detach and attach: follow
 * those); -1 when it is no longer attached, and why in msg. A reload in
 * place keeps the maps, and the follower reads on. */
static int still_attached(const struct follower *fl, char *msg, size_t len)
{
	int ifindex = rl_link_ifindex(fl->name, NULL);
	__u32 id;

	if (ifindex == 0)
		snprintf(msg, len, "the interface %s is gone", fl->name);
	else if (ifindex < 0)
		snprintf(msg, len, "%s was detached", fl->name);
	else
		return (id = rl_iface_config_id(fl->name)) && id != fl->config_id;
	return -1;
}

/* One follower per interface: a lock on its pin directory, released on
 * exit. The fd, or -1 after saying why. */
static int follow_lock(const char *name)
{
	char path[PATH_MAX];
	int fd;

	rl_pin_path(path, sizeof(path), name, NULL);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		rl_err("events: cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		close(fd);
		if (e == EWOULDBLOCK)
			rl_err("events: another 'xdp-ratelimit events' follows %s: stop it first (followers would share its events)",
			       name);
		else
			rl_err("events: cannot lock %s: %s", path, strerror(e));
		return -1;
	}
	return fd;
}

#define FOLLOW_NEW_MAPS	(-1000)	/* follow(): the interface has new maps */

/* Follow fl's maps until a signal, a detach (exit status) or new maps
 * (FOLLOW_NEW_MAPS). */
static int follow(struct follower *fl)
{
	__u64 interval = rl_follow_interval(fl->ifc.cfg.set.bucket_ns);
	__u64 next_sweep = rl_now_ns() + interval;
	struct ring_buffer *rb;
	char msg[128], name[RL_SHOWN_LEN];
	int ret = RL_EXIT_OK, n;

	rb = ring_buffer__new(fl->ifc.m.events, on_record, fl, NULL);
	if (!rb)
		return rl_fail("events: cannot read the events of %s: %s", fl->name,
			       strerror(errno));
	/* what the ring held before us is old news */
	fl->discard = true;
	ring_buffer__consume(rb);
	fl->discard = false;
	fprintf(stderr, "following %s (Ctrl-C to stop)\n",
		rl_text_shown(fl->name, name, sizeof(name)));
	while (!stop) {
		n = ring_buffer__poll(rb, POLL_MS);
		/* the poll sees only events that woke it: read the rest */
		if (n >= 0 || n == -EINTR)
			n = ring_buffer__consume(rb);
		if (n < 0 && n != -EINTR) {
			ret = fl->err ? rl_fail("events: out of memory") :
			      rl_fail("events: cannot read the events of %s: %s",
				      fl->name, strerror(-n));
			break;
		}
		if (stop)
			break;
		if ((__s64)(rl_now_ns() - next_sweep) >= 0) {
			rl_follow_sweep(&fl->follow, rl_prog_now_ns(&fl->ifc.cfg.set));
			next_sweep = rl_now_ns() + interval;
		}
		n = still_attached(fl, msg, sizeof(msg));
		if (n < 0)
			fprintf(stderr, "xdp-ratelimit: events: %s\n", msg);
		if (n > 0)
			ret = FOLLOW_NEW_MAPS;
		if (n)
			break;
	}
	ring_buffer__free(rb);
	return ret;
}

/* Open fl's interface, lock it for us and start following: an exit status. */
static int follow_open(struct follower *fl, int *lock, char *err, size_t errlen)
{
	if (rl_iface_open(fl->name, &fl->ifc, err, errlen))
		return rl_fail("events: %s", err);
	fl->config_id = rl_map_id(fl->ifc.m.config);
	*lock = follow_lock(fl->name);
	if (*lock < 0)
		return RL_EXIT_FAIL;
	rl_follow_init(&fl->follow, &follow_ops, fl, fl->ifc.cfg.set.window_ns);
	return RL_EXIT_OK;
}

static void follow_close(struct follower *fl, int *lock)
{
	rl_follow_free(&fl->follow);
	if (*lock >= 0)
		close(*lock);
	*lock = -1;
	rl_iface_close(&fl->ifc);
}

static int events_run(void *cfg)
{
	const struct events_args *a = cfg;
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	struct follower fl = { .json = a->json, .width = rl_view_width(false) };
	char err[RL_ERR_LEN];
	int ret, ifindex, lock = -1;

	if (rl_iface_resolve(a->iface, fl.name, err, sizeof(err)))
		return rl_fail("events: %s", err);
	ifindex = rl_link_ifindex(fl.name, NULL);
	if (ifindex == 0)
		return rl_fail("events: the interface %s is gone: 'xdp-ratelimit detach %s' removes its pins",
			       fl.name, fl.name);
	if (ifindex < 0)
		return rl_fail("events: %s is not attached (no link is pinned): run 'xdp-ratelimit attach %s' first (see 'xdp-ratelimit status')",
			       fl.name, fl.name);
	fl.values = rl_percpu_alloc(sizeof(struct rl_source));
	if (!fl.values)
		return rl_fail("events: out of memory");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* a pipe sees each event */
	ret = follow_open(&fl, &lock, err, sizeof(err));
	while (ret == RL_EXIT_OK) {
		ret = follow(&fl);
		if (ret != FOLLOW_NEW_MAPS)
			break;
		/* what the old maps' sources were (limited, banned) is
		 * not carried: their next change is reported afresh */
		follow_close(&fl, &lock);
		fprintf(stderr, "xdp-ratelimit: events: %s runs on new maps\n"
			"  (a reload or an attach): following them\n",
			fl.name);
		ret = follow_open(&fl, &lock, err, sizeof(err));
	}
	follow_close(&fl, &lock);
	free(fl.values);
	return ret;
}

const struct rl_cmd rl_cmd_events = {
	.name = "events",
	.summary = "follow the sources the program limits, releases, bans and unbans",
	.doc =
		"Print what the program reports, one line per event, until SIGINT or\n"
		"SIGTERM, or until the interface is detached (exit 0):\n"
		"  limited   a source starts having packets dropped\n"
		"  released  a whole window passed without a drop of it\n"
		"  banned    a rule's --ban banned it (with the ban's duration)\n"
		"  unbanned  its ban ended, or was lifted\n"
		"  verified  the host answered it past a TCP handshake (it was not verified)\n"
		"with the time, the interface, the source and the rule. The program reports\n"
		"at most ~950 events per second per CPU; what it could not report is counted\n"
		"in 'stats' as events lost. One follower per interface at a time.\n",
	.opts = (const struct rl_opt[]){
		RL_OPT_IFACE(struct events_args, iface, "the interface; may be left out when one is attached"),
		RL_OPT_JSON(struct events_args, json, "one JSON object per line: time, ifname, event,\n"
			    "address, rule (and ban_ms for banned)"),
		{ 0 }
	},
	.notes =
		"Examples:\n"
		"  xdp-ratelimit events --iface eth0\n"
		"  xdp-ratelimit events --json | jq -c 'select(.event == \"banned\")'\n",
	.flags = RL_CMD_ROOT,
	.cfg_size = sizeof(struct events_args),
	.operands = events_operands,
	.run = events_run,
};
