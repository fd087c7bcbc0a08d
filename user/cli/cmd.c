// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Commands as tables (cli.h): getopt_long's options, each value's parse
 * into the command's config (opt.c) and the `--help` text all come from a
 * command's struct rl_opt array; the dispatcher checks root and holds the
 * lock around the commands that change pins.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "lib/pin.h"
#include "lib/values.h"

#define HELP_WIDTH	80	/* usage lines wrap here */
#define LONG_BASE	1024	/* getopt value of the long option k */

static const struct rl_opt help_opt = {
	.id = 'h', .name = "help", .help = "show this help",
};

/* Options of one or more commands, each name once, with the command
 * whose table it is in. */
struct opt_set {
	const struct rl_opt *opt[RL_MAX_OPTS + 1];	/* + --help */
	const struct rl_cmd *owner[RL_MAX_OPTS + 1];
	int n;
};

static void opt_set_add(struct opt_set *s, const struct rl_cmd *owner)
{
	for (const struct rl_opt *o = owner->opts; o && o->name; o++) {
		bool seen = false;

		for (int i = 0; i < s->n && !seen; i++)
			seen = !strcmp(s->opt[i]->name, o->name);
		if (seen)
			continue;
		if (s->n == RL_MAX_OPTS)
			abort();	/* a table larger than RL_MAX_OPTS */
		s->opt[s->n] = o;
		s->owner[s->n++] = owner;
	}
}

/* What parsing cmd accepts: its options, then those of its siblings in
 * `group` (refused, naming the sibling). */
static void opts_parsed(struct opt_set *s, const struct rl_cmd *cmd,
			const struct rl_cmd *group)
{
	s->n = 0;
	opt_set_add(s, cmd);
	for (int i = 0; group && group->subcmds[i]; i++)
		opt_set_add(s, group->subcmds[i]);
}

/* What cmd's help lists: its options; a group without options of its own
 * lists its subcommands'. */
static void opts_shown(struct opt_set *s, const struct rl_cmd *cmd)
{
	s->n = 0;
	opt_set_add(s, cmd);
	for (int i = 0; !cmd->opts && cmd->subcmds && cmd->subcmds[i]; i++)
		opt_set_add(s, cmd->subcmds[i]);
}

/* ---- help --------------------------------------------------------------- */

/* "--name ARG", "-h, --help", "--watch [SECONDS]" */
static void opt_spec(const struct rl_opt *o, char *buf, size_t len)
{
	int n = 0;

	if (o->id > 0 && o->id < RL_OPT_FIRST)
		n = snprintf(buf, len, "-%c, ", o->id);
	snprintf(buf + n, len - n, o->arg ? "--%s %s" : "--%s", o->name, o->arg);
}

/* One usage line: the words after "xdp-ratelimit", then each option as
 * [--name ARG], wrapped under the first option. */
static void usage_line(FILE *f, const char *lead, const char *words,
		       const struct rl_opt *opts)
{
	int col = fprintf(f, "%sxdp-ratelimit %s", lead, words), indent = col + 1;
	char spec[64];

	for (const struct rl_opt *o = opts; o && o->name; o++) {
		int w;

		opt_spec(o, spec, sizeof(spec));
		w = (int)strlen(spec) + 3;
		if (col + w > HELP_WIDTH && col > indent) {
			fprintf(f, "\n%*s", indent - 1, "");
			col = indent - 1;
		}
		col += fprintf(f, " [%s]", spec);
	}
	fputc('\n', f);
}

static void print_usage(FILE *f, const struct rl_cmd *cmd, const char *path)
{
	const char *lead = "Usage: ";
	char words[128];

	if (!cmd->subcmds) {
		snprintf(words, sizeof(words), "%s%s%s", path,
			 cmd->args ? " " : "", cmd->args ? cmd->args : "");
		usage_line(f, lead, words, cmd->opts);
		return;
	}
	if (cmd->args) {	/* the top: its own forms, one a line */
		for (const char *l = cmd->args; *l; lead = "       ") {
			size_t n = strcspn(l, "\n");

			fprintf(f, "%sxdp-ratelimit %.*s\n", lead, (int)n, l);
			l += n + (l[n] == '\n');
		}
		return;
	}
	for (int i = 0; cmd->subcmds[i]; i++, lead = "       ") {
		const struct rl_cmd *sub = cmd->subcmds[i];

		snprintf(words, sizeof(words), "%s %s%s%s", path, sub->name,
			 sub->args ? " " : "", sub->args ? sub->args : "");
		usage_line(f, lead, words, sub->opts);
	}
}

/* Text from column `col` on, its lines ('\n') wrapped at HELP_WIDTH, every
 * line after the first indented to `col`. */
static void wrap(FILE *f, const char *text, int col)
{
	int room = HELP_WIDTH - col > 30 ? HELP_WIDTH - col : 30;

	for (bool first = true; *text || first; first = false) {
		int n = (int)strcspn(text, "\n");

		if (n > room) {		/* break at the last space that fits */
			int cut = room;

			while (cut > 0 && text[cut] != ' ')
				cut--;
			n = cut ? cut : n;
		}
		fprintf(f, "%*s%.*s\n", first ? 0 : col, "", n, text);
		text += n;
		if (*text == ' ' || *text == '\n')
			text++;
	}
}

static void print_options(FILE *f, const struct rl_cmd *cmd)
{
	struct opt_set s;
	int width = 0;
	char spec[64];

	opts_shown(&s, cmd);
	s.opt[s.n++] = &help_opt;
	for (int i = 0; i < s.n; i++) {
		opt_spec(s.opt[i], spec, sizeof(spec));
		if ((int)strlen(spec) > width)
			width = (int)strlen(spec);
	}
	fprintf(f, "\nOptions:\n");
	for (int i = 0; i < s.n; i++) {
		opt_spec(s.opt[i], spec, sizeof(spec));
		fprintf(f, "  %-*s  ", width, spec);
		wrap(f, s.opt[i]->help, width + 4);
	}
}

/* Help of a command or group; `path` is its full name ("quota"). */
static void help(FILE *f, const struct rl_cmd *cmd, const char *path)
{
	print_usage(f, cmd, path);
	if (cmd->doc)
		fprintf(f, "\n%s", cmd->doc);
	if (cmd->subcmds && cmd->subcmds[0]->summary) {
		fprintf(f, "\nCommands:\n");
		for (int i = 0; cmd->subcmds[i]; i++)
			fprintf(f, "  %-8s %s\n", cmd->subcmds[i]->name,
				cmd->subcmds[i]->summary);
	}
	print_options(f, cmd);
	if (cmd->notes)
		fprintf(f, "\n%s", cmd->notes);
}

/* ---- parsing -------------------------------------------------------------- */

static int bad_option(const struct rl_parser *p, int c)
{
	const char *word = p->argv[optind - 1];
	const char *sep = *p->path ? ": " : "";
	const char *see = *p->path ? " " : "";

	if (c == ':')
		return rl_usage_err("%s%soption '%s' needs a value: see 'xdp-ratelimit%s%s --help'",
				    p->path, sep, word, see, p->path);
	if (optopt && optopt < LONG_BASE && strncmp(word, "--", 2))
		return rl_usage_err("%s%sunknown option '-%c': see 'xdp-ratelimit%s%s --help'",
				    p->path, sep, optopt, see, p->path);
	return rl_usage_err("%s%sunknown option '%s': see 'xdp-ratelimit%s%s --help'",
			    p->path, sep, word, see, p->path);
}

/*
 * The options of p->cmd, up to its first operand (a group) or all of them
 * (a command: getopt_long moves the operands to the end). Returns 0 with
 * optind at the operands, RL_EXIT_DONE, or an exit status.
 */
static int parse_opts(struct rl_parser *p, void *cfg)
{
	const struct rl_cmd *cmd = p->cmd;
	struct option longopts[RL_MAX_OPTS + 2] = {};
	char optstring[2 * RL_MAX_OPTS + 8] = "";
	struct opt_set s;
	int c, n = 0;

	opts_parsed(&s, cmd, p->group);
	strcat(optstring, cmd->subcmds ? "+:h" : ":h");
	for (int k = 0; k < s.n; k++) {
		const struct rl_opt *o = s.opt[k];

		longopts[k] = (struct option){
			o->name, !o->arg ? no_argument : o->arg[0] == '[' ?
			optional_argument : required_argument, NULL, LONG_BASE + k,
		};
		if (o->id > 0 && o->id < RL_OPT_FIRST && s.owner[k] == cmd) {
			n = (int)strlen(optstring);
			optstring[n] = (char)o->id;
			strcpy(optstring + n + 1, !o->arg ? "" : o->arg[0] == '[' ? "::" : ":");
		}
	}
	longopts[s.n] = (struct option){ "help", no_argument, NULL, 'h' };
	optind = 0;	/* glibc: start afresh, at argv[1] */
	opterr = 0;
	while ((c = getopt_long(p->argc, p->argv, optstring, longopts, NULL)) != -1) {
		const struct rl_opt *o = NULL;
		char err[RL_ERR_LEN];
		int ret;

		if (c == 'h' && p->parsed)
			return rl_usage_err("%s: --help does not belong here", p->path);
		if (c == 'h') {
			help(stdout, p->group ? p->group : cmd,
			     p->group ? p->group->name : p->path);
			return RL_EXIT_DONE;
		}
		if (c == '?' || c == ':')
			return bad_option(p, c);
		if (c >= LONG_BASE && s.owner[c - LONG_BASE] != cmd)
			return rl_usage_err("%s: --%s is for '%s %s'", p->path,
					    s.opt[c - LONG_BASE]->name,
					    p->group->name,
					    s.owner[c - LONG_BASE]->name);
		for (int k = 0; k < s.n && !o; k++)	/* a short form: its row */
			if (c >= LONG_BASE ? k == c - LONG_BASE : s.opt[k]->id == c)
				o = s.opt[k];
		if (o->kind == RL_OPT_CALL) {
			ret = cmd->opt(p, cfg, o->id, optarg);
			if (ret)
				return ret;
		} else if (rl_opt_store(o, cfg, optarg, err, sizeof(err))) {
			return rl_usage_err("%s: %s", p->path, err);
		}
	}
	return 0;
}

/* "set, del or list" */
static void names_of(const struct rl_cmd *group, const char *last_sep,
		     char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; group->subcmds[i] && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", !i ? "" :
			      group->subcmds[i + 1] ? ", " : last_sep,
			      group->subcmds[i]->name);
}

static int cmd_main(const struct rl_cmd *cmd, const struct rl_cmd *group,
		    const char *path, int argc, char **argv,
		    struct rl_parsed *parsed);

/* After a group's options: the subcommand named by the next word. */
static int dispatch(const struct rl_cmd *group, const char *path, int argc,
		    char **argv, struct rl_parsed *parsed)
{
	char names[128], sub[64];
	const char *word = optind < argc ? argv[optind] : NULL;
	bool top = !*path;

	if (parsed && (!word || !strcmp(word, "help"))) {
		names_of(group, " or ", names, sizeof(names));
		return rl_usage_err("%s%s%s: use %s", path, *path ? ": " : "",
				    word ? "'help' does not belong here" :
				    top ? "missing command" : "missing subcommand",
				    names);
	}
	if (!word || !strcmp(word, "help")) {
		if (word) {
			help(stdout, group, path);
			return RL_EXIT_OK;
		}
		names_of(group, " or ", names, sizeof(names));
		if (top)
			rl_err("missing command; try 'xdp-ratelimit --help'");
		else
			rl_err("%s: missing subcommand: use %s (see 'xdp-ratelimit %s --help')",
			       path, names, path);
		help(stderr, group, path);
		return RL_EXIT_USAGE;
	}
	for (int i = 0; group->subcmds[i]; i++) {
		if (strcmp(word, group->subcmds[i]->name))
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", path, top ? "" : " ", word);
		return cmd_main(group->subcmds[i], top ? NULL : group, sub,
				argc - optind, argv + optind, parsed);
	}
	if (top) {
		names_of(group, " and ", names, sizeof(names));
		return rl_usage_err("unknown command '%s': the commands are %s (see 'xdp-ratelimit --help')",
				    word, names);
	}
	names_of(group, " or ", names, sizeof(names));
	return rl_usage_err("%s: unknown subcommand '%s': use %s (see 'xdp-ratelimit %s --help')",
			    path, word, names, path);
}

/* ---- dispatch ------------------------------------------------------------- */

/*
 * Start a change under rl_pin_root() (attach, detach, quota set/del): bpffs
 * ready, not in a private mount namespace, the lock held. Returns the
 * lock fd, or -1 after reporting the problem.
 */
static int change_begin(void)
{
	char err[RL_ERR_LEN];
	int lock;

	if (rl_pins_prepare(err, sizeof(err))) {
		rl_err("%s", err);
		return -1;
	}
	lock = rl_lock(err, sizeof(err));
	if (lock < 0)
		rl_err("%s", err);
	return lock;
}

static int run(const struct rl_cmd *cmd, void *cfg)
{
	unsigned int flags = cmd->flags;
	int lock = -1, ret = 0;

	if ((flags & (RL_CMD_ROOT | RL_CMD_LOCK)) && rl_require_root())
		return RL_EXIT_FAIL;
	/* readers too: what they would read is not the machine's pins */
	if ((cmd->flags & RL_CMD_ROOT) && rl_private_mount_ns())
		return rl_fail("%s", RL_PRIVATE_MOUNT_NS_ERR);
	if (cmd->prepare)
		ret = cmd->prepare(cfg, &flags);
	if (!ret && (flags & RL_CMD_LOCK)) {
		lock = change_begin();
		if (lock < 0)
			ret = RL_EXIT_FAIL;
	}
	if (!ret)
		ret = cmd->run(cfg);
	rl_unlock(lock);
	if (cmd->release)
		cmd->release(cfg);
	return ret;
}

/* Parse, then run (parsed NULL) or hand the config to `parsed`. */
static int cmd_main(const struct rl_cmd *cmd, const struct rl_cmd *group,
		    const char *path, int argc, char **argv,
		    struct rl_parsed *parsed)
{
	struct rl_parser p = { .cmd = cmd, .group = group, .argc = argc,
			       .argv = argv, .parsed = parsed };
	void *cfg = NULL;
	int ret;

	snprintf(p.path, sizeof(p.path), "%s", path);
	if (cmd->cfg_size) {
		cfg = calloc(1, cmd->cfg_size);
		if (!cfg)
			return rl_fail("%s: out of memory", path);
	}
	if (cmd->defaults)
		cmd->defaults(cfg);
	ret = parse_opts(&p, cfg);
	if (!ret && cmd->subcmds)
		ret = dispatch(cmd, path, argc, argv, parsed);
	else if (!ret && cmd->operands)
		ret = cmd->operands(&p, cfg, argc - optind, argv + optind);
	else if (!ret && optind < argc)
		ret = rl_usage_err("%s: unexpected '%s': see 'xdp-ratelimit %s --help'",
				   path, argv[optind], group ? group->name : path);
	if (!ret && !cmd->subcmds && parsed) {
		parsed->cmd = cmd;
		parsed->cfg = cfg;
		snprintf(parsed->path, sizeof(parsed->path), "%s", path);
		return RL_EXIT_OK;
	}
	if (!ret && !cmd->subcmds)
		ret = run(cmd, cfg);
	free(cfg);
	return ret == RL_EXIT_DONE ? RL_EXIT_OK : ret;
}

int rl_cmd_main(const struct rl_cmd *cmd, const struct rl_cmd *group,
		const char *path, int argc, char **argv)
{
	return cmd_main(cmd, group, path, argc, argv, NULL);
}

int rl_cmd_parse(int argc, char **argv, struct rl_parsed *out)
{
	static const struct rl_cmd top = { .name = "", .subcmds = rl_commands };

	memset(out, 0, sizeof(*out));
	optind = 0;	/* dispatch reads the command at argv[optind] */
	return dispatch(&top, "", argc, argv, out);
}
