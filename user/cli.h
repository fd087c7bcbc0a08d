/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The xdp-ratelimit command line: one cmd_*.c per command, dispatched by
 * main.c. Every command returns its exit status (SPEC "Commands": 0
 * success, 1 failure, 2 bad usage) and reports errors with rl_err().
 */
#ifndef RL_CLI_H
#define RL_CLI_H

#include <stdbool.h>

#define RL_EXIT_OK	0
#define RL_EXIT_FAIL	1
#define RL_EXIT_USAGE	2

/* "xdp-ratelimit: " + message + newline, on stderr. */
void rl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* rl_err() then return RL_EXIT_USAGE / RL_EXIT_FAIL, for one-line returns. */
int rl_usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int rl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * getopt_long's complaint for an unknown option or missing argument,
 * turned into an rl_err() that points at `xdp-ratelimit CMD --help`.
 * Call from the '?' / ':' case with the command's name.
 */
int rl_bad_option(const char *cmd, int argc, char **argv);

/* Not root: message and RL_EXIT_FAIL; 0 when root. */
int rl_require_root(void);

int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_quota(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_status(int argc, char **argv);

#endif /* RL_CLI_H */
