/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Rules files (xdp-ratelimit(8), save and restore): one command per line,
 * exactly as typed after `xdp-ratelimit`, words separated by blanks (no
 * value has a blank, so there is no quoting); a word starting with '#'
 * starts a comment. save writes them; restore reads them, parsing each
 * line with the commands' own option tables (rl_cmd_parse), so the file
 * knows every option the commands know.
 */
#ifndef RL_RULES_FILE_H
#define RL_RULES_FILE_H

#include <limits.h>
#include <stdio.h>
#include "cli/cli.h"
#include "lib/maps.h"

/* The commands a rules file may hold, as rl_parsed.path names them. */
#define RL_FILE_ATTACH		"attach"
#define RL_FILE_QUOTA_SET	"quota set"
#define RL_FILE_QUOTA_DEL	"quota del"

/* Where the systemd unit xdp-ratelimit@IFACE reads IFACE.rules (the
 * Makefile's CONFDIR; save --to-unit writes there). */
#ifndef RL_CONF_DIR
#define RL_CONF_DIR		"/etc/xdp-ratelimit"
#endif

/* The longest line read; longer ones are refused. */
#define RL_FILE_LINE_MAX	4096

struct rl_file_line {
	int line;			/* 1-based, in the file */
	struct rl_parsed cmd;		/* its config points into words */
	char *words;			/* the line, cut into words */
	char **argv;
};

struct rl_rules_file {
	char name[PATH_MAX];		/* for messages: the path or <stdin> */
	struct rl_file_line *lines;	/* commands only, in file order */
	int n;
};

/*
 * Read and parse every line of f (named `name`, "-" for stdin): 0, or
 * RL_EXIT_FAIL after reporting the first bad line as "FILE:LINE: what".
 * Free with rl_rules_file_free() either way.
 */
int rl_rules_file_read(FILE *f, const char *name, struct rl_rules_file *rf);
void rl_rules_file_free(struct rl_rules_file *rf);

/* Make the next errors start with "FILE:LINE" of this line (rl_err_where). */
void rl_rules_file_where(const struct rl_rules_file *rf,
			 const struct rl_file_line *l);

/*
 * The lines that recreate one interface: `attach IFACE` with every attach
 * setting (the mode it runs in, `prio` its priority), then `quota set PREFIX ... --iface IFACE`
 * per rule with every limit the rule has (rl_rule_opts) and its scope
 * (rl_scope_opts_text). The default rule of a scope prints as `default`
 * when its IPv4 and IPv6 halves agree. Rules as rl_rule_list sorts them
 * (as userspace holds them: rule_scope.h). 0, or -EIO when writing failed.
 */
int rl_rules_file_write(FILE *f, const char *iface, const struct rl_settings *s,
			unsigned int prio, const struct rl_rule *rules, int n);

/* Every limit of a rule as the options of quota set that give it
 * ("--pps 100 --ban 1m"; "--pps unlimited" for none), as save writes them
 * and quota list shows them. */
#define RL_RULE_LIMITS_STRLEN	320
void rl_rule_limits_text(const struct rl_rule *r, char *buf, size_t len);

#endif /* RL_RULES_FILE_H */
