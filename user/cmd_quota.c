// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit quota set|del|list: rules in the running program's maps.
 * A change is one generation bump: the program picks it up on the next
 * packet of each source, which keeps its counters and window.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "pin.h"
#include "rules.h"
#include "units.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-ratelimit quota set PREFIX [--pps RATE|unlimited] [--bps RATE|unlimited]\n"
		"                              [--aggregate-pps RATE|unlimited]\n"
		"                              [--aggregate-bps RATE|unlimited]\n"
		"                              [--new-pps RATE|unlimited] [--new-bps RATE|unlimited]\n"
		"                              [--ban DURATION|0] [--iface IFACE]\n"
		"       xdp-ratelimit quota del PREFIX [--iface IFACE]\n"
		"       xdp-ratelimit quota list [--iface IFACE] [--json]\n"
		"\n"
		"A rule limits every source address inside PREFIX to its own --pps/--bps\n"
		"(per second, judged over the sliding window), and with --aggregate-* all\n"
		"of PREFIX together. --new-* caps what PREFIX's *new* sources pass together:\n"
		"a source is new until it has been tracked for one whole window, and a\n"
		"packet the newcomer budget refuses takes no table entry, so established\n"
		"sources keep passing during a spoofed flood. --ban DURATION bans a source\n"
		"whose packet is dropped for its own --pps/--bps: all its packets drop for\n"
		"DURATION (1ms to 1440m, a day; 0: no bans; see 'xdp-ratelimit ban').\n"
		"The longest matching prefix wins. 'set' changes only\n"
		"the limits it names; 'unlimited' removes one. --pps 0 blocks PREFIX;\n"
		"--pps unlimited with no other limit allow-lists it. Changes apply at once,\n"
		"keeping every counter. --iface may be left out when one interface is\n"
		"attached; 'list' without it shows every attached interface.\n"
		"\n"
		"PREFIX: 198.18.0.7, 198.18.0.0/15, 2001:db8::/32, or default (0.0.0.0/0 and ::/0).\n"
		"RATE:   a whole number with an optional k, M or G suffix (powers of 1000).\n"
		"\n"
		"Examples:\n"
		"  xdp-ratelimit quota set default --pps 1000\n"
		"  xdp-ratelimit quota set 198.18.0.0/15 --pps 100 --aggregate-pps 10k\n"
		"  xdp-ratelimit quota set default --pps 100 --new-pps 2k --ban 1m\n"
		"  xdp-ratelimit quota set 198.18.0.7 --pps unlimited\n"
		"  xdp-ratelimit quota del 198.18.0.0/15\n");
}

enum { OPT_PPS = 256, OPT_BPS, OPT_AGG_PPS, OPT_AGG_BPS, OPT_NEW_PPS,
	OPT_NEW_BPS, OPT_IFACE, OPT_JSON, OPT_BAN };

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

struct quota_args {
	const char *iface;
	bool json;
	struct rl_prefix prefix;
	struct rl_rule_change change;
};

static int parse_args(const char *verb, int argc, char **argv,
		      struct quota_args *a)
{
	static const struct option opts[] = {
		{ "pps", required_argument, NULL, OPT_PPS },
		{ "bps", required_argument, NULL, OPT_BPS },
		{ "aggregate-pps", required_argument, NULL, OPT_AGG_PPS },
		{ "aggregate-bps", required_argument, NULL, OPT_AGG_BPS },
		{ "new-pps", required_argument, NULL, OPT_NEW_PPS },
		{ "new-bps", required_argument, NULL, OPT_NEW_BPS },
		{ "iface", required_argument, NULL, OPT_IFACE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "ban", required_argument, NULL, OPT_BAN },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct rl_rule_change *ch = &a->change;
	bool is_set = !strcmp(verb, "set"), is_list = !strcmp(verb, "list");
	char err[RL_ERR_LEN], cmd[16];
	int c, ret;

	snprintf(cmd, sizeof(cmd), "quota %s", verb);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		__u64 *val = NULL;
		bool *have = NULL;

		switch (c) {
		case 'h':
			usage(stdout);
			return -1;
		case OPT_IFACE:
			a->iface = optarg;
			continue;
		case OPT_JSON:
			if (!is_list)
				return rl_usage_err("%s: --json is for 'quota list'", cmd);
			a->json = true;
			continue;
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
		case OPT_BAN:
			if (!is_set)
				return rl_usage_err("%s: --ban is for 'quota set'", cmd);
			ret = parse_ban(optarg, &ch->ban_ns);
			if (ret)
				return ret;
			ch->have_ban = true;
			continue;
		default:
			return rl_bad_option(cmd, c, argv);
		}
		if (!is_set)
			return rl_usage_err("%s: --%s is for 'quota set'", cmd,
					    opts[c - OPT_PPS].name);
		if (rl_parse_rate(optarg, true, val, err, sizeof(err)))
			return rl_usage_err("%s: --%s: %s%s", cmd,
					    opts[c - OPT_PPS].name, err,
					    c == OPT_NEW_PPS || c == OPT_NEW_BPS ?
					    " (allowed: 0 to 18446744073709551614 per second)" : "");
		*have = true;
	}
	if (a->iface) {
		ret = rl_iface_arg(cmd, a->iface);
		if (ret)
			return ret;
	}
	if (is_list) {
		if (optind != argc)
			return rl_usage_err("quota list: unexpected '%s': see 'xdp-ratelimit quota --help'",
					    argv[optind]);
		return 0;
	}
	if (optind != argc - 1)
		return rl_usage_err("%s: name one PREFIX, e.g. xdp-ratelimit %s 198.18.0.0/15%s",
				    cmd, cmd, is_set ? " --pps 1000" : "");
	ret = rl_parse_prefix(argv[optind], &a->prefix, err, sizeof(err));
	if (ret)
		return rl_usage_err("%s: %s", cmd, err);
	if (is_set && !rl_rule_change_any(ch))
		return rl_usage_err("quota set: give at least one of --pps, --bps, --aggregate-pps, --aggregate-bps, --new-pps, --new-bps, --ban");
	return 0;
}

/* set and del: under the lock, on the one interface they name. */
static int quota_change(const char *verb, struct quota_args *a)
{
	char err[RL_ERR_LEN], name[IF_NAMESIZE], buf[RL_PREFIX_STRLEN];
	struct rl_iface ifc;
	int lock, ret;

	lock = rl_change_begin();
	if (lock < 0)
		return RL_EXIT_FAIL;
	ret = rl_iface_resolve(a->iface, name, err, sizeof(err));
	if (!ret)
		ret = rl_iface_open(name, &ifc, err, sizeof(err));
	if (ret) {
		rl_unlock(lock);
		return rl_fail("quota %s: %s", verb, err);
	}
	if (!strcmp(verb, "set"))
		ret = rl_rule_set(&ifc.m, &ifc.cfg.set, &a->prefix, &a->change,
				  err, sizeof(err));
	else
		ret = rl_rule_del(&ifc.m, &a->prefix, err, sizeof(err));
	rl_iface_close(&ifc);
	rl_unlock(lock);
	if (ret)
		return rl_fail("%s", err);
	rl_format_prefix(&a->prefix, buf, sizeof(buf));
	printf("%s: rule %s %s\n", name, buf,
	       !strcmp(verb, "set") ? "set" : "deleted");
	return RL_EXIT_OK;
}

static json_t *json_limit(__u64 v)
{
	return v == RL_UNLIMITED ? json_null() : json_integer((json_int_t)v);
}

static void fmt_limit(char *buf, size_t len, __u64 v)
{
	if (v == RL_UNLIMITED)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

static int list_one(const char *name, json_t *ifaces)
{
	static struct rl_rule rules[RL_MAX_RULES];
	char err[RL_ERR_LEN], pfx[RL_PREFIX_STRLEN];
	struct rl_iface ifc;
	json_t *arr;
	int n;

	if (rl_iface_open(name, &ifc, err, sizeof(err)))
		return rl_fail("quota list: %s", err);
	n = rl_rule_list(&ifc.m, rules, RL_MAX_RULES);
	rl_iface_close(&ifc);
	if (n < 0)
		return rl_fail("quota list: cannot read the rules of %s: %s",
			       name, strerror(-n));
	arr = ifaces ? json_array() : NULL;
	if (!ifaces)
		printf("%s: %d rule%s\n%-43s %12s %14s %14s %14s %12s %14s %8s\n",
		       name, n, n == 1 ? "" : "s", "PREFIX", "PPS", "BPS",
		       "AGGREGATE_PPS", "AGGREGATE_BPS", "NEW_PPS", "NEW_BPS", "BAN");
	for (int i = 0; i < n; i++) {
		const struct rl_rule *r = &rules[i];
		struct rl_prefix p;

		rl_rule_prefix(r, &p);
		rl_format_prefix(&p, pfx, sizeof(pfx));
		if (arr) {
			json_array_append_new(arr, json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
				"prefix", pfx, "pps", json_limit(r->pps),
				"bps", json_limit(r->bps),
				"aggregate_pps", json_limit(r->agg_pps),
				"aggregate_bps", json_limit(r->agg_bps),
				"new_pps", json_limit(r->new_pps),
				"new_bps", json_limit(r->new_bps),
				"ban_ms", r->ban_ns ? json_integer((json_int_t)
					(r->ban_ns / RL_NSEC_PER_MSEC)) : json_null()));
		} else {
			char v[6][24], ban[32] = "-";

			fmt_limit(v[0], sizeof(v[0]), r->pps);
			fmt_limit(v[1], sizeof(v[1]), r->bps);
			fmt_limit(v[2], sizeof(v[2]), r->agg_pps);
			fmt_limit(v[3], sizeof(v[3]), r->agg_bps);
			fmt_limit(v[4], sizeof(v[4]), r->new_pps);
			fmt_limit(v[5], sizeof(v[5]), r->new_bps);
			if (r->ban_ns)
				rl_format_duration(r->ban_ns, ban, sizeof(ban));
			printf("%-43s %12s %14s %14s %14s %12s %14s %8s\n", pfx,
			       v[0], v[1], v[2], v[3], v[4], v[5], ban);
		}
	}
	if (arr)
		json_array_append_new(ifaces, json_pack("{s:s, s:o}", "ifname",
							name, "rules", arr));
	return RL_EXIT_OK;
}

static int quota_list(struct quota_args *a)
{
	char names[RL_MAX_IFACES][IF_NAMESIZE], err[RL_ERR_LEN];
	json_t *ifaces = a->json ? json_array() : NULL;
	int n, ret = RL_EXIT_OK;

	if (rl_require_root())
		return RL_EXIT_FAIL;
	if (a->iface) {
		if (rl_iface_resolve(a->iface, names[0], err, sizeof(err)))
			return rl_fail("quota list: %s", err);
		n = 1;
	} else {
		n = rl_ifaces_list(names, RL_MAX_IFACES);
		if (n < 0)
			return rl_fail("quota list: cannot read %s: %s",
				       RL_PIN_ROOT, strerror(-n));
	}
	for (int i = 0; i < n && ret == RL_EXIT_OK; i++) {
		if (i && !ifaces)
			putchar('\n');
		ret = list_one(names[i], ifaces);
	}
	if (ifaces) {
		if (ret == RL_EXIT_OK)
			rl_print_interfaces_json(ifaces);
		else
			json_decref(ifaces);
	} else if (n == 0) {
		printf("no interface is attached\n");
	}
	return ret;
}

int cmd_quota(int argc, char **argv)
{
	struct quota_args a = {};
	const char *verb;
	int ret;

	if (argc < 2) {
		rl_err("quota: missing subcommand: use set, del or list (see 'xdp-ratelimit quota --help')");
		usage(stderr);
		return RL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return RL_EXIT_OK;
	}
	verb = argv[1];
	if (strcmp(verb, "set") && strcmp(verb, "del") && strcmp(verb, "list"))
		return rl_usage_err("quota: unknown subcommand '%s': use set, del or list (see 'xdp-ratelimit quota --help')",
				    verb);
	ret = parse_args(verb, argc - 1, argv + 1, &a);
	if (ret)
		return ret < 0 ? RL_EXIT_OK : ret;
	if (!strcmp(verb, "list"))
		return quota_list(&a);
	return quota_change(verb, &a);
}
