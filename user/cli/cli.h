/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The xdp-ratelimit command line. Each command is a struct rl_cmd: its
 * options as a table (which gives both getopt_long's and `--help`'s),
 * a parse step and a run step. main.c lists the commands; rl_cmd_main()
 * dispatches, checks root and takes the lock for the commands that change
 * pins. Every command returns its exit status (xdp-ratelimit(8), EXIT
 * STATUS: 0 success, 1 failure, 2 bad usage, 3 nothing to detach) and
 * reports errors with rl_err().
 */
#ifndef RL_CLI_H
#define RL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define RL_EXIT_OK	0
#define RL_EXIT_FAIL	1
#define RL_EXIT_USAGE	2
/* Nothing to do: detach of an interface that is not attached (so that
 * undo scripts can be idempotent). */
#define RL_EXIT_NOTHING	3
/* From an option handler: stop and exit 0 (--help, --version). */
#define RL_EXIT_DONE	(-1)

/* "xdp-ratelimit: " + message + newline, on stderr. */
void rl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Where the next errors come from, printed after "xdp-ratelimit: " (restore
 * sets "FILE:LINE"); NULL for none. */
void rl_err_where(const char *where);
/* rl_err() then return RL_EXIT_USAGE / RL_EXIT_FAIL, for one-line returns. */
int rl_usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int rl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- options ---------------------------------------------------------- */

/*
 * One option of a command. `id` is what the command's opt() receives: a
 * letter for an option with a short form (-h), else a value from
 * RL_OPT_FIRST up. `arg` names its value in the help ("RATE"), in
 * brackets when it may be left out ("[SECONDS]"); NULL when it takes
 * none. `help` may have several lines ('\n').
 */
struct rl_opt {
	int id;
	const char *name;
	const char *arg;
	const char *help;
};

#define RL_OPT_FIRST	256	/* ids of options without a short form */
#define RL_MAX_OPTS	24	/* per command, with its siblings' */

/* --iface and --json, as every command that has them words them. */
#define RL_OPT_IFACE(id, help)	{ id, "iface", "IFACE", help }
#define RL_OPT_JSON(id, help)	{ id, "json", NULL, help }

/* ---- commands --------------------------------------------------------- */

#define RL_CMD_ROOT	(1U << 0)	/* needs root (it reads pins) */
#define RL_CMD_LOCK	(1U << 1)	/* changes pins: root, bpffs ready and
					 * the lock held while it runs */

struct rl_parser;

struct rl_cmd {
	const char *name;
	const char *summary;		/* its line in the parent's help */
	const char *args;		/* its operands in the usage: "IFACE" */
	const char *doc;		/* what it does, after the usage */
	const struct rl_opt *opts;	/* ends with { 0 }; --help is added */
	const char *notes;		/* after the options: syntax, examples */
	unsigned int flags;		/* RL_CMD_* */

	/* A command: its config (zeroed, then defaults()), filled by opt()
	 * per option and operands() with what follows, then run(). opt()
	 * and operands() return 0 or an exit status; defaults() may be
	 * NULL, and operands() for a command that takes none. */
	size_t cfg_size;
	void (*defaults)(void *cfg);
	int (*opt)(struct rl_parser *p, void *cfg, int id, const char *arg);
	int (*operands)(struct rl_parser *p, void *cfg, int argc, char **argv);
	int (*run)(void *cfg);
	/* May be NULL. prepare() runs after the root check and before the
	 * lock: what may block, such as reading stdin (a stalled pipe must
	 * not hold up other changes), and it may clear RL_CMD_LOCK from
	 * *flags when this command line only reads (restore --test).
	 * release() frees what it read, whether run() ran or not. */
	int (*prepare)(void *cfg, unsigned int *flags);
	void (*release)(void *cfg);

	/* A group of subcommands instead (quota): NULL-ended. The help of
	 * the group and of each subcommand is the group's. An option of a
	 * sibling is refused as "--X is for 'GROUP SIBLING'". */
	const struct rl_cmd *const *subcmds;
};

#define RL_CMD_PATH_LEN	32

/* A command line parsed and not run (rl_cmd_parse). */
struct rl_parsed {
	const struct rl_cmd *cmd;
	void *cfg;			/* its config, filled; free() it */
	char path[RL_CMD_PATH_LEN];	/* "quota set" */
};

/* The command being parsed, for opt() and operands(). */
struct rl_parser {
	const struct rl_cmd *cmd;
	const struct rl_cmd *group;	/* its group, or NULL */
	char path[RL_CMD_PATH_LEN];	/* "quota set": prefix of messages */
	int argc;
	char **argv;			/* argv[optind] is the next word */
	struct rl_parsed *parsed;	/* parse only, into this (no --help) */
};

/* The long name of option `id` of the command being parsed. */
const char *rl_opt_name(const struct rl_parser *p, int id);

/*
 * Run `cmd` with argv[0] its name: parse, check root, take the lock, run.
 * `path` is how its parent is named in messages ("" at the top). Returns
 * the exit status.
 */
int rl_cmd_main(const struct rl_cmd *cmd, const struct rl_cmd *group,
		const char *path, int argc, char **argv);

/*
 * Parse a command line as typed after "xdp-ratelimit" (argv[0] is the
 * command) through the same tables, without running it: restore reads its
 * rules file so. 0 with `out` filled, or the exit status after reporting
 * the problem with rl_err(). --help and "help" are refused.
 */
int rl_cmd_parse(int argc, char **argv, struct rl_parsed *out);

/* Every command, as main.c dispatches them and rl_cmd_parse() reads them. */
extern const struct rl_cmd *const rl_commands[];

/* ---- shared checks ---------------------------------------------------- */

/* rl_iface_name_check() for an IFACE argument of CMD: 0, or
 * rl_usage_err()'s status. */
int rl_iface_arg(const char *cmd, const char *name);

/* Not root: message and RL_EXIT_FAIL; 0 when root. */
int rl_require_root(void);

/* --syn-cookies (cli/cookies.c): the host's SYNPROXY table of interface
 * `name`, added (and said) unless there: RL_EXIT_OK or rl_fail()'s status. */
int rl_cookies_ensure(const char *name);
struct rl_rule;
/* Does any rule of these have --syn-cookies on? */
bool rl_rules_want_cookies(const struct rl_rule *rules, int n);

/*
 * A listing per interface (quota list, ban list): `iface` alone when
 * given, else every attached interface. For each, read() (an exit status),
 * then json() writes its object of {"interfaces": [...]} or table() prints
 * it, then release(). Tables print as each interface is read; JSON only
 * once every one was, so a failure prints none of it. `cmd` prefixes the
 * messages. Returns the exit status.
 */
struct rl_json;
struct rl_lister {
	const char *cmd;
	int (*read)(void *ctx, const char *name);
	void (*json)(struct rl_json *j, const void *ctx);
	void (*table)(const void *ctx);
	void (*release)(void *ctx);	/* may be NULL */
};
int rl_list_ifaces(const struct rl_lister *l, void *ctx, const char *iface,
		   bool json);

extern const struct rl_cmd rl_cmd_attach, rl_cmd_reload, rl_cmd_detach, rl_cmd_quota,
	rl_cmd_ban, rl_cmd_stats, rl_cmd_events, rl_cmd_status, rl_cmd_save, rl_cmd_restore,
	rl_cmd_exporter, rl_cmd_sync;

#endif /* RL_CLI_H */
