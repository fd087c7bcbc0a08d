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

/* The ids of attach's options (reload takes them too). */
enum { OPT_MODE = RL_OPT_FIRST, OPT_WINDOW, OPT_BUCKETS, OPT_DEF_PPS,
       OPT_DEF_BPS, OPT_MAX_SOURCES, OPT_V6_PREFIX, OPT_DRY_RUN,
       OPT_PASS_MALFORMED, OPT_REPLIES_VIA, OPT_VERIFIED_TTL, OPT_PRIORITY,
       OPT_ATTACH_LAST };

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

/* One of attach's options into `a`, each value checked as attach does;
 * `cmd` prefixes the messages. 0 or the exit status of a bad value. */
int rl_attach_opt(const char *cmd, struct rl_attach_args *a, int id,
		  const char *arg);

/* "WHAT IFACE (native mode): window 1s in 10 buckets ...": what attach
 * and reload print once the program runs with `s`. */
void rl_attach_print(const char *what, const char *iface, __u32 mode,
		     unsigned int prio, const struct rl_settings *s);

#endif /* RL_CMD_ARGS_H */
