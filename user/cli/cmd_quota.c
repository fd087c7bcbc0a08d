// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit quota set|del|list: rules in the running program's maps.
 * A change is one generation bump: the program picks it up on the next
 * packet of each source, which keeps its counters and window.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/cmd_args.h"
#include "lib/iface.h"
#include "cli/json_writer.h"
#include "cli/rules_file.h"
#include "lib/pin.h"
#include "lib/rule.h"
#include "lib/rule_store.h"
#include "lib/rule_txn.h"
#include "cli/table.h"
#include "cli/text.h"
#include "lib/values.h"

/* --proto and --dport as typed options: scope_opts.h's parsers; the two
 * together are checked once the operands are (rl_scope_check). */
static int parse_proto(const char *arg, void *proto, char *err, size_t len)
{
	return rl_scope_parse_proto(arg, proto, err, len);
}

static int parse_dport(const char *arg, void *field, char *err, size_t len)
{
	struct rl_scope_opts *so = field;

	return rl_scope_parse_dport(arg, &so->dport_lo, &so->dport_hi, err, len);
}

#define T struct rl_quota_args

#define OPT_QUOTA_IFACE RL_OPT_IFACE(T, iface, \
	"the interface; may be left out when one is attached ('list': only IFACE, default every one)")

/* The scope of a rule: set and del name a rule by PREFIX and these. */
#define OPT_QUOTA_SCOPE \
	{ .name = "proto", .arg = "PROTO", .kind = RL_OPT_PARSE, \
	  .parse = parse_proto, RL_OPT_FIELD(T, scope_opts.proto), \
	  RL_OPT_HAVE(T, scope_opts.proto_set), \
	  .help = "scope the rule to one protocol: tcp, udp, icmp, icmpv6 or a number 0-255" }, \
	{ .name = "dport", .arg = "PORT[-PORT]", .kind = RL_OPT_PARSE, \
	  .parse = parse_dport, RL_OPT_FIELD(T, scope_opts), \
	  RL_OPT_HAVE(T, scope_opts.dport_set), \
	  .help = "scope it to destination ports 1-65535 (with --proto tcp or udp)" }, \
	{ .name = "syn", .kind = RL_OPT_SWITCH, RL_OPT_FIELD(T, scope_opts.syn), \
	  .help = "scope it to new connections: SYN without ACK (with --proto tcp)" }

/* How each kind of rule field (lib/rule.h) parses: a rate or "unlimited",
 * a ban's duration (0: none), a count or "unlimited" (0), on or off. */
#define KIND_RATE	.kind = RL_OPT_RATE, .unlimited = true
#define KIND_DURATION	.kind = RL_OPT_DURATION, .zero = true, \
			.min = RL_NSEC_PER_MSEC, .max = RL_MAX_BAN_NS
#define KIND_COUNT	.kind = RL_OPT_COUNT, .min = 1, .max = RL_MAX_BUDGET, \
			.unlimited = true
#define KIND_SWITCH	.kind = RL_OPT_ENUM, .words = rl_opt_on_off

/* A rule field as an option of quota set: parsed by its kind into the
 * change's field, its have_* made true. */
#define FIELD_OPT(id, opt, field, kind, bit, json, column, text) \
	{ .name = opt, .arg = RL_RULE_ARG_##kind, .help = text, \
	  KIND_##kind, RL_OPT_FIELD(T, change.field), \
	  RL_OPT_HAVE(T, change.have_##id) },
static const struct rl_opt set_opts[] = {
	RL_RULE_FIELDS(FIELD_OPT)
	OPT_QUOTA_SCOPE,
	OPT_QUOTA_IFACE,
	{ 0 }
};
#undef FIELD_OPT

static const struct rl_opt del_opts[] = {
	OPT_QUOTA_SCOPE,
	OPT_QUOTA_IFACE,
	{ 0 }
};

static const struct rl_opt list_opts[] = {
	OPT_QUOTA_IFACE,
	RL_OPT_JSON(T, json, "'list': print one JSON object on one line instead of tables"),
	{ .id = 'v', .name = "verbose", .kind = RL_OPT_SWITCH, RL_OPT_FIELD(T, verbose),
	  .help = "'list': add what each rule judged: packets passed and dropped\n"
		  "(with --wide, bytes too; in JSON both), counted since the rule\n"
		  "was made" },
	{ .name = "wide", .kind = RL_OPT_SWITCH, RL_OPT_FIELD(T, wide),
	  .help = "'list': every column, each limit in its own, numbers exact\n"
		  "(default: the view fits the terminal, at least 80 columns)" },
	{ 0 }
};
#undef T

/* set and del: PREFIX */
static int prefix_operand(struct rl_parser *p, void *cfg, int argc,
			  char **argv)
{
	struct rl_quota_args *a = cfg;
	bool is_set = p->cmd->opts == set_opts;
	char err[RL_ERR_LEN];

	if (argc != 1)
		return rl_usage_err("%s: name one PREFIX, e.g. xdp-ratelimit %s 198.18.0.0/15%s",
				    p->path, p->path, is_set ? " --pps 1000" : "");
	if (rl_parse_prefix(argv[0], &a->prefix, err, sizeof(err)))
		return rl_usage_err("%s: %s", p->path, err);
	if (rl_scope_check(&a->scope_opts, &a->scope, err, sizeof(err)))
		return rl_usage_err("%s: %s", p->path, err);
	if (is_set && !rl_rule_change_any(&a->change)) {
		char opts[256] = "";

		for (const struct rl_rule_opt *o = rl_rule_opts; o->name; o++)
			snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts),
				 "%s--%s", o == rl_rule_opts ? "" : ", ", o->name);
		return rl_usage_err("quota set: give at least one of %s", opts);
	}
	return 0;
}

/* set and del: under the lock, on the one interface they name. */
static int quota_change(const char *verb, const struct rl_quota_args *a)
{
	char err[RL_ERR_LEN], name[IF_NAMESIZE], buf[RL_PREFIX_STRLEN];
	char scope[RL_SCOPE_STRLEN];
	const char *what;
	struct rl_iface ifc;
	bool under;
	int ret;

	ret = rl_iface_resolve(a->iface, name, err, sizeof(err));
	if (!ret && rl_iface_gone(name)) {
		rl_iface_gone_text(name, err, sizeof(err));
		ret = -ENODEV;
	}
	if (!ret)
		ret = rl_iface_open(name, &ifc, err, sizeof(err));
	if (ret)
		return rl_fail("quota %s: %s", verb, err);
	/* on top of the rules an interrupted restore was bringing in */
	ret = rl_rule_txn_finish(&ifc, err, sizeof(err));
	if (ret > 0)
		printf("%s: completed the rule set of an interrupted restore\n",
		       name);
	if (ret < 0) {
		rl_iface_close(&ifc);
		return rl_fail("quota %s: %s", verb, err);
	}
	/* the host's side first: a rule with cookies and no SYNPROXY would
	 * answer SYNs whose connections never complete */
	if (!strcmp(verb, "set") && a->change.have_cookies && a->change.cookies &&
	    rl_cookies_ensure(name)) {
		rl_iface_close(&ifc);
		return RL_EXIT_FAIL;
	}
	if (!strcmp(verb, "set"))
		ret = rl_rule_set_scoped(&ifc.m, &ifc.cfg.set, &a->prefix,
					 &a->scope, &a->change, err, sizeof(err));
	else
		ret = rl_rule_del_scoped(&ifc.m, &a->prefix, &a->scope, err,
					 sizeof(err));
	rl_iface_close(&ifc);
	if (ret == -ERANGE)	/* a budget the window cannot count: as attach's */
		return rl_usage_err("quota %s: %s", verb, err);
	if (ret)
		return rl_fail("quota %s: %s", verb, err);
	rl_format_prefix(&a->prefix, buf, sizeof(buf));
	rl_scope_text(&a->scope, scope, sizeof(scope));
	what = !strcmp(verb, "set") ? "set" : "deleted";
	/* 80 columns: the scope goes under the prefix when the line would
	 * pass them (a 15-character name, an IPv6 /96 and the longest scope
	 * make 90) */
	under = strlen(name) + strlen(buf) + strlen(scope) + strlen(what) + 9 >
		RL_VIEW_MIN_WIDTH;
	printf("%s: rule %s%s%s %s\n", name, buf, !scope[0] ? "" : under ? "\n  " : " ",
	       scope, what);
	return RL_EXIT_OK;
}

/* One interface's rules, as read. */
struct rule_list {
	const char *name;
	struct rl_rule rules[RL_MAX_RULES];
	int n;
	/* what each rule judged; !counted: no slot holds it yet (a restore
	 * in progress) */
	struct rl_rule_counters counters[RL_MAX_RULES];
	bool counted[RL_MAX_RULES];
	bool verbose, wide;
	int width;			/* of the table (rl_view_width) */
};

/* A rule field in JSON: null when unset; a duration in ms. */
static void field_json(struct rl_json *j, const struct rl_rule *r,
		       const struct rl_rule_opt *o)
{
	__u64 v = rl_rule_opt_value(r, o);

	if (o->kind == RL_RULE_OPT_SWITCH) {
		rl_json_bool_field(j, o->json, v);
		return;
	}
	if (o->kind == RL_RULE_OPT_DURATION)
		v /= RL_NSEC_PER_MSEC;
	rl_json_uint_or_null_field(j, o->json, rl_rule_opt_set(r, o), v);
}

/* proto, dport, syn (null when the rule has no such restriction):
 * xdp-ratelimit(8) JSON. */
static void scope_json(struct rl_json *j, const struct rl_rule *r)
{
	struct rl_scope s;
	char ports[16];
	const char *name;

	rl_rule_scope_get(r, &s);
	name = rl_proto_name(s.proto);
	rl_json_name(j, "proto");
	if (!rl_scope_any(&s))
		rl_json_null(j);
	else if (name)
		rl_json_string(j, name);
	else
		rl_json_uint(j, s.proto);
	rl_json_name(j, "dport");
	if (s.flags & RL_SCOPE_F_DPORT) {
		rl_scope_dport_text(&s, ports, sizeof(ports));
		rl_json_string(j, ports);
	} else {
		rl_json_null(j);
	}
	if (s.flags & RL_SCOPE_F_SYN)
		rl_json_bool_field(j, "syn", true);
	else
		rl_json_null_field(j, "syn");
}

/* passed_packets, passed_bytes, dropped_packets, dropped_bytes (null
 * while no slot holds the rule) */
static void counters_json(struct rl_json *j, const struct rule_list *l, int i)
{
	const struct rl_rule_counters *c = &l->counters[i];
	bool ok = l->counted[i];

	rl_json_uint_or_null_field(j, "passed_packets", ok, c->passed_pkts);
	rl_json_uint_or_null_field(j, "passed_bytes", ok, c->passed_bytes);
	rl_json_uint_or_null_field(j, "dropped_packets", ok, c->dropped_pkts);
	rl_json_uint_or_null_field(j, "dropped_bytes", ok, c->dropped_bytes);
}

static void rules_json(struct rl_json *j, const void *ctx)
{
	const struct rule_list *l = ctx;
	char pfx[RL_PREFIX_STRLEN];

	rl_json_object_start(j);
	rl_json_string_field(j, "ifname", l->name);
	rl_json_name(j, "rules");
	rl_json_array_start(j);
	for (int i = 0; i < l->n; i++) {
		const struct rl_rule *r = &l->rules[i];
		struct rl_prefix p;

		rl_rule_prefix(r, &p);
		rl_format_prefix(&p, pfx, sizeof(pfx));
		rl_json_object_start(j);
		rl_json_string_field(j, "prefix", pfx);
		for (const struct rl_rule_opt *o = rl_rule_opts; o->name; o++)
			field_json(j, r, o);
		scope_json(j, r);
		if (l->verbose)
			counters_json(j, l, i);
		rl_json_object_end(j);
	}
	rl_json_array_end(j);
	rl_json_object_end(j);
}

/*
 * The columns of quota list: the prefix, the scope, with -v what the rule
 * judged (bytes with --wide only), then all its limits as the options that
 * set them or (--wide) one column per rule field (RL_RULE_FIELDS).
 */
enum { COL_PREFIX, COL_SCOPE, COL_PASSED_PKTS, COL_DROPPED_PKTS,
       COL_PASSED_BYTES, COL_DROPPED_BYTES, COL_LIMITS, COL_FIELD,
       NR_COLS = COL_FIELD + RL_RULE_NFIELDS };
static void counter_cell(const struct rule_list *l, size_t row, int col,
			 char *buf, size_t len)
{
	const struct rl_rule_counters *c = &l->counters[row];

	if (!l->counted[row]) {
		snprintf(buf, len, "-");
		return;
	}
	rl_table_count(buf, len, col == COL_PASSED_PKTS ? c->passed_pkts :
		       col == COL_DROPPED_PKTS ? c->dropped_pkts :
		       col == COL_PASSED_BYTES ? c->passed_bytes :
		       c->dropped_bytes, l->wide);
}

static void rule_cell(const void *ctx, size_t row, int col, char *buf,
		      size_t len)
{
	const struct rule_list *l = ctx;
	const struct rl_rule *r = &l->rules[row];
	struct rl_prefix p;
	struct rl_scope s;

	if (col == COL_PREFIX) {
		rl_rule_prefix(r, &p);
		rl_format_prefix(&p, buf, len);
	} else if (col == COL_SCOPE) {
		rl_rule_scope_get(r, &s);
		rl_scope_text(&s, buf, len);
		if (!buf[0])
			snprintf(buf, len, "-");
	} else if (col >= COL_PASSED_PKTS && col <= COL_DROPPED_BYTES) {
		counter_cell(l, row, col, buf, len);
	} else if (col == COL_LIMITS) {
		/* wrapped between options, never inside one */
		rl_rule_limits_text(r, buf, len);
		rl_table_keep_options(buf);
	} else {
		rl_rule_opt_text(r, &rl_rule_opts[col - COL_FIELD], buf, len);
	}
}

static void rules_table(const void *ctx)
{
	static const struct rl_table_col fixed[COL_FIELD] = {
		[COL_PREFIX] = { "PREFIX", true, 0 },
		[COL_SCOPE] = { "SCOPE", true, 0 },
		[COL_PASSED_PKTS] = { "PASSED", false, 0 },
		[COL_DROPPED_PKTS] = { "DROPPED", false, 0 },
		[COL_PASSED_BYTES] = { "PASSED(bytes)", false, 0 },
		[COL_DROPPED_BYTES] = { "DROPPED(bytes)", false, 0 },
		[COL_LIMITS] = { "LIMITS", true, 0 },
	};
	const struct rule_list *l = ctx;
	struct rl_table_col cols[NR_COLS];
	char name[RL_SHOWN_LEN];

	memcpy(cols, fixed, sizeof(fixed));
	for (int i = 0; i < RL_RULE_NFIELDS; i++)
		cols[COL_FIELD + i] = (struct rl_table_col){ rl_rule_opts[i].column, false, 0 };
	for (int c = 0; c < NR_COLS; c++) {
		bool counter = c >= COL_PASSED_PKTS && c <= COL_DROPPED_BYTES;
		bool bytes = c == COL_PASSED_BYTES || c == COL_DROPPED_BYTES;
		bool limit = c >= COL_FIELD;	/* one column per limit */

		if ((counter && !l->verbose) || (bytes && !l->wide) ||
		    (c == COL_LIMITS && l->wide) || (limit && !l->wide))
			cols[c].head = NULL;
	}
	printf("%s: %d rule%s\n", rl_text_shown(l->name, name, sizeof(name)), l->n,
	       l->n == 1 ? "" : "s");
	rl_table_print_fit(stdout, cols, NR_COLS, (size_t)l->n, rule_cell, l,
			   l->width);
}

static int rules_read(void *ctx, const char *name)
{
	struct rule_list *l = ctx;
	char err[RL_ERR_LEN];
	struct rl_iface ifc;
	int ret = 0;

	l->name = name;
	if (rl_iface_open(name, &ifc, err, sizeof(err)))
		return rl_fail("quota list: %s", err);
	l->n = rl_rules_read(&ifc, l->rules, RL_MAX_RULES);
	for (int i = 0; i < l->n && !ret; i++) {
		ret = rl_rule_counters_read(&ifc.m, &l->rules[i], &l->counters[i]);
		l->counted[i] = !ret;
		if (ret == -ENOENT)
			ret = 0;
	}
	rl_iface_close(&ifc);
	if (l->n < 0)
		return rl_fail("quota list: cannot read the rules of %s: %s",
			       name, strerror(-l->n));
	if (ret)
		return rl_fail("quota list: cannot read the rule counters of %s: %s",
			       name, strerror(-ret));
	return RL_EXIT_OK;
}

static int quota_list(void *cfg)
{
	static const struct rl_lister lister = {
		.cmd = "quota list", .read = rules_read, .json = rules_json,
		.table = rules_table,
	};
	const struct rl_quota_args *a = cfg;
	static struct rule_list list;

	list.verbose = a->verbose;
	list.wide = a->wide;
	list.width = rl_view_width(a->wide);
	return rl_list_ifaces(&lister, &list, a->iface, a->json);
}

static int quota_set(void *cfg)
{
	return quota_change("set", cfg);
}

static int quota_del(void *cfg)
{
	return quota_change("del", cfg);
}

static const struct rl_cmd quota_set_cmd = {
	.name = "set", .args = "PREFIX", .opts = set_opts,
	.flags = RL_CMD_LOCK, .cfg_size = sizeof(struct rl_quota_args),
	.operands = prefix_operand, .run = quota_set,
};

static const struct rl_cmd quota_del_cmd = {
	.name = "del", .args = "PREFIX", .opts = del_opts,
	.flags = RL_CMD_LOCK, .cfg_size = sizeof(struct rl_quota_args),
	.operands = prefix_operand, .run = quota_del,
};

static const struct rl_cmd quota_list_cmd = {
	.name = "list", .opts = list_opts,
	.flags = RL_CMD_ROOT, .cfg_size = sizeof(struct rl_quota_args),
	.run = quota_list,
};

const struct rl_cmd rl_cmd_quota = {
	.name = "quota",
	.summary = "set, delete or list per-source quotas (rules)",
	.doc =
		"A rule limits every source address inside PREFIX to its own --pps/--bps\n"
		"(per second, judged over the sliding window), and with --aggregate-* all\n"
		"of PREFIX together. The longest matching prefix wins. 'set' changes only\n"
		"the limits it names; 'unlimited' removes one. --pps 0 blocks PREFIX;\n"
		"--pps unlimited with no other limit allow-lists it. Changes apply at once,\n"
		"keeping every counter. --iface may be left out when one interface is\n"
		"attached; 'list' without it shows every attached interface.\n"
		"\n"
		"--new-* caps what PREFIX's unverified sources pass together: a source is\n"
		"verified once the host has answered it past a TCP handshake (within\n"
		"--verified-ttl), and a packet the newcomer budget refuses takes no table\n"
		"entry, so verified sources keep passing during a spoofed flood.\n"
		"--ban DURATION bans a source whose in-window packets of connections the\n"
		"host established exceed its own --pps/--bps: all its packets drop for\n"
		"DURATION (see 'xdp-ratelimit ban'). The default rule's aggregate and\n"
		"newcomer budgets are one window for IPv4 and IPv6 together.\n"
		"\n"
		"--proto, --dport and --syn scope a rule to part of a source's traffic,\n"
		"judged in a window of its own per source; a rule is its PREFIX and its\n"
		"scope, and 'del' names it by both. --burst N caps what a source passes\n"
		"in one bucket of the window ('unlimited' removes the cap).\n",
	.notes =
		"PREFIX: 198.18.0.7, 198.18.0.0/15, 2001:db8::/32, or default\n"
		"        (0.0.0.0/0 and ::/0).\n"
		"RATE:   a whole number with an optional k, M or G suffix (powers of 1000).\n"
		"DURATION: a whole number with suffix ms, s, m or h: 500ms, 10s, 5m, 2h.\n"
		"\n"
		"Examples:\n"
		"  xdp-ratelimit quota set default --pps 1000\n"
		"  xdp-ratelimit quota set 198.18.0.0/15 --pps 100 --aggregate-pps 10k\n"
		"  xdp-ratelimit quota set default --pps 100 --new-pps 2k --ban 1m\n"
		"  xdp-ratelimit quota set 198.18.0.7 --pps unlimited\n"
		"  xdp-ratelimit quota set default --proto tcp --syn --pps 20 --burst 5\n"
		"  xdp-ratelimit quota set default --proto udp --dport 53 --pps 50\n"
		"  xdp-ratelimit quota del default --proto tcp --syn\n"
		"  xdp-ratelimit quota del 198.18.0.0/15\n",
	.subcmds = (const struct rl_cmd *const[]){
		&quota_set_cmd, &quota_del_cmd, &quota_list_cmd, NULL,
	},
};
