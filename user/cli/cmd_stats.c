// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit stats [--iface IFACE] [--json|--prometheus] [--top N]
 * [--watch [SECONDS]]:
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

enum { OPT_IFACE = RL_OPT_FIRST, OPT_JSON, OPT_PROMETHEUS, OPT_TOP,
       OPT_WATCH };

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
}

static int stats_opt(struct rl_parser *p, void *cfg, int id, const char *arg)
{
	struct rl_stats_opts *o = cfg;
	char err[RL_ERR_LEN];

	switch (id) {
	case OPT_IFACE:
		o->iface = arg;
		return rl_iface_arg("stats", arg);
	case OPT_JSON:
	case OPT_PROMETHEUS:
		if (o->json || o->prometheus)
			return rl_usage_err("stats: give one of --json and --prometheus");
		o->json = id == OPT_JSON;
		o->prometheus = id == OPT_PROMETHEUS;
		return 0;
	case OPT_TOP:
		if (rl_parse_uint(arg, "--top", 0, RL_MAX_MAX_SOURCES, &o->top,
				  err, sizeof(err)))
			return rl_usage_err("stats: %s (0 shows every source)", err);
		return 0;
	default:	/* OPT_WATCH */
		o->watch = true;
		/* "--watch 2" as well as "--watch=2": stats takes no operands,
		 * so a following number is the interval */
		if (!arg && optind < p->argc && p->argv[optind][0] >= '0' &&
		    p->argv[optind][0] <= '9')
			arg = p->argv[optind++];
		return arg ? parse_interval(arg, &o->interval_ns) : 0;
	}
}

static int stats_operands(struct rl_parser *p, void *cfg, int argc,
			  char **argv)
{
	const struct rl_stats_opts *o = cfg;

	if (argc)
		return rl_usage_err("stats: unexpected '%s': see 'xdp-ratelimit stats --help'",
				    argv[0]);
	if (o->prometheus && o->watch)
		return rl_usage_err("stats: --prometheus is one reading: leave out --watch (or scrape 'xdp-ratelimit exporter')");
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
	if (o->watch) {
		status = rl_stats_watch(o, s);
	} else {
		status = rl_stats_snapshot_read(o, s);
		for (size_t i = 0; i < s->n; i++) {
			const char *name = s->ifs[i].view.name;
			char why[RL_ERR_LEN];

			if (rl_iface_gone(name)) {
				rl_iface_gone_text(name, why, sizeof(why));
				rl_err("stats: %s", why);
			}
		}
		/* what could be read is shown even when another failed */
		if ((s->n || status == RL_EXIT_OK) &&
		    rl_stats_output(o, s, false, true))
			status = RL_EXIT_FAIL;
	}
	rl_stats_snapshot_free(s);
	free(s);
	return status;
}

/* The numbers the help below gives. */
_Static_assert(DEFAULT_TOP == 10, "stats --help states it");

const struct rl_cmd rl_cmd_stats = {
	.name = "stats",
	.summary = "show counters and the busiest sources",
	.doc =
		"Print the totals of attached interfaces and their busiest sources, sorted\n"
		"by dropped then passed packets. Reads the pinned maps; changes nothing.\n",
	.opts = (const struct rl_opt[]){
		RL_OPT_IFACE(OPT_IFACE, "only IFACE (default: every attached interface)"),
		RL_OPT_JSON(OPT_JSON,
			    "print one JSON object on one line instead of tables;\n"
			    "with --watch, one object per line per interval, with\n"
			    "\"rates\" (null when there is no previous reading)"),
		{ OPT_PROMETHEUS, "prometheus", NULL,
		  "print the Prometheus text format instead of tables\n"
		  "(what 'xdp-ratelimit exporter' serves)" },
		{ OPT_TOP, "top", "N",
		  "show the N busiest sources (default 10; 0: all of them)" },
		{ OPT_WATCH, "watch", "[SECONDS]",
		  "redraw every SECONDS (default 1) until Ctrl-C, with\n"
		  "per-second rates of the last interval; SECONDS is a\n"
		  "whole number or a DURATION such as 500ms (100ms to 1h).\n"
		  "When stdout is not a terminal, frames follow one\n"
		  "another, separated by a blank line" },
		{ 0 }
	},
	.notes =
		"Columns: PASSED and DROPPED count since attach; WINDOW is what the source\n"
		"passed in the current sliding window; RULE is the prefix of the rule that\n"
		"covers it (- when none does). IPv6 sources show as their tracked prefix.\n"
		"A source refused on its first packet (a blocked prefix, a full aggregate\n"
		"budget) takes no table entry: it is shown with its drops and WINDOW -.\n"
		"\n"
		"Examples:\n"
		"  xdp-ratelimit stats\n"
		"  xdp-ratelimit stats --iface eth0 --top 50\n"
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

