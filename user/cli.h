/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The xdp-ratelimit command line: one cmd_*.c per command, dispatched by
 * main.c. Every command returns its exit status (SPEC "Commands": 0
 * success, 1 failure, 2 bad usage) and reports errors with rl_err().
 */
#ifndef RL_CLI_H
#define RL_CLI_H

#include <stdbool.h>
#include <stddef.h>

#define RL_EXIT_OK	0
#define RL_EXIT_FAIL	1
#define RL_EXIT_USAGE	2

/* "xdp-ratelimit: " + message + newline, on stderr. */
void rl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* rl_err() then return RL_EXIT_USAGE / RL_EXIT_FAIL, for one-line returns. */
int rl_usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int rl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * getopt_long's complaint, as an rl_err() that points at
 * `xdp-ratelimit CMD --help`; returns RL_EXIT_USAGE. Use an optstring that
 * starts with ':' and opterr = 0, and call it from the default case with
 * the value getopt_long returned ('?' unknown option, ':' missing value).
 */
int rl_bad_option(const char *cmd, int c, char **argv);

/*
 * Whether `name` can be an interface name, as the kernel's dev_valid_name
 * judges (1 to IF_NAMESIZE - 1 characters, not '.' or '..', no '/', ':' or
 * whitespace): 0, or -EINVAL with what is wrong in err. A name that passes
 * is a single path component under RL_PIN_ROOT and maps to its own pins.
 */
int rl_iface_name_check(const char *name, char *err, size_t errlen);
/* The same for an IFACE argument of CMD: 0, or rl_usage_err()'s status. */
int rl_iface_arg(const char *cmd, const char *name);

/* Not root: message and RL_EXIT_FAIL; 0 when root. */
int rl_require_root(void);

/*
 * Start a change under RL_PIN_ROOT (attach, detach, quota set/del): root,
 * bpffs ready, not in a private mount namespace, the lock held. Returns
 * the lock fd (rl_unlock() it), or -1 after reporting the problem.
 */
int rl_change_begin(void);

/* {"interfaces": arr} on one line of stdout; takes the reference to arr. */
typedef struct json_t json_t;
void rl_print_interfaces_json(json_t *arr);

int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_quota(int argc, char **argv);
int cmd_ban(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_status(int argc, char **argv);

#endif /* RL_CLI_H */
