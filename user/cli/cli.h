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
#include <linux/types.h>

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
 * Typed options, after xdp-tools' DEFINE_OPTION: a row names the option,
 * its value's kind and the field of the command's config it goes to
 * (RL_OPT_FIELD: offsetof and size), and the parser (cmd.c, opt.c) checks
 * and stores it; one row also makes its line of `--help`. A value that
 * does not parse is refused as "CMD: --NAME: what is wrong: what to give"
 * (exit 2). RL_OPT_CALL rows go to the command's opt() instead, for what
 * no kind says (an optional value read from the next word).
 */
enum rl_opt_kind {
	RL_OPT_CALL,		/* the command's opt() takes it */
	RL_OPT_SWITCH,		/* no value: a bool made true, or with .bits
				 * those bits set in an unsigned field */
	RL_OPT_STRING,		/* const char *: the value as given */
	RL_OPT_IFACE,		/* const char *: an interface name the kernel
				 * would take (rl_iface_name_check) */
	RL_OPT_ENUM,		/* one word of .names: its value, in an int */
	RL_OPT_RATE,		/* RATE, a __u64 (.unlimited: the word too,
				 * as RL_UNLIMITED) */
	RL_OPT_DURATION,	/* DURATION in ns, a __u64, .min to .max (0:
				 * no bound; .zero: 0 too, meaning none) */
	RL_OPT_COUNT,		/* a whole number .min to .max in an unsigned
				 * field of 1 to 8 bytes (.unlimited: the
				 * word too, as 0) */
	RL_OPT_PARSE,		/* .parse() fills the field */
};

/* A word of an RL_OPT_ENUM and its value; a table ends with { NULL }. */
struct rl_opt_word {
	const char *word;
	int value;
};
extern const struct rl_opt_word rl_opt_on_off[];	/* on 1, off 0 */

/*
 * One option of a command. `arg` names its value in the help ("RATE"), in
 * brackets when it may be left out ("[SECONDS]"); NULL when it takes
 * none. `help` may have several lines ('\n'). `id` is a letter for an
 * option with a short form (-v), and for an RL_OPT_CALL row without one
 * a value from RL_OPT_FIRST up, which opt() receives; 0 otherwise.
 */
struct rl_opt {
	int id;
	const char *name;
	const char *arg;
	const char *help;
	enum rl_opt_kind kind;
	size_t offset, size;		/* its field in the config */
	size_t have;			/* RL_OPT_HAVE: a bool made true when given */
	__u64 min, max;			/* COUNT, DURATION */
	__u64 bits;			/* SWITCH */
	bool unlimited;			/* RATE, COUNT */
	bool zero;			/* DURATION */
	const struct rl_opt_word *words;	/* ENUM */
	/* PARSE: 0, or -EINVAL with what is wrong and what to give in err */
	int (*parse)(const char *arg, void *field, char *err, size_t errlen);
	const char *note;		/* after its errors, in parentheses */
};

/* The field of `type` an option fills, and the bool saying it was given
 * (stored one past its offset, so that 0 is none). */
#define RL_OPT_FIELD(type, member) \
	.offset = offsetof(type, member), .size = sizeof(((type *)0)->member)
#define RL_OPT_HAVE(type, member)	.have = offsetof(type, member) + 1

#define RL_OPT_FIRST	256	/* ids of RL_OPT_CALL options without a short form */
#define RL_MAX_OPTS	24	/* per command, with its siblings' */

/* --iface and --json, as every command that has them words them. */
#define RL_OPT_IFACE(type, member, text) \
	{ .name = "iface", .arg = "IFACE", .help = text, .kind = RL_OPT_IFACE, \
	  RL_OPT_FIELD(type, member) }
#define RL_OPT_JSON(type, member, text) \
	{ .name = "json", .help = text, .kind = RL_OPT_SWITCH, \
	  RL_OPT_FIELD(type, member) }

/*
 * Parse `arg` as option `o` into the config `cfg`: 0, or -EINVAL with
 * "--NAME: what is wrong: what to give" in err (nothing stored). A
 * RL_OPT_CALL row is not for it.
 */
int rl_opt_store(const struct rl_opt *o, void *cfg, const char *arg,
		 char *err, size_t errlen);

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

	/* A command: its config (zeroed, then defaults()), filled per
	 * option by its row (opt() for an RL_OPT_CALL row) and by
	 * operands() with what follows, then run(). opt() and operands()
	 * return 0 or an exit status; defaults() may be NULL, opt() for a
	 * table without RL_OPT_CALL rows, operands() for a command that
	 * takes none. */
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

/* That reload or detach carried an earlier release's pins of `iface` into
 * this namespace's directory (rl_pins_carry_flat), in 80 columns. */
void rl_print_pins_moved(const char *iface);

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
