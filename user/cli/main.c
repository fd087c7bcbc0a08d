// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit: per-source-IP rate limiting in XDP (xdp-ratelimit(8)). */
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include "cli/cli.h"

enum { OPT_VERSION = 'V', OPT_VERBOSE = 'v' };

static bool verbose;

/* libbpf's warnings always (a failed load says why), its info and debug
 * lines with --verbose. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level != LIBBPF_WARN && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int main_opt(struct rl_parser *p, void *cfg, int id, const char *arg)
{
	(void)p, (void)cfg, (void)arg;
	if (id == OPT_VERBOSE) {
		verbose = true;
		return 0;
	}
	printf("xdp-ratelimit %s\n", RL_VERSION);	/* OPT_VERSION */
	return RL_EXIT_DONE;
}

static const struct rl_cmd root = {
	.name = "xdp-ratelimit",
	.args = "[-v] COMMAND [ARGS]\n"
		    "COMMAND --help\n"
		    "--help | --version",
	.doc =
		"Per-source-IP packet and byte rate limits, enforced in XDP with a\n"
		"sliding window; state is pinned under /sys/fs/bpf/xdp-ratelimit/.\n",
	.opts = (const struct rl_opt[]){
		{ .id = OPT_VERBOSE, .name = "verbose",
		  .help = "show libbpf's debug messages on stderr" },
		{ .id = OPT_VERSION, .name = "version", .help = "print the version" },
		{ 0 }
	},
	.notes =
		"Example:\n"
		"  xdp-ratelimit attach eth0 --default-pps 1000\n"
		"  xdp-ratelimit quota set 198.18.0.0/15 --pps 100 --aggregate-pps 10k\n"
		"  xdp-ratelimit stats --watch\n",
	.opt = main_opt,
	.subcmds = rl_commands,
};

int main(int argc, char **argv)
{
	libbpf_set_print(libbpf_print);
	return rl_cmd_main(&root, NULL, "", argc, argv);
}
