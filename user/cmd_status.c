// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit status: attached interfaces, their settings and health. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bans.h"
#include "cli.h"
#include "pin.h"
#include "rules.h"
#include "units.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-ratelimit status [--json]\n"
		"\n"
		"List the attached interfaces with their settings, and flag broken\n"
		"state (a link whose interface is gone, missing or foreign pins, what\n"
		"an interrupted attach left) with the command that repairs it.\n");
}

/* Health of one interface's pins: NULL when fine, else what is wrong. */
static const char *check_iface(const char *name, struct rl_iface *ifc,
			       bool *opened, char *err, size_t errlen)
{
	int ifindex = rl_link_ifindex(name, NULL);

	*opened = rl_iface_open(name, ifc, err, errlen) == 0;
	if (!*opened)
		return err;
	if (ifindex == -ENOENT)
		return "the link pin is missing, so the program is not attached (an attach was interrupted, or the pin was removed)";
	if (ifindex < 0)
		return "the link pin is not an XDP link";
	if (ifindex == 0)
		return "the interface is gone (deleted or moved); the program no longer runs";
	if ((__u32)ifindex != ifc->cfg.set.ifindex)
		return "the link is attached to another interface than recorded";
	if (RL_RULES_CHANGING(ifc->cfg.rules_gen) && !rl_change_running())
		return "a quota change was cut short (CLI killed?): the rules 'quota list' shows are enforced; repeat that change to complete it";
	return NULL;
}

/*
 * Wait, at most 2 s, for a change in progress (attach, detach, quota) to
 * end, so that an attach between its steps is not reported as broken.
 */
/* Bans that hold on an interface (0 when unreadable: status reports). */
static size_t bans_held(const struct rl_maps *m)
{
	struct rl_ban_row *rows;
	size_t n;

	if (rl_bans_read(m, rl_now_ns(), &rows, &n))
		return 0;
	free(rows);
	return n;
}

static void settle(void)
{
	for (int i = 0; i < 200 && rl_change_running(); i++)
		usleep(10 * 1000);
}

/*
 * Staging directories of attaches that died before their link pin (see
 * cmd_attach.c), as broken entries: the interface is not attached, but
 * the maps stay pinned until 'detach IFACE'. Count, or 0 when unreadable.
 */
static int report_stale_stages(bool json, json_t *arr)
{
	char names[RL_MAX_IFACES][NAME_MAX + 1], problem[RL_ERR_LEN];
	char iface[NAME_MAX + 1], path[PATH_MAX];
	int n = rl_pin_stale_stages(NULL, names, RL_MAX_IFACES), pid;

	for (int i = 0; i < n; i++) {
		rl_pin_stage_parse(names[i], iface, &pid);
		rl_pin_path(path, sizeof(path), names[i], NULL);
		snprintf(problem, sizeof(problem),
			 rl_link_ifindex(names[i], NULL) > 0 ?
			 "an attach (pid %d) died half way and left its pins in '%s', with its program still attached, unreported; 'xdp-ratelimit detach %s' removes both" :
			 "an attach (pid %d) died half way and left its pins in '%s'; the program is not attached; 'xdp-ratelimit detach %s' removes them",
			 pid, path, iface);
		if (json)
			json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s}",
				"ifname", iface, "state", "broken",
				"problem", problem, "staging_dir", path));
		else
			printf("%-15s %s: %s\n", iface, "BROKEN", problem);
	}
	return n < 0 ? 0 : n;
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char names[RL_MAX_IFACES][IF_NAMESIZE], err[RL_ERR_LEN];
	json_t *arr = json_array();
	bool json = false, broken = false;
	int c, n;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'j') {
			json = true;
			continue;
		}
		json_decref(arr);
		if (c != 'h')
			return rl_bad_option("status", c, argv);
		usage(stdout);
		return RL_EXIT_OK;
	}
	if (optind != argc) {
		json_decref(arr);
		return rl_usage_err("status: unexpected '%s': see 'xdp-ratelimit status --help'",
				    argv[optind]);
	}
	if (rl_require_root()) {
		json_decref(arr);
		return RL_EXIT_FAIL;
	}
	settle();
	n = rl_ifaces_list(names, RL_MAX_IFACES);
	if (n < 0) {
		json_decref(arr);
		return rl_fail("status: cannot read %s: %s", RL_PIN_ROOT, strerror(-n));
	}
	if (!json)
		printf(n ? "%-15s %-8s %-8s %7s %11s %11s %6s  %s\n" : "no interface is attached\n",
		       "IFACE", "MODE", "WINDOW", "BUCKETS", "MAX_SRC", "IPV6_PFX",
		       "RULES", "STATE");
	for (int i = 0; i < n; i++) {
		static struct rl_rule rules[RL_MAX_RULES];
		const struct rl_settings *s;
		struct rl_iface ifc;
		const char *problem;
		bool opened;
		char w[32], banned[48] = "";
		int nrules = 0;
		size_t nbans;

		problem = check_iface(names[i], &ifc, &opened, err, sizeof(err));
		broken |= problem != NULL;
		if (!opened) {
			if (json)
				json_array_append_new(arr, json_pack("{s:s, s:s, s:s}",
					"ifname", names[i], "state", "broken",
					"problem", problem));
			else
				printf("%-15s %s: %s\n", names[i], "BROKEN", problem);
			continue;
		}
		s = &ifc.cfg.set;
		nrules = rl_rule_list(&ifc.m, rules, RL_MAX_RULES);
		nbans = bans_held(&ifc.m);
		rl_format_duration(s->window_ns, w, sizeof(w));
		if (json) {
			json_t *o = json_pack("{s:s, s:i, s:s, s:s, s:I, s:i, s:I, s:I, s:i, s:b, s:b, s:i, s:s}",
				"ifname", names[i], "ifindex", (int)s->ifindex,
				"mode", s->mode == RL_MODE_GENERIC ? "generic" : "native",
				"window", w, "window_ms", (json_int_t)(s->window_ns / RL_NSEC_PER_MSEC),
				"buckets", (int)s->nbuckets,
				"max_sources", (json_int_t)s->max_sources,
				"sources_map_entries", (json_int_t)ifc.sources_max_entries,
				"ipv6_prefix", (int)s->v6_prefix,
				"dry_run", (s->flags & RL_F_DRY_RUN) != 0,
				"pass_malformed", (s->flags & RL_F_PASS_MALFORMED) != 0,
				"rules", nrules < 0 ? 0 : nrules,
				"state", problem ? "broken" : "ok");

			json_object_set_new(o, "bans", json_integer((json_int_t)nbans));
			if (problem)
				json_object_set_new(o, "problem", json_string(problem));
			json_array_append_new(arr, o);
		} else {
			char pfx[16];

			snprintf(pfx, sizeof(pfx), "/%u", s->v6_prefix);
			if (nbans)
				snprintf(banned, sizeof(banned), " (%zu banned)", nbans);
			printf("%-15s %-8s %-8s %7u %11llu %11s %6d  %s%s%s%s\n",
			       names[i], s->mode == RL_MODE_GENERIC ? "generic" : "native",
			       w, s->nbuckets, (unsigned long long)s->max_sources,
			       pfx, nrules,
			       problem ? "BROKEN: " : "ok",
			       problem ? problem : "",
			       (s->flags & RL_F_DRY_RUN) ? " (dry run)" : "", banned);
		}
		rl_iface_close(&ifc);
	}
	broken |= report_stale_stages(json, arr) > 0;
	if (json) {
		rl_print_interfaces_json(arr);
	} else {
		json_decref(arr);
		if (broken)
			printf("\nrepair: 'xdp-ratelimit detach IFACE' removes a broken attachment; then attach again\n");
	}
	return RL_EXIT_OK;
}
