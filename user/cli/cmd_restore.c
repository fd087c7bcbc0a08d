// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit restore FILE|-: apply a rules file (rules_file.h). Every
 * line is parsed and checked, and each interface's rule set computed,
 * before anything changes: a bad line changes nothing. Then, interface by
 * interface in the order the file names them, one all-or-nothing step:
 * an interface not attached is attached with its whole rule set written
 * before the commit point (cmd_args.h), an attached one gets its rule set
 * replaced through rules_txn.h. Rules as they are keep their counters and
 * windows, and a file that changes nothing writes nothing.
 *
 * The plan (each interface's rule set wanted, and how it differs from the
 * live one: rl_rule_diff) is computed once: --test prints it, otherwise it
 * is applied and printed. --noflush starts each attached interface's
 * rule set from its live rules instead of none, so nothing is deleted.
 * The file is read before the lock (prepare), so that a stalled pipe
 * holds up no other change.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/cmd_args.h"
#include "lib/iface.h"
#include "lib/pin.h"
#include "cli/rules_file.h"
#include "lib/rule_replace.h"
#include "lib/rule_txn.h"
#include "lib/settings.h"
#include "cli/table.h"
#include "lib/xdp_multi.h"

/* One interface of the file: what restore will make of it. */
struct target {
	char name[IF_NAMESIZE];
	const struct rl_file_line *first;	/* the line that first names it */
	bool attach_line;			/* first is its attach line */
	const struct rl_attach_args *attach;	/* to attach; NULL: attached */
	struct rl_iface ifc;			/* open when attached already */
	bool open;
	struct rl_settings set;			/* budgets are per window */
	struct rl_rule *rules;			/* the rule set wanted */
	int n;
	struct rl_rule *have;			/* the live one (attached) */
	int nhave;
	int *match;				/* rl_rule_diff */
	bool *kept;
	struct rl_rule_diff diff;
};

struct plan {
	const struct rl_rules_file *rf;
	const char *only;			/* --iface: the file is its alone */
	bool noflush;
	struct target t[RL_MAX_IFACES];
	int n;
	/* attached now, for a quota line without --iface */
	char attached[RL_MAX_IFACES][IF_NAMESIZE];
	int nattached;
};

static struct target *find_target(struct plan *pl, const char *name)
{
	for (int i = 0; i < pl->n; i++)
		if (!strcmp(pl->t[i].name, name))
			return &pl->t[i];
	return NULL;
}

static bool is_attached(const struct plan *pl, const char *name)
{
	for (int i = 0; i < pl->nattached; i++)
		if (!strcmp(pl->attached[i], name))
			return true;
	return false;
}

static struct target *new_target(struct plan *pl, const char *name,
				 const struct rl_file_line *l)
{
	struct target *t;

	if (pl->n == RL_MAX_IFACES) {
		rl_fail("more than %d interfaces", RL_MAX_IFACES);
		return NULL;
	}
	t = &pl->t[pl->n];
	t->rules = calloc(RL_MAX_RULES, sizeof(*t->rules));
	if (!t->rules) {
		rl_fail("out of memory");
		return NULL;
	}
	pl->n++;
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->first = l;
	return t;
}

/* An interface attached now, as the file's lines find it. */
static struct target *attached_target(struct plan *pl, const char *name,
				      const struct rl_file_line *l)
{
	struct target *t = new_target(pl, name, l);
	char err[RL_ERR_LEN];

	if (!t)
		return NULL;
	if (rl_iface_gone(name)) {
		rl_iface_gone_text(name, err, sizeof(err));
		rl_fail("%s", err);
		return NULL;
	}
	if (rl_iface_open(name, &t->ifc, err, sizeof(err))) {
		rl_fail("%s", err);
		return NULL;
	}
	t->open = true;
	t->set = t->ifc.cfg.set;
	t->have = calloc(RL_MAX_RULES, sizeof(*t->have));
	if (!t->have) {
		rl_fail("out of memory");
		return NULL;
	}
	/* as quota list shows it: with a restore cut short, the set it was
	 * bringing in, which the apply completes first */
	t->nhave = rl_rules_read(&t->ifc, t->have, RL_MAX_RULES);
	if (t->nhave < 0) {
		rl_fail("cannot read the rules of %s: %s", name, strerror(-t->nhave));
		return NULL;
	}
	if (pl->noflush) {	/* the file's lines change the live rules */
		memcpy(t->rules, t->have, t->nhave * sizeof(*t->have));
		t->n = t->nhave;
	}
	return t;
}

/* ---- the rule set wanted, line by line ----------------------------------- */

static struct rl_rule *model_find(struct target *t, const struct rl_prefix *p,
				  const struct rl_scope *scope)
{
	struct rl_rule probe;

	rl_rule_init(&probe, p);
	rl_rule_scope_put(&probe, scope);
	for (int i = 0; i < t->n; i++)
		if (rl_rule_same_key(&t->rules[i], &probe))
			return &t->rules[i];
	return NULL;
}

/* Does the rule set use more scopes than the maps hold? Then the file
 * is refused before anything changes. */
static bool model_scopes_fit(const struct target *t)
{
	struct rl_scope seen[RL_MAX_SCOPES], s;
	int n = 0, k;

	for (int i = 0; i < t->n; i++) {
		rl_rule_scope_get(&t->rules[i], &s);
		if (!rl_scope_any(&s))
			continue;
		for (k = 0; k < n && !rl_scope_same(&seen[k], &s); k++)
			;
		if (k < n)
			continue;
		if (n == RL_MAX_SCOPES)
			return false;
		seen[n++] = s;
	}
	return true;
}

/* quota set, as it would change the rules so far. */
static int model_set(struct target *t, const struct rl_prefix *p,
		     const struct rl_scope *scope, const struct rl_rule_change *c)
{
	struct rl_prefix each[2];
	char err[RL_ERR_LEN];
	int n = rl_prefix_expand(p, each);

	if (rl_rule_check(&t->set, p, scope, c, err, sizeof(err)))
		return rl_fail("%s", err);
	for (int i = 0; i < n; i++) {
		struct rl_rule *r = model_find(t, &each[i], scope);

		if (!r) {
			if (t->n == RL_MAX_RULES)
				return rl_fail("more than %u rules for %s",
					       RL_MAX_RULES, t->name);
			r = &t->rules[t->n++];
			rl_rule_init(r, &each[i]);
			rl_rule_scope_put(r, scope);
		}
		rl_rule_apply(r, c, t->set.window_ns);
	}
	if (!model_scopes_fit(t))
		return rl_fail("more than %u scopes for %s: rules may have %u different scopes (--proto with its --dport and --syn) at most",
			       RL_MAX_SCOPES, t->name, RL_MAX_SCOPES);
	return RL_EXIT_OK;
}

static int model_del(const struct plan *pl, struct target *t,
		     const struct rl_prefix *p, const struct rl_scope *scope)
{
	char buf[RL_PREFIX_STRLEN], text[RL_SCOPE_STRLEN + 1] = "";
	struct rl_prefix each[2];
	int n = rl_prefix_expand(p, each), found = 0;

	if (pl->noflush)
		return rl_fail("quota del: restore --noflush never deletes: remove this line, or restore without --noflush (the file is then the whole rule set of %s)",
			       t->name);
	for (int i = 0; i < n; i++) {
		struct rl_rule *r = model_find(t, &each[i], scope);

		if (!r)
			continue;
		*r = t->rules[--t->n];
		found++;
	}
	if (found)
		return RL_EXIT_OK;
	rl_format_prefix(p, buf, sizeof(buf));
	if (rl_scope_any(scope)) {
		text[0] = ' ';
		rl_scope_text(scope, text + 1, sizeof(text) - 1);
	}
	return rl_fail("quota del: no rule for %s%s in the lines above (a rules file gives the whole rule set of %s, starting from none)",
		       buf, text, t->name);
}

/* ---- checking each line --------------------------------------------------- */

/* The first attach setting of `want` that the attached interface does not
 * have, as "--window 2s (attached with 1s)"; false when none differs. */
static bool settings_differ(const struct rl_settings *have,
			    const struct rl_attach_args *a, char *buf,
			    size_t len)
{
	const struct rl_settings *want = &a->s;
	char w1[32], w2[32];

	rl_format_duration(want->window_ns, w1, sizeof(w1));
	rl_format_duration(have->window_ns, w2, sizeof(w2));
	if (want->window_ns != have->window_ns)
		snprintf(buf, len, "--window %s (attached with %s)", w1, w2);
	else if (want->nbuckets != have->nbuckets)
		snprintf(buf, len, "--buckets %u (attached with %u)",
			 want->nbuckets, have->nbuckets);
	else if (want->max_sources != have->max_sources)
		snprintf(buf, len, "--max-sources %llu (attached with %llu)",
			 (unsigned long long)want->max_sources,
			 (unsigned long long)have->max_sources);
	else if (want->v6_prefix != have->v6_prefix)
		snprintf(buf, len, "--ipv6-prefix %u (attached with %u)",
			 want->v6_prefix, have->v6_prefix);
	else if (want->verified_ttl_ns != have->verified_ttl_ns) {
		rl_format_duration(want->verified_ttl_ns, w1, sizeof(w1));
		rl_format_duration(have->verified_ttl_ns, w2, sizeof(w2));
		snprintf(buf, len, "--verified-ttl %s (attached with %s)", w1, w2);
	} else if (memcmp(want->replies_via, have->replies_via, sizeof(want->replies_via)))
		snprintf(buf, len, "--replies-via (attached with other interfaces)");
	else if ((want->flags ^ have->flags) & RL_F_DRY_RUN)
		snprintf(buf, len, "%s--dry-run (attached %s it)",
			 want->flags & RL_F_DRY_RUN ? "" : "no ",
			 have->flags & RL_F_DRY_RUN ? "with" : "without");
	else if ((want->flags ^ have->flags) & RL_F_PASS_MALFORMED)
		snprintf(buf, len, "%s--pass-malformed (attached %s it)",
			 want->flags & RL_F_PASS_MALFORMED ? "" : "no ",
			 have->flags & RL_F_PASS_MALFORMED ? "with" : "without");
	else if (a->mode != RL_XDP_AUTO &&
		 (a->mode == RL_XDP_NATIVE) != (have->mode == RL_MODE_NATIVE))
		snprintf(buf, len, "--mode %s (attached in %s mode)",
			 a->mode == RL_XDP_NATIVE ? "native" : "generic",
			 rl_mode_name(have->mode));
	else
		return false;
	return true;
}

/* restore --iface IFACE: a line for another interface is refused. */
static int check_only(const struct plan *pl, const char *name)
{
	if (pl->only && strcmp(pl->only, name))
		return rl_fail("a line for %s in a restore of %s alone (--iface %s): move it to a file of its own",
			       name, pl->only, pl->only);
	return RL_EXIT_OK;
}

/* The file asks settings `diff` of attached `iface`. */
static int other_settings(const char *iface, const char *diff)
{
	/* reload changes any setting but these */
	bool fixed = !strncmp(diff, "--mode", 6) || !strncmp(diff, "--priority", 10);

	return rl_fail("%s is attached with other settings: the file asks %s; restore does not change attach settings: %s first, or edit the file",
		       iface, diff, fixed ?
		       "run 'xdp-ratelimit detach' (its counters go with it)" :
		       "run 'xdp-ratelimit reload' with the file's settings (rules, counters and bans are kept)");
}

static int check_attach(struct plan *pl, const struct rl_file_line *l)
{
	const struct rl_attach_args *a = l->cmd.cfg;
	struct target *t = find_target(pl, a->iface);
	struct rl_rule_change def;
	char diff[128];
	unsigned int prio;

	if (check_only(pl, a->iface))
		return RL_EXIT_FAIL;
	if (t && t->attach_line)
		return rl_fail("%s is attached a second time (first at line %d): one attach line per interface",
			       a->iface, t->first->line);
	if (t)
		return rl_fail("'attach %s' must come before the lines that give its rules (line %d)",
			       a->iface, t->first->line);
	if (is_attached(pl, a->iface)) {
		t = attached_target(pl, a->iface, l);
		if (!t)
			return RL_EXIT_FAIL;
		prio = rl_xdp_multi_prio(a->iface);
		if (a->priority && a->priority != prio)
			snprintf(diff, sizeof(diff), "--priority %u (attached at %u)",
				 a->priority, prio);
		if ((a->priority && a->priority != prio) ||
		    settings_differ(&t->set, a, diff, sizeof(diff)))
			return other_settings(a->iface, diff);
	} else {
		if (!if_nametoindex(a->iface))
			return rl_fail("no interface named '%s' here: check 'ip link' (in a namespace, run under 'nsenter --net=/run/netns/NAME')",
				       a->iface);
		t = new_target(pl, a->iface, l);
		if (!t)
			return RL_EXIT_FAIL;
		t->attach = a;
		t->set = a->s;
	}
	t->attach_line = true;
	/* what attach --default-pps/--default-bps would set */
	if (rl_rule_change_default(&def, a->def_pps, a->def_bps))
		return model_set(t, &(struct rl_prefix){ .is_default = true },
				 &(struct rl_scope){ 0 }, &def);
	return RL_EXIT_OK;
}

/* The interface of a quota line: --iface, else the only one attached now
 * or by the file (as on the command line). */
static const char *quota_iface(struct plan *pl, const struct rl_file_line *l)
{
	const struct rl_quota_args *q = l->cmd.cfg;
	const char *only = NULL;
	int n = 0;

	if (q->iface)
		return q->iface;
	if (pl->only)
		return pl->only;
	if (pl->nattached == 1)
		only = pl->attached[0];
	n = pl->nattached;
	for (int i = 0; i < pl->rf->n; i++) {
		const struct rl_file_line *a = &pl->rf->lines[i];
		const char *name;

		if (strcmp(a->cmd.path, RL_FILE_ATTACH))
			continue;
		name = ((const struct rl_attach_args *)a->cmd.cfg)->iface;
		if (!is_attached(pl, name)) {
			only = name;
			n++;
		}
	}
	if (n == 1)
		return only;
	rl_fail("%s: name the interface with --iface (%s)", l->cmd.path,
		n ? "several interfaces are attached or attached by this file" :
		"no interface is attached or attached by this file");
	return NULL;
}

static int check_quota(struct plan *pl, const struct rl_file_line *l)
{
	const struct rl_quota_args *q = l->cmd.cfg;
	const char *name = quota_iface(pl, l);
	struct target *t;

	if (!name || check_only(pl, name))
		return RL_EXIT_FAIL;
	t = find_target(pl, name);
	if (!t && !is_attached(pl, name))
		return rl_fail("%s is not attached and no line above attaches it: add 'attach %s ...' before this line",
			       name, name);
	if (!t)
		t = attached_target(pl, name, l);
	if (!t)
		return RL_EXIT_FAIL;
	if (!strcmp(l->cmd.path, RL_FILE_QUOTA_DEL))
		return model_del(pl, t, &q->prefix, &q->scope);
	return model_set(t, &q->prefix, &q->scope, &q->change);
}

static int plan_build(struct plan *pl, const struct rl_rules_file *rf)
{
	int ret = 0;

	pl->rf = rf;
	pl->nattached = rl_ifaces_list(pl->attached, RL_MAX_IFACES);
	if (pl->nattached < 0)
		return rl_fail("cannot read %s: %s", rl_pin_root(),
			       strerror(-pl->nattached));
	for (int i = 0; i < rf->n && !ret; i++) {
		const struct rl_file_line *l = &rf->lines[i];

		rl_rules_file_where(rf, l);
		if (!strcmp(l->cmd.path, RL_FILE_ATTACH))
			ret = check_attach(pl, l);
		else
			ret = check_quota(pl, l);
	}
	return ret;
}

/* How each interface's rules would change: sorted as quota list sorts. */
static int plan_diff(struct plan *pl)
{
	for (int i = 0; i < pl->n; i++) {
		struct target *t = &pl->t[i];

		t->match = calloc(t->n ? t->n : 1, sizeof(*t->match));
		t->kept = calloc(t->nhave ? t->nhave : 1, sizeof(*t->kept));
		if (!t->match || !t->kept)
			return rl_fail("out of memory");
		qsort(t->rules, t->n, sizeof(*t->rules), rl_rule_cmp);
		rl_rule_diff(t->have, t->nhave, t->rules, t->n, t->match,
			     t->kept, &t->diff);
	}
	return RL_EXIT_OK;
}

static void plan_free(struct plan *pl)
{
	for (int i = 0; i < pl->n; i++) {
		if (pl->t[i].open)
			rl_iface_close(&pl->t[i].ifc);
		free(pl->t[i].rules);
		free(pl->t[i].have);
		free(pl->t[i].match);
		free(pl->t[i].kept);
	}
}

/* ---- printing --------------------------------------------------------------- */

/* "  ~ PREFIX SCOPE LIMITS (was LIMITS)", within 80 columns: the limits
 * wrap between options, under the rule (quota list's LIMITS too). */
static void print_rule(char sign, const struct rl_rule *r, const struct rl_rule *was)
{
	char text[RL_RULE_STRLEN + 2 * RL_RULE_LIMITS_STRLEN + 16];
	char limits[RL_RULE_LIMITS_STRLEN], old[RL_RULE_LIMITS_STRLEN];
	size_t at;

	rl_rule_text(r, text, sizeof(text));
	for (char *c = text; (c = strchr(c, ' ')); c++)
		*c = RL_TABLE_NBSP;	/* the rule stays whole */
	rl_rule_limits_text(r, limits, sizeof(limits));
	rl_table_keep_options(limits);
	at = strlen(text);
	snprintf(text + at, sizeof(text) - at, " %s", limits);
	if (was) {
		rl_rule_limits_text(was, old, sizeof(old));
		rl_table_keep_options(old);
		at = strlen(text);
		snprintf(text + at, sizeof(text) - at, " (was%c%s)", RL_TABLE_NBSP, old);
	}
	printf("  %c ", sign);
	rl_print_wrapped(stdout, text, RL_VIEW_MIN_WIDTH, 4);
}

/* One interface: "+N -M ~K" (added, deleted, changed), then, for an
 * attached one, each rule that changes. */
static void print_target(const struct target *t, bool test)
{
	const struct rl_rule_diff *d = &t->diff;
	bool same = !d->added && !d->deleted && !d->changed;

	printf("%s: %s+%d -%d ~%d, %d rule%s%s%s\n", t->name,
	       !t->attach ? "" : test ? "not attached, would attach: " : "attached, ",
	       d->added, d->deleted, d->changed, t->n, t->n == 1 ? "" : "s",
	       same && !t->attach ? ", unchanged" : "",
	       !test ? "" : t->attach ? "\n  (test: nothing changed)" :
	       " (test: nothing changed)");
	if (t->attach)
		return;		/* every rule is the file's */
	for (int i = 0; i < t->n; i++)
		if (t->match[i] < 0)
			print_rule('+', &t->rules[i], NULL);
		else if (memcmp(&t->rules[i], &t->have[t->match[i]], sizeof(t->rules[i])))
			print_rule('~', &t->rules[i], &t->have[t->match[i]]);
	for (int i = 0; i < t->nhave; i++)
		if (!t->kept[i])
			print_rule('-', &t->have[i], NULL);
}

/* ---- applying --------------------------------------------------------------- */

static int apply(const struct plan *pl)
{
	char err[RL_ERR_LEN];

	for (int i = 0; i < pl->n; i++) {
		const struct target *t = &pl->t[i];
		int ret;

		rl_rules_file_where(pl->rf, t->first);
		/* the host's side of SYN cookies before any rule asks for it */
		if (rl_rules_want_cookies(t->rules, t->n) && rl_cookies_ensure(t->name))
			return RL_EXIT_FAIL;
		if (t->attach) {
			ret = rl_attach_run(t->attach, t->rules, t->n);
			if (ret)
				return ret;
			print_target(t, false);
			continue;
		}
		ret = rl_rule_txn_finish(&t->ifc, err, sizeof(err));
		if (ret >= 0)
			ret = rl_rule_txn_replace(&t->ifc, t->rules, t->n, err,
						   sizeof(err));
		if (ret < 0)
			return rl_fail("%s: %s", t->name, err);
		print_target(t, false);
	}
	return RL_EXIT_OK;
}

struct restore_args {
	const char *file;
	const char *iface;
	bool test, noflush;
	struct rl_rules_file rf;	/* read by restore_prepare */
};

static int restore_operands(struct rl_parser *p, void *cfg, int argc,
			    char **argv)
{
	(void)p;
	if (argc != 1)
		return rl_usage_err("restore: name one rules file, or - for stdin: xdp-ratelimit restore [--test|--noflush] FILE");
	((struct restore_args *)cfg)->file = argv[0];
	return 0;
}

/* Before the lock: the whole file, read and parsed. --test takes no lock:
 * it reads, as quota list does. */
static int restore_prepare(void *cfg, unsigned int *flags)
{
	struct restore_args *a = cfg;
	FILE *f = stdin;
	int ret;

	if (a->test)
		*flags = (*flags & ~RL_CMD_LOCK) | RL_CMD_ROOT;
	if (strcmp(a->file, "-")) {
		f = fopen(a->file, "r");
		if (!f)
			return rl_fail("restore: cannot read %s: %s%s", a->file,
				       strerror(errno), errno == ENOENT ?
				       " ('xdp-ratelimit save --iface IFACE --to-unit' writes the file the systemd unit reads)" : "");
	}
	ret = rl_rules_file_read(f, a->file, &a->rf);
	if (f != stdin)
		fclose(f);
	if (!ret && !a->rf.n)
		ret = rl_fail("restore: %s has no command (only blanks and comments): nothing to restore; 'xdp-ratelimit save' writes a rules file",
			      a->rf.name);
	return ret;
}

static void restore_release(void *cfg)
{
	rl_rules_file_free(&((struct restore_args *)cfg)->rf);
}

/* Under the lock, but for --test. */
static int restore_run(void *cfg)
{
	struct restore_args *a = cfg;
	struct plan *pl = calloc(1, sizeof(*pl));
	int ret;

	if (!pl)
		return rl_fail("restore: out of memory");
	pl->only = a->iface;
	pl->noflush = a->noflush;
	ret = plan_build(pl, &a->rf);
	if (!ret)
		ret = plan_diff(pl);
	rl_err_where(NULL);
	if (!ret && a->test)
		for (int i = 0; i < pl->n; i++)
			print_target(&pl->t[i], true);
	else if (!ret)
		ret = apply(pl);
	rl_err_where(NULL);
	plan_free(pl);
	free(pl);
	return ret;
}

const struct rl_cmd rl_cmd_restore = {
	.name = "restore",
	.summary = "apply a rules file (as save prints)",
	.args = "FILE|-",
	.doc =
		"Apply a rules file: one command per line as typed after 'xdp-ratelimit'\n"
		"('attach IFACE ...', 'quota set|del ... --iface IFACE'); '#' starts a\n"
		"comment; - reads stdin. Interfaces not attached are attached. For each\n"
		"interface in the file, its rules become the file's, all or nothing:\n"
		"rules absent from the file are deleted, rules that do not change keep\n"
		"their counters and windows. Applying the same file twice changes\n"
		"nothing. An attached interface keeps its attach settings: a file that\n"
		"asks others is refused (reload first). A file with any bad line changes\n"
		"nothing, and the error names it as FILE:LINE. It prints, per interface,\n"
		"the change as +N -M ~K (rules added, deleted, changed) and each rule\n"
		"that changed.\n",
	.opts = (const struct rl_opt[]){
		{ .name = "test", .kind = RL_OPT_SWITCH,
		  RL_OPT_FIELD(struct restore_args, test), .help =
		  "check the file and print what it would change; change nothing" },
		{ .name = "noflush", .kind = RL_OPT_SWITCH,
		  RL_OPT_FIELD(struct restore_args, noflush), .help =
		  "add and change rules, never delete: each line changes the live\n"
		  "rules as the command would (no 'quota del' lines)" },
		RL_OPT_IFACE(struct restore_args, iface,
			     "the file is IFACE's alone: lines without --iface are its,\n"
			     "lines for another interface are refused (the systemd unit)"),
		{ 0 }
	},
	.notes =
		"Which to use: --test first, to see what a file would do; --noflush to\n"
		"add or change a few rules from a short file; plain restore to make an\n"
		"interface's rules exactly a file that save wrote.\n"
		"Files for boot: /etc/xdp-ratelimit/IFACE.rules, applied by the systemd\n"
		"unit xdp-ratelimit@IFACE ('save --to-unit' writes it).\n"
		"\n"
		"Examples:\n"
		"  xdp-ratelimit save --iface eth0 --to-unit\n"
		"  xdp-ratelimit restore --test /etc/xdp-ratelimit/eth0.rules\n"
		"  echo 'quota set 198.18.7.7 --pps unlimited --iface eth0' |\n"
		"      xdp-ratelimit restore --noflush -\n"
		"  xdp-ratelimit save | xdp-ratelimit restore -    # changes nothing\n",
	.flags = RL_CMD_LOCK,
	.cfg_size = sizeof(struct restore_args),
	.operands = restore_operands,
	.prepare = restore_prepare,
	.release = restore_release,
	.run = restore_run,
};
