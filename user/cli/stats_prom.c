// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * stats --prometheus and the exporter's /metrics: the Prometheus text
 * exposition format (version 0.0.4). Every family has HELP and TYPE lines
 * and its samples together; counters end in _total; per-source series
 * only for the sources shown (--top), so cardinality stays bounded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include "cli/stats_view.h"
#include "cli/text.h"

#define PROM_PREFIX	"xdp_ratelimit_"

/* A value of each interface: a __u64 in struct rl_stats_iface. */
struct iface_metric {
	const char *name;		/* after PROM_PREFIX */
	const char *type;		/* counter or gauge */
	const char *help;
	const char *verdict;		/* its verdict label, or NULL */
	size_t offset;
};

#define IFACE_U64(field)	offsetof(struct rl_stats_iface, field)

/*
 * The counters of RL_COUNTERS that have a family, then the gauges. Rows of
 * one family need not follow each other: the writer gathers a family's
 * samples under the HELP of its first row.
 */
#define COUNTER_METRIC(field, json, prom, verdict, help) \
	{ prom, "counter", help, verdict, IFACE_U64(tot.field) },
static const struct iface_metric iface_metrics[] = {
	RL_COUNTERS(COUNTER_METRIC)
	{ "sources", "gauge",
	  "Entries of the source table: one per tracked source, one more per scoped rule a source has a window under.",
	  NULL, IFACE_U64(tracked) },
	{ "scoped_windows", "gauge", "Entries of the source table that are scoped rules' windows.",
	  NULL, IFACE_U64(scoped_windows) },
	{ "sources_max", "gauge", "Sources the source table is sized for (attach --max-sources).",
	  NULL, IFACE_U64(max_sources) },
	{ "refused_sources", "gauge",
	  "Sources in the refused table (refused before they were tracked).",
	  NULL, IFACE_U64(refused) },
	{ "refused_sources_max", "gauge", "Entries the refused table holds at most.",
	  NULL, IFACE_U64(refused_max) },
	{ "verified_sources", "gauge",
	  "Sources that proved their return path within --verified-ttl (Verified sources).",
	  NULL, IFACE_U64(verified_sources) },
	{ "sync_fields_rejected_total", "counter",
	  "Other hosts' fields in the fleet's Redis the sync agent ignored, by why: format, mac "
	  "(not written with the fleet key), range, date (since the agent started).",
	  "format", IFACE_U64(sync_rejected[0]) },
	{ "sync_fields_rejected_total", NULL, NULL, "mac", IFACE_U64(sync_rejected[1]) },
	{ "sync_fields_rejected_total", NULL, NULL, "range", IFACE_U64(sync_rejected[2]) },
	{ "sync_fields_rejected_total", NULL, NULL, "date", IFACE_U64(sync_rejected[3]) },
	{ "sync_key_errors_total", "counter",
	  "Redis keys the sync agent got an error for (a key of another type): those sources counted locally.",
	  NULL, IFACE_U64(sync_key_errors) },
	{ "verified_evicted_total", "counter",
	  "Verified entries the full verified table pushed out (size it: Verified sources).",
	  NULL, IFACE_U64(verified_evicted) },
};
#undef COUNTER_METRIC

/* A label value, escaped as the format wants (\\, \" and \n) and valid
 * UTF-8 whatever the bytes of an interface name (text.h). */
static void label_value(FILE *f, const char *s)
{
	fputc('"', f);
	rl_text_prometheus(f, s);
	fputc('"', f);
}

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP " PROM_PREFIX "%s %s\n# TYPE " PROM_PREFIX "%s %s\n",
		name, help, name, type);
}

static void sample_start(FILE *f, const char *name, const char *ifname)
{
	fprintf(f, PROM_PREFIX "%s{ifname=", name);
	label_value(f, ifname);
}

static void sample_end(FILE *f, const char *verdict, __u64 v)
{
	if (verdict)
		fprintf(f, ",verdict=\"%s\"", verdict);
	fprintf(f, "} %" PRIu64 "\n", (uint64_t)v);
}

/* source packets or bytes of every shown source, both verdicts */
static void source_family(FILE *f, const struct rl_stats_view *v, bool bytes)
{
	const char *name = bytes ? "source_bytes_total" : "source_packets_total";
	char addr[RL_SOURCE_STRLEN];

	family(f, name, "counter", bytes ?
	       "Bytes passed or dropped per source, for the top sources only (stats --top)." :
	       "Frames passed or dropped per source, for the top sources only (stats --top).");
	for (size_t i = 0; i < v->n; i++) {
		const struct rl_stats_iface *s = &v->ifs[i];

		for (size_t k = 0; k < s->nsrc; k++) {
			const struct rl_stats_source *src = &s->src[k];
			const struct rl_source_sum *sum = &src->sum;

			rl_stats_format_source(&sum->key, s->set.v6_prefix,
					       addr, sizeof(addr));
			for (int d = 0; d < 2; d++) {
				sample_start(f, name, s->name);
				fputs(",source=", f);
				label_value(f, addr);
				fputs(",rule=", f);
				label_value(f, src->has_rule ? src->rule : "none");
				if (src->scope[0]) {	/* a scoped window's row */
					fputs(",scope=", f);
					label_value(f, src->scope);
				}
				sample_end(f, d ? "dropped" : "passed",
					   d ? (bytes ? sum->dropped_bytes : sum->dropped_pkts) :
					   (bytes ? sum->passed_bytes : sum->passed_pkts));
			}
		}
	}
}

/* A sample for every state of each interface, 1 for the one it is in,
 * so that a rule can test any state and a change of state ends a series. */
static void attached_family(FILE *f, const struct rl_stats_view *v)
{
	family(f, "attached", "gauge",
	       "1 for the state status judges the attachment in (ok, broken, gone), 0 for the others.");
	for (size_t i = 0; i < v->nattached; i++)
		for (int st = 0; st < RL_ATTACHED_NR_STATES; st++) {
			sample_start(f, "attached", v->attached[i].name);
			fprintf(f, ",state=\"%s\"} %d\n", rl_attached_state_name(st),
				st == (int)v->attached[i].state);
		}
}

/* rule packets or bytes of every rule, both verdicts: a rule is its
 * prefix and its scope ("" when unscoped) */
static void rule_family(FILE *f, const struct rl_stats_view *v, bool bytes)
{
	const char *name = bytes ? "rule_bytes_total" : "rule_packets_total";

	family(f, name, "counter", bytes ?
	       "Bytes each rule passed or dropped since it was made (a banned source's drops are in banned_packets_total)." :
	       "Frames each rule passed or dropped since it was made (a banned source's drops are in banned_packets_total).");
	for (size_t i = 0; i < v->n; i++) {
		const struct rl_stats_iface *s = &v->ifs[i];

		for (size_t k = 0; k < s->nrules; k++) {
			const struct rl_stats_rule *r = &s->rules[k];

			for (int d = 0; d < 2; d++) {
				sample_start(f, name, s->name);
				fputs(",rule=", f);
				label_value(f, r->prefix);
				fputs(",scope=", f);
				label_value(f, r->scope);
				sample_end(f, d ? "dropped" : "passed",
					   d ? (bytes ? r->c.dropped_bytes : r->c.dropped_pkts) :
					   (bytes ? r->c.passed_bytes : r->c.passed_pkts));
			}
		}
	}
}

int rl_stats_print_prometheus(FILE *f, const struct rl_stats_view *v)
{
	size_t n = sizeof(iface_metrics) / sizeof(iface_metrics[0]);

	family(f, "build_info", "gauge", "Always 1; the version of xdp-ratelimit serving the metrics.");
	fprintf(f, PROM_PREFIX "build_info{version=");
	label_value(f, RL_VERSION);
	fputs("} 1\n", f);
	attached_family(f, v);

	for (size_t r = 0; r < n; r++) {
		const struct iface_metric *m = &iface_metrics[r];

		if (!m->name || !m->help)
			continue;	/* shown nowhere, or a family's later row */
		family(f, m->name, m->type, m->help);
		for (size_t k = r; k < n; k++) {
			const struct iface_metric *row = &iface_metrics[k];

			if (!row->name || strcmp(row->name, m->name))
				continue;
			for (size_t i = 0; i < v->n; i++) {
				const struct rl_stats_iface *s = &v->ifs[i];

				sample_start(f, row->name, s->name);
				sample_end(f, row->verdict,
					   *(const __u64 *)((const char *)s + row->offset));
			}
		}
	}
	/* a size_t, not in the table of __u64s */
	family(f, "banned_sources", "gauge", "Sources a ban holds now (quota set --ban).");
	for (size_t i = 0; i < v->n; i++) {
		sample_start(f, "banned_sources", v->ifs[i].name);
		sample_end(f, NULL, v->ifs[i].nbans);
	}
	source_family(f, v, false);
	source_family(f, v, true);
	rule_family(f, v, false);
	rule_family(f, v, true);
	return ferror(f) ? -EIO : 0;
}
