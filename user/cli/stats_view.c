// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "cli/json_writer.h"
#include "lib/rule.h"
#include "lib/settings.h"
#include "cli/stats_view.h"
#include "cli/table.h"
#include "cli/text.h"

void rl_stats_format_source(const struct rl_key *key, __u32 v6_prefix,
			    char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	struct rl_key src;

	if (rl_key_scoped(key)) {
		(void)rl_scoped_source(key, &src);
		key = &src;
	}
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

static void fmt_u64(char *buf, size_t len, __u64 v)
{
	rl_table_count(buf, len, v, true);
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

enum { TOT_PASSED, TOT_DROPPED, TOT_MALFORMED, TOT_ENCAP, TOT_NON_IP, TOT_ROWS };

static void totals_cell(const void *ctx, size_t row, int col, char *buf,
			size_t len)
{
	static const char *const names[TOT_ROWS] = {
		"passed", "dropped", "malformed", "encapsulated", "non-IP",
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
			row == TOT_ENCAP ? t->encap_pkts :
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
	SRC_ADDRESS, SRC_DROPPED_PPS, SRC_DROPPED_BPS, SRC_PASSED_PPS,
	SRC_PASSED_BPS, SRC_DROPPED_PKTS, SRC_DROPPED_BYTES, SRC_PASSED_PKTS,
	SRC_PASSED_BYTES, SRC_WINDOW_PKTS, SRC_WINDOW_BYTES, SRC_VERIFIED,
	SRC_RULE, SRC_COLS
};

/* The columns of --wide; the bytes columns only there. The rates come
 * first (who is dropped now), then the counts since attach. */
static const struct rl_table_col source_cols_wide[SRC_COLS] = {
	{ "ADDRESS", true, 0 },
	{ "DROPPED(pps)", false, 0 }, { "DROPPED(B/s)", false, 0 },
	{ "PASSED(pps)", false, 0 }, { "PASSED(B/s)", false, 0 },
	{ "DROPPED(pkts)", false, 0 }, { "DROPPED(bytes)", false, 0 },
	{ "PASSED(pkts)", false, 0 }, { "PASSED(bytes)", false, 0 },
	{ "WINDOW(pkts)", false, 0 }, { "WINDOW(bytes)", false, 0 },
	{ "VERIFIED", true, 0 }, { "RULE", true, 0 },
};

/* The narrow view: packets only, VERIFIED, RULE, WINDOW and (with rates)
 * the counts since attach leave in that order when the table is too wide. */
static const struct rl_table_col source_cols_narrow[SRC_COLS] = {
	{ "ADDRESS", true, 0 },
	{ "DROP/s", false, 0 }, { NULL, false, 0 },
	{ "PASS/s", false, 0 }, { NULL, false, 0 },
	{ "DROPPED", false, 0 }, { NULL, false, 0 },
	{ "PASSED", false, 0 }, { NULL, false, 0 },
	{ "WINDOW", false, 3 }, { NULL, false, 0 },
	{ "VERIFIED", true, 5 }, { "RULE", true, 4 },
};

struct source_table {
	const struct rl_stats_iface *s;
	bool wide;
};

/* A scoped window under its source's row: "  `- tcp syn"; elsewhere its
 * source and scope, "198.18.0.7 `- tcp syn" (no backslash: the terminal
 * shows one doubled, text.h). */
static void address_cell(const struct rl_stats_iface *s,
			 const struct rl_stats_source *src, char *buf, size_t len)
{
	char addr[RL_SOURCE_STRLEN];

	rl_stats_format_source(&src->sum.key, s->set.v6_prefix, addr, sizeof(addr));
	if (!src->scope[0])
		snprintf(buf, len, "%s", addr);
	else if (src->nested)
		snprintf(buf, len, "  `- %s", src->scope);
	else
		snprintf(buf, len, "%s `- %s", addr, src->scope);
}

static void source_cell(const void *ctx, size_t row, int col, char *buf,
			size_t len)
{
	const struct source_table *t = ctx;
	const struct rl_stats_source *src = &t->s->src[row];
	const struct rl_source_sum *v = &src->sum;
	const struct rl_rates *r = &src->rates;

	switch (col) {
	case SRC_ADDRESS:
		address_cell(t->s, src, buf, len);
		break;
	case SRC_RULE:
		snprintf(buf, len, "%s", src->has_rule ? src->rule : "-");
		break;
	case SRC_PASSED_PKTS:
		rl_table_count(buf, len, v->passed_pkts, t->wide);
		break;
	case SRC_PASSED_BYTES:
		rl_table_count(buf, len, v->passed_bytes, t->wide);
		break;
	case SRC_DROPPED_PKTS:
		rl_table_count(buf, len, v->dropped_pkts, t->wide);
		break;
	case SRC_DROPPED_BYTES:
		rl_table_count(buf, len, v->dropped_bytes, t->wide);
		break;
	case SRC_WINDOW_PKTS:
		if (src->tracked)
			rl_table_count(buf, len, v->window_pkts, t->wide);
		else
			snprintf(buf, len, "-");
		break;
	case SRC_WINDOW_BYTES:
		if (src->tracked)
			rl_table_count(buf, len, v->window_bytes, t->wide);
		else
			snprintf(buf, len, "-");
		break;
	case SRC_VERIFIED:
		snprintf(buf, len, "%s", src->verified ? "yes" : "no");
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

static void print_sources(FILE *f, const struct rl_stats_view *v,
			  const struct rl_stats_iface *s)
{
	struct rl_table_col cols[SRC_COLS];
	struct source_table t = { s, v->wide };

	memcpy(cols, v->wide ? source_cols_wide : source_cols_narrow, sizeof(cols));
	if (!v->rates)
		for (int c = SRC_DROPPED_PPS; c <= SRC_PASSED_BPS; c++)
			cols[c].head = NULL;
	else	/* the counts since attach may leave before the rest */
		for (int c = SRC_DROPPED_PKTS; c <= SRC_PASSED_BYTES; c++)
			cols[c].drop = cols[c].head && !v->wide ? 1 : 0;
	rl_table_print_fit(f, cols, SRC_COLS, s->nsrc, source_cell, &t, v->width);
}

/* A line of text, wrapped to the view's width. */
static void print_line(FILE *f, const struct rl_stats_view *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void print_line(FILE *f, const struct rl_stats_view *v, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	rl_print_wrapped(f, buf, v->width, 0);
}

static void print_iface(FILE *f, const struct rl_stats_view *v,
			const struct rl_stats_iface *s)
{
	static const struct rl_table_col tot_cols[] = {
		{ "", true, 0 }, { "PACKETS", false, 0 }, { "BYTES", false, 0 },
		{ "PACKETS/s", false, 0 }, { "BYTES/s", false, 0 },
	};
	const struct rl_settings *set = &s->set;
	char window[32], scoped[64] = "", name[RL_SHOWN_LEN];

	rl_format_duration(set->window_ns, window, sizeof(window));
	print_line(f, v, "%s (ifindex %u): %s XDP, window %s in %u buckets, dry run %s%s",
		   rl_text_shown(s->name, name, sizeof(name)), set->ifindex, rl_mode_name(set->mode), window,
		   set->nbuckets, set->flags & RL_F_DRY_RUN ? "on" : "off",
		   set->flags & RL_F_PASS_MALFORMED ? ", malformed frames pass" : "");
	rl_table_print(f, tot_cols, v->rates ? 5 : 3, TOT_ROWS, totals_cell, s);
	if (s->scoped_windows)
		snprintf(scoped, sizeof(scoped), " of which %" PRIu64 " scoped rules' windows",
			 (uint64_t)s->scoped_windows);
	print_line(f, v, "sources: %" PRIu64 " tracked (max %" PRIu64 ")%s, %" PRIu64
		   " created, %" PRIu64 " packets untracked; %" PRIu64
		   " refused without an entry, %" PRIu64 " refused packets unlisted",
		   (uint64_t)s->tracked, (uint64_t)s->max_sources, scoped,
		   (uint64_t)s->tot.new_sources, (uint64_t)s->tot.untracked_pkts,
		   (uint64_t)s->refused_only, (uint64_t)s->tot.refused_unlisted_pkts);
	print_line(f, v, "verified: %" PRIu64 " sources now, %" PRIu64 " proofs, %" PRIu64
		   " evicted; %" PRIu64 " segments of established connections seen",
		   (uint64_t)s->verified_sources, (uint64_t)s->tot.verified_new,
		   (uint64_t)s->verified_evicted, (uint64_t)s->tot.replies);
	print_line(f, v, "SYN cookies: %" PRIu64 " sent, %" PRIu64 " valid (their ACKs passed), %"
		   PRIu64 " bad (judged as any packet)", (uint64_t)s->tot.cookies_sent,
		   (uint64_t)s->tot.cookies_valid, (uint64_t)s->tot.cookies_bad);
	print_line(f, v, "events: %" PRIu64 " lost (not reported to 'xdp-ratelimit events')",
		   (uint64_t)s->tot.events_lost);
	fputc('\n', f);
	if (!s->nsrc) {
		fprintf(f, "no sources seen\n");
		return;
	}
	print_sources(f, v, s);
	if (s->nbans) {
		fprintf(f, "\nbanned: %zu source%s\n", s->nbans, s->nbans == 1 ? "" : "s");
		rl_bans_print_table(f, s->bans, s->nbans, set->v6_prefix, v->width);
	}
}

/* ---- bans --------------------------------------------------------- */

/* The rule last: an IPv6 source and its /128 rule side by side pass 80
 * columns, so the rule wraps under its row rather than the view. */
enum { BAN_ADDRESS, BAN_LEFT, BAN_RULE, BAN_COLS };

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
	default:	/* BAN_LEFT */
		snprintf(buf, len, "%.1fs", (double)r->ns_left / RL_NSEC_PER_SEC);
	}
}

void rl_bans_print_table(FILE *f, const struct rl_ban_row *rows, size_t n,
			 __u32 v6_prefix, int width)
{
	static const struct rl_table_col cols[BAN_COLS] = {
		[BAN_ADDRESS] = { "ADDRESS", true, 0 },
		[BAN_LEFT] = { "TIME_LEFT", false, 0 },
		[BAN_RULE] = { "RULE", true, 0 },
	};
	struct ban_table t = { rows, v6_prefix };

	rl_table_print_fit(f, cols, BAN_COLS, n, ban_cell, &t, width);
}

void rl_ban_json(struct rl_json *j, const struct rl_ban_row *row,
		 __u32 v6_prefix)
{
	char addr[RL_SOURCE_STRLEN];

	rl_stats_format_source(&row->key, v6_prefix, addr, sizeof(addr));
	rl_json_object_start(j);
	rl_json_string_field(j, "address", addr);
	rl_json_string_field(j, "rule", row->rule);
	rl_json_uint_field(j, "ms_left", row->ns_left / RL_NSEC_PER_MSEC);
	rl_json_object_end(j);
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
		print_iface(f, v, &v->ifs[i]);
	}
}

/* ---- JSON --------------------------------------------------------- */

static __u64 json_rate(double v)
{
	/* rates are never negative: round half up without libm */
	return (__u64)(v + 0.5);
}

static void rates_json(struct rl_json *j, const char *name,
		       const struct rl_rates *r, __u64 interval_ns)
{
	rl_json_name(j, name);
	if (!r->valid) {
		rl_json_null(j);
		return;
	}
	rl_json_object_start(j);
	if (interval_ns)
		rl_json_uint_field(j, "interval_ms", interval_ns / RL_NSEC_PER_MSEC);
	rl_json_uint_field(j, "passed_pps", json_rate(r->passed_pps));
	rl_json_uint_field(j, "passed_bps", json_rate(r->passed_bps));
	rl_json_uint_field(j, "dropped_pps", json_rate(r->dropped_pps));
	rl_json_uint_field(j, "dropped_bps", json_rate(r->dropped_bps));
	rl_json_object_end(j);
}

/* The four counters totals and sources both have. */
static void traffic_json(struct rl_json *j, __u64 passed_pkts,
			 __u64 passed_bytes, __u64 dropped_pkts,
			 __u64 dropped_bytes)
{
	rl_json_uint_field(j, "passed_packets", passed_pkts);
	rl_json_uint_field(j, "passed_bytes", passed_bytes);
	rl_json_uint_field(j, "dropped_packets", dropped_pkts);
	rl_json_uint_field(j, "dropped_bytes", dropped_bytes);
}

static void totals_json(struct rl_json *j, const struct rl_stats_iface *s,
			bool rates)
{
	const struct rl_counters *t = &s->tot;

	rl_json_name(j, "totals");
	rl_json_object_start(j);
	/* every shown counter of RL_COUNTERS, in its order */
#define COUNTER_JSON(field, json, ...) \
	if (json) \
		rl_json_uint_field(j, json ? json : "", t->field);
	RL_COUNTERS(COUNTER_JSON)
#undef COUNTER_JSON
	rl_json_uint_field(j, "verified_evicted", s->verified_evicted);
	if (rates)
		rates_json(j, "rates", &s->rates, s->rates_ns);
	rl_json_object_end(j);
}

static void source_json(struct rl_json *j, const struct rl_stats_iface *s,
			const struct rl_stats_source *src, bool rates)
{
	const struct rl_source_sum *v = &src->sum;
	char addr[RL_SOURCE_STRLEN];

	rl_stats_format_source(&v->key, s->set.v6_prefix, addr, sizeof(addr));
	rl_json_object_start(j);
	rl_json_string_field(j, "address", addr);
	if (src->has_rule)
		rl_json_string_field(j, "rule", src->rule);
	else
		rl_json_null_field(j, "rule");
	if (src->scope[0])
		rl_json_string_field(j, "scope", src->scope);
	else
		rl_json_null_field(j, "scope");
	traffic_json(j, v->passed_pkts, v->passed_bytes, v->dropped_pkts,
		     v->dropped_bytes);
	rl_json_uint_field(j, "window_packets", v->window_pkts);
	rl_json_uint_field(j, "window_bytes", v->window_bytes);
	rl_json_bool_field(j, "tracked", src->tracked);
	rl_json_bool_field(j, "verified", src->verified);
	rl_json_uint_or_null_field(j, "ban_ms_left", src->banned,
				   src->ban_ms_left);
	if (rates)
		rates_json(j, "rates", &src->rates, 0);
	rl_json_object_end(j);
}

static void iface_json(struct rl_json *j, const struct rl_stats_iface *s,
		       bool rates)
{
	const struct rl_settings *set = &s->set;

	rl_json_object_start(j);
	rl_json_string_field(j, "ifname", s->name);
	rl_json_uint_field(j, "ifindex", set->ifindex);
	rl_json_string_field(j, "mode", rl_mode_name(set->mode));
	rl_json_bool_field(j, "dry_run", set->flags & RL_F_DRY_RUN);
	rl_json_bool_field(j, "pass_malformed", set->flags & RL_F_PASS_MALFORMED);
	rl_json_uint_field(j, "window_ms", set->window_ns / RL_NSEC_PER_MSEC);
	rl_json_uint_field(j, "buckets", set->nbuckets);
	rl_json_uint_field(j, "ipv6_prefix", set->v6_prefix);
	rl_json_uint_field(j, "max_sources", s->max_sources);
	rl_json_uint_field(j, "tracked_sources", s->tracked);
	rl_json_uint_field(j, "scoped_windows", s->scoped_windows);
	rl_json_uint_field(j, "refused_sources", s->refused_only);
	rl_json_uint_field(j, "banned_sources", s->nbans);
	rl_json_uint_field(j, "verified_sources", s->verified_sources);
	rl_json_uint_field(j, "verified_ttl_ms", set->verified_ttl_ns / RL_NSEC_PER_MSEC);
	totals_json(j, s, rates);
	rl_json_name(j, "sources");
	rl_json_array_start(j);
	for (size_t k = 0; k < s->nsrc; k++)
		source_json(j, s, &s->src[k], rates);
	rl_json_array_end(j);
	rl_json_name(j, "bans");
	rl_json_array_start(j);
	for (size_t k = 0; k < s->nbans; k++)
		rl_ban_json(j, &s->bans[k], set->v6_prefix);
	rl_json_array_end(j);
	rl_json_object_end(j);
}

/* One line: {"interfaces": [...]} (and "time", "interval_ms" with --watch). */
int rl_stats_print_json(FILE *f, const struct rl_stats_view *v)
{
	struct rl_json j;

	rl_json_begin(&j, f);
	rl_json_object_start(&j);
	if (v->watch) {
		rl_json_uint_field(&j, "time", (__u64)v->wall);
		rl_json_uint_field(&j, "interval_ms", v->interval_ns / RL_NSEC_PER_MSEC);
	}
	rl_json_name(&j, "interfaces");
	rl_json_array_start(&j);
	for (size_t i = 0; i < v->n; i++)
		iface_json(&j, &v->ifs[i], v->rates);
	rl_json_array_end(&j);
	rl_json_object_end(&j);
	return rl_json_end(&j);
}
