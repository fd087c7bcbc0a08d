// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Frames of stats (stats.h): drawn in place on a terminal, one after the
 * other elsewhere; --watch repeats them every interval, with per-second
 * rates against the previous reading (stats_rank.c).
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
#include "cli/table.h"

#define ANSI_HOME		"\033[H"
#define ANSI_CLEAR		"\033[2J"
#define ANSI_CLEAR_EOL		"\033[K"
#define ANSI_CLEAR_BELOW	"\033[J"

static volatile sig_atomic_t stop;

/* ---- output --------------------------------------------------------- */

static int render(const struct rl_stats_opts *o, struct rl_stats_snapshot *s,
		  FILE *f)
{
	struct rl_stats_iface views[RL_MAX_IFACES];
	struct rl_stats_view v = {
		.ifs = views, .n = s->n, .watch = o->watch,
		.attached = s->attached, .nattached = s->nattached,
		.rates = o->watch || rl_stats_sort_rates(o->sort),
		.interval_ns = o->interval_ns, .wall = time(NULL),
		.wide = o->wide, .width = rl_view_width(o->wide),
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
	/* without --watch (a rate order): two readings, the second shown */
	bool once = !o->watch;
	bool tty = !once && !o->json && isatty(STDOUT_FILENO);
	struct rl_stats_prev *p = rl_stats_prev_new();
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
		status = rl_stats_snapshot_read(o, p, s);
		if (status)
			break;
		rl_stats_rates(p, s);
		if (!once || !first) {
			status = rl_stats_output(o, s, tty, first || once);
			if (status || once)
				break;
		}
		rl_stats_snapshot_free(s);
		next += o->interval_ns;
		now = rl_now_ns();
		if (next < now)		/* reading took longer: don't catch up */
			next = now;
		wait_until(next);
	}
	rl_stats_snapshot_free(s);
	rl_stats_prev_free(p);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return status;
}
