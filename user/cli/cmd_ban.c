// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit ban list|del: the sources that rules with --ban banned
 * (xdp-ratelimit(8), "Bans"). The program imposes bans; list reads them
 * (bans.c), del lifts them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/ban_map.h"
#include "cli/cli.h"
#include "lib/iface.h"
#include "cli/json_writer.h"
#include "lib/pin.h"
#include "cli/stats_view.h"
#include "cli/table.h"
#include "cli/text.h"

struct ban_args {
	const char *iface;
	const char *address;	/* del: ADDRESS or "all" */
	bool json, wide;
};

#define OPT_BAN_IFACE RL_OPT_IFACE(struct ban_args, iface, \
	"the interface; may be left out when one is attached ('list': only IFACE, default every one)")

/* del: ADDRESS or all. Whether ADDRESS is one source needs the tracked
 * IPv6 prefix of the interface, so only its syntax is checked here. */
static int del_operand(struct rl_parser *p, void *cfg, int argc, char **argv)
{
	struct ban_args *a = cfg;
	char err[RL_ERR_LEN];
	struct rl_prefix pfx;

	(void)p;
	if (argc != 1)
		return rl_usage_err("ban del: name one ADDRESS (as 'ban list' shows it) or 'all', e.g. xdp-ratelimit ban del 198.18.0.7");
	a->address = argv[0];
	if (strcmp(a->address, "all") &&
	    rl_parse_prefix(a->address, &pfx, err, sizeof(err)))
		return rl_usage_err("ban del: %s: give a source address as 'ban list' shows it, or 'all'",
				    err);
	return 0;
}

/* One interface's bans, as read. */
struct ban_list {
	const char *name;
	__u32 v6_prefix;
	struct rl_ban_row *rows;
	size_t n;
	int width;		/* of the table (rl_view_width) */
};

static int bans_read(void *ctx, const char *name)
{
	struct ban_list *l = ctx;
	char err[RL_ERR_LEN];
	struct rl_iface ifc;
	int ret;

	l->name = name;
	if (rl_iface_open(name, &ifc, err, sizeof(err)))
		return rl_fail("ban list: %s", err);
	l->v6_prefix = ifc.cfg.set.v6_prefix;
	ret = rl_bans_read(&ifc.m, rl_prog_now_ns(&ifc.cfg.set), &l->rows, &l->n);
	rl_iface_close(&ifc);
	if (ret)
		return rl_fail("ban list: cannot read the bans of %s: %s", name,
			       strerror(-ret));
	return RL_EXIT_OK;
}

static void bans_json(struct rl_json *j, const void *ctx)
{
	const struct ban_list *l = ctx;

	rl_json_object_start(j);
	rl_json_string_field(j, "ifname", l->name);
	rl_json_name(j, "bans");
	rl_json_array_start(j);
	for (size_t i = 0; i < l->n; i++)
		rl_ban_json(j, &l->rows[i], l->v6_prefix);
	rl_json_array_end(j);
	rl_json_object_end(j);
}

static void bans_table(const void *ctx)
{
	const struct ban_list *l = ctx;
	char name[RL_SHOWN_LEN];

	printf("%s: %zu banned source%s\n", rl_text_shown(l->name, name, sizeof(name)),
	       l->n, l->n == 1 ? "" : "s");
	if (l->n)
		rl_bans_print_table(stdout, l->rows, l->n, l->v6_prefix, l->width);
}

static void bans_release(void *ctx)
{
	struct ban_list *l = ctx;

	free(l->rows);
	l->rows = NULL;
}

static int ban_list_run(void *cfg)
{
	static const struct rl_lister lister = {
		.cmd = "ban list", .read = bans_read, .json = bans_json,
		.table = bans_table, .release = bans_release,
	};
	const struct ban_args *a = cfg;
	struct ban_list list = { .width = rl_view_width(a->wide) };

	return rl_list_ifaces(&lister, &list, a->iface, a->json);
}

/* Under the lock, on the one interface named. */
static int ban_del_run(void *cfg)
{
	const struct ban_args *a = cfg;
	char err[RL_ERR_LEN], name[IF_NAMESIZE];
	struct rl_iface ifc;
	struct rl_key key;
	int ret;

	ret = rl_iface_resolve(a->iface, name, err, sizeof(err));
	if (!ret)
		ret = rl_iface_open(name, &ifc, err, sizeof(err));
	if (ret)
		return rl_fail("ban del: %s", err);
	if (!strcmp(a->address, "all")) {
		ret = rl_bans_clear(&ifc.m, rl_prog_now_ns(&ifc.cfg.set));
		rl_iface_close(&ifc);
		if (ret < 0)
			return rl_fail("ban del: cannot lift the bans of %s: %s",
				       name, strerror(-ret));
		printf("%s: %d ban%s lifted\n", name, ret, ret == 1 ? "" : "s");
		return RL_EXIT_OK;
	}
	if (rl_ban_key(a->address, ifc.cfg.set.v6_prefix, &key, err, sizeof(err))) {
		rl_iface_close(&ifc);
		return rl_usage_err("ban del: %s: give an address as 'ban list' shows it, or 'all'",
				    err);
	}
	ret = rl_ban_del(&ifc.m, &key, rl_prog_now_ns(&ifc.cfg.set));
	rl_iface_close(&ifc);
	if (ret == -ENOENT)
		return rl_fail("ban del: %s is not banned on %s (see 'xdp-ratelimit ban list --iface %s')",
			       a->address, name, name);
	if (ret)
		return rl_fail("ban del: cannot lift the ban of %s on %s: %s",
			       a->address, name, strerror(-ret));
	printf("%s: ban of %s lifted\n", name, a->address);
	return RL_EXIT_OK;
}

static const struct rl_cmd ban_list_cmd = {
	.name = "list",
	.opts = (const struct rl_opt[]){
		OPT_BAN_IFACE,
		RL_OPT_JSON(struct ban_args, json, "'list': print one JSON object on one line instead of tables"),
		{ .name = "wide", .kind = RL_OPT_SWITCH, RL_OPT_FIELD(struct ban_args, wide),
		  .help = "'list': every column on the row's line, nothing wrapped\n"
			  "(default: the table fits the terminal, at least 80 columns)" },
		{ 0 }
	},
	.flags = RL_CMD_ROOT, .cfg_size = sizeof(struct ban_args),
	.run = ban_list_run,
};

static const struct rl_cmd ban_del_cmd = {
	.name = "del", .args = "ADDRESS|all",
	.opts = (const struct rl_opt[]){ OPT_BAN_IFACE, { 0 } },
	.flags = RL_CMD_LOCK, .cfg_size = sizeof(struct ban_args),
	.operands = del_operand, .run = ban_del_run,
};

const struct rl_cmd rl_cmd_ban = {
	.name = "ban",
	.summary = "list or lift the bans of rules set with --ban",
	.doc =
		"A rule set with 'quota set PREFIX --ban DURATION' bans a source whose\n"
		"in-window packets of connections the host established exceed the source's\n"
		"own quota: every packet of the source is then dropped, on every CPU, for\n"
		"DURATION from that drop (its packets meanwhile do not extend the ban).\n"
		"Bans outlive changes to the rule.\n"
		"'list' shows the banned sources with the rule that banned them and the time\n"
		"left (every attached interface without --iface); 'del' lifts the ban of\n"
		"ADDRESS (as 'ban list' shows it), or every ban with 'all'.\n",
	.notes =
		"Examples:\n"
		"  xdp-ratelimit quota set default --pps 1000 --ban 1m\n"
		"  xdp-ratelimit ban list\n"
		"  xdp-ratelimit ban del 198.18.0.7\n"
		"  xdp-ratelimit ban del all --iface eth0\n",
	.subcmds = (const struct rl_cmd *const[]){
		&ban_list_cmd, &ban_del_cmd, NULL,
	},
};
