// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fleet sync agent (sync_agent.h). One interval:
 *
 *   1. read every tracked source of `sources` (batches), with what it
 *      passed per bucket of the window (rl_source_sum_buckets);
 *   2. for each source active here (passes in the window, or its counters
 *      moved since the last interval), in one pipeline, BATCH sources a
 *      round trip: HSET this host's passes of the buckets that changed
 *      into the source's hash (a field per host and bucket) and, once a
 *      bucket, PEXPIRE it (a window and three buckets), HDEL our fields of
 *      buckets that left the window (and those a previous run of this
 *      host left: a restarted agent), read the fields (HRANDFIELD with a
 *      count above any fleet's: the whole hash, bounded);
 *   3. judge each field (lib/sync_value.h: the fleet key's MAC, range,
 *      date), file what the others passed under this host's buckets and
 *      write it whole into `remote` (include/remote.h), or delete the
 *      entry when nothing of it is left;
 *   4. publish the state for `status`, check the interface is still
 *      attached, sleep to the next interval.
 *
 * Counts are cumulative per host and bucket, so a restarted agent (or a
 * retried batch) writes the same values again: nothing is counted twice.
 * A failed exchange drops the connection; the next interval reconnects,
 * with a backoff, and meanwhile `remote` ages out on its own. A key Redis
 * answers with an error (another type) costs that source only: it stays
 * local. Every reply is due within a deadline and bounded in size
 * (sync_redis.h), so nothing Redis does holds the agent, and SIGTERM ends
 * it within a second. Nothing on the packet path waits for any of this.
 *
 * Key: xrl:{FLEET|SOURCE}:WIDTH (WIDTH the bucket width in ns, so that
 * hosts with other windows never mix), one hash per source; a scoped
 * rule's window of the source (include/scope.h) is a hash of its own,
 * xrl:{FLEET|SOURCE}|PREFIX SCOPE:WIDTH ("...|0.0.0.0/0 tcp syn:..."):
 * named by the rule's prefix and scope, not by its slot, which differs
 * between hosts, so each host files it under its own rule's window, and
 * a host without that rule never asks for it. In a Redis
 * Cluster (sync_redis.h) the hash tag puts a source on one slot: its
 * commands go to the master of that slot, a pipeline per master and
 * batch; a source redirected (MOVED: the map is asked again; ASK: once,
 * after ASKING, to a master of the slot map only) is sent again in a next
 * pass. Fields HOST:BUCKET (BUCKET on the wall clock, include/remote.h),
 * values "x1 PKTS BYTES START MAC" (lib/sync_value.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cli/cli.h"
#include "lib/source_index_map.h"
#include "lib/iface.h"
#include "lib/pin.h"
#include "remote.h"
#include "lib/rule.h"
#include "lib/rule_store.h"
#include "cli/stats_view.h"
#include "cli/sync_agent.h"
#include "lib/sync_redis.h"
#include "lib/sync_status.h"
#include "lib/sync_value.h"
#include "lib/values.h"

#define BATCH			256	/* sources per pipelined round trip */
#define MIN_TIMEOUT_MS		50	/* a reply slower than this, or two */
#define MAX_TIMEOUT_MS		1000	/* intervals, is Redis "slow" */
#define BACKOFF_MIN_NS		(100 * RL_NSEC_PER_MSEC)
#define BACKOFF_MAX_NS		(5 * RL_NSEC_PER_SEC)
#define EXCHANGE_MIN_NS		RL_NSEC_PER_SEC	/* an exchange's deadline, at least */
#define SLEEP_SLICE_NS		(100 * RL_NSEC_PER_MSEC)	/* a sleep looks at `stop` */
#define KEY_LEN			(16 + RL_SYNC_FLEET_MAX + RL_SOURCE_STRLEN + RL_RULE_STRLEN + 24)
#define VAL_LEN			RL_SYNC_VALUE_LEN
#define PASSES			5	/* a source redirected more is an error */
/* Fields read per key at most (HRANDFIELD's count): 256 hosts of 16
 * buckets; a hash holding more (planted fields) is read in part, which
 * can only count less. */
#define FIELDS_MAX		"4096"
/* Bytes of one reply at most: FIELDS_MAX fields and values of a legal
 * length (a field 300 bytes, a value 100) with room. */
#define REPLY_MAX		((size_t)4 << 20)

/* A source as the last interval saw it. */
struct entry {
	struct rl_key key;
	__u64 passed, dropped;		/* its totals, to see it move */
	struct rl_remote pushed;	/* what Redis holds from us, by local
					 * bucket (rl_remote's ring) */
	struct rl_bucket ages[RL_MAX_BUCKETS];	/* passed here, by age */
	__u64 pushed_first;		/* first fleet bucket of the window
					 * when last pushed, 0: never */
	__u64 expire_first;		/* the same, when last PEXPIREd */
	__u64 remote_hash;		/* of what `remote` holds, to skip
					 * rewriting the same */
	__u64 stale[RL_MAX_BUCKETS];	/* fleet buckets of our fields that
					 * left the window, seen in Redis */
	__u8 nstale;
	__u64 unread_until;		/* local bucket until which its key is
					 * not read: its reply was too long */
	bool active;
	bool has_remote;		/* an entry in `remote` */
};

struct agent {
	const struct rl_sync_opts *o;
	struct rl_iface ifc;
	__u32 config_id;		/* to notice a detach and attach */
	char host[RL_SYNC_HOST_MAX + IF_NAMESIZE + 1];
	struct rl_redis r;
	struct pend *todo, *redo;	/* sources of this pass, of the next */
	size_t alloc_pend;
	__u64 interval, width, window, ttl_ms;
	__u32 nbuckets;
	int ncpus;
	struct entry *prev, *cur;	/* sorted by key */
	size_t nprev, ncur, alloc_prev, alloc_cur;
	__u64 reading_now;		/* read_sources()'s clock */
	struct rl_sync_state st;
	bool claimed;	/* the interface's sync state is ours (join) */
	/* the rule of each slot as scoped windows' keys name it, read at
	 * most once an interval (RULE_*) */
	char (*rule_text)[RL_RULE_STRLEN];
	__u8 *rule_state;
	__u64 backoff, next_connect;
	struct rl_fleet_mac *mac;	/* the fleet key */
	char err[RL_ERR_LEN];	/* what went wrong last */
	char key_err[RL_ERR_LEN];	/* a key's error, for the log */
	bool key_errors_logged;	/* since the last interval without one */
	bool outage;		/* Redis failed since the last exchange */
};

static volatile sig_atomic_t stop;

/* a->err: what went wrong (shown by status, cut to RL_SYNC_ERR_MAX) */
static void __attribute__((format(printf, 2, 3))) set_err(struct agent *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->err, sizeof(a->err), fmt, ap);
	va_end(ap);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * RL_NSEC_PER_SEC + (__u64)ts.tv_nsec;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct rl_key));
}

enum { RULE_UNREAD, RULE_NAMED, RULE_GONE };

/* The Redis key of window `key` (see the top): 0, or -1 when it is a
 * scoped window whose rule is gone (it is not synced). */
static int window_key(struct agent *a, const struct rl_key *key, char *buf,
		      size_t len)
{
	char src[RL_SOURCE_STRLEN];
	struct rl_key source;
	struct rl_rule r;
	__u32 slot;

	rl_stats_format_source(key, a->ifc.cfg.set.v6_prefix, src, sizeof(src));
	if (!rl_key_scoped(key)) {
		rl_sync_window_key(a->o->fleet, src, NULL, a->width, buf, len);
		return 0;
	}
	slot = rl_scoped_source(key, &source);
	if (slot >= RL_MAX_RULES)
		return -1;
	if (a->rule_state[slot] == RULE_UNREAD) {
		a->rule_state[slot] = RULE_GONE;
		if (!rl_rule_read_slot(&a->ifc.m, slot, &r) && r.scope) {
			rl_rule_text(&r, a->rule_text[slot], RL_RULE_STRLEN);
			a->rule_state[slot] = RULE_NAMED;
		}
	}
	if (a->rule_state[slot] != RULE_NAMED)
		return -1;
	rl_sync_window_key(a->o->fleet, src, a->rule_text[slot], a->width,
			   buf, len);
	return 0;
}

/* ---- Redis ------------------------------------------------------------ */

static void redis_drop(struct agent *a)
{
	rl_redis_close(&a->r);
}

/* Connect (sync_redis.h): 0, or -1 with a->err. */
static int redis_connect(struct agent *a)
{
	__u64 t = a->interval * 2 / RL_NSEC_PER_MSEC;

	/* a reply slower than two intervals, or MIN_TIMEOUT_MS, is "slow" */
	if (t < MIN_TIMEOUT_MS)
		t = MIN_TIMEOUT_MS;
	if (t > MAX_TIMEOUT_MS)
		t = MAX_TIMEOUT_MS;
	a->r.url = &a->o->url;
	a->r.user = a->o->user;
	a->r.password = a->o->password;
	a->r.timeout_ms = t;
	a->r.reply_max = REPLY_MAX;
	a->r.stop = &stop;
	if (!rl_redis_open(&a->r))
		return 0;
	set_err(a, "%s", a->r.err);
	return -1;
}

/* ---- the local side ----------------------------------------------------- */

static struct entry *prev_of(struct agent *a, const struct rl_key *key)
{
	return a->nprev ? bsearch(key, a->prev, a->nprev, sizeof(*a->prev), key_cmp) : NULL;
}

static int cur_add(struct agent *a, const struct entry *e)
{
	if (a->ncur == a->alloc_cur) {
		size_t n = a->alloc_cur ? 2 * a->alloc_cur : 1024;
		struct entry *p = realloc(a->cur, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		a->cur = p;
		a->alloc_cur = n;
	}
	a->cur[a->ncur++] = *e;
	return 0;
}

/* One tracked source into a->cur (read_sources). */
static int read_source(void *ctx, const struct rl_key *key, __u32 slot,
		       const void *v)
{
	struct agent *a = ctx;
	struct rl_source_sum sum;
	struct entry e = { .key = *key }, *p;

	(void)slot;
	rl_source_sum_buckets(key, v, a->ncpus, a->ifc.m.history,
			      &a->ifc.cfg.set, a->reading_now, &sum, e.ages);
	e.passed = sum.passed_pkts;
	e.dropped = sum.dropped_pkts;
	p = prev_of(a, key);
	if (p) {
		e.pushed = p->pushed;
		e.pushed_first = p->pushed_first;
		e.expire_first = p->expire_first;
		e.has_remote = p->has_remote;
		e.remote_hash = p->remote_hash;
		memcpy(e.stale, p->stale, sizeof(e.stale));
		e.nstale = p->nstale;
		e.unread_until = p->unread_until;
	}
	/* a source seen for the first time is active: it sent since the
	 * last interval (or the agent just started, and cannot tell) */
	e.active = sum.window_pkts || !p || p->passed != e.passed ||
		   p->dropped != e.dropped;
	return cur_add(a, &e);
}

/* Step 1: every tracked source, with its totals and what it passed per
 * bucket, into a->cur, sorted by key. */
static int read_sources(struct agent *a, __u64 now)
{
	struct rl_index x;
	int ret;

	a->ncur = 0;
	a->reading_now = now;
	rl_index_of(&x, &a->ifc.m, &a->ifc.cfg);
	ret = rl_index_walk(&x, read_source, a);
	if (ret)
		return ret;
	if (a->ncur)
		qsort(a->cur, a->ncur, sizeof(*a->cur), key_cmp);
	return 0;
}

/* ---- one exchange -------------------------------------------------------- */

/* The clocks of one interval: this host's grid and the wall clock. */
struct when {
	__u64 now;		/* CLOCK_MONOTONIC */
	__u64 real;		/* CLOCK_REALTIME */
	__u64 off;		/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	__u64 cur;		/* local bucket of now */
	__u64 first_fleet;	/* fleet bucket of the window's oldest here */
};

/* Fields of one command: HSET KEY + a field and value per bucket of the
 * window, or HDEL KEY + one per bucket that left it since the last time. */
#define CMD_ARGS	(2 + 2 * RL_MAX_BUCKETS)
#define FIELD_LEN	(RL_SYNC_HOST_MAX + IF_NAMESIZE + 24)

/* The commands for one source, pipelined: HSET and PEXPIRE (when a bucket
 * changed here), HDEL (when buckets left the window since the last push,
 * or a previous run's fields were seen), HRANDFIELD (last; unless its
 * reply was too long within a window). */
struct cmd {
	char key[KEY_LEN];
	char fields[CMD_ARGS][FIELD_LEN];
	char vals[RL_MAX_BUCKETS][VAL_LEN];
	const char *hset[CMD_ARGS], *hdel[CMD_ARGS];
	int nhset, nhdel;
	int ncmds;		/* commands sent for this source */
	bool expired;		/* a PEXPIRE is among them */
	bool read;		/* the key's fields are read, last */
};

/* A source to send in a pass: to the master of its slot (node -1: not
 * routed yet), or where a redirection said, after ASKING (ask). */
struct pend {
	struct entry *e;
	int node;
	bool ask;
};

/* `key`'s own field for fleet bucket fb: "HOST:BUCKET" (HOST holds no ':',
 * nor does a hostname or an interface name). */
static void own_field(const struct agent *a, __u64 fb, char *buf)
{
	snprintf(buf, FIELD_LEN, "%s:%llu", a->host, (unsigned long long)fb);
}

/* Queue one command of p's source to its node, ASKING first when the
 * node is importing the slot (an ASK redirection lasts one command). */
static int append(struct agent *a, const struct pend *p, int argc, const char **argv)
{
	const char *asking[] = { "ASKING" };

	if ((!p->ask || !rl_redis_append(&a->r, p->node, 1, asking)) &&
	    !rl_redis_append(&a->r, p->node, argc, argv))
		return 0;
	set_err(a, "%s", a->r.err);
	return -1;
}

/* Queue the commands of one source (hiredis copies them). */
static int queue_source(struct agent *a, const struct when *w,
			struct pend *p, struct cmd *c, const char *ttl)
{
	const struct entry *e = p->e;
	int nf = 0;

	if (window_key(a, &e->key, c->key, KEY_LEN)) {
		set_err(a, "the rule of a scoped window is gone");	/* exchange() skips those */
		return -1;
	}
	if (p->node < 0)
		p->node = rl_redis_route(&a->r, c->key, strlen(c->key));
	if (p->node < 0) {
		set_err(a, "%s", a->r.err);
		return -1;
	}
	c->ncmds = 0;
	c->expired = false;
	c->hset[0] = "HSET";
	c->hset[1] = c->key;
	c->nhset = 2;
	for (__u32 i = 0; i < a->nbuckets; i++) {
		const struct rl_bucket *ages = e->ages;
		__u64 lb = w->cur - i, start, fb;
		const struct rl_remote_slot *was = &e->pushed.slot[RL_SLOT(lb)];

		if (!ages[i].pkts && !ages[i].bytes)
			continue;
		if (was->bucket == lb && was->pkts == ages[i].pkts &&
		    was->bytes == ages[i].bytes)
			continue;	/* Redis has it */
		fb = rl_fleet_bucket(lb, a->width, w->off, &start);
		own_field(a, fb, c->fields[nf]);
		if (rl_sync_value_write(a->mac, c->key, c->fields[nf], ages[i].pkts,
					ages[i].bytes, start, c->vals[nf], VAL_LEN)) {
			set_err(a, "libcrypto: cannot compute a MAC");
			return -1;
		}
		c->hset[c->nhset++] = c->fields[nf];
		c->hset[c->nhset++] = c->vals[nf];
		nf++;
	}
	if (c->nhset > 2) {
		const char *expire[] = { "PEXPIRE", c->key, ttl };

		if (append(a, p, c->nhset, c->hset))
			return -1;
		c->ncmds++;
		/* once per bucket: the TTL covers the bucket and a window on */
		if (e->expire_first != w->first_fleet) {
			if (append(a, p, 3, expire))
				return -1;
			c->ncmds++;
			c->expired = true;
		}
	}
	/* our fields of buckets that left the window, and those of a
	 * previous run of this host (a restarted agent) the last read saw */
	c->hdel[0] = "HDEL";
	c->hdel[1] = c->key;
	c->nhdel = 2;
	for (__u64 fb = e->pushed_first; e->pushed_first && fb < w->first_fleet &&
	     c->nhdel < CMD_ARGS && nf < CMD_ARGS; fb++) {
		own_field(a, fb, c->fields[nf]);
		c->hdel[c->nhdel++] = c->fields[nf++];
	}
	for (int k = 0; k < e->nstale && c->nhdel < CMD_ARGS && nf < CMD_ARGS; k++) {
		own_field(a, e->stale[k], c->fields[nf]);
		c->hdel[c->nhdel++] = c->fields[nf++];
	}
	if (c->nhdel > 2) {
		if (append(a, p, c->nhdel, c->hdel))
			return -1;
		c->ncmds++;
	}
	/* HGETALL, bounded: the whole hash up to FIELDS_MAX fields; not
	 * for a window after its reply was too long (planted fields): that
	 * failed one exchange, not every one */
	c->read = (__s64)(w->cur - e->unread_until) >= 0;
	if (c->read) {
		const char *get[] = { "HRANDFIELD", c->key, FIELDS_MAX, "WITHVALUES" };

		if (append(a, p, 4, get))
			return -1;
		c->ncmds++;
	}
	return 0;
}

/* FNV-1a of a remote share: an update replaces the element (an allocation
 * and an RCU free in the kernel), so the same share is not written twice. */
static __u64 hash_remote(const struct rl_remote *r)
{
	const unsigned char *p = (const unsigned char *)r;
	__u64 h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < sizeof(*r); i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* Step 3 for one source: the others' fields (HRANDFIELD's reply, as
 * HGETALL's) judged (lib/sync_value.h), filed under this host's buckets,
 * written to `remote`. 0, or 1 when the reply is not a hash's (a->key_err). */
static int apply_reply(struct agent *a, const struct when *w, struct entry *e,
		       const char *key, const redisReply *r)
{
	struct rl_field_ctx fc = {
		.mac = a->mac, .key = key, .host = a->host, .width = a->width,
		.off = w->off, .real = w->real, .cur = w->cur, .nbuckets = a->nbuckets,
	};
	struct rl_remote rem = { 0 };
	bool any = false;

	if (r->type != REDIS_REPLY_ARRAY || r->elements % 2) {
		snprintf(a->key_err, sizeof(a->key_err), "a reply that is not a hash's");
		return 1;
	}
	e->nstale = 0;
	for (size_t k = 0; k + 1 < r->elements; k += 2) {
		const redisReply *f = r->element[k], *v = r->element[k + 1];
		enum rl_field_verdict verdict = RL_FIELD_FORMAT;
		struct rl_field got;

		if (f->type == REDIS_REPLY_STRING && v->type == REDIS_REPLY_STRING)
			verdict = rl_sync_field_judge(&fc, f->str, f->len, v->str, v->len, &got);
		switch (verdict) {
		case RL_FIELD_COUNTED:
			rl_remote_put(&rem, got.lb, got.pkts, got.bytes);
			any = true;
			break;
		case RL_FIELD_OWN:
			/* ours from before the window: a previous run's */
			if (got.fleet_bucket < w->first_fleet && e->nstale < RL_MAX_BUCKETS)
				e->stale[e->nstale++] = got.fleet_bucket;
			break;
		case RL_FIELD_OLD:
			break;
		default:
			a->st.rejected[verdict - RL_FIELD_FORMAT]++;
		}
	}
	if (any) {
		__u64 h = hash_remote(&rem);

		if (e->has_remote && e->remote_hash == h)
			return 0;	/* the same as last time: no update */
		if (bpf_map_update_elem(a->ifc.m.remote, &e->key, &rem, BPF_ANY))
			return 0;	/* full: this source stays local */
		e->has_remote = true;
		e->remote_hash = h;
	} else if (e->has_remote) {
		bpf_map_delete_elem(a->ifc.m.remote, &e->key);
		e->has_remote = false;
	}
	return 0;
}

/* A source whose key is not read this time: it stays local. */
static void key_skipped(struct agent *a, struct entry *e)
{
	if (e->has_remote) {
		bpf_map_delete_elem(a->ifc.m.remote, &e->key);
		e->has_remote = false;
	}
}

/* A source whose key failed (another type, a bad reply): it stays local
 * (its share in `remote` goes), counted; the log says so once an outage
 * of such errors. */
static void key_failed(struct agent *a, struct entry *e, const char *key)
{
	char k[KEY_LEN * 4];

	key_skipped(a, e);
	if (!a->key_errors_logged) {
		rl_escape(key, strlen(key), k, sizeof(k));
		fprintf(stderr, "xdp-ratelimit: sync: key %s: %s: this source counts locally only\n",
			k, a->key_err);
		a->key_errors_logged = true;
	}
	a->st.key_errors++;
}

/* What was pushed for `e` is now in Redis: remember it, so that only
 * changes are sent next time. */
static void mark_pushed(struct agent *a, const struct when *w, struct entry *e,
			bool cmd_expired)
{
	const struct rl_bucket *ages = e->ages;

	memset(&e->pushed, 0, sizeof(e->pushed));
	for (__u32 i = 0; i < a->nbuckets; i++) {
		struct rl_remote_slot *s = &e->pushed.slot[RL_SLOT(w->cur - i)];

		s->bucket = w->cur - i;
		s->pkts = ages[i].pkts;
		s->bytes = ages[i].bytes;
	}
	if (cmd_expired)
		e->expire_first = w->first_fleet;
	e->pushed_first = w->first_fleet;
}

static bool any_active(const struct agent *a)
{
	for (size_t i = 0; i < a->ncur; i++)
		if (a->cur[i].active)
			return true;
	return false;
}

/*
 * The replies of p's commands (c), from its node: 1 when they are the
 * exchange's (*last: the read's, to free), 2 when the key answered an
 * error (a->key_err: that source only), 0 when the source was redirected
 * (p retargeted: send it again), -1 on failure (a->err).
 */
static int source_replies(struct agent *a, struct pend *p, const struct cmd *c,
			  redisReply **last, bool *moved)
{
	struct rl_redirect to;
	bool redirected = false, failed = false;
	redisReply *r;

	*last = NULL;
	for (int k = 0; k < c->ncmds; k++) {
		if (p->ask) {	/* ASKING's OK */
			r = rl_redis_reply(&a->r, p->node);
			if (!r)
				goto fail;
			freeReplyObject(r);
		}
		r = rl_redis_reply(&a->r, p->node);
		if (!r)
			goto fail;
		if (r->type == REDIS_REPLY_ERROR && !redirected && !failed &&
		    rl_redirect_parse(r->str, a->r.map.node[p->node].host, &to)) {
			redirected = true;	/* the other replies say the same */
		} else if (r->type == REDIS_REPLY_ERROR && !redirected && !failed) {
			char text[RL_ERR_LEN];

			/* the server chose the text: escaped for the terminal */
			rl_escape(r->str, r->len, text, sizeof(text));
			snprintf(a->key_err, sizeof(a->key_err), "%s", text);
			failed = true;	/* read the others, then give up on it */
		}
		if (k == c->ncmds - 1 && c->read && !redirected && !failed)
			*last = r;
		else
			freeReplyObject(r);
	}
	if (failed)
		return 2;
	if (!redirected)
		return 1;
	if (!to.ask && a->r.cluster) {
		/* the slot moved for good: the cluster's own slot map says
		 * where (refreshed after this pass), not the reply */
		p->node = -1;
		*moved = true;
		return 0;
	}
	/* ASK: to a master of the slot map only (the password goes there) */
	p->node = rl_redis_node(&a->r, to.host, to.port);
	if (p->node < 0) {
		snprintf(a->key_err, sizeof(a->key_err), "%s", a->r.err);
		return 2;
	}
	p->ask = true;
	return 0;
fail:
	set_err(a, "%s", a->r.err);
	return -1;
}

/* Send p[0..n) (a batch), one pipeline per node, and apply the replies;
 * the sources redirected are added to a->redo (*nredo). */
static int send_batch(struct agent *a, const struct when *w, struct pend *p, int n,
		      const char *ttl, size_t *nredo, bool *moved)
{
	static struct cmd cmds[BATCH];
	bool used[RL_SLOT_NODES_MAX] = { false };

	for (int k = 0; k < n; k++) {
		if (queue_source(a, w, &p[k], &cmds[k], ttl))
			return -1;
		used[p[k].node] = true;
	}
	for (int i = 0; i < RL_SLOT_NODES_MAX; i++)
		a->st.round_trips += used[i];
	if (rl_redis_flush(&a->r)) {
		set_err(a, "%s", a->r.err);
		return -1;
	}
	for (int k = 0; k < n; k++) {
		redisReply *r;
		int ret = source_replies(a, &p[k], &cmds[k], &r, moved);

		if (ret < 0 && a->r.too_long) {
			p[k].e->unread_until = w->cur + a->nbuckets;
			fprintf(stderr, "xdp-ratelimit: sync: key %s: its reply is too long: not read for a window, this source counts locally only\n",
				cmds[k].key);
		}
		if (ret < 0)
			return -1;
		if (!ret) {
			a->redo[(*nredo)++] = p[k];
			continue;
		}
		if (ret == 1 && !cmds[k].read) {
			key_skipped(a, p[k].e);
			ret = 0;
		} else if (ret == 1) {
			ret = apply_reply(a, w, p[k].e, cmds[k].key, r);
			freeReplyObject(r);
		}
		if (ret) {
			key_failed(a, p[k].e, cmds[k].key);
			continue;	/* not pushed: sent again next time */
		}
		mark_pushed(a, w, p[k].e, cmds[k].expired);
		a->st.sources++;
	}
	return 0;
}

/* Room for every active source in a->todo and a->redo. */
static int pend_reserve(struct agent *a)
{
	struct pend *t, *r;

	if (a->alloc_pend >= a->ncur)
		return 0;
	t = realloc(a->todo, a->ncur * sizeof(*t));
	if (t)
		a->todo = t;
	r = t ? realloc(a->redo, a->ncur * sizeof(*r)) : NULL;
	if (!r) {
		set_err(a, "out of memory");
		return -1;
	}
	a->redo = r;
	a->alloc_pend = a->ncur;
	return 0;
}

/* Step 2 and 3: every active source, BATCH per round trip (to each node);
 * the sources a cluster redirected, again, at most PASSES times. */
static int exchange(struct agent *a, const struct when *w)
{
	size_t ntodo = 0, nredo;
	char ttl[24];

	snprintf(ttl, sizeof(ttl), "%llu", (unsigned long long)a->ttl_ms);
	a->st.sources = 0;
	if (!any_active(a)) {
		/* nothing to exchange: still know whether Redis is there */
		a->st.round_trips += a->r.map.nnodes;
		if (!rl_redis_ping(&a->r))
			return 0;
		set_err(a, "%s", a->r.err);
		return -1;
	}
	if (pend_reserve(a))
		return -1;
	memset(a->rule_state, RULE_UNREAD, RL_MAX_RULES);
	for (size_t i = 0; i < a->ncur; i++)
		if (a->cur[i].active && !window_key(a, &a->cur[i].key, NULL, 0))
			a->todo[ntodo++] = (struct pend){ .e = &a->cur[i], .node = -1 };
	for (int pass = 0; ntodo; pass++) {
		bool moved = false;
		struct pend *swap;

		/* a slot between two masters for longer (they disagree for
		 * a moment): its sources stay local until the next interval,
		 * which sends them again (not marked pushed) */
		if (pass == PASSES)
			break;
		nredo = 0;
		for (size_t i = 0; i < ntodo; i += BATCH) {
			int n = ntodo - i < BATCH ? (int)(ntodo - i) : BATCH;

			if (send_batch(a, w, a->todo + i, n, ttl, &nredo, &moved))
				return -1;
		}
		if (moved) {
			if (rl_redis_refresh(&a->r)) {
				set_err(a, "%s", a->r.err);
				return -1;
			}
			/* the new map numbers its nodes anew: route again
			 * (a slot still moving answers ASK again) */
			for (size_t i = 0; i < nredo; i++)
				a->redo[i] = (struct pend){ .e = a->redo[i].e, .node = -1 };
		}
		swap = a->todo;
		a->todo = a->redo;
		a->redo = swap;
		ntodo = nredo;
	}
	return 0;
}

/* Step 3's other half: sources no longer tracked or active here keep no
 * remote share (it would only age out). */
static void sweep(struct agent *a)
{
	for (size_t i = 0; i < a->nprev; i++) {
		struct entry *p = &a->prev[i], *c;

		if (!p->has_remote)
			continue;
		c = a->ncur ? bsearch(&p->key, a->cur, a->ncur, sizeof(*c), key_cmp) : NULL;
		if (c && c->active)
			continue;
		bpf_map_delete_elem(a->ifc.m.remote, &p->key);
		if (c)
			c->has_remote = false;
	}
}

/* ---- the loop ----------------------------------------------------------- */

/* Still attached, on the maps we hold? 1; 0 when it was detached; -1
 * when it runs on other maps now (a reload onto new maps, or a detach and
 * attach). A reload in place keeps the maps. */
static int still_attached(struct agent *a)
{
	__u32 id;

	if (rl_link_ifindex(a->ifc.name, NULL) <= 0)
		return 0;
	id = rl_iface_config_id(a->ifc.name);
	return !id ? 0 : id == a->config_id ? 1 : -1;
}

/* The exchange failed (a->err says why): local counts alone until the
 * next one works; `drop`: Redis is the cause, reconnect. */
static void degrade(struct agent *a, __u64 real, bool drop)
{
	if (stop)
		return;	/* the exchange was cut short to stop */
	a->outage |= drop;
	if (a->st.health != RL_SYNC_DEGRADED) {
		a->st.degraded_ns = real;
		fprintf(stderr, "xdp-ratelimit: sync: %s: degraded, enforcing local counts alone; reconnecting\n",
			a->err);
	}
	a->st.health = RL_SYNC_DEGRADED;
	snprintf(a->st.error, sizeof(a->st.error), "%.*s", (int)sizeof(a->st.error) - 1, a->err);
	a->st.failures++;
	if (drop)
		redis_drop(a);
}

/* A new connection: Redis may have lost what we pushed (a restart without
 * persistence), so the next exchange pushes every bucket again. */
static void forget_pushed(struct agent *a)
{
	for (size_t i = 0; i < a->ncur; i++) {
		memset(&a->cur[i].pushed, 0, sizeof(a->cur[i].pushed));
		a->cur[i].expire_first = 0;
	}
}

static void interval(struct agent *a)
{
	__u64 t0 = clock_ns(CLOCK_MONOTONIC), real = clock_ns(CLOCK_REALTIME);
	struct when w = { .now = clock_ns(CLOCK_MONOTONIC), .real = real };
	__u64 key_errors = a->st.key_errors;
	struct entry *swap;
	size_t sw;
	int ret;

	/* the two clocks read back to back: off is good to a few us */
	w.off = real - w.now;
	/* what Redis may take of this interval, connecting included: a
	 * window (what it exchanges would have aged out by then), 1 s at
	 * least */
	a->r.deadline_ms = (t0 + (a->window > EXCHANGE_MIN_NS ? a->window : EXCHANGE_MIN_NS)) /
			   RL_NSEC_PER_MSEC;
	w.cur = w.now / a->width;
	{
		__u64 start;

		w.first_fleet = rl_fleet_bucket(w.cur - (a->nbuckets - 1), a->width,
						w.off, &start);
	}
	ret = read_sources(a, w.now);
	if (ret) {
		set_err(a, "cannot read the sources map: %s",
			 strerror(-ret));
		degrade(a, real, false);
		goto out;
	}
	if (!a->r.open && t0 >= a->next_connect) {
		if (redis_connect(a)) {
			a->next_connect = t0 + a->backoff;
			a->backoff = a->backoff * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : a->backoff * 2;
			degrade(a, real, true);
		} else {
			forget_pushed(a);
		}
	}
	if (a->r.open) {
		if (exchange(a, &w)) {
			a->next_connect = t0 + a->backoff;
			a->backoff = a->backoff * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : a->backoff * 2;
			degrade(a, real, true);
		} else if (!a->st.sources && a->st.key_errors > key_errors) {
			/* every key failed (Redis out of memory, say): no
			 * exchange in fact, though the connection works */
			set_err(a, "every key failed: %s", a->key_err);
			degrade(a, real, false);
		} else {
			/* once per outage, when exchanges work again (a
			 * connection that fails its first exchange is none) */
			if (a->outage)
				fprintf(stderr, "xdp-ratelimit: sync: reconnected to Redis\n");
			a->outage = false;
			a->backoff = BACKOFF_MIN_NS;
			a->st.health = RL_SYNC_OK;
			a->st.degraded_ns = 0;
			a->st.error[0] = '\0';
			a->st.last_ok_ns = clock_ns(CLOCK_REALTIME);
			a->st.exchanges++;
		}
	}
	if (a->st.key_errors == key_errors)
		a->key_errors_logged = false;	/* the next one is news */
	sweep(a);
	/* this interval's view is the next one's previous */
	swap = a->prev;
	a->prev = a->cur;
	a->cur = swap;
	a->nprev = a->ncur;
	a->ncur = 0;
	sw = a->alloc_prev;
	a->alloc_prev = a->alloc_cur;
	a->alloc_cur = sw;
out:
	a->st.busy_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	rl_sync_state_write(&a->ifc.m, &a->st);
}

/* Under the lock, as briefly as a map open: the program starts reading
 * `remote` (config is read-modify-written by quota set too), and the
 * agent's state is claimed. An exit status. */
static int join(struct agent *a)
{
	char err[RL_ERR_LEN];
	__u32 other = 0;
	int lock = rl_lock(err, sizeof(err)), ret = RL_EXIT_OK, claim;
	struct rl_config cfg;

	if (lock < 0)
		return rl_fail("sync: %s", err);
	if (still_attached(a) <= 0) {
		ret = rl_fail("sync: %s was detached meanwhile", a->ifc.name);
		goto out;
	}
	claim = rl_sync_state_claim(&a->ifc.m, &a->st, &other);
	if (claim == -EEXIST) {
		ret = rl_fail("sync: %s already has a sync agent (pid %u): stop it first",
			      a->ifc.name, other);
		goto out;
	}
	if (claim < 0) {
		ret = rl_fail("sync: cannot write the agent's state for %s: %s",
			      a->ifc.name, strerror(-claim));
		goto out;
	}
	a->claimed = true;
	ret = rl_config_read(&a->ifc.m, &cfg);
	if (!ret && !cfg.remote_used) {
		cfg.remote_used = 1;
		ret = rl_config_write(&a->ifc.m, &cfg);
	}
	if (ret) {
		rl_sync_state_release(&a->ifc.m);
		a->claimed = false;
		ret = rl_fail("sync: cannot update the config of %s: %s", a->ifc.name,
			      strerror(-ret));
	}
out:
	rl_unlock(lock);
	return ret;
}

/* Open the interface's maps and take their settings: an exit status. */
static int open_iface(struct agent *a)
{
	char err[RL_ERR_LEN];

	if (rl_iface_open(a->o->iface, &a->ifc, err, sizeof(err)))
		return rl_fail("sync: %s", err);
	a->config_id = rl_map_id(a->ifc.m.config);
	a->width = a->ifc.cfg.set.bucket_ns;
	a->window = a->ifc.cfg.set.window_ns;
	a->nbuckets = a->ifc.cfg.set.nbuckets;
	a->interval = a->o->interval_ns ? a->o->interval_ns : a->width;
	if (rl_sync_interval_check(a->interval, a->ifc.cfg.set.window_ns, err, sizeof(err)))
		return rl_usage_err("sync: %s", err);
	/* a key lives a window past the end of the bucket it was last
	 * PEXPIREd in (once per bucket), and a bucket more for hosts out of
	 * phase */
	a->ttl_ms = (a->ifc.cfg.set.window_ns + 3 * a->width) / RL_NSEC_PER_MSEC + 1;
	return a->config_id ? RL_EXIT_OK :
	       rl_fail("sync: cannot read the config map of %s", a->ifc.name);
}

/* The interface runs on new maps: hold those instead, with their
 * settings, and start every source afresh there (a new window is laid
 * out anew; Redis keys are named by fleet bucket, so what we pushed
 * stays valid for the other hosts). An exit status. */
static int follow_new_maps(struct agent *a)
{
	int ret;

	if (a->claimed)
		rl_sync_state_release(&a->ifc.m);
	a->claimed = false;
	rl_iface_close(&a->ifc);
	a->nprev = a->ncur = 0;
	memset(a->rule_state, 0, RL_MAX_RULES * sizeof(*a->rule_state));
	ret = open_iface(a);
	a->st.interval_ns = a->interval;
	if (!ret)
		ret = join(a);
	if (!ret)
		printf("%s runs on new maps (a reload or an attach):\n"
		       "  syncing them every %llu ms\n",
		       a->ifc.name, (unsigned long long)(a->interval / RL_NSEC_PER_MSEC));
	fflush(stdout);
	return ret;
}

static void sleep_until(__u64 t)
{
	/* in slices: a signal between the loop's look at `stop` and the
	 * sleep would otherwise wait out a whole interval (up to a window) */
	while (!stop) {
		__u64 now = clock_ns(CLOCK_MONOTONIC), until;
		struct timespec ts;

		if (now >= t)
			return;
		until = t - now > SLEEP_SLICE_NS ? now + SLEEP_SLICE_NS : t;
		ts.tv_sec = (time_t)(until / RL_NSEC_PER_SEC);
		ts.tv_nsec = (long)(until % RL_NSEC_PER_SEC);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

int rl_sync_run(const struct rl_sync_opts *o)
{
	static struct agent a;
	struct sigaction sa = { .sa_handler = on_signal };
	char hostname[RL_SYNC_HOST_MAX] = "";
	int ret = RL_EXIT_FAIL;
	__u64 next;

	a.o = o;
	a.claimed = false;
	a.backoff = BACKOFF_MIN_NS;
	rl_maps_init(&a.ifc.m);
	ret = open_iface(&a);
	if (ret)
		goto out;
	ret = RL_EXIT_FAIL;
	a.ncpus = rl_ncpus();
	a.rule_text = calloc(RL_MAX_RULES, sizeof(*a.rule_text));
	a.rule_state = calloc(RL_MAX_RULES, sizeof(*a.rule_state));
	if (a.ncpus <= 0 || !a.rule_text || !a.rule_state) {
		rl_err("sync: cannot set up: %s", strerror(errno ? errno : ENOMEM));
		goto out;
	}
	if (rl_fleet_mac_new(o->fleet_key, o->fleet_key_len, &a.mac, a.err, sizeof(a.err))) {
		rl_err("sync: %s: install OpenSSL's libcrypto 3", a.err);
		goto out;
	}
	/* SIGTERM ends any wait (sync_redis.h), from the first connect on */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a dropped connection is an error, not death */
	gethostname(hostname, sizeof(hostname) - 1);
	snprintf(a.host, sizeof(a.host), "%s/%s", hostname, a.ifc.name);
	/* before anything changes here: a bad URL, password or server
	 * fails now and changes nothing */
	if (redis_connect(&a)) {
		if (stop) {
			ret = RL_EXIT_OK;
			goto out;
		}
		rl_err("sync: %s: check the URL, that Redis runs there, and the user and password (--redis-user, REDISCLI_AUTH or --password-file)",
		       a.err);
		goto out;
	}
	a.st.pid = (__u32)getpid();
	a.st.interval_ns = a.interval;
	snprintf(a.st.fleet, sizeof(a.st.fleet), "%s", o->fleet);
	ret = join(&a);
	if (ret)
		goto out;
	ret = RL_EXIT_FAIL;
	/* a line each for the fleet (64 characters) and the host name (64):
	 * 80 columns whatever the names; the host's Redis fields add the
	 * interface of the first line (HOSTNAME/IFACE) */
	printf("syncing %s every %llu ms\n  in fleet %s\n  as host %s", a.ifc.name,
	       (unsigned long long)(a.interval / RL_NSEC_PER_MSEC), o->fleet, hostname);
	if (a.r.cluster)
		printf("\n  through a Redis Cluster of %d masters", a.r.map.nnodes);
	printf("\n");
	fflush(stdout);
	next = clock_ns(CLOCK_MONOTONIC);
	while (!stop) {
		__u64 now;

		interval(&a);
		switch (still_attached(&a)) {
		case 0:
			printf("%s was detached: sync stops\n", a.ifc.name);
			ret = RL_EXIT_OK;
			goto out;
		case -1:
			ret = follow_new_maps(&a);
			if (ret)
				goto out;
			next = clock_ns(CLOCK_MONOTONIC);
			continue;
		}
		next += a.interval;
		now = clock_ns(CLOCK_MONOTONIC);
		if ((__s64)(now - next) > 0)	/* late: no burst to catch up */
			next = now;
		else
			sleep_until(next);
	}
	ret = RL_EXIT_OK;
out:
	if (a.claimed)
		rl_sync_state_release(&a.ifc.m);
	redis_drop(&a);
	rl_iface_close(&a.ifc);
	free(a.rule_text);
	free(a.rule_state);
	free(a.prev);
	free(a.cur);
	free(a.todo);
	free(a.redo);
	rl_fleet_mac_free(a.mac);
	return ret;
}
