// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit ban list|del: the sources that rules with --ban banned
 * (SPEC "Ban"). The program imposes bans; list reads them, del lifts them.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bans.h"
#include "cli.h"
#include "pin.h"
#include "stats_view.h"
#include "units.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-ratelimit ban list [--iface IFACE] [--json]\n"
		"       xdp-ratelimit ban del ADDRESS|all [--iface IFACE]\n"
		"\n"
		"A rule set with 'quota set PREFIX --ban DURATION' bans a source whose\n"
		"packet it drops for exceeding the source's own quota: every packet of the\n"
		"source is then dropped, on every CPU, for DURATION from that drop (its\n"
		"packets meanwhile do not extend the ban). Bans outlive changes to the rule.\n"
		"'list' shows the banned sources with the rule that banned them and the time\n"
		"left (every attached interface without --iface); 'del' lifts the ban of\n"
		"ADDRESS (as 'ban list' shows it), or every ban with 'all'.\n"
		"\n"
		"Examples:\n"
		"  xdp-ratelimit quota set default --pps 1000 --ban 1m\n"
		"  xdp-ratelimit ban list\n"
		"  xdp-ratelimit ban del 198.18.0.7\n"
		"  xdp-ratelimit ban del all --iface eth0\n");
}

struct ban_args {
	const char *iface;
	const char *address;	/* del: ADDRESS or "all" */
	bool json;
};

static int parse_args(const char *verb, int argc, char **argv, struct ban_args *a)
{
	static const struct option opts[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	bool is_list = !strcmp(verb, "list");
	char cmd[16];
	int c, ret;

	snprintf(cmd, sizeof(cmd), "ban %s", verb);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return -1;
		case 'i':
			a->iface = optarg;
			ret = rl_iface_arg(cmd, optarg);
			if (ret)
				return ret;
			break;
		case 'j':
			if (!is_list)
				return rl_usage_err("%s: --json is for 'ban list'", cmd);
			a->json = true;
			break;
		default:
			return rl_bad_option(cmd, c, argv);
		}
	}
	if (is_list) {
		if (optind != argc)
			return rl_usage_err("ban list: unexpected '%s': see 'xdp-ratelimit ban --help'",
					    argv[optind]);
		return 0;
	}
	if (optind != argc - 1)
		return rl_usage_err("ban del: name one ADDRESS (as 'ban list' shows it) or 'all', e.g. xdp-ratelimit ban del 198.18.0.7");
	a->address = argv[optind];
	if (strcmp(a->address, "all")) {
		struct rl_prefix p;
		char err[RL_ERR_LEN];

		/* the syntax now; whether it is one source needs the
		 * interface's IPv6 tracking prefix (ban_del) */
		if (rl_parse_prefix(a->address, &p, err, sizeof(err)))
			return rl_usage_err("ban del: %s", err);
	}
	return 0;
}

static int list_one(const char *name, json_t *ifaces)
{
	struct rl_ban_row *rows;
	char err[RL_ERR_LEN];
	struct rl_iface ifc;
	size_t n;
	int ret;

	if (rl_iface_open(name, &ifc, err, sizeof(err)))
		return rl_fail("ban list: %s", err);
	ret = rl_bans_read(&ifc.m, rl_now_ns(), &rows, &n);
	rl_iface_close(&ifc);
	if (ret)
		return rl_fail("ban list: cannot read the bans of %s: %s", name,
			       strerror(-ret));
	if (ifaces) {
		json_t *arr = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, rl_ban_json(&rows[i],
							       ifc.cfg.set.v6_prefix));
		json_array_append_new(ifaces, json_pack("{s:s, s:o}", "ifname",
							name, "bans", arr));
	} else {
		printf("%s: %zu banned source%s\n", name, n, n == 1 ? "" : "s");
		if (n)
			rl_stats_print_bans(stdout, rows, n, ifc.cfg.set.v6_prefix);
	}
	free(rows);
	return RL_EXIT_OK;
}

static int ban_list(const struct ban_args *a)
{
	char names[RL_MAX_IFACES][IF_NAMESIZE], err[RL_ERR_LEN];
	json_t *ifaces = a->json ? json_array() : NULL;
	int n, ret = RL_EXIT_OK;

	if (rl_require_root())
		return RL_EXIT_FAIL;
	if (a->iface) {
		if (rl_iface_resolve(a->iface, names[0], err, sizeof(err)))
			return rl_fail("ban list: %s", err);
		n = 1;
	} else {
		n = rl_ifaces_list(names, RL_MAX_IFACES);
		if (n < 0)
			return rl_fail("ban list: cannot read %s: %s", RL_PIN_ROOT,
				       strerror(-n));
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

/* Under the lock, on the one interface named. */
static int ban_del(const struct ban_args *a)
{
	char err[RL_ERR_LEN], name[IF_NAMESIZE];
	struct rl_iface ifc;
	struct rl_key key;
	int lock, ret;

	lock = rl_change_begin();
	if (lock < 0)
		return RL_EXIT_FAIL;
	ret = rl_iface_resolve(a->iface, name, err, sizeof(err));
	if (!ret)
		ret = rl_iface_open(name, &ifc, err, sizeof(err));
	if (ret) {
		rl_unlock(lock);
		return rl_fail("ban del: %s", err);
	}
	if (!strcmp(a->address, "all")) {
		ret = rl_bans_clear(&ifc.m, rl_now_ns());
		rl_iface_close(&ifc);
		rl_unlock(lock);
		if (ret < 0)
			return rl_fail("ban del: cannot lift the bans of %s: %s",
				       name, strerror(-ret));
		printf("%s: %d ban%s lifted\n", name, ret, ret == 1 ? "" : "s");
		return RL_EXIT_OK;
	}
	if (rl_ban_key(a->address, ifc.cfg.set.v6_prefix, &key, err, sizeof(err))) {
		rl_iface_close(&ifc);
		rl_unlock(lock);
		return rl_usage_err("ban del: %s", err);
	}
	ret = rl_ban_del(&ifc.m, &key, rl_now_ns());
	rl_iface_close(&ifc);
	rl_unlock(lock);
	if (ret == -ENOENT)
		return rl_fail("ban del: %s is not banned on %s (see 'xdp-ratelimit ban list --iface %s')",
			       a->address, name, name);
	if (ret)
		return rl_fail("ban del: cannot lift the ban of %s on %s: %s",
			       a->address, name, strerror(-ret));
	printf("%s: ban of %s lifted\n", name, a->address);
	return RL_EXIT_OK;
}

int cmd_ban(int argc, char **argv)
{
	struct ban_args a = {};
	const char *verb;
	int ret;

	if (argc < 2) {
		rl_err("ban: missing subcommand: use list or del (see 'xdp-ratelimit ban --help')");
		usage(stderr);
		return RL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return RL_EXIT_OK;
	}
	verb = argv[1];
	if (strcmp(verb, "list") && strcmp(verb, "del"))
		return rl_usage_err("ban: unknown subcommand '%s': use list or del (see 'xdp-ratelimit ban --help')",
				    verb);
	ret = parse_args(verb, argc - 1, argv + 1, &a);
	if (ret)
		return ret < 0 ? RL_EXIT_OK : ret;
	return !strcmp(verb, "list") ? ban_list(&a) : ban_del(&a);
}
