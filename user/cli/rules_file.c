// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Rules files: written by save, read by restore (rules_file.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "lib/rule.h"
#include "cli/rules_file.h"
#include "lib/settings.h"
#include "lib/values.h"

/* More words than any command line of a rules file needs: every option
 * of quota set with its value, and then some. */
#define MAX_WORDS	64

static const char *const file_cmds[] = {
	RL_FILE_ATTACH, RL_FILE_QUOTA_SET, RL_FILE_QUOTA_DEL, NULL,
};

void rl_rules_file_where(const struct rl_rules_file *rf,
			 const struct rl_file_line *l)
{
	char where[PATH_MAX + 16];

	snprintf(where, sizeof(where), "%s:%d", rf->name, l->line);
	rl_err_where(where);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Cut `text` into words in place, up to a comment; how many, or -1 when
 * there are more than `max`. */
static int split_words(char *text, char **argv, int max)
{
	int n = 0;

	for (char *c = text; *c;) {
		while (is_blank(*c))
			c++;
		if (!*c || *c == '#')
			break;
		if (n == max)
			return -1;
		argv[n++] = c;
		while (*c && !is_blank(*c))
			c++;
		if (*c)
			*c++ = '\0';
	}
	argv[n] = NULL;
	return n;
}

/* One line: 0 with l->cmd set (*empty: the line has no command), or the
 * exit status after reporting. */
static int parse_line(struct rl_file_line *l, const char *text, size_t len,
		      bool *empty)
{
	bool allowed = false;
	int argc, ret;

	if (memchr(text, '\0', len))
		return rl_fail("a NUL byte: this is not a rules file (save writes text)");
	if (len > RL_FILE_LINE_MAX)
		return rl_fail("longer than %d characters: not a line save writes",
			       RL_FILE_LINE_MAX);
	l->words = strndup(text, len);
	l->argv = calloc(MAX_WORDS + 1, sizeof(*l->argv));
	if (!l->words || !l->argv)
		return rl_fail("out of memory");
	argc = split_words(l->words, l->argv, MAX_WORDS);
	if (argc < 0)
		return rl_fail("more than %d words: not a line save writes", MAX_WORDS);
	*empty = argc == 0;
	if (*empty)
		return 0;
	ret = rl_cmd_parse(argc, l->argv, &l->cmd);
	if (ret)
		return RL_EXIT_FAIL;	/* reported, with what to fix */
	for (int i = 0; file_cmds[i]; i++)
		allowed |= !strcmp(l->cmd.path, file_cmds[i]);
	if (!allowed)
		return rl_fail("'%s' does not belong in a rules file: it holds 'attach' and 'quota set'/'quota del' lines, as 'xdp-ratelimit save' writes them",
			       l->cmd.path);
	return 0;
}

static void line_free(struct rl_file_line *l)
{
	free(l->cmd.cfg);
	free(l->words);
	free(l->argv);
	memset(l, 0, sizeof(*l));
}

int rl_rules_file_read(FILE *f, const char *name, struct rl_rules_file *rf)
{
	struct rl_file_line cur = {};
	char *text = NULL;
	size_t cap = 0;
	ssize_t len;
	int ret = 0, lineno = 0;

	memset(rf, 0, sizeof(*rf));
	snprintf(rf->name, sizeof(rf->name), "%s", strcmp(name, "-") ? name : "<stdin>");
	while (!ret && (len = getline(&text, &cap, f)) >= 0) {
		struct rl_file_line *grown;
		bool empty;

		cur.line = ++lineno;
		if (len && text[len - 1] == '\n')
			len--;
		rl_rules_file_where(rf, &cur);
		ret = parse_line(&cur, text, (size_t)len, &empty);
		if (ret)
			break;
		if (empty) {
			line_free(&cur);
			continue;
		}
		grown = realloc(rf->lines, (rf->n + 1) * sizeof(*grown));
		if (!grown) {
			ret = rl_fail("out of memory");
			break;
		}
		rf->lines = grown;
		rf->lines[rf->n++] = cur;
		memset(&cur, 0, sizeof(cur));
	}
	if (!ret && ferror(f)) {
		cur.line = lineno + 1;
		rl_rules_file_where(rf, &cur);
		ret = rl_fail("cannot read: %s", strerror(errno));
	}
	line_free(&cur);
	free(text);
	rl_err_where(NULL);
	return ret;
}

void rl_rules_file_free(struct rl_rules_file *rf)
{
	for (int i = 0; i < rf->n; i++)
		line_free(&rf->lines[i]);
	free(rf->lines);
	rf->lines = NULL;
	rf->n = 0;
}

/* ---- writing ------------------------------------------------------------ */

static void write_attach(FILE *f, const char *iface, const struct rl_settings *s,
			 unsigned int prio)
{
	char w[32], ttl[32], via[RL_MAX_REPLIES_VIA * 17 + 1];

	rl_format_duration(s->window_ns, w, sizeof(w));
	rl_format_duration(s->verified_ttl_ns, ttl, sizeof(ttl));
	rl_format_replies_via(s->replies_via, via, sizeof(via));
	fprintf(f, "attach %s --mode %s --window %s --buckets %u --max-sources %" PRIu64
		" --ipv6-prefix %u --priority %u --verified-ttl %s%s%s%s%s\n", iface,
		s->mode == RL_MODE_NATIVE || s->mode == RL_MODE_GENERIC ?
		rl_mode_name(s->mode) : "auto", w, s->nbuckets,
		(uint64_t)s->max_sources, s->v6_prefix, prio, ttl,
		via[0] ? " --replies-via " : "", via,
		s->flags & RL_F_DRY_RUN ? " --dry-run" : "",
		s->flags & RL_F_PASS_MALFORMED ? " --pass-malformed" : "");
}

void rl_rule_limits_text(const struct rl_rule *r, char *buf, size_t len)
{
	size_t off = 0;
	char d[32];

	buf[0] = '\0';
	for (const struct rl_rule_opt *o = rl_rule_opts; o->name && off < len; o++) {
		__u64 v = rl_rule_opt_value(r, o);

		if (!rl_rule_opt_set(r, o))
			continue;
		if (o->kind == RL_RULE_OPT_DURATION)
			rl_format_duration(v, d, sizeof(d));
		else if (o->kind == RL_RULE_OPT_SWITCH)
			snprintf(d, sizeof(d), "on");
		else	/* RATE, COUNT */
			snprintf(d, sizeof(d), "%" PRIu64, (uint64_t)v);
		off += (size_t)snprintf(buf + off, len - off, "%s--%s %s",
					off ? " " : "", o->name, d);
	}
	if (!off)	/* an allow-list rule: no limit at all */
		snprintf(buf, len, "--%s unlimited", rl_rule_opts[0].name);
}

/* The limits, after a blank, as save writes them. */
static void rules_file_limits(FILE *f, const struct rl_rule *r)
{
	char buf[RL_RULE_LIMITS_STRLEN];

	rl_rule_limits_text(r, buf, sizeof(buf));
	fprintf(f, " %s", buf);
}

static bool same_limits(const struct rl_rule *a, const struct rl_rule *b)
{
	for (const struct rl_rule_opt *o = rl_rule_opts; o->name; o++)
		if (rl_rule_opt_value(a, o) != rl_rule_opt_value(b, o))
			return false;
	return true;
}

/* The half of the default of family `v6` with the scope of `like`. */
static const struct rl_rule *find_default(const struct rl_rule *rules, int n,
					  bool v6, const struct rl_rule *like)
{
	for (int i = 0; i < n; i++)
		if (rules[i].prefixlen == 0 && !!(rules[i].flags & RL_RULE_F_V6) == v6 &&
		    rules[i].scope == like->scope && rules[i].pad == like->pad)
			return &rules[i];
	return NULL;
}

/* Is r a half of the default (of its scope) that prints as `default`
 * together with the other, which has the same limits? */
static bool default_pair(const struct rl_rule *rules, int n,
			 const struct rl_rule *r)
{
	const struct rl_rule *d4, *d6;

	if (r->prefixlen)
		return false;
	d4 = find_default(rules, n, false, r);
	d6 = find_default(rules, n, true, r);
	return d4 && d6 && same_limits(d4, d6);
}

int rl_rules_file_write(FILE *f, const char *iface, const struct rl_settings *s,
			unsigned int prio, const struct rl_rule *rules, int n)
{
	char pfx[RL_PREFIX_STRLEN], scope[RL_SCOPE_STRLEN * 2];
	struct rl_prefix p;
	struct rl_scope sc;

	write_attach(f, iface, s, prio);
	for (int i = 0; i < n; i++) {
		const struct rl_rule *r = &rules[i];
		bool pair = default_pair(rules, n, r);

		if (pair && (r->flags & RL_RULE_F_V6))
			continue;	/* printed with its IPv4 half */
		rl_rule_prefix(r, &p);
		p.is_default = pair;
		rl_format_prefix(&p, pfx, sizeof(pfx));
		rl_rule_scope_get(r, &sc);
		rl_scope_opts_text(&sc, scope, sizeof(scope));
		fprintf(f, "quota set %s", pfx);
		rules_file_limits(f, r);
		fprintf(f, "%s --iface %s\n", scope, iface);
	}
	return ferror(f) ? -EIO : 0;
}
