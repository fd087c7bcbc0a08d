// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The commands of xdp-ratelimit, in the order --help lists them. In the
 * library rather than main.c: restore parses its rules file with them. */
#include <stddef.h>
#include "cli/cli.h"

const struct rl_cmd *const rl_commands[] = {
	&rl_cmd_attach, &rl_cmd_reload, &rl_cmd_detach, &rl_cmd_quota, &rl_cmd_ban, &rl_cmd_stats,
	&rl_cmd_events, &rl_cmd_status, &rl_cmd_save, &rl_cmd_restore, &rl_cmd_exporter,
	&rl_cmd_sync, NULL,
};
