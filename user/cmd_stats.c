// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit stats [--iface IFACE] [--json] [--top N] [--watch [SECONDS]]
 *
 * Reads the pinned maps of attached interfaces, never writes them: totals
 * from the per-CPU `counters`, the busiest sources from one pass over
 * `sources` (source_table.c), rendered by stats_view.c. --watch repeats
 * that every interval and turns counter deltas into per-second rates.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cli.h"
#include "pin.h"
#include "rules.h"
#include "source_table.h"
#include "stats_view.h"
#include "units.h"

#define CMD			"stats"
#define DEFAULT_TOP		10
#define DEFAULT_INTERVAL_NS	RL_NSEC_PER_SEC
#define MIN_INTERVAL_NS		(100 * RL_NSEC_PER_MSEC)
#define MAX_INTERVAL_NS		(3600 * RL_NSEC_PER_SEC)
/* --watch remembers more sources than it shows, so that one climbing into
 * the top N usually has a previous reading to compute its rate from. */
#define WATCH_KEEP_FACTOR	4
#define WATCH_KEEP_EXTRA	64

#define ANSI_HOME		"\033[H"
#define ANSI_CLEAR		"\033[2J"
#define ANSI_CLEAR_EOL		"\033[K"
#define ANSI_CLEAR_BELOW	"\033[J"

struct stats_opts {
	const char *iface;	/* NULL: every attached interface */
	bool json;
	__u64 top;		/* 0: every source */
	bool watch;
	__u64 interval_ns;
};

/* One interface as read: what is shown, and every source kept. */
struct iface_read {
	struct rl_stats_iface view;
	struct rl_source_top top;
};

struct snapshot {
	struct iface_read ifs[RL_MAX_IFACES];
	size_t n;
};

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

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-ratelimit stats [--iface IFACE] [--json] [--top N] [--watch [SECONDS]]\n"
		"\n"
		"Print the totals of attached interfaces and their busiest sources, sorted\n"
		"by dropped then passed packets. Reads the pinned maps; changes nothing.\n"
		"\n"
		"Options:\n"
		"  --iface IFACE      only IFACE (default: every attached interface)\n"
		"  --json             print one JSON object on one line instead of tables;\n"
		"                     with --watch, one object per line per interval, with\n"
		"                     \"rates\" (null when there is no previous reading)\n"
		"  --top N            show the N busiest sources (default %d; 0: all of them)\n"
		"  --watch [SECONDS]  redraw every SECONDS (default 1) until Ctrl-C, with\n"
		"                     per-second rates of the last interval; SECONDS is a\n"
		"                     whole number or a DURATION such as 500ms (100ms to 1h).\n"
		"                     When stdout is not a terminal, frames follow one\n"
		"                     another, separated by a blank line\n"
		"  -h, --help         show this help\n"
		"\n"
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
		"  xdp-ratelimit stats --json | jq '.interfaces[0].totals'\n",
		DEFAULT_TOP);
}

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

static int parse_opts(int argc, char **argv, struct stats_opts *o)
{
	static const struct option longopts[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 'n' },
		{ "watch", optional_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char err[RL_ERR_LEN];
	const char *arg;
	int c, ret;

	*o = (struct stats_opts){
		.top = DEFAULT_TOP, .interval_ns = DEFAULT_INTERVAL_NS,
	};
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->iface = optarg;
			ret = rl_iface_arg("stats", optarg);
			if (ret)
				return ret;
			break;
		case 'j':
			o->json = true;
			break;
		case 'n':
			if (rl_parse_uint(optarg, "--top", 0, RL_MAX_MAX_SOURCES,
					  &o->top, err, sizeof(err)))
				return rl_usage_err("stats: %s (0 shows every source)", err);
			break;
		case 'w':
			o->watch = true;
			arg = optarg;
			/* "--watch 2" as well as "--watch=2": stats takes no
			 * operands, so a following number is the interval */
			if (!arg && optind < argc && argv[optind][0] >= '0' &&
			    argv[optind][0] <= '9')
				arg = argv[optind++];
			if (arg) {
				ret = parse_interval(arg, &o->interval_ns);
				if (ret)
					return ret;
			}
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			return rl_bad_option(CMD, c, argv);
		}
	}
	if (optind < argc)
		return rl_usage_err("stats: unexpected argument '%s' (see 'xdp-ratelimit stats --help')",
				    argv[optind]);
	return 0;
}

/* ---- reading -------------------------------------------------------- */

/*
 * Rule slots read so far, so that showing every one of a million sources
 * costs one read per rule rather than an LPM lookup per source.
 */
struct rule_cache {
	struct rl_rule *rules;		/* RL_MAX_RULES, allocated on first use */
	__u8 *state;			/* SLOT_* */
};

enum { SLOT_UNREAD, SLOT_USED, SLOT_UNUSABLE };

static const struct rl_rule *cached_rule(const struct rl_maps *m,
					 struct rule_cache *rc, __u32 id)
{
	if (id >= RL_MAX_RULES)
		return NULL;
	if (!rc->rules) {
		rc->rules = calloc(RL_MAX_RULES, sizeof(*rc->rules));
		rc->state = calloc(RL_MAX_RULES, sizeof(*rc->state));
		if (!rc->rules || !rc->state)
			return NULL;
	}
	if (rc->state[id] == SLOT_UNREAD)
		rc->state[id] = !bpf_map_lookup_elem(m->rules, &id, &rc->rules[id]) &&
				(rc->rules[id].flags & RL_RULE_F_USED) ?
				SLOT_USED : SLOT_UNUSABLE;
	return rc->state[id] == SLOT_USED ? &rc->rules[id] : NULL;
}

static void rule_cache_free(struct rule_cache *rc)
{
	free(rc->rules);
	free(rc->state);
}

/* The rule covering a source: the one its CPUs resolved in the current
 * rules generation, else an LPM lookup as the program would make. */
static void source_rule(const struct rl_maps *m, struct rule_cache *rc,
			const struct rl_source_row *row,
			struct rl_stats_source *src)
{
	const struct rl_rule *rule = NULL;
	struct rl_rule found;
	struct rl_prefix p;

	if (row->rule_cached && row->rule_id == RL_NO_RULE)
		return;
	if (row->rule_cached)
		rule = cached_rule(m, rc, row->rule_id);
	if (!rule && !rl_rule_lookup(m, &row->sum.key,
				     !rl_key_is_v4(&row->sum.key), &found))
		rule = &found;
	if (!rule)
		return;
	src->has_rule = true;
	rl_rule_prefix(rule, &p);
	rl_format_prefix(&p, src->rule, sizeof(src->rule));
}

static int ban_key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct rl_key));
}

/* The bans that hold (issue 11), and which shown sources they cover. */
static int read_bans(const struct rl_maps *m, struct rl_stats_iface *v)
{
	struct rl_ban_row *by_key;
	int ret = rl_bans_read(m, v->now, &v->bans, &v->nbans);

	if (ret || !v->nbans)
		return ret;
	by_key = malloc(v->nbans * sizeof(*by_key));
	if (!by_key)
		return -ENOMEM;
	memcpy(by_key, v->bans, v->nbans * sizeof(*by_key));
	qsort(by_key, v->nbans, sizeof(*by_key), ban_key_cmp);
	for (size_t i = 0; i < v->nsrc; i++) {
		const struct rl_ban_row *b = bsearch(&v->src[i].sum.key, by_key,
						     v->nbans, sizeof(*by_key),
						     ban_key_cmp);

		v->src[i].banned = b != NULL;
		v->src[i].ban_ms_left = b ? b->ns_left / RL_NSEC_PER_MSEC : 0;
	}
	free(by_key);
	return 0;
}

static int read_iface(const char *name, const struct stats_opts *o,
		      struct iface_read *r)
{
	struct rl_stats_iface *v = &r->view;
	struct rule_cache rc = {};
	size_t keep = o->top, show;
	char err[RL_ERR_LEN];
	struct rl_iface ifc;
	int ret;

	memset(r, 0, sizeof(*r));
	if (rl_iface_open(name, &ifc, err, sizeof(err))) {
		rl_err("stats: %s", err);
		return RL_EXIT_FAIL;
	}
	if (o->watch && keep)
		keep = keep * WATCH_KEEP_FACTOR + WATCH_KEEP_EXTRA;
	snprintf(v->name, sizeof(v->name), "%s", ifc.name);
	v->set = ifc.cfg.set;
	/* as given at attach; the LRU map itself may be sized larger */
	v->max_sources = ifc.cfg.set.max_sources;
	ret = rl_counters_sum(&ifc.m, &v->tot);
	if (ret) {
		rl_err("stats: cannot read the counters of %s: %s", name,
		       strerror(-ret));
		goto fail;
	}
	v->now = rl_now_ns();
	ret = rl_source_top_read(&ifc.m, &v->set, ifc.cfg.rules_gen, v->now,
				 keep, &r->top);
	if (ret) {
		rl_err("stats: cannot read the sources of %s: %s", name,
		       strerror(-ret));
		goto fail;
	}
	v->tracked = r->top.tracked;
	v->refused_only = r->top.refused_only;
	show = o->top && o->top < r->top.n ? o->top : r->top.n;
	v->src = calloc(show ? show : 1, sizeof(*v->src));
	if (!v->src) {
		rl_err("stats: out of memory");
		goto fail;
	}
	for (size_t i = 0; i < show; i++) {
		v->src[i].sum = r->top.rows[i].sum;
		v->src[i].tracked = r->top.rows[i].tracked;
		source_rule(&ifc.m, &rc, &r->top.rows[i], &v->src[i]);
	}
	v->nsrc = show;
	ret = read_bans(&ifc.m, v);
	if (ret) {
		rl_err("stats: cannot read the bans of %s: %s", name, strerror(-ret));
		free(v->src);
		free(v->bans);
		goto fail;
	}
	rule_cache_free(&rc);
	rl_iface_close(&ifc);
	return RL_EXIT_OK;
fail:
	rule_cache_free(&rc);
	rl_iface_close(&ifc);
	rl_source_top_free(&r->top);
	return RL_EXIT_FAIL;
}

static void snapshot_free(struct snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->ifs[i].view.src);
		free(s->ifs[i].view.bans);
		rl_source_top_free(&s->ifs[i].top);
	}
	s->n = 0;
}

/*
 * Read --iface, or every attached interface. Those that cannot be read are
 * reported and left out; the status says whether any was.
 */
static int snapshot_read(const struct stats_opts *o, struct snapshot *s)
{
	char names[RL_MAX_IFACES][IF_NAMESIZE], err[RL_ERR_LEN];
	int n, status = RL_EXIT_OK;

	s->n = 0;
	if (o->iface) {
		if (rl_iface_resolve(o->iface, names[0], err, sizeof(err))) {
			rl_err("stats: %s", err);
			return RL_EXIT_FAIL;
		}
		n = 1;
	} else {
		n = rl_ifaces_list(names, RL_MAX_IFACES);
		if (n < 0) {
			rl_err("stats: cannot list the attached interfaces in %s: %s",
			       RL_PIN_ROOT, strerror(-n));
			return RL_EXIT_FAIL;
		}
		/* none attached: an empty report, as quota list and status
		 * give, unless the pins are hidden from us (its message
		 * says what to do) */
		if (n == 0 && rl_private_mount_ns()) {
			rl_iface_resolve(NULL, names[0], err, sizeof(err));
			rl_err("stats: %s", err);
			return RL_EXIT_FAIL;
		}
	}
	for (int i = 0; i < n; i++) {
		if (read_iface(names[i], o, &s->ifs[s->n]))
			status = RL_EXIT_FAIL;
		else
			s->n++;
	}
	return status;
}

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

static void rates_compute(struct snapshot *s, const struct prev *p)
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
static void prev_take(struct prev *p, struct snapshot *s)
{
	prev_free(p);
	for (size_t i = 0; i < s->n; i++) {
		struct iface_read *r = &s->ifs[i];
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

static int render(const struct stats_opts *o, struct snapshot *s, FILE *f)
{
	struct rl_stats_iface views[RL_MAX_IFACES];
	struct rl_stats_view v = {
		.ifs = views, .n = s->n, .watch = o->watch,
		.interval_ns = o->interval_ns, .wall = time(NULL),
	};
	int ret;

	for (size_t i = 0; i < s->n; i++)
		views[i] = s->ifs[i].view;
	if (o->json) {
		ret = rl_stats_print_json(f, &v);
		if (ret)
			return ret;
	} else {
		rl_stats_print_table(f, &v);
	}
	return ferror(f) ? -EIO : 0;
}

/* A terminal frame: drawn from the top left, each line cleared to its
 * end and the rest of the screen below, so nothing flickers or lingers. */
static int draw_tty(const struct stats_opts *o, struct snapshot *s,
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

static int output(const struct stats_opts *o, struct snapshot *s,
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

static int watch(const struct stats_opts *o, struct snapshot *s)
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
		status = snapshot_read(o, s);
		if (status)
			break;
		rates_compute(s, p);
		status = output(o, s, tty, first);
		if (status)
			break;
		prev_take(p, s);
		snapshot_free(s);
		next += o->interval_ns;
		now = rl_now_ns();
		if (next < now)		/* reading took longer: don't catch up */
			next = now;
		wait_until(next);
	}
	snapshot_free(s);
	prev_free(p);
	free(p);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return status;
}

int cmd_stats(int argc, char **argv)
{
	struct stats_opts o;
	struct snapshot *s;
	int status, ret;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret < 0 ? RL_EXIT_OK : ret;
	ret = rl_require_root();
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s)
		return rl_fail("stats: out of memory");
	if (o.watch) {
		status = watch(&o, s);
	} else {
		status = snapshot_read(&o, s);
		/* what could be read is shown even when another failed */
		if ((s->n || status == RL_EXIT_OK) && output(&o, s, false, true))
			status = RL_EXIT_FAIL;
	}
	snapshot_free(s);
	free(s);
	return status;
}
