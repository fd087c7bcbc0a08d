// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit: per-source-IP rate limiting in XDP (SPEC.md "Commands"). */
#include <stdio.h>
#include <string.h>
#include "cli.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "attach", cmd_attach, "load, attach and pin the limiter on an interface" },
	{ "detach", cmd_detach, "remove it from an interface, with every pin" },
	{ "quota", cmd_quota, "set, delete or list per-source quotas (rules)" },
	{ "ban", cmd_ban, "list or lift the bans of rules set with --ban" },
	{ "stats", cmd_stats, "show counters and the busiest sources" },
	{ "status", cmd_status, "show attached interfaces and their settings" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-ratelimit COMMAND [ARGS]\n"
		"       xdp-ratelimit COMMAND --help\n"
		"       xdp-ratelimit --help | --version\n"
		"\n"
		"Per-source-IP packet and byte rate limits, enforced in XDP with a\n"
		"sliding window; state is pinned under /sys/fs/bpf/xdp-ratelimit/.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n"
		"Example:\n"
		"  xdp-ratelimit attach eth0 --default-pps 1000\n"
		"  xdp-ratelimit quota set 198.18.0.0/15 --pps 100 --aggregate-pps 10k\n"
		"  xdp-ratelimit stats --watch\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		rl_err("missing command; try 'xdp-ratelimit --help'");
		usage(stderr);
		return RL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return RL_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("xdp-ratelimit %s\n", RL_VERSION);
		return RL_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	if (argv[1][0] == '-')
		return rl_usage_err("unknown option '%s': see 'xdp-ratelimit --help'",
				    argv[1]);
	return rl_usage_err("unknown command '%s': the commands are attach, detach, quota, ban, stats and status (see 'xdp-ratelimit --help')",
			    argv[1]);
}
