// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit stats [--iface IFACE] [--json|--prometheus] [--top N]
 * [--watch [SECONDS]] [--sort ORDER] [--wide]:
 * the command's options; reading, drawing and --watch are stats.h's.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "lib/iface.h"
#include "cli/cli.h"
#include "cli/stats.h"
#include "lib/values.h"

#define DEFAULT_TOP		10
#define DEFAULT_INTERVAL_NS	RL_NSEC_PER_SEC
#define MIN_INTERVAL_NS		(100 * RL_NSEC_PER_MSEC)
#define MAX_INTERVAL_NS		(3600 * RL_NSEC_PER_SEC)

enum { OPT_WATCH = RL_OPT_FIRST };

/* --sort's words, as the help and its error list them; "unset" until one
 * is given. */
#define SORT_UNSET	(-1)
static const struct rl_opt_word sort_words[] = {
	{ "dropped-rate", RL_SORT_DROPPED_RATE }, { "dropped", RL_SORT_DROPPED },
	{ "passed", RL_SORT_PASSED }, { "rate", RL_SORT_RATE }, { NULL, 0 },
};

/* --watch's SECONDS: "2" or a DURATION ("500ms", "1m"). */
static int parse_interval(const char *s, __u64 *ns)
{
	char err[RL_ERR_LEN];
	__u64 sec;

	if (s[0] >= '0' && s[0] <= '9' && strspn(s, "0123456789") == strlen(s)) {
		if (rl_parse_uint(s, "--watch", 0, MAX_INTERVAL_NS / RL_NSEC_PER_SEC,
				  &sec, err, sizeof(err)))
			goto bad;
		*ns = sec * RL_NSEC_PER_SEC;
	} else if (rl_parse_duration(s, ns, err, sizeof(err))) {
		goto bad;
	}
	if (*ns >= MIN_INTERVAL_NS && *ns <= MAX_INTERVAL_NS)
		return 0;
bad:
	return rl_usage_err("stats: bad --watch interval '%s': use whole seconds (e.g. 2) or a duration from 100ms to 1h",
			    s);
}

static void stats_defaults(void *cfg)
{
	struct rl_stats_opts *o = cfg;

	o->top = DEFAULT_TOP;
	o->interval_ns = DEFAULT_INTERVAL_NS;
	o->sort = (enum rl_stats_sort)SORT_UNSET;
}

/* --watch, whose SECONDS may be the next word. */
static int stats_opt(struct rl_parser *p, void *cfg, int id, const char *arg)
{
	struct rl_stats_opts *o = cfg;

	(void)id;	/* OPT_WATCH */
	o->watch = true;
	/* "--watch 2" as well as "--watch=2": stats takes no operands, so a
	 * following number is the interval */
	if (!arg && optind < p->argc && p->argv[optind][0] >= '0' &&
	    p->argv[optind][0] <= '9')
		arg = p->argv[optind++];
	return arg ? parse_interval(arg, &o->interval_ns) : 0;
}

static int stats_operands(struct rl_parser *p, void *cfg, int argc,
			  char **argv)
{
	struct rl_stats_opts *o = cfg;

	if (argc)
		return rl_usage_err("stats: unexpected '%s': see 'xdp-ratelimit stats --help'",
				    argv[0]);
	if (o->json && o->prometheus)
		return rl_usage_err("stats: give one of --json and --prometheus");
	if (o->prometheus && o->watch)
		return rl_usage_err("stats: --prometheus is one reading: leave out --watch (or scrape 'xdp-ratelimit exporter')");
	if ((int)o->sort == SORT_UNSET)
		o->sort = o->watch ? RL_SORT_DROPPED_RATE : RL_SORT_DROPPED;
	if (o->prometheus && rl_stats_sort_rates(o->sort))
		return rl_usage_err("stats: --prometheus counts since attach: sort it by dropped or passed (rates are Prometheus' job: rate())");
	(void)p;
	return 0;
}

static int stats_run(void *cfg)
{
	const struct rl_stats_opts *o = cfg;
	struct rl_stats_snapshot *s;
	int status;

	s = calloc(1, sizeof(*s));
	if (!s)
		return rl_fail("stats: out of memory");
	if (o->watch || rl_stats_sort_rates(o->sort)) {
		status = rl_stats_watch(o, s);
	} else {
		status = rl_stats_snapshot_read(o, NULL, s);
		for (size_t i = 0; i < s->n; i++) {
			const char *name = s->ifs[i].view.name;
			char why[RL_ERR_LEN];

			if (rl_iface_gone(name)) {
				rl_iface_gone_text(name, why, sizeof(why));
				rl_err("stats: %s", why);
			}
		}
		/* what could be read is shown even when another failed */
		if ((s->n || s->nattached || status == RL_EXIT_OK) &&
		    rl_stats_output(o, s, false, true))
			status = RL_EXIT_FAIL;
	}
	rl_stats_snapshot_free(s);
	free(s);
	return status;
}

/* The numbers the help below gives. */
_Static_assert(DEFAULT_TOP == 10, "stats --help states it");

#define T struct rl_stats_opts
const struct rl_cmd rl_cmd_stats = {
	.name = "stats",
	.summary = "show counters and the busiest sources",
	.doc =
		"Print the totals of attached interfaces and their busiest sources, sorted\n"
		"by dropped then passed packets (with --watch: by the current drop rate).\n"
		"The tables fit the terminal (at least 80 columns); --wide shows every\n"
		"column. Reads the pinned maps; changes nothing.\n",
	.opts = (const struct rl_opt[]){
		RL_OPT_IFACE(T, iface, "only IFACE (default: every attached interface)"),
		RL_OPT_JSON(T, json,
			    "print one JSON object on one line instead of tables;\n"
			    "with --watch, one object per line per interval, with\n"
			    "\"rates\" (null when there is no previous reading)"),
		{ .name = "prometheus", .kind = RL_OPT_SWITCH, RL_OPT_FIELD(T, prometheus),
		  .help = "print the Prometheus text format instead of tables\n"
		  "(what 'xdp-ratelimit exporter' serves)" },
		{ .name = "top", .arg = "N", .kind = RL_OPT_COUNT,
		  .max = RL_MAX_MAX_SOURCES, .note = "0 shows every source",
		  RL_OPT_FIELD(T, top), .help = "show the N busiest sources (default 10; 0: all of them)" },
		{ .id = OPT_WATCH, .name = "watch", .arg = "[SECONDS]",
		  .help = "redraw every SECONDS (default 1) until Ctrl-C, with\n"
		  "per-second rates of the last interval; SECONDS is a\n"
		  "whole number or a DURATION such as 500ms (100ms to 1h).\n"
		  "When stdout is not a terminal, frames follow one\n"
		  "another, separated by a blank line" },
		{ .name = "sort", .arg = "ORDER", .kind = RL_OPT_ENUM,
		  .words = sort_words, RL_OPT_FIELD(T, sort), .help =
		  "the busiest first by ORDER: dropped (then passed packets,\n"
		  "since attach; the default), passed, dropped-rate (packets\n"
		  "dropped per second now, then all; the default of --watch)\n"
		  "or rate (packets per second now). Without --watch a rate\n"
		  "order reads twice, one second apart, and shows the rates" },
		{ .name = "wide", .kind = RL_OPT_SWITCH, RL_OPT_FIELD(T, wide),
		  .help = "every column (bytes too), numbers exact; default: the\n"
		  "columns that fit the terminal, at least 80, counts from\n"
		  "100000 up as 123k, 1.23M, 12.3G" },
		{ 0 }
	},
	.notes =
		"Columns: DROP/s and PASS/s are packets per second over the last interval;\n"
		"DROPPED and PASSED count since attach; WINDOW is what the source passed in\n"
		"the current sliding window; RULE is the prefix of the rule that covers it\n"
		"(- when none does). IPv6 sources show as their tracked prefix. A scoped\n"
		"rule's window of a source shows as `- SCOPE under the source's row.\n"
		"A source refused on its first packet (a blocked prefix, a full aggregate\n"
		"budget) takes no table entry: it is shown with its drops and WINDOW -.\n"
		"\n"
		"Examples:\n"
		"  xdp-ratelimit stats\n"
		"  xdp-ratelimit stats --sort dropped-rate\n"
		"  xdp-ratelimit stats --iface eth0 --top 50 --wide\n"
		"  xdp-ratelimit stats --watch 2\n"
		"  xdp-ratelimit stats --json | jq '.interfaces[0].totals'\n"
		"  xdp-ratelimit stats --prometheus --top 20\n",
	.flags = RL_CMD_ROOT,
	.cfg_size = sizeof(struct rl_stats_opts),
	.defaults = stats_defaults,
	.opt = stats_opt,
	.operands = stats_operands,
	.run = stats_run,
};
#undef T

