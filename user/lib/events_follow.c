// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Which of the program's reports `events` prints, and the sweep for
 * silent sources (event_follow.h). */
#define _GNU_SOURCE	/* twalk_r, tdestroy */
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include "lib/events_follow.h"

/* A ban is looked at again at its end, and at least this often: `ban
 * del` lifts bans without the program reporting it. */
#define BAN_RECHECK_NS		RL_NSEC_PER_SEC
#define SWEEP_MIN_NS		(100 * RL_NSEC_PER_MSEC)
#define SWEEP_MAX_NS		RL_NSEC_PER_SEC

/* A source printed limited or banned, and not yet released or unbanned. */
struct follow_entry {
	struct rl_event ev;	/* the report printed: key, rule, ban end */
	__u64 due;		/* when a sweep looks at it again */
};

static int entry_cmp(const void *a, const void *b)
{
	const struct follow_entry *x = a, *y = b;

	return memcmp(&x->ev.key, &y->ev.key, sizeof(x->ev.key));
}

static struct follow_entry *find(void *root, const struct rl_key *key)
{
	struct follow_entry probe;
	void *node;

	probe.ev.key = *key;
	node = tfind(&probe, &root, entry_cmp);
	return node ? *(struct follow_entry **)node : NULL;
}

static int add(void **root, size_t *n, const struct rl_event *e, __u64 due)
{
	struct follow_entry *en = malloc(sizeof(*en));

	if (!en)
		return -ENOMEM;
	en->ev = *e;
	en->due = due;
	if (!tsearch(en, root, entry_cmp)) {
		free(en);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

static void drop(void **root, size_t *n, struct follow_entry *en)
{
	tdelete(en, root, entry_cmp);
	free(en);
	(*n)--;
}

/* Print what `en` first reported as `type` at `time`. */
static void print_as(struct rl_follow *f, const struct follow_entry *en,
		     __u32 type, __u64 time)
{
	struct rl_event e = en->ev;

	e.type = type;
	e.time_ns = time;
	f->ops->print(f->ctx, &e);
}

static __u64 ban_due(__u64 until, __u64 now)
{
	return (__s64)(until - now) < (__s64)BAN_RECHECK_NS ? until : now + BAN_RECHECK_NS;
}

void rl_follow_init(struct rl_follow *f, const struct rl_follow_ops *ops,
		    void *ctx, __u64 window_ns)
{
	memset(f, 0, sizeof(*f));
	f->ops = ops;
	f->ctx = ctx;
	f->window_ns = window_ns;
}

void rl_follow_free(struct rl_follow *f)
{
	tdestroy(f->limited, free);
	tdestroy(f->banned, free);
	f->limited = f->banned = NULL;
	f->nlimited = f->nbanned = 0;
}

static int on_limited(struct rl_follow *f, const struct rl_event *e)
{
	int err;

	if (find(f->limited, &e->key))
		return 0;	/* another CPU reported it first */
	err = add(&f->limited, &f->nlimited, e, e->time_ns + f->window_ns);
	if (!err)
		f->ops->print(f->ctx, e);
	return err;
}

static void on_released(struct rl_follow *f, const struct rl_event *e, __u64 now)
{
	struct follow_entry *en = find(f->limited, &e->key);
	__u64 last;
	int r;

	if (!en)
		return;		/* printed released already, or never limited */
	if (find(f->banned, &e->key)) {
		en->due = now;	/* lifted by ban del: after its unbanned */
		return;
	}
	r = f->ops->limited(f->ctx, &e->key, now, &last);
	if (r) {	/* another CPU still limits it (or ask again later) */
		en->due = r > 0 ? last + f->window_ns : now + f->window_ns;
		return;
	}
	f->ops->print(f->ctx, e);
	drop(&f->limited, &f->nlimited, en);
}

static int on_banned(struct rl_follow *f, const struct rl_event *e, __u64 now)
{
	struct follow_entry *en = find(f->banned, &e->key);

	if (!en) {
		int err = add(&f->banned, &f->nbanned, e, ban_due(e->until_ns, now));

		if (!err)
			f->ops->print(f->ctx, e);
		return err;
	}
	if ((__s64)(en->ev.until_ns - e->time_ns) > 0) {
		/* the same ban, stored by two CPUs at once: the later holds */
		if ((__s64)(e->until_ns - en->ev.until_ns) > 0)
			en->ev.until_ns = e->until_ns;
		return 0;
	}
	/* a new ban after one whose end no report or sweep showed yet */
	print_as(f, en, RL_EVENT_UNBANNED, en->ev.until_ns);
	en->ev = *e;
	en->due = ban_due(e->until_ns, now);
	f->ops->print(f->ctx, e);
	return 0;
}

static void on_unbanned(struct rl_follow *f, const struct rl_event *e)
{
	struct follow_entry *en = find(f->banned, &e->key);

	/* unknown, or the end of an older ban than the one printed */
	if (!en || (__s64)(e->until_ns - en->ev.until_ns) < 0)
		return;
	f->ops->print(f->ctx, e);
	drop(&f->banned, &f->nbanned, en);
}

int rl_follow_event(struct rl_follow *f, const struct rl_event *e, __u64 now)
{
	switch (e->type) {
	case RL_EVENT_LIMITED:
		return on_limited(f, e);
	case RL_EVENT_RELEASED:
		on_released(f, e, now);
		return 0;
	case RL_EVENT_BANNED:
		return on_banned(f, e, now);
	case RL_EVENT_UNBANNED:
		on_unbanned(f, e);
		return 0;
	case RL_EVENT_VERIFIED:	/* the egress hook's, once per source */
		f->ops->print(f->ctx, e);
		return 0;
	}
	return 0;	/* a type this version does not know */
}

/* The entries of a tree due at `now`, collected before any is deleted. */
struct due_list {
	__u64 now;
	struct follow_entry **v;
	size_t n, cap;
};

static void collect_due(const void *node, VISIT which, void *closure)
{
	struct follow_entry *en = *(struct follow_entry *const *)node;
	struct due_list *d = closure;

	if (which != postorder && which != leaf)
		return;		/* each node once */
	if ((__s64)(d->now - en->due) < 0)
		return;
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 64;
		struct follow_entry **v = realloc(d->v, cap * sizeof(*v));

		if (!v)
			return;	/* the rest waits for the next sweep */
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = en;
}

void rl_follow_sweep(struct rl_follow *f, __u64 now)
{
	struct due_list d = { .now = now };
	__u64 t;
	int r;

	/* bans first: a source is released after its unbanned, not while
	 * banned (silent, it drops nothing, but it is not let through) */
	twalk_r(f->banned, collect_due, &d);
	for (size_t i = 0; i < d.n; i++) {
		struct follow_entry *en = d.v[i];

		r = f->ops->banned(f->ctx, &en->ev.key, now, &t);
		if (r) {
			if (r > 0)
				en->ev.until_ns = t;
			en->due = ban_due(r > 0 ? t : now + BAN_RECHECK_NS, now);
			continue;
		}
		/* over: when it ended; lifted early (ban del): now */
		print_as(f, en, RL_EVENT_UNBANNED,
			 (__s64)(en->ev.until_ns - now) <= 0 ? en->ev.until_ns : now);
		drop(&f->banned, &f->nbanned, en);
	}
	d.n = 0;
	twalk_r(f->limited, collect_due, &d);
	for (size_t i = 0; i < d.n; i++) {
		struct follow_entry *en = d.v[i];
		const struct follow_entry *ban = find(f->banned, &en->ev.key);

		if (ban) {
			en->due = ban->due;
			continue;
		}
		r = f->ops->limited(f->ctx, &en->ev.key, now, &t);
		if (r) {
			en->due = r > 0 ? t + f->window_ns : now + f->window_ns;
			continue;
		}
		print_as(f, en, RL_EVENT_RELEASED, now);
		drop(&f->limited, &f->nlimited, en);
	}
	free(d.v);
}

__u64 rl_follow_interval(__u64 bucket_ns)
{
	if (bucket_ns < SWEEP_MIN_NS)
		return SWEEP_MIN_NS;
	return bucket_ns > SWEEP_MAX_NS ? SWEEP_MAX_NS : bucket_ns;
}
