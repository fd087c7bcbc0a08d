// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Rules files (save and restore) and the Prometheus text: what save writes
 * covers every option, reads back through the commands' own tables as the
 * same rules, and a bad line is named FILE:LINE. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/cmd_args.h"
#include "lib/rule.h"
#include "cli/rules_file.h"
#include "cli/stats_view.h"
#include "../harness.h"

static const struct rl_cmd *quota_sub(const char *name)
{
	for (int i = 0; rl_cmd_quota.subcmds[i]; i++)
		if (!strcmp(rl_cmd_quota.subcmds[i]->name, name))
			return rl_cmd_quota.subcmds[i];
	return NULL;
}

/* A new option of quota set needs its row in rl_rule_opts (a limit) or
 * rl_rule_scope_opts (the scope), or save would drop it. */
TEST(rule_opts_cover_quota_set)
{
	const struct rl_cmd *set = quota_sub("set");
	int opts = 0, rows = 0;

	if (!CHECK(set, "quota set"))
		return;
	for (const struct rl_opt *o = set->opts; o->name; o++) {
		bool found = false;

		if (!strcmp(o->name, "iface"))
			continue;
		opts++;
		for (const struct rl_rule_opt *r = rl_rule_opts; r->name; r++)
			found |= !strcmp(r->name, o->name);
		for (const char *const *r = rl_rule_scope_opts; *r; r++)
			found |= !strcmp(*r, o->name);
		CHECK(found, "quota set --%s has no row in rl_rule_opts or rl_rule_scope_opts: save would drop it", o->name);
	}
	for (const struct rl_rule_opt *r = rl_rule_opts; r->name; r++)
		rows++;
	for (const char *const *r = rl_rule_scope_opts; *r; r++)
		rows++;
	CHECK_EQ(rows, opts, "rows of rl_rule_opts and rl_rule_scope_opts, options of quota set");
}

/* quota del names a rule by its scope too: the same scope options. */
/* --syn-cookies, the switch kind: on|off parsed, a bit of flags set and
 * cleared by a change, shown as on/off, given by save only when on. */
TEST(rule_switch_syn_cookies)
{
	const struct rl_rule_opt *o = &rl_rule_opts[RL_RULE_FIELD_cookies];
	struct rl_prefix p;
	struct rl_rule r;
	char err[RL_ERR_LEN], buf[16];
	const struct rl_opt *set = quota_sub("set")->opts;
	struct rl_quota_args a = { 0 };

	CHECK_EQ(o->kind, RL_RULE_OPT_SWITCH, "--syn-cookies is a switch");
	CHECK_EQ(o->bit, RL_RULE_F_COOKIES, "its bit");
	while (set->name && strcmp(set->name, "syn-cookies"))
		set++;
	if (!CHECK(set->name, "quota set --syn-cookies"))
		return;
	CHECK(!strcmp(set->arg, "on|off"), "its ARG");
	CHECK(!rl_opt_store(set, &a, "on", err, sizeof(err)) && a.change.cookies == 1 &&
	      a.change.have_cookies, "on");
	CHECK(!rl_opt_store(set, &a, "off", err, sizeof(err)) && a.change.cookies == 0,
	      "off");
	a.change.cookies = 7;
	CHECK(rl_opt_store(set, &a, "yes", err, sizeof(err)) == -EINVAL &&
	      strstr(err, "--syn-cookies: 'yes' is neither on nor off") &&
	      a.change.cookies == 7, "yes refused, nothing stored: %s", err);
	CHECK(!rl_parse_prefix("198.18.0.0/15", &p, err, sizeof(err)), "prefix");
	rl_rule_init(&r, &p);
	CHECK(!rl_rule_opt_set(&r, o), "off when made");
	rl_rule_opt_text(&r, o, buf, sizeof(buf));
	CHECK(!strcmp(buf, "off"), "shown off: %s", buf);
	rl_rule_apply(&r, &(struct rl_rule_change){ .have_cookies = true, .cookies = 1,
		      .have_pps = true, .pps = 5 }, RL_NSEC_PER_SEC);
	CHECK((r.flags & RL_RULE_F_COOKIES) && (r.flags & RL_RULE_F_USED) &&
	      rl_rule_opt_set(&r, o) && r.pps == 5, "on, the rule's other flags kept");
	rl_rule_opt_text(&r, o, buf, sizeof(buf));
	CHECK(!strcmp(buf, "on"), "shown on: %s", buf);
	rl_rule_apply(&r, &(struct rl_rule_change){ .have_pps = true, .pps = 6 },
		      RL_NSEC_PER_SEC);
	CHECK(r.flags & RL_RULE_F_COOKIES, "kept by a change not naming it");
	rl_rule_apply(&r, &(struct rl_rule_change){ .have_cookies = true, .cookies = 0 },
		      RL_NSEC_PER_SEC);
	CHECK(!(r.flags & RL_RULE_F_COOKIES) && (r.flags & RL_RULE_F_USED) && r.pps == 6,
	      "off again, nothing else changed");
}

TEST(rule_scope_opts_on_quota_del)
{
	const struct rl_cmd *del = quota_sub("del");

	if (!CHECK(del, "quota del"))
		return;
	for (const char *const *r = rl_rule_scope_opts; *r; r++) {
		bool found = false;

		for (const struct rl_opt *o = del->opts; o->name; o++)
			found |= !strcmp(o->name, *r);
		CHECK(found, "quota del has no --%s", *r);
	}
}

static char *write_file(const struct rl_settings *s, const struct rl_rule *rules,
			int n)
{
	char *doc = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&doc, &len);

	if (!f)
		return NULL;
	rl_rules_file_write(f, "eth0", s, 20, rules, n);
	fclose(f);
	return doc;
}

static void settings(struct rl_settings *s, __u32 flags)
{
	struct rl_attach_req req;
	char err[RL_ERR_LEN];

	rl_attach_req_defaults(&req);
	req.flags = flags;
	req.window_ns = 500 * RL_NSEC_PER_MSEC;
	rl_settings_build(s, &req, 2, err, sizeof(err));
	s->mode = RL_MODE_GENERIC;
}

/* Every attach option is in the attach line (the default rule's are rules). */
TEST(save_attach_line_has_every_attach_option)
{
	struct rl_settings s;
	char *doc, want[64];

	settings(&s, RL_F_DRY_RUN | RL_F_PASS_MALFORMED);
	s.replies_via[0] = 1;	/* lo: an interface every namespace has */
	doc = write_file(&s, NULL, 0);
	if (!CHECK(doc, "written"))
		return;
	CHECK(strstr(doc, " --replies-via lo"), "replies via lo: %s", doc);
	for (const struct rl_opt *o = rl_cmd_attach.opts; o->name; o++) {
		if (!strncmp(o->name, "default-", 8))
			continue;
		snprintf(want, sizeof(want), " --%s", o->name);
		CHECK(strstr(doc, want), "save's attach line lacks --%s: %s", o->name, doc);
	}
	CHECK(!strncmp(doc, "attach eth0 --mode generic --window 500ms ", 42), "line: %s", doc);
	free(doc);
}

static void add_scoped(struct rl_rule *rules, int *n, const char *prefix,
		       const struct rl_scope *scope,
		       const struct rl_rule_change *c, __u64 window_ns)
{
	struct rl_prefix p, each[2];
	char err[RL_ERR_LEN];
	int k;

	if (!CHECK(!rl_parse_prefix(prefix, &p, err, sizeof(err)), "%s: %s", prefix, err))
		return;
	k = rl_prefix_expand(&p, each);
	for (int i = 0; i < k; i++) {
		rl_rule_init(&rules[*n], &each[i]);
		rl_rule_scope_put(&rules[*n], scope);
		rl_rule_apply(&rules[(*n)++], c, window_ns);
	}
}

static void add_rule(struct rl_rule *rules, int *n, const char *prefix,
		     const struct rl_rule_change *c, __u64 window_ns)
{
	add_scoped(rules, n, prefix, &(struct rl_scope){ 0 }, c, window_ns);
}

/* save's lines, parsed as restore parses them, give back the same rules. */
TEST(save_lines_read_back_as_the_same_rules)
{
	struct rl_rule rules[16], back[16];
	struct rl_rules_file rf;
	struct rl_settings s;
	int n = 0, nb = 0;
	char *doc;
	FILE *f;

	settings(&s, 0);
	add_rule(rules, &n, "default", &(struct rl_rule_change){ .have_pps = true, .pps = 100 }, s.window_ns);
	rules[1].bps = 5000;	/* the IPv6 half differs: two lines */
	rules[1].byte_budget = rl_budget(5000, s.window_ns);
	add_rule(rules, &n, "198.18.0.0/15", &(struct rl_rule_change){
		.have_pps = true, .pps = 0, .have_agg_pps = true, .agg_pps = 10000,
		.have_agg_bps = true, .agg_bps = 1000000 }, s.window_ns);
	add_rule(rules, &n, "198.18.0.7", &(struct rl_rule_change){
		.have_pps = true, .pps = RL_UNLIMITED }, s.window_ns);
	add_rule(rules, &n, "2001:db8::/32", &(struct rl_rule_change){
		.have_bps = true, .bps = 2000000 }, s.window_ns);
	add_rule(rules, &n, "198.18.64.0/18", &(struct rl_rule_change){
		.have_pps = true, .pps = 20, .have_new_pps = true, .new_pps = 100,
		.have_new_bps = true, .new_bps = 1000000, .have_ban = true,
		.ban_ns = 30 * RL_NSEC_PER_SEC, .have_cookies = true,
		.cookies = 1 }, s.window_ns);
	struct rl_scope syn = rl_scope_of(6, RL_SCOPE_F_SYN, 0, 0),
		dns = rl_scope_of(17, RL_SCOPE_F_DPORT, 53, 53),
		range = rl_scope_of(6, RL_SCOPE_F_DPORT | RL_SCOPE_F_SYN, 1000, 2000),
		gre = rl_scope_of(47, 0, 0, 0);

	add_scoped(rules, &n, "default", &syn,
		   &(struct rl_rule_change){ .have_pps = true, .pps = 20,
		   .have_burst = true, .burst = 5 }, s.window_ns);
	add_scoped(rules, &n, "198.18.0.0/15", &dns,
		   &(struct rl_rule_change){ .have_pps = true, .pps = 50 }, s.window_ns);
	add_scoped(rules, &n, "2001:db8::/32", &range,
		   &(struct rl_rule_change){ .have_burst = true, .burst = 3 }, s.window_ns);
	add_scoped(rules, &n, "198.18.0.7", &gre,
		   &(struct rl_rule_change){ .have_pps = true, .pps = 0 }, s.window_ns);
	add_rule(rules, &n, "198.18.0.8", &(struct rl_rule_change){
		.have_pps = true, .pps = 7, .have_burst = true, .burst = 2 }, s.window_ns);
	qsort(rules, n, sizeof(*rules), rl_rule_cmp);
	doc = write_file(&s, rules, n);
	if (!CHECK(doc, "written"))
		return;
	CHECK(strstr(doc, "quota set 0.0.0.0/0 --pps 100 --iface eth0\n") &&
	      strstr(doc, "quota set ::/0 --pps 100 --bps 5000 --iface eth0\n") &&
	      strstr(doc, "quota set 198.18.0.7/32 --pps unlimited --iface eth0\n") &&
	      strstr(doc, "quota set 198.18.64.0/18 --pps 20 --new-pps 100 --new-bps 1000000 --ban 30s --syn-cookies on --iface eth0\n") &&
	      strstr(doc, "quota set default --pps 20 --burst 5 --proto tcp --syn --iface eth0\n") &&
	      strstr(doc, "quota set 198.18.0.0/15 --pps 50 --proto udp --dport 53 --iface eth0\n") &&
	      strstr(doc, "quota set 2001:db8::/32 --burst 3 --proto tcp --dport 1000-2000 --syn --iface eth0\n") &&
	      strstr(doc, "quota set 198.18.0.7/32 --pps 0 --proto 47 --iface eth0\n") &&
	      strstr(doc, "quota set 198.18.0.8/32 --pps 7 --burst 2 --iface eth0\n"),
	      "lines: %s", doc);
	f = fmemopen(doc, strlen(doc), "r");
	if (!CHECK(f && !rl_rules_file_read(f, "saved", &rf), "read back: %s", doc))
		goto out;
	CHECK(!strcmp(rf.lines[0].cmd.path, RL_FILE_ATTACH), "first line attaches");
	for (int i = 1; i < rf.n; i++) {
		const struct rl_quota_args *q = rf.lines[i].cmd.cfg;
		char pfx[RL_PREFIX_STRLEN];

		rl_format_prefix(&q->prefix, pfx, sizeof(pfx));
		CHECK(!strcmp(q->iface, "eth0"), "--iface of line %d", rf.lines[i].line);
		add_scoped(back, &nb, pfx, &q->scope, &q->change, s.window_ns);
	}
	qsort(back, nb, sizeof(*back), rl_rule_cmp);
	if (CHECK_EQ(nb, n, "rules read back"))
		CHECK(!memcmp(back, rules, n * sizeof(*rules)), "rules read back differ: %s", doc);
	rl_rules_file_free(&rf);
out:
	if (f)
		fclose(f);
	free(doc);
}

/* stderr of fn(arg), as text. */
static char *stderr_of(int (*fn)(const char *), const char *arg, int *ret)
{
	FILE *cap = tmpfile();
	int saved = dup(STDERR_FILENO);
	char *text = calloc(1, 1024);

	fflush(stderr);
	dup2(fileno(cap), STDERR_FILENO);
	*ret = fn(arg);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(cap);
	fread(text, 1, 1023, cap);
	fclose(cap);
	return text;
}

static int read_text(const char *text)
{
	struct rl_rules_file rf;
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret = rl_rules_file_read(f, "my.rules", &rf);

	rl_rules_file_free(&rf);
	fclose(f);
	return ret;
}

TEST(rules_file_bad_line_named)
{
	static const struct { const char *text, *want; } cases[] = {
		{ "# ok\nattach eth0\n\nquota set 10.0.0.0/8 --pps 5x --iface eth0\n",
		  "xdp-ratelimit: my.rules:4: quota set: --pps: bad rate '5x'" },
		{ "attach eth0 --window 2m\n", "my.rules:1: attach: " },
		{ "  # comment\nstatus\n", "my.rules:2: 'status' does not belong in a rules file" },
		{ "quota frob 1.2.3.4\n", "my.rules:1: quota: unknown subcommand 'frob'" },
		{ "attach eth0 # trailing\nquota set default --iface\n",
		  "my.rules:2: quota set: option '--iface' needs a value" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret;
		char *err = stderr_of(read_text, cases[i].text, &ret);

		CHECK(ret == RL_EXIT_FAIL && strstr(err, cases[i].want),
		      "case %zu: exit %d, said '%s', want '%s'", i, ret, err, cases[i].want);
		free(err);
	}
}

/* The three ways stats prints a view. */
enum stats_view { VIEW_PROMETHEUS, VIEW_JSON, VIEW_TABLE };

/* What stats prints of `v` as `how`, in a malloc'd string: NULL when
 * that fails (checked and reported). */
static char *stats_printed(enum stats_view how, const struct rl_stats_view *v)
{
	char *doc = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&doc, &len);
	int err = 0;

	if (!CHECK(f, "memstream"))
		return NULL;
	if (how == VIEW_PROMETHEUS)
		err = rl_stats_print_prometheus(f, v);
	else if (how == VIEW_JSON)
		err = rl_stats_print_json(f, v);
	else
		rl_stats_print_table(f, v);
	fclose(f);
	if (!CHECK_EQ(err, 0, "printed")) {
		free(doc);
		return NULL;
	}
	return doc;
}

TEST(prometheus_escapes_label_values)
{
	struct rl_stats_iface s = { .name = "a\"b\\c", .max_sources = 7 };
	struct rl_stats_view v = { .ifs = &s, .n = 1 };
	char *doc = stats_printed(VIEW_PROMETHEUS, &v);

	if (!doc)
		return;
	CHECK(strstr(doc, "\nxdp_ratelimit_sources_max{ifname=\"a\\\"b\\\\c\"} 7\n"),
	      "escaped: %s", doc);
	CHECK(strstr(doc, "\n# TYPE xdp_ratelimit_packets_total counter\n"), "TYPE: %s", doc);
	free(doc);
}

/* A scoped rule's window is a row of its own: its key prints as the
 * source, its rule with the scope (table), "scope" in JSON and a scope
 * label in Prometheus; a source's own row has none. */
TEST(stats_scoped_window_rows)
{
	struct rl_stats_source src[2] = {
		{ .has_rule = true, .rule = "0.0.0.0/0", .scope = "tcp syn", .tracked = true },
		{ .has_rule = true, .rule = "0.0.0.0/0", .tracked = true },
	};
	struct rl_stats_iface s = { .name = "eth0", .src = src, .nsrc = 2 };
	struct rl_stats_view v = { .ifs = &s, .n = 1 };
	struct rl_key own = { .addr = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 7 } };
	struct rl_key v6 = { .addr = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2 } };
	char addr[RL_SOURCE_STRLEN], *doc;

	s.set.v6_prefix = 64;
	rl_scoped_key(&src[0].sum.key, &own, 5, 0);
	src[1].sum.key = own;
	rl_stats_format_source(&src[0].sum.key, 64, addr, sizeof(addr));
	CHECK(!strcmp(addr, "198.18.0.7"), "IPv4 scoped key as its source: %s", addr);
	rl_scoped_key(&v6, &v6, 9, 1);
	rl_stats_format_source(&v6, 64, addr, sizeof(addr));
	CHECK(!strcmp(addr, "2001:db8:1:2::/64"), "IPv6 scoped key as its source: %s", addr);

	doc = stats_printed(VIEW_PROMETHEUS, &v);
	if (!doc)
		return;
	CHECK(strstr(doc, "source=\"198.18.0.7\",rule=\"0.0.0.0/0\",scope=\"tcp syn\",verdict=\"passed\"}") &&
	      strstr(doc, "source=\"198.18.0.7\",rule=\"0.0.0.0/0\",verdict=\"passed\"}"),
	      "Prometheus: %s", doc);
	free(doc);

	doc = stats_printed(VIEW_JSON, &v);
	if (!doc)
		return;
	CHECK(strstr(doc, "\"address\": \"198.18.0.7\", \"rule\": \"0.0.0.0/0\", \"scope\": \"tcp syn\"") &&
	      strstr(doc, "\"address\": \"198.18.0.7\", \"rule\": \"0.0.0.0/0\", \"scope\": null"),
	      "JSON: %s", doc);
	free(doc);

	doc = stats_printed(VIEW_TABLE, &v);
	if (!doc)
		return;
	CHECK(strstr(doc, "\n198.18.0.7 `- tcp syn ") && strstr(doc, "no        0.0.0.0/0\n"),
	      "table, the scoped window alone: %s", doc);
	free(doc);

	/* under its source's row (stats_read.c puts it there) */
	src[0].nested = true;
	doc = stats_printed(VIEW_TABLE, &v);
	if (!doc)
		return;
	CHECK(strstr(doc, "\n  `- tcp syn "), "table, the scoped window nested: %s", doc);
	free(doc);
}
