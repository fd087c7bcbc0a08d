// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit quota set|del|list: rules in the running program's maps.
 * A change is one generation bump: the program picks it up on the next
 * packet of each source, which keeps its counters and window.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/cmd_args.h"
#include "lib/iface.h"
#include "cli/json_writer.h"
#include "lib/pin.h"
#include "lib/rule.h"
#include "lib/rule_store.h"
#include "lib/rule_txn.h"
#include "cli/table.h"
#include "lib/values.h"

enum { OPT_PPS = RL_OPT_FIRST, OPT_BPS, OPT_AGG_PPS, OPT_AGG_BPS,
       OPT_NEW_PPS, OPT_NEW_BPS, OPT_BAN, OPT_BURST, OPT_COOKIES, OPT_PROTO, OPT_DPORT,
       OPT_SYN, OPT_IFACE, OPT_JSON };

#define OPT_QUOTA_IFACE RL_OPT_IFACE(OPT_IFACE, \
	"the interface; may be left out when one is attached ('list': only IFACE, default every one)")

/* The scope of a rule: set and del name a rule by PREFIX and these. */
#define OPT_QUOTA_SCOPE \
	{ OPT_PROTO, "proto", "PROTO", \
	  "scope the rule to one protocol: tcp, udp, icmp, icmpv6 or a number 0-255" }, \
	{ OPT_DPORT, "dport", "PORT[-PORT]", \
	  "scope it to destination ports 1-65535 (with --proto tcp or udp)" }, \
	{ OPT_SYN, "syn", NULL, \
	  "scope it to new connections: SYN without ACK (with --proto tcp)" }

static const struct rl_opt set_opts[] = {
	{ OPT_PPS, "pps", "RATE|unlimited",
	  "packets per second each source in PREFIX may pass" },
	{ OPT_BPS, "bps", "RATE|unlimited",
	  "bytes per second each source in PREFIX may pass" },
	{ OPT_AGG_PPS, "aggregate-pps", "RATE|unlimited",
	  "packets per second all of PREFIX may pass together" },
	{ OPT_AGG_BPS, "aggregate-bps", "RATE|unlimited",
	  "bytes per second all of PREFIX may pass together" },
	{ OPT_NEW_PPS, "new-pps", "RATE|unlimited",
	  "packets per second the new sources of PREFIX may pass together" },
	{ OPT_NEW_BPS, "new-bps", "RATE|unlimited",
	  "bytes per second the new sources of PREFIX may pass together" },
	{ OPT_BAN, "ban", "DURATION|0",
	  "ban a source dropped for its own --pps/--bps for DURATION "
	  "(1ms to 1440m, a day; 0: no bans)" },
	{ OPT_BURST, "burst", "N|unlimited",
	  "packets a source may pass in one bucket of the window at most" },
	{ OPT_COOKIES, "syn-cookies", "on|off",
	  "answer a refused SYN of an unverified source with a SYN cookie (default off)" },
	OPT_QUOTA_SCOPE,
	OPT_QUOTA_IFACE,
	{ 0 }
};

static const struct rl_opt del_opts[] = {
	OPT_QUOTA_SCOPE,
	OPT_QUOTA_IFACE,
	{ 0 }
};

static const struct rl_opt list_opts[] = {
	OPT_QUOTA_IFACE,
	RL_OPT_JSON(OPT_JSON, "'list': print one JSON object on one line instead of tables"),
	{ 0 }
};

/* --ban: 0 (no bans) or a DURATION of at most RL_MAX_BAN_NS. */
static int parse_ban(const char *s, __u64 *ns)
{
	char err[RL_ERR_LEN];

	if (!strcmp(s, "0")) {
		*ns = 0;
		return 0;
	}
	if (rl_parse_duration(s, ns, err, sizeof(err)))
		return rl_usage_err("quota set: --ban: %s; a ban lasts 1ms to 1440m (a day), or 0 for no bans",
				    err);
	if (*ns > RL_MAX_BAN_NS)
		return rl_usage_err("quota set: --ban: '%s' is longer than a day: a ban lasts 1ms to 1440m, or 0 for no bans",
				    s);
	return 0;
}

/* --burst: packets per bucket, 1 to RL_MAX_BUDGET, or unlimited (0). */
static int parse_burst(const char *s, __u64 *burst)
{
	char err[RL_ERR_LEN];

	if (!strcmp(s, "unlimited")) {
		*burst = 0;
		return 0;
	}
	if (rl_parse_uint(s, "a burst", 1, RL_MAX_BUDGET, burst, err, sizeof(err)))
		return rl_usage_err("quota set: --burst: '%s' is not a burst: allowed: a whole number of packets from 1 to %llu, or unlimited",
				    s, (unsigned long long)RL_MAX_BUDGET);
	return 0;
}

/* --proto, --dport, --syn: each on its own; together in scope_operand. */
static int scope_opt(struct rl_parser *p, struct rl_scope_opts *so, int id,
		     const char *arg)
{
	char err[RL_ERR_LEN];

	switch (id) {
	case OPT_PROTO:
		so->proto_set = true;
		if (rl_scope_parse_proto(arg, &so->proto, err, sizeof(err)))
			return rl_usage_err("%s: --proto: %s", p->path, err);
		return 0;
	case OPT_DPORT:
		so->dport_set = true;
		if (rl_scope_parse_dport(arg, &so->dport_lo, &so->dport_hi,
					 err, sizeof(err)))
			return rl_usage_err("%s: --dport: %s", p->path, err);
		return 0;
	default:	/* OPT_SYN */
		so->syn = true;
		return 0;
	}
}

static int quota_opt(struct rl_parser *p, void *cfg, int id, const char *arg)
{
	struct rl_quota_args *a = cfg;
	struct rl_rule_change *ch = &a->change;
	char err[RL_ERR_LEN];
	__u64 *val;
	bool *have;

	switch (id) {
	case OPT_IFACE:
		a->iface = arg;
		return rl_iface_arg(p->path, arg);
	case OPT_JSON:
		a->json = true;
		return 0;
	case OPT_PROTO:
	case OPT_DPORT:
	case OPT_SYN:
		return scope_opt(p, &a->scope_opts, id, arg);
	case OPT_BURST:
		ch->have_burst = true;
		return parse_burst(arg, &ch->burst);
	case OPT_COOKIES:
		ch->have_cookies = true;
		ch->cookies = !strcmp(arg, "on");
		if (!ch->cookies && strcmp(arg, "off"))
			return rl_usage_err("quota set: --syn-cookies: '%s' is neither on nor off: give --syn-cookies on or --syn-cookies off", arg);
		return 0;
	case OPT_PPS:
		val = &ch->pps, have = &ch->have_pps;
		break;
	case OPT_BPS:
		val = &ch->bps, have = &ch->have_bps;
		break;
	case OPT_AGG_PPS:
		val = &ch->agg_pps, have = &ch->have_agg_pps;
		break;
	case OPT_AGG_BPS:
		val = &ch->agg_bps, have = &ch->have_agg_bps;
		break;
	case OPT_NEW_PPS:
		val = &ch->new_pps, have = &ch->have_new_pps;
		break;
	case OPT_NEW_BPS:
		val = &ch->new_bps, have = &ch->have_new_bps;
		break;
	default:	/* OPT_BAN */
		ch->have_ban = true;
		return parse_ban(arg, &ch->ban_ns);
	}
	if (rl_parse_rate(arg, true, val, err, sizeof(err)))
		return rl_usage_err("%s: --%s: %s%s", p->path, rl_opt_name(p, id), err,
				    id == OPT_NEW_PPS || id == OPT_NEW_BPS ?
				    " (allowed: 0 to 18446744073709551614 per second)" : "");
	*have = true;
	return 0;
}

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
	if (is_set && !rl_rule_change_any(&a->change))
		return rl_usage_err("quota set: give at least one of --pps, --bps, --aggregate-pps, --aggregate-bps, --new-pps, --new-bps, --ban, --burst, --syn-cookies");
	return 0;
}

/* set and del: under the lock, on the one interface they name. */
static int quota_change(const char *verb, const struct rl_quota_args *a)
{
	char err[RL_ERR_LEN], name[IF_NAMESIZE], buf[RL_PREFIX_STRLEN];
	char scope[RL_SCOPE_STRLEN + 1] = "";
	struct rl_iface ifc;
	int ret;

	ret = rl_iface_resolve(a->iface, name, err, sizeof(err));
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
	if (ret)
		return rl_fail("quota %s: %s", verb, err);
	rl_format_prefix(&a->prefix, buf, sizeof(buf));
	if (rl_scope_any(&a->scope)) {
		scope[0] = ' ';
		rl_scope_text(&a->scope, scope + 1, sizeof(scope) - 1);
	}
	printf("%s: rule %s%s %s\n", name, buf, scope,
	       !strcmp(verb, "set") ? "set" : "deleted");
	return RL_EXIT_OK;
}

/* One interface's rules, as read. */
struct rule_list {
	const char *name;
	struct rl_rule rules[RL_MAX_RULES];
	int n;
};

static void limit_json(struct rl_json *j, const char *name, __u64 v)
{
	rl_json_uint_or_null_field(j, name, v != RL_UNLIMITED, v);
}

/* proto, dport, syn (null when the rule has no such restriction) and
 * burst: xdp-ratelimit(8) JSON. */
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
	rl_json_uint_or_null_field(j, "burst", r->burst, r->burst);
	rl_json_bool_field(j, "syn_cookies", r->flags & RL_RULE_F_COOKIES);
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
		limit_json(j, "pps", r->pps);
		limit_json(j, "bps", r->bps);
		limit_json(j, "aggregate_pps", r->agg_pps);
		limit_json(j, "aggregate_bps", r->agg_bps);
		limit_json(j, "new_pps", r->new_pps);
		limit_json(j, "new_bps", r->new_bps);
		rl_json_uint_or_null_field(j, "ban_ms", r->ban_ns,
					   r->ban_ns / RL_NSEC_PER_MSEC);
		scope_json(j, r);
		rl_json_object_end(j);
	}
	rl_json_array_end(j);
	rl_json_object_end(j);
}

/* The columns of quota list: the prefix, a limit per rule field, the ban. */
enum { COL_PREFIX, COL_SCOPE, COL_PPS, COL_BPS, COL_AGG_PPS, COL_AGG_BPS,
       COL_NEW_PPS, COL_NEW_BPS, COL_BAN, COL_BURST, COL_COOKIES, NR_COLS };

static void rule_cell(const void *ctx, size_t row, int col, char *buf,
		      size_t len)
{
	const struct rl_rule *r = &((const struct rule_list *)ctx)->rules[row];
	const __u64 limits[] = {
		[COL_PPS] = r->pps, [COL_BPS] = r->bps,
		[COL_AGG_PPS] = r->agg_pps, [COL_AGG_BPS] = r->agg_bps,
		[COL_NEW_PPS] = r->new_pps, [COL_NEW_BPS] = r->new_bps,
	};
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
	} else if (col == COL_COOKIES) {
		snprintf(buf, len, "%s", r->flags & RL_RULE_F_COOKIES ? "on" : "-");
	} else if (col == COL_BURST) {
		if (r->burst)
			snprintf(buf, len, "%llu", (unsigned long long)r->burst);
		else
			snprintf(buf, len, "-");
	} else if (col == COL_BAN) {
		if (r->ban_ns)
			rl_format_duration(r->ban_ns, buf, len);
		else
			snprintf(buf, len, "-");
	} else if (limits[col] == RL_UNLIMITED) {
		snprintf(buf, len, "-");
	} else {
		snprintf(buf, len, "%llu", (unsigned long long)limits[col]);
	}
}

static void rules_table(const void *ctx)
{
	static const struct rl_table_col cols[NR_COLS] = {
		{ "PREFIX", true }, { "SCOPE", true }, { "PPS", false },
		{ "BPS", false }, { "AGGREGATE_PPS", false },
		{ "AGGREGATE_BPS", false }, { "NEW_PPS", false },
		{ "NEW_BPS", false }, { "BAN", false }, { "BURST", false },
		{ "SYN_COOKIES", true },
	};
	const struct rule_list *l = ctx;

	printf("%s: %d rule%s\n", l->name, l->n, l->n == 1 ? "" : "s");
	rl_table_print(stdout, cols, NR_COLS, (size_t)l->n, rule_cell, l);
}

static int rules_read(void *ctx, const char *name)
{
	struct rule_list *l = ctx;
	char err[RL_ERR_LEN];
	struct rl_iface ifc;

	l->name = name;
	if (rl_iface_open(name, &ifc, err, sizeof(err)))
		return rl_fail("quota list: %s", err);
	l->n = rl_rules_read(&ifc, l->rules, RL_MAX_RULES);
	rl_iface_close(&ifc);
	if (l->n < 0)
		return rl_fail("quota list: cannot read the rules of %s: %s",
			       name, strerror(-l->n));
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
	.opt = quota_opt, .operands = prefix_operand, .run = quota_set,
};

static const struct rl_cmd quota_del_cmd = {
	.name = "del", .args = "PREFIX", .opts = del_opts,
	.flags = RL_CMD_LOCK, .cfg_size = sizeof(struct rl_quota_args),
	.opt = quota_opt, .operands = prefix_operand, .run = quota_del,
};

static const struct rl_cmd quota_list_cmd = {
	.name = "list", .opts = list_opts,
	.flags = RL_CMD_ROOT, .cfg_size = sizeof(struct rl_quota_args),
	.opt = quota_opt, .run = quota_list,
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
		"--new-* caps what PREFIX's new sources pass together: a source is new\n"
		"until it has been tracked for one whole window, and a packet the newcomer\n"
		"budget refuses takes no table entry, so established sources keep passing\n"
		"during a spoofed flood. --ban DURATION bans a source whose packet is\n"
		"dropped for its own --pps/--bps: all its packets drop for DURATION (see\n"
		"'xdp-ratelimit ban'). The default rule's aggregate and newcomer budgets\n"
		"are one window for IPv4 and IPv6 together.\n"
		"\n"
		"--proto, --dport and --syn scope a rule to part of a source's traffic,\n"
		"judged in a window of its own per source; a rule is its PREFIX and its\n"
		"scope, and 'del' names it by both. --burst N caps what a source passes\n"
		"in one bucket of the window ('unlimited' removes the cap).\n",
	.notes =
		"PREFIX: 198.18.0.7, 198.18.0.0/15, 2001:db8::/32, or default (0.0.0.0/0 and ::/0).\n"
		"RATE:   a whole number with an optional k, M or G suffix (powers of 1000).\n"
		"DURATION: a whole number with suffix ms, s or m: 500ms, 10s, 5m.\n"
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
