// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "cli/json_writer.h"
#include "lib/rule.h"
#include "lib/settings.h"
#include "cli/stats_view.h"
#include "cli/table.h"

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
	SRC_ADDRESS, SRC_RULE, SRC_PASSED_PKTS, SRC_PASSED_BYTES,
	SRC_DROPPED_PKTS, SRC_DROPPED_BYTES, SRC_WINDOW_PKTS, SRC_WINDOW_BYTES,
	SRC_VERIFIED, SRC_PASSED_PPS, SRC_PASSED_BPS, SRC_DROPPED_PPS, SRC_DROPPED_BPS,
	SRC_COLS
};

static const struct rl_table_col source_cols[SRC_COLS] = {
	{ "ADDRESS", true }, { "RULE", true },
	{ "PASSED(pkts)", false }, { "PASSED(bytes)", false },
	{ "DROPPED(pkts)", false }, { "DROPPED(bytes)", false },
	{ "WINDOW(pkts)", false }, { "WINDOW(bytes)", false },
	{ "VERIFIED", true }, { "PASSED(pps)", false }, { "PASSED(B/s)", false },
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
		snprintf(buf, len, "%s%s%s", src->has_rule ? src->rule : "-",
			 src->scope[0] ? " " : "", src->scope);
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

static void print_iface(FILE *f, const struct rl_stats_iface *s, bool watch)
{
	static const struct rl_table_col tot_cols[] = {
		{ "", true }, { "PACKETS", false }, { "BYTES", false },
		{ "PACKETS/s", false }, { "BYTES/s", false },
	};
	const struct rl_settings *set = &s->set;
	char window[32];

	rl_format_duration(set->window_ns, window, sizeof(window));
	fprintf(f, "%s (ifindex %u): %s XDP, window %s in %u buckets, dry run %s%s\n",
		s->name, set->ifindex, rl_mode_name(set->mode), window,
		set->nbuckets, set->flags & RL_F_DRY_RUN ? "on" : "off",
		set->flags & RL_F_PASS_MALFORMED ? ", malformed frames pass" : "");
	rl_table_print(f, tot_cols, watch ? 5 : 3, TOT_ROWS, totals_cell, s);
	fprintf(f, "sources: %" PRIu64 " tracked (max %" PRIu64 ")", (uint64_t)s->tracked,
		(uint64_t)s->max_sources);
	if (s->scoped_windows)
		fprintf(f, " of which %" PRIu64 " scoped rules' windows",
			(uint64_t)s->scoped_windows);
	fprintf(f, ", %" PRIu64 " created, %" PRIu64 " packets untracked; %" PRIu64
		" refused without an entry, %" PRIu64 " refused packets unlisted\n",
		(uint64_t)s->tot.new_sources, (uint64_t)s->tot.untracked_pkts,
		(uint64_t)s->refused_only, (uint64_t)s->tot.refused_unlisted_pkts);
	fprintf(f, "verified: %" PRIu64 " sources the host answered, %" PRIu64
		" answers seen by the egress hook\n",
		(uint64_t)s->verified_sources, (uint64_t)s->tot.replies);
	fprintf(f, "SYN cookies: %" PRIu64 " sent, %" PRIu64 " valid (their ACKs passed), %"
		PRIu64 " bad (judged as any packet)\n", (uint64_t)s->tot.cookies_sent,
		(uint64_t)s->tot.cookies_valid, (uint64_t)s->tot.cookies_bad);
	fprintf(f, "events: %" PRIu64 " lost (not reported to 'xdp-ratelimit events')\n",
		(uint64_t)s->tot.events_lost);
	fputc('\n', f);
	if (!s->nsrc) {
		fprintf(f, "no sources seen\n");
		return;
	}
	rl_table_print(f, source_cols, watch ? SRC_COLS : SRC_PASSED_PPS, s->nsrc,
		    source_cell, s);
	if (s->nbans) {
		fprintf(f, "\nbanned: %zu source%s\n", s->nbans, s->nbans == 1 ? "" : "s");
		rl_bans_print_table(f, s->bans, s->nbans, set->v6_prefix);
	}
}

/* ---- bans --------------------------------------------------------- */

enum { BAN_ADDRESS, BAN_RULE, BAN_LEFT, BAN_COLS };

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
			 __u32 v6_prefix)
{
	static const struct rl_table_col cols[BAN_COLS] = {
		{ "ADDRESS", true }, { "RULE", true }, { "TIME_LEFT", false },
	};
	struct ban_table t = { rows, v6_prefix };

	rl_table_print(f, cols, BAN_COLS, n, ban_cell, &t);
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
		print_iface(f, &v->ifs[i], v->watch);
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
			bool watch)
{
	const struct rl_counters *t = &s->tot;

	rl_json_name(j, "totals");
	rl_json_object_start(j);
	traffic_json(j, t->passed_pkts, t->passed_bytes, t->dropped_pkts,
		     t->dropped_bytes);
	rl_json_uint_field(j, "malformed_packets", t->malformed_pkts);
	rl_json_uint_field(j, "non_ip_packets", t->non_ip_pkts);
	rl_json_uint_field(j, "encap_packets", t->encap_pkts);
	rl_json_uint_field(j, "new_sources", t->new_sources);
	rl_json_uint_field(j, "untracked_packets", t->untracked_pkts);
	rl_json_uint_field(j, "refused_unlisted_packets", t->refused_unlisted_pkts);
	rl_json_uint_field(j, "banned_packets", t->banned_pkts);
	rl_json_uint_field(j, "events_lost", t->events_lost);
	rl_json_uint_field(j, "replies", t->replies);
	rl_json_uint_field(j, "syn_cookies_sent", t->cookies_sent);
	rl_json_uint_field(j, "syn_cookies_valid", t->cookies_valid);
	rl_json_uint_field(j, "syn_cookies_bad", t->cookies_bad);
	if (watch)
		rates_json(j, "rates", &s->rates, s->rates_ns);
	rl_json_object_end(j);
}

static void source_json(struct rl_json *j, const struct rl_stats_iface *s,
			const struct rl_stats_source *src, bool watch)
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
	if (watch)
		rates_json(j, "rates", &src->rates, 0);
	rl_json_object_end(j);
}

static void iface_json(struct rl_json *j, const struct rl_stats_iface *s,
		       bool watch)
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
	totals_json(j, s, watch);
	rl_json_name(j, "sources");
	rl_json_array_start(j);
	for (size_t k = 0; k < s->nsrc; k++)
		source_json(j, s, &s->src[k], watch);
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
		iface_json(&j, &v->ifs[i], v->watch);
	rl_json_array_end(&j);
	rl_json_object_end(&j);
	return rl_json_end(&j);
}
