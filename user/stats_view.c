// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <jansson.h>
#include "rules.h"
#include "stats_view.h"

#define CELL_LEN	64
#define COL_GAP		"  "
#define MAX_COLS	12

static const char *mode_name(__u32 mode)
{
	switch (mode) {
	case RL_MODE_NATIVE:
		return "native";
	case RL_MODE_GENERIC:
		return "generic";
	default:
		return "unknown";
	}
}

void rl_stats_format_source(const struct rl_key *key, __u32 v6_prefix,
			    char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (rl_key_is_v4(key)) {
		inet_ntop(AF_INET, key->addr + 12, a, sizeof(a));
		snprintf(buf, len, "%s", a);
		return;
	}
	inet_ntop(AF_INET6, key->addr, a, sizeof(a));
	if (v6_prefix < 128)
		snprintf(buf, len, "%s/%u", a, v6_prefix);
	else
		snprintf(buf, len, "%s", a);
}

/* ---- tables ------------------------------------------------------- */

struct col {
	const char *head;
	bool left;
};

/* Writes the text of cell (row, col) into buf. */
typedef void (*cell_fn)(const void *ctx, size_t row, int col, char *buf,
			size_t len);

/* Columns as wide as their widest cell, two spaces apart, numbers right. */
static void table_print(FILE *f, const struct col *cols, int ncols,
			size_t nrows, cell_fn cell, const void *ctx)
{
	size_t width[MAX_COLS];
	char buf[CELL_LEN];

	for (int c = 0; c < ncols; c++)
		width[c] = strlen(cols[c].head);
	for (size_t r = 0; r < nrows; r++) {
		for (int c = 0; c < ncols; c++) {
			cell(ctx, r, c, buf, sizeof(buf));
			if (strlen(buf) > width[c])
				width[c] = strlen(buf);
		}
	}
	for (size_t r = 0; r <= nrows; r++) {
		char line[MAX_COLS * (CELL_LEN + sizeof(COL_GAP))];
		size_t n = 0;

		for (int c = 0; c < ncols; c++) {
			const char *text = cols[c].head;

			if (r > 0) {
				cell(ctx, r - 1, c, buf, sizeof(buf));
				text = buf;
			}
			n += snprintf(line + n, sizeof(line) - n,
				      cols[c].left ? "%s%-*s" : "%s%*s",
				      c ? COL_GAP : "", (int)width[c], text);
			if (n >= sizeof(line))
				n = sizeof(line) - 1;
		}
		/* no trailing blanks from a left column or empty cells */
		while (n && line[n - 1] == ' ')
			n--;
		fprintf(f, "%.*s\n", (int)n, line);
	}
}

static void fmt_u64(char *buf, size_t len, __u64 v)
{
	snprintf(buf, len, "%" PRIu64, (uint64_t)v);
}

/* A rate with three significant digits and a k/M/G/T suffix. */
static void fmt_rate(char *buf, size_t len, const struct rl_rates *r,
		     double v)
{
	static const char *const suffix[] = { "", "k", "M", "G", "T" };
	int i = 0;

	if (!r->valid) {
		snprintf(buf, len, "-");
		return;
	}
	while (v >= 999.5 && i < 4) {
		v /= 1000;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.*f%s", v < 9.995 ? 2 : v < 99.95 ? 1 : 0,
			 v, suffix[i]);
}

enum { TOT_PASSED, TOT_DROPPED, TOT_MALFORMED, TOT_NON_IP, TOT_ROWS };

static void totals_cell(const void *ctx, size_t row, int col, char *buf,
			size_t len)
{
	static const char *const names[TOT_ROWS] = {
		"passed", "dropped", "malformed", "non-IP",
	};
	const struct rl_stats_iface *s = ctx;
	const struct rl_counters *t = &s->tot;
	const struct rl_rates *r = &s->rates;
	bool traffic = row == TOT_PASSED || row == TOT_DROPPED;

	buf[0] = '\0';
	switch (col) {
	case 0:
		snprintf(buf, len, "%s", names[row]);
		break;
	case 1:
		fmt_u64(buf, len, row == TOT_PASSED ? t->passed_pkts :
			row == TOT_DROPPED ? t->dropped_pkts :
			row == TOT_MALFORMED ? t->malformed_pkts :
			t->non_ip_pkts);
		break;
	case 2:
		if (traffic)
			fmt_u64(buf, len, row == TOT_PASSED ? t->passed_bytes :
				t->dropped_bytes);
		break;
	case 3:
		if (traffic)
			fmt_rate(buf, len, r, row == TOT_PASSED ?
				 r->passed_pps : r->dropped_pps);
		break;
	case 4:
		if (traffic)
			fmt_rate(buf, len, r, row == TOT_PASSED ?
				 r->passed_bps : r->dropped_bps);
		break;
	}
}

enum {
	SRC_ADDRESS, SRC_RULE, SRC_PASSED_PKTS, SRC_PASSED_BYTES,
	SRC_DROPPED_PKTS, SRC_DROPPED_BYTES, SRC_WINDOW_PKTS, SRC_WINDOW_BYTES,
	SRC_PASSED_PPS, SRC_PASSED_BPS, SRC_DROPPED_PPS, SRC_DROPPED_BPS,
	SRC_COLS
};

static const struct col source_cols[SRC_COLS] = {
	{ "ADDRESS", true }, { "RULE", true },
	{ "PASSED(pkts)", false }, { "PASSED(bytes)", false },
	{ "DROPPED(pkts)", false }, { "DROPPED(bytes)", false },
	{ "WINDOW(pkts)", false }, { "WINDOW(bytes)", false },
	{ "PASSED(pps)", false }, { "PASSED(B/s)", false },
	{ "DROPPED(pps)", false }, { "DROPPED(B/s)", false },
};

static void source_cell(const void *ctx, size_t row, int col, char *buf,
			size_t len)
{
	const struct rl_stats_iface *s = ctx;
	const struct rl_stats_source *src = &s->src[row];
	const struct rl_source_sum *v = &src->sum;
	const struct rl_rates *r = &src->rates;

	switch (col) {
	case SRC_ADDRESS:
		rl_stats_format_source(&v->key, s->set.v6_prefix, buf, len);
		break;
	case SRC_RULE:
		snprintf(buf, len, "%s", src->has_rule ? src->rule : "-");
		break;
	case SRC_PASSED_PKTS:
		fmt_u64(buf, len, v->passed_pkts);
		break;
	case SRC_PASSED_BYTES:
		fmt_u64(buf, len, v->passed_bytes);
		break;
	case SRC_DROPPED_PKTS:
		fmt_u64(buf, len, v->dropped_pkts);
		break;
	case SRC_DROPPED_BYTES:
		fmt_u64(buf, len, v->dropped_bytes);
		break;
	case SRC_WINDOW_PKTS:
		if (src->tracked)
			fmt_u64(buf, len, v->window_pkts);
		else
			snprintf(buf, len, "-");
		break;
	case SRC_WINDOW_BYTES:
		if (src->tracked)
			fmt_u64(buf, len, v->window_bytes);
		else
			snprintf(buf, len, "-");
		break;
	case SRC_PASSED_PPS:
		fmt_rate(buf, len, r, r->passed_pps);
		break;
	case SRC_PASSED_BPS:
		fmt_rate(buf, len, r, r->passed_bps);
		break;
	case SRC_DROPPED_PPS:
		fmt_rate(buf, len, r, r->dropped_pps);
		break;
	case SRC_DROPPED_BPS:
		fmt_rate(buf, len, r, r->dropped_bps);
		break;
	default:
		buf[0] = '\0';
	}
}

static void print_iface(FILE *f, const struct rl_stats_iface *s, bool watch)
{
	static const struct col tot_cols[] = {
		{ "", true }, { "PACKETS", false }, { "BYTES", false },
		{ "PACKETS/s", false }, { "BYTES/s", false },
	};
	const struct rl_settings *set = &s->set;
	char window[32];

	rl_format_duration(set->window_ns, window, sizeof(window));
	fprintf(f, "%s (ifindex %u): %s XDP, window %s in %u buckets, dry run %s%s\n",
		s->name, set->ifindex, mode_name(set->mode), window,
		set->nbuckets, set->flags & RL_F_DRY_RUN ? "on" : "off",
		set->flags & RL_F_PASS_MALFORMED ? ", malformed frames pass" : "");
	table_print(f, tot_cols, watch ? 5 : 3, TOT_ROWS, totals_cell, s);
	fprintf(f, "sources: %" PRIu64 " tracked (max %" PRIu64 "), %" PRIu64
		" created, %" PRIu64 " packets untracked; %" PRIu64
		" refused without an entry, %" PRIu64 " refused packets unlisted\n",
		(uint64_t)s->tracked, (uint64_t)s->max_sources,
		(uint64_t)s->tot.new_sources, (uint64_t)s->tot.untracked_pkts,
		(uint64_t)s->refused_only, (uint64_t)s->tot.refused_unlisted_pkts);
	fputc('\n', f);
	if (!s->nsrc) {
		fprintf(f, "no sources seen\n");
		return;
	}
	table_print(f, source_cols, watch ? SRC_COLS : SRC_PASSED_PPS, s->nsrc,
		    source_cell, s);
	if (s->nbans) {
		fprintf(f, "\nbanned: %zu source%s\n", s->nbans, s->nbans == 1 ? "" : "s");
		rl_stats_print_bans(f, s->bans, s->nbans, set->v6_prefix);
	}
}

/* ---- bans ---------------------------------------------------------- */

enum { BAN_ADDRESS, BAN_RULE, BAN_LEFT, BAN_COLS };

static const struct col ban_cols[BAN_COLS] = {
	{ "ADDRESS", true }, { "RULE", true }, { "TIME_LEFT", false },
};

struct ban_table {
	const struct rl_ban_row *rows;
	__u32 v6_prefix;
};

static void ban_cell(const void *ctx, size_t row, int col, char *buf, size_t len)
{
	const struct ban_table *t = ctx;
	const struct rl_ban_row *r = &t->rows[row];

	switch (col) {
	case BAN_ADDRESS:
		rl_stats_format_source(&r->key, t->v6_prefix, buf, len);
		break;
	case BAN_RULE:
		snprintf(buf, len, "%s", r->rule);
		break;
	case BAN_LEFT:
		snprintf(buf, len, "%.1fs", (double)r->ns_left / RL_NSEC_PER_SEC);
		break;
	default:
		buf[0] = '\0';
	}
}

void rl_stats_print_bans(FILE *f, const struct rl_ban_row *rows, size_t n,
			 __u32 v6_prefix)
{
	struct ban_table t = { rows, v6_prefix };

	table_print(f, ban_cols, BAN_COLS, n, ban_cell, &t);
}

void rl_stats_print_table(FILE *f, const struct rl_stats_view *v)
{
	if (v->watch) {
		char interval[32], clock[16];
		struct tm tm;

		rl_format_duration(v->interval_ns, interval, sizeof(interval));
		localtime_r(&v->wall, &tm);
		strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
		fprintf(f, "Every %s: xdp-ratelimit stats (Ctrl-C to stop)  %s\n\n",
			interval, clock);
	}
	if (!v->n)
		fprintf(f, "no interface is attached\n");
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			fputc('\n', f);
		print_iface(f, &v->ifs[i], v->watch);
	}
}

/* ---- JSON --------------------------------------------------------- */

/* Builders return NULL only when out of memory; jansson's *_new steal
 * references and ignore a NULL value, so a failure surfaces as a missing
 * key and is caught by the final check. */
static json_t *jint(__u64 v)
{
	/* counters cannot reach 2^63 in practice; clamp rather than wrap */
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *jrate(double v)
{
	/* rates are never negative: round half up without libm */
	return json_integer((json_int_t)(v + 0.5));
}

static json_t *rates_json(const struct rl_rates *r, __u64 interval_ns)
{
	json_t *o;

	if (!r->valid)
		return json_null();
	o = json_object();
	if (!o)
		return NULL;
	if (interval_ns)
		json_object_set_new(o, "interval_ms",
				    jint(interval_ns / RL_NSEC_PER_MSEC));
	json_object_set_new(o, "passed_pps", jrate(r->passed_pps));
	json_object_set_new(o, "passed_bps", jrate(r->passed_bps));
	json_object_set_new(o, "dropped_pps", jrate(r->dropped_pps));
	json_object_set_new(o, "dropped_bps", jrate(r->dropped_bps));
	return o;
}

static json_t *totals_json(const struct rl_stats_iface *s, bool watch)
{
	const struct rl_counters *t = &s->tot;
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "passed_packets", jint(t->passed_pkts));
	json_object_set_new(o, "passed_bytes", jint(t->passed_bytes));
	json_object_set_new(o, "dropped_packets", jint(t->dropped_pkts));
	json_object_set_new(o, "dropped_bytes", jint(t->dropped_bytes));
	json_object_set_new(o, "malformed_packets", jint(t->malformed_pkts));
	json_object_set_new(o, "non_ip_packets", jint(t->non_ip_pkts));
	json_object_set_new(o, "new_sources", jint(t->new_sources));
	json_object_set_new(o, "untracked_packets", jint(t->untracked_pkts));
	json_object_set_new(o, "refused_unlisted_packets",
			    jint(t->refused_unlisted_pkts));
	json_object_set_new(o, "banned_packets", jint(t->banned_pkts));
	if (watch)
		json_object_set_new(o, "rates", rates_json(&s->rates, s->rates_ns));
	return o;
}

static json_t *source_json(const struct rl_stats_iface *s,
			   const struct rl_stats_source *src, bool watch)
{
	const struct rl_source_sum *v = &src->sum;
	char addr[RL_SOURCE_STRLEN];
	json_t *o = json_object();

	if (!o)
		return NULL;
	rl_stats_format_source(&v->key, s->set.v6_prefix, addr, sizeof(addr));
	json_object_set_new(o, "address", json_string(addr));
	json_object_set_new(o, "rule", src->has_rule ? json_string(src->rule) :
			    json_null());
	json_object_set_new(o, "passed_packets", jint(v->passed_pkts));
	json_object_set_new(o, "passed_bytes", jint(v->passed_bytes));
	json_object_set_new(o, "dropped_packets", jint(v->dropped_pkts));
	json_object_set_new(o, "dropped_bytes", jint(v->dropped_bytes));
	json_object_set_new(o, "window_packets", jint(v->window_pkts));
	json_object_set_new(o, "window_bytes", jint(v->window_bytes));
	json_object_set_new(o, "tracked", json_boolean(src->tracked));
	json_object_set_new(o, "ban_ms_left", src->banned ?
			    jint(src->ban_ms_left) : json_null());
	if (watch)
		json_object_set_new(o, "rates", rates_json(&src->rates, 0));
	if (json_object_size(o) != (watch ? 11U : 10U)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The interface's object without its sources, which can be many. */
static json_t *iface_json(const struct rl_stats_iface *s, bool watch)
{
	const struct rl_settings *set = &s->set;
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "ifname", json_string(s->name));
	json_object_set_new(o, "ifindex", jint(set->ifindex));
	json_object_set_new(o, "mode", json_string(mode_name(set->mode)));
	json_object_set_new(o, "dry_run", json_boolean(set->flags & RL_F_DRY_RUN));
	json_object_set_new(o, "pass_malformed",
			    json_boolean(set->flags & RL_F_PASS_MALFORMED));
	json_object_set_new(o, "window_ms", jint(set->window_ns / RL_NSEC_PER_MSEC));
	json_object_set_new(o, "buckets", jint(set->nbuckets));
	json_object_set_new(o, "ipv6_prefix", jint(set->v6_prefix));
	json_object_set_new(o, "max_sources", jint(s->max_sources));
	json_object_set_new(o, "tracked_sources", jint(s->tracked));
	json_object_set_new(o, "refused_sources", jint(s->refused_only));
	json_object_set_new(o, "banned_sources", jint(s->nbans));
	json_object_set_new(o, "totals", totals_json(s, watch));
	if (json_object_size(o) != 13) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* `o` with its closing brace cut, for more members to follow. */
static int dump_open(FILE *f, json_t *o)
{
	char *text = o ? json_dumps(o, 0) : NULL;
	size_t len = text ? strlen(text) : 0;
	int err = 0;

	if (len < 2 || text[len - 1] != '}')
		err = -ENOMEM;
	else if (fwrite(text, 1, len - 1, f) != len - 1)
		err = -EIO;
	free(text);
	json_decref(o);
	return err;
}

/* Item k of an array being written: a comma before all but the first;
 * takes the reference to o (NULL: out of memory). */
static int dump_item(FILE *f, size_t k, json_t *o)
{
	int err;

	if (k)
		fputs(", ", f);
	if (!o)
		return -ENOMEM;
	err = json_dumpf(o, f, 0) ? -EIO : 0;
	json_decref(o);
	return err;
}

/*
 * One line: {"interfaces": [...]} (and "time", "interval_ms" with --watch).
 * Each source is built and written on its own, so memory does not grow
 * with the JSON of a million sources.
 */
int rl_stats_print_json(FILE *f, const struct rl_stats_view *v)
{
	json_t *root = json_object();
	int err;

	if (!root)
		return -ENOMEM;
	if (v->watch) {
		json_object_set_new(root, "time", jint((__u64)v->wall));
		json_object_set_new(root, "interval_ms",
				    jint(v->interval_ns / RL_NSEC_PER_MSEC));
	}
	err = dump_open(f, root);
	if (err)
		return err;
	fprintf(f, "%s\"interfaces\": [", v->watch ? ", " : "");
	for (size_t i = 0; i < v->n; i++) {
		const struct rl_stats_iface *s = &v->ifs[i];

		if (i)
			fputs(", ", f);
		err = dump_open(f, iface_json(s, v->watch));
		if (err)
			return err;
		fputs(", \"sources\": [", f);
		for (size_t k = 0; k < s->nsrc; k++) {
			err = dump_item(f, k, source_json(s, &s->src[k], v->watch));
			if (err)
				return err;
		}
		fputs("], \"bans\": [", f);
		for (size_t k = 0; k < s->nbans; k++) {
			err = dump_item(f, k, rl_ban_json(&s->bans[k], s->set.v6_prefix));
			if (err)
				return err;
		}
		fputs("]}", f);
	}
	fputs("]}\n", f);
	return ferror(f) ? -EIO : 0;
}

json_t *rl_ban_json(const struct rl_ban_row *row, __u32 v6_prefix)
{
	char addr[RL_SOURCE_STRLEN];

	rl_stats_format_source(&row->key, v6_prefix, addr, sizeof(addr));
	return json_pack("{s:s, s:s, s:I}", "address", addr, "rule", row->rule,
			 "ms_left", (json_int_t)(row->ns_left / RL_NSEC_PER_MSEC));
}
