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
#include "cli/stats_view.h"

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

/* Rows of one family follow each other: its samples must be together. */
static const struct iface_metric iface_metrics[] = {
	{ "packets_total", "counter",
	  "Frames the XDP program passed or dropped since attach.",
	  "passed", IFACE_U64(tot.passed_pkts) },
	{ "packets_total", NULL, NULL, "dropped", IFACE_U64(tot.dropped_pkts) },
	{ "bytes_total", "counter",
	  "Bytes of the frames passed or dropped since attach (frame length seen by XDP).",
	  "passed", IFACE_U64(tot.passed_bytes) },
	{ "bytes_total", NULL, NULL, "dropped", IFACE_U64(tot.dropped_bytes) },
	{ "malformed_packets_total", "counter",
	  "Frames too short or bad to read a source address from (also in packets_total).",
	  NULL, IFACE_U64(tot.malformed_pkts) },
	{ "non_ip_packets_total", "counter",
	  "Frames that are neither IPv4 nor IPv6, always passed (also in packets_total).",
	  NULL, IFACE_U64(tot.non_ip_pkts) },
	{ "encap_packets_total", "counter",
	  "Frames in an encapsulation the program does not read (a third VLAN tag, PPPoE, MPLS): "
	  "dropped unless --pass-malformed (also in packets_total).",
	  NULL, IFACE_U64(tot.encap_pkts) },
	{ "banned_packets_total", "counter",
	  "Frames dropped because their source was banned (quota set --ban; also in packets_total).",
	  NULL, IFACE_U64(tot.banned_pkts) },
	{ "sources_created_total", "counter",
	  "Sources that got an entry in the source table (new, or again after eviction).",
	  NULL, IFACE_U64(tot.new_sources) },
	{ "untracked_packets_total", "counter",
	  "Frames judged without per-source state because the source table refused an entry.",
	  NULL, IFACE_U64(tot.untracked_pkts) },
	{ "refused_unlisted_packets_total", "counter",
	  "Frames refused before their source was tracked and not listed in the refused table.",
	  NULL, IFACE_U64(tot.refused_unlisted_pkts) },
	{ "syn_cookies_sent_total", "counter",
	  "SYN-ACKs carrying a SYN cookie the program sent for refused SYNs (quota set --syn-cookies).",
	  NULL, IFACE_U64(tot.cookies_sent) },
	{ "syn_cookies_valid_total", "counter",
	  "ACKs that returned a valid SYN cookie: passed, their source verified.",
	  NULL, IFACE_U64(tot.cookies_valid) },
	{ "syn_cookies_bad_total", "counter",
	  "ACKs of unverified sources under a cookie rule whose SYN cookie was not valid: judged as any packet.",
	  NULL, IFACE_U64(tot.cookies_bad) },
	{ "events_lost_total", "counter",
	  "Events the program could not report (its rate per CPU spent, or the ring buffer full).",
	  NULL, IFACE_U64(tot.events_lost) },
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
	  "Sources the host answered past a handshake within --verified-ttl (Verified sources).",
	  NULL, IFACE_U64(verified_sources) },
};

/* A label value, escaped as the format wants: \\, \" and \n. */
static void label_value(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
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

int rl_stats_print_prometheus(FILE *f, const struct rl_stats_view *v)
{
	size_t n = sizeof(iface_metrics) / sizeof(iface_metrics[0]);

	for (size_t r = 0; r < n; r++) {
		const struct iface_metric *m = &iface_metrics[r];

		if (m->help)
			family(f, m->name, m->type, m->help);
		for (size_t i = 0; i < v->n; i++) {
			const struct rl_stats_iface *s = &v->ifs[i];

			sample_start(f, m->name, s->name);
			sample_end(f, m->verdict,
				   *(const __u64 *)((const char *)s + m->offset));
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
	return ferror(f) ? -EIO : 0;
}
