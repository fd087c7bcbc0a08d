// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Frames of stats (stats.h): drawn in place on a terminal, one after the
 * other elsewhere; --watch repeats them every interval and turns counter
 * deltas into per-second rates.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/stats.h"

#define ANSI_HOME		"\033[H"
#define ANSI_CLEAR		"\033[2J"
#define ANSI_CLEAR_EOL		"\033[K"
#define ANSI_CLEAR_BELOW	"\033[J"

/* The previous --watch reading of an interface, sources sorted by key. */
struct prev_iface {
	char name[IF_NAMESIZE];
	__u64 now;
	struct rl_counters tot;
	struct rl_source_row *rows;
	size_t n;
};

struct prev {
	struct prev_iface ifs[RL_MAX_IFACES];
	size_t n;
};

static volatile sig_atomic_t stop;

/* ---- rates ---------------------------------------------------------- */

/* rows by address; the first member of a row is its rl_source_sum */
static int key_cmp(const void *a, const void *b)
{
	const struct rl_source_sum *x = a, *y = b;

	return memcmp(x->key.addr, y->key.addr, sizeof(x->key.addr));
}

/* A counter that went backwards belongs to a source evicted and created
 * again (or an interface attached again): count it from zero. */
static double per_sec(__u64 cur, __u64 prev, __u64 ns)
{
	return (double)(cur >= prev ? cur - prev : cur) * RL_NSEC_PER_SEC / ns;
}

static void rates_of(struct rl_rates *r, __u64 ns, __u64 pp, __u64 pb,
		     __u64 dp, __u64 db, __u64 opp, __u64 opb, __u64 odp,
		     __u64 odb)
{
	r->valid = true;
	r->passed_pps = per_sec(pp, opp, ns);
	r->passed_bps = per_sec(pb, opb, ns);
	r->dropped_pps = per_sec(dp, odp, ns);
	r->dropped_bps = per_sec(db, odb, ns);
}

static void rates_compute(struct rl_stats_snapshot *s, const struct prev *p)
{
	for (size_t i = 0; i < s->n; i++) {
		struct rl_stats_iface *v = &s->ifs[i].view;
		const struct prev_iface *o = NULL;
		__u64 ns;

		for (size_t j = 0; j < p->n && !o; j++)
			if (!strcmp(p->ifs[j].name, v->name))
				o = &p->ifs[j];
		if (!o || v->now <= o->now)
			continue;
		ns = v->now - o->now;
		v->rates_ns = ns;
		rates_of(&v->rates, ns, v->tot.passed_pkts, v->tot.passed_bytes,
			 v->tot.dropped_pkts, v->tot.dropped_bytes,
			 o->tot.passed_pkts, o->tot.passed_bytes,
			 o->tot.dropped_pkts, o->tot.dropped_bytes);
		for (size_t k = 0; k < v->nsrc; k++) {
			const struct rl_source_sum *c = &v->src[k].sum, *was;
			const struct rl_source_row *row;

			row = bsearch(c, o->rows, o->n, sizeof(*o->rows), key_cmp);
			if (!row)
				continue;
			was = &row->sum;
			rates_of(&v->src[k].rates, ns, c->passed_pkts,
				 c->passed_bytes, c->dropped_pkts,
				 c->dropped_bytes, was->passed_pkts,
				 was->passed_bytes, was->dropped_pkts,
				 was->dropped_bytes);
		}
	}
}

static void prev_free(struct prev *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->ifs[i].rows);
	p->n = 0;
}

/* The snapshot becomes the previous reading; its kept sources move. */
static void prev_take(struct prev *p, struct rl_stats_snapshot *s)
{
	prev_free(p);
	for (size_t i = 0; i < s->n; i++) {
		struct rl_stats_read *r = &s->ifs[i];
		struct prev_iface *o = &p->ifs[p->n++];

		snprintf(o->name, sizeof(o->name), "%s", r->view.name);
		o->now = r->view.now;
		o->tot = r->view.tot;
		o->rows = r->top.rows;
		o->n = r->top.n;
		if (o->n)	/* rows is NULL without sources */
			qsort(o->rows, o->n, sizeof(*o->rows), key_cmp);
		r->top.rows = NULL;
		r->top.n = 0;
	}
}

/* ---- output --------------------------------------------------------- */

static int render(const struct rl_stats_opts *o, struct rl_stats_snapshot *s,
		  FILE *f)
{
	struct rl_stats_iface views[RL_MAX_IFACES];
	struct rl_stats_view v = {
		.ifs = views, .n = s->n, .watch = o->watch,
		.attached = s->attached, .nattached = s->nattached,
		.interval_ns = o->interval_ns, .wall = time(NULL),
	};
	int ret;

	for (size_t i = 0; i < s->n; i++)
		views[i] = s->ifs[i].view;
	if (o->json || o->prometheus) {
		ret = o->json ? rl_stats_print_json(f, &v) :
		      rl_stats_print_prometheus(f, &v);
		if (ret)
			return ret;
	} else {
		rl_stats_print_table(f, &v);
	}
	return ferror(f) ? -EIO : 0;
}

/* A terminal frame: drawn from the top left, each line cleared to its
 * end and the rest of the screen below, so nothing flickers or lingers. */
static int draw_tty(const struct rl_stats_opts *o, struct rl_stats_snapshot *s,
		    bool first)
{
	char *buf = NULL, *line, *nl;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int ret;

	if (!mem)
		return -errno;
	ret = render(o, s, mem);
	if (fclose(mem) && !ret)
		ret = -EIO;
	if (ret)
		goto out;
	fputs(first ? ANSI_HOME ANSI_CLEAR : ANSI_HOME, stdout);
	for (line = buf; (nl = strchr(line, '\n')); line = nl + 1)
		printf("%.*s" ANSI_CLEAR_EOL "\n", (int)(nl - line), line);
	fputs(line, stdout);
	fputs(ANSI_CLEAR_BELOW, stdout);
out:
	free(buf);
	return ret;
}

int rl_stats_output(const struct rl_stats_opts *o, struct rl_stats_snapshot *s,
		    bool tty, bool first)
{
	int ret;

	if (tty) {
		ret = draw_tty(o, s, first);
	} else {
		if (!first && !o->json)
			putchar('\n');
		ret = render(o, s, stdout);
	}
	if (!ret && fflush(stdout))
		ret = -errno;
	if (ret)
		rl_err("stats: cannot write the output: %s", strerror(-ret));
	return ret ? RL_EXIT_FAIL : RL_EXIT_OK;
}

/* ---- --watch -------------------------------------------------------- */

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Sleep until `deadline` (CLOCK_MONOTONIC ns) or a signal to stop. */
static void wait_until(__u64 deadline)
{
	struct timespec ts = {
		.tv_sec = deadline / RL_NSEC_PER_SEC,
		.tv_nsec = deadline % RL_NSEC_PER_SEC,
	};

	while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
					NULL) == EINTR)
		;
}

int rl_stats_watch(const struct rl_stats_opts *o, struct rl_stats_snapshot *s)
{
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	bool tty = !o->json && isatty(STDOUT_FILENO);
	struct prev *p = calloc(1, sizeof(*p));
	__u64 next = rl_now_ns(), now;
	int status = RL_EXIT_OK;

	if (!p)
		return rl_fail("stats: out of memory");
	/* no SA_RESTART: the signal must cut the sleep short */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	for (bool first = true; !stop; first = false) {
		/* an interface that goes away or breaks ends the watch */
		status = rl_stats_snapshot_read(o, s);
		if (status)
			break;
		rates_compute(s, p);
		status = rl_stats_output(o, s, tty, first);
		if (status)
			break;
		prev_take(p, s);
		rl_stats_snapshot_free(s);
		next += o->interval_ns;
		now = rl_now_ns();
		if (next < now)		/* reading took longer: don't catch up */
			next = now;
		wait_until(next);
	}
	rl_stats_snapshot_free(s);
	prev_free(p);
	free(p);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return status;
}
