/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The parsed configs of the commands a rules file holds (attach, quota
 * set/del): restore parses its lines with the commands' own tables
 * (rl_cmd_parse) and reads these.
 */
#ifndef RL_CMD_ARGS_H
#define RL_CMD_ARGS_H

#include "lib/attach_txn.h"
#include "cli/cli.h"
#include "lib/rule.h"
#include "lib/settings.h"
#include "lib/values.h"

/*
 * attach's options, which reload takes too: each one's name, value and
 * field in struct rl_attach_args, as a row of a table whose config `T`
 * holds it at `A` ("" for attach's own, "a." for reload's); each command
 * adds its help: { RL_ATTACH_OPT_MODE(T, ), .help = "..." }.
 */
#define RL_ATTACH_OPT_MODE(T, A) .name = "mode", .arg = "auto|native|generic", \
	.kind = RL_OPT_ENUM, .words = rl_xdp_mode_words, RL_OPT_FIELD(T, A mode)
#define RL_ATTACH_OPT_WINDOW(T, A) .name = "window", .arg = "DURATION", \
	.kind = RL_OPT_DURATION, RL_OPT_FIELD(T, A req.window_ns)
#define RL_ATTACH_OPT_BUCKETS(T, A) .name = "buckets", .arg = "N", \
	.kind = RL_OPT_COUNT, .min = 1, .max = RL_MAX_BUCKETS, \
	RL_OPT_FIELD(T, A req.nbuckets)
#define RL_ATTACH_OPT_DEF_PPS(T, A) .name = "default-pps", .arg = "RATE", \
	.kind = RL_OPT_RATE, RL_OPT_FIELD(T, A def_pps)
#define RL_ATTACH_OPT_DEF_BPS(T, A) .name = "default-bps", .arg = "RATE", \
	.kind = RL_OPT_RATE, RL_OPT_FIELD(T, A def_bps)
#define RL_ATTACH_OPT_MAX_SOURCES(T, A) .name = "max-sources", .arg = "N", \
	.kind = RL_OPT_COUNT, .min = RL_MIN_MAX_SOURCES, \
	.max = RL_MAX_MAX_SOURCES, RL_OPT_FIELD(T, A req.max_sources)
#define RL_ATTACH_OPT_V6_PREFIX(T, A) .name = "ipv6-prefix", .arg = "LEN", \
	.kind = RL_OPT_COUNT, .min = 1, .max = 128, RL_OPT_FIELD(T, A req.v6_prefix)
#define RL_ATTACH_OPT_DRY_RUN(T, A) .name = "dry-run", .kind = RL_OPT_SWITCH, \
	.bits = RL_F_DRY_RUN, RL_OPT_FIELD(T, A req.flags)
#define RL_ATTACH_OPT_PASS_MALFORMED(T, A) .name = "pass-malformed", \
	.kind = RL_OPT_SWITCH, .bits = RL_F_PASS_MALFORMED, \
	RL_OPT_FIELD(T, A req.flags)
#define RL_ATTACH_OPT_REPLIES_VIA(T, A) .name = "replies-via", \
	.arg = "IFACE[,IFACE]", .kind = RL_OPT_PARSE, \
	.parse = rl_attach_parse_replies_via, RL_OPT_FIELD(T, A req.replies_via)
#define RL_ATTACH_OPT_VERIFIED_TTL(T, A) .name = "verified-ttl", \
	.arg = "DURATION", .kind = RL_OPT_DURATION, \
	RL_OPT_FIELD(T, A req.verified_ttl_ns)
#define RL_ATTACH_OPT_PRIORITY(T, A) .name = "priority", .arg = "N", \
	.kind = RL_OPT_COUNT, .min = RL_MIN_PRIO, .max = RL_MAX_PRIO, \
	RL_OPT_FIELD(T, A priority)

/* --mode's words (enum rl_xdp_mode) and --replies-via's parser. */
extern const struct rl_opt_word rl_xdp_mode_words[];
int rl_attach_parse_replies_via(const char *arg, void *via, char *err,
				size_t errlen);

struct rl_attach_args {
	const char *iface;
	enum rl_xdp_mode mode;
	unsigned int priority;		/* under libxdp's dispatcher; 0: default */
	struct rl_attach_req req;
	__u64 def_pps, def_bps;
	struct rl_settings s;		/* built from req */
};

struct rl_quota_args {
	const char *iface;
	bool json;
	bool verbose;		/* list -v: each rule's counters */
	bool wide;		/* list --wide: every column */
	struct rl_prefix prefix;
	struct rl_rule_change change;
	/* --proto, --dport, --syn as given, and the scope they make
	 * (rank 0: unscoped) once the operands are parsed */
	struct rl_scope_opts scope_opts;
	struct rl_scope scope;
};

/*
 * attach's run, under the lock: refuse an interface that is attached or
 * has pins, else load, attach and pin. With `rules` (n of them), the rule
 * set is made exactly that before the commit point, so the interface is
 * never attached without it. Exit status.
 */
int rl_attach_run(const struct rl_attach_args *a, const struct rl_rule *rules,
		  int n);

/* "WHAT IFACE (native mode): window 1s in 10 buckets ...": what attach
 * and reload print once the program runs with `s`. */
void rl_attach_print(const char *what, const char *iface, __u32 mode,
		     unsigned int prio, const struct rl_settings *s);

/* What a reload onto new maps carried into them from pins of `layout`,
 * to f, within 80 columns whatever the name and the counts. */
struct rl_carried;
void rl_reload_print_carried(FILE *f, const char *iface, const struct rl_carried *c,
			     __u32 layout);

#endif /* RL_CMD_ARGS_H */
