// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit attach: load, attach as a bpf_link, pin (xdp-ratelimit(8)).
 * The order of pins that makes it crash-safe is attach_txn.c's.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include "cli/cli.h"
#include "lib/attach_txn.h"
#include "lib/rule_replace.h"
#include "cli/cmd_args.h"
#include "cli/table.h"
#include "lib/iface.h"
#include "lib/kernel_probe.h"
#include "lib/loader.h"
#include "lib/map_memory.h"
#include "lib/pin.h"
#include "lib/settings.h"
#include "lib/values.h"
#include "lib/xdp_multi.h"
#include "ratelimit.skel.h"

/* Every map of RL_MAPS is a map of the program, by the same name. */
#define RL_MAP_IN_SKEL(name, type, key, value) \
	_Static_assert(sizeof(((struct ratelimit *)0)->maps.name), #name);
RL_MAPS(RL_MAP_IN_SKEL)
#undef RL_MAP_IN_SKEL

/* The numbers the help below gives. */
_Static_assert(RL_MAX_BUCKETS == 16 && RL_DEFAULT_BUCKETS == 10 &&
	       RL_MIN_MAX_SOURCES == 16 && RL_MAX_MAX_SOURCES == 16777216 &&
	       RL_DEFAULT_MAX_SOURCES == 65536 && RL_DEFAULT_V6_PREFIX == 64 &&
	       RL_RUN_PRIO == 20 && RL_MIN_PRIO == 1 && RL_MAX_PRIO == 1000,
	       "attach --help states these values");

#define T struct rl_attach_args
static const struct rl_opt attach_opts[] = {
	{ RL_ATTACH_OPT_MODE(T, ),
	  .help = "XDP mode; auto tries native, then generic (default auto)" },
	{ RL_ATTACH_OPT_WINDOW(T, ),
	  .help = "sliding window, e.g. 500ms, 1s, 1m (default 1s, at most 1m)" },
	{ RL_ATTACH_OPT_BUCKETS(T, ),
	  .help = "buckets per window, 1 to 16 (default 10); each at least 1ms" },
	{ RL_ATTACH_OPT_DEF_PPS(T, ),
	  .help = "packets per second per source for the default rule" },
	{ RL_ATTACH_OPT_DEF_BPS(T, ),
	  .help = "bytes per second per source for the default rule\n"
		  "(without either, sources without a rule are only counted)" },
	{ RL_ATTACH_OPT_MAX_SOURCES(T, ),
	  .help = "tracked sources, 16 to 16777216 (default 65536)" },
	{ RL_ATTACH_OPT_V6_PREFIX(T, ),
	  .help = "track IPv6 sources per /LEN, 1 to 128 (default 64)" },
	{ RL_ATTACH_OPT_DRY_RUN(T, ),
	  .help = "count what would be dropped, drop nothing" },
	{ RL_ATTACH_OPT_PASS_MALFORMED(T, ),
	  .help = "pass frames too short or bad to read (default: drop)" },
	{ RL_ATTACH_OPT_REPLIES_VIA(T, ),
	  .help = "interfaces the host's answers leave by, up to 4\n"
		  "(asymmetric routing; default: IFACE itself)" },
	{ RL_ATTACH_OPT_VERIFIED_TTL(T, ),
	  .help = "how long one answer keeps a source verified,\n"
		  "1s to 24h (default 10m)" },
	{ RL_ATTACH_OPT_PRIORITY(T, ),
	  .help = "run at N, 1 to 1000, among other XDP programs\n"
		  "under libxdp's dispatcher; lower runs first (default 20)" },
	{ 0 }
};
#undef T

const struct rl_opt_word rl_xdp_mode_words[] = {
	{ "auto", RL_XDP_AUTO }, { "native", RL_XDP_NATIVE },
	{ "generic", RL_XDP_GENERIC }, { NULL, 0 },
};

int rl_attach_parse_replies_via(const char *arg, void *via, char *err,
				size_t errlen)
{
	return rl_parse_replies_via(arg, via, err, errlen);
}

static void attach_defaults(void *cfg)
{
	struct rl_attach_args *a = cfg;

	rl_attach_req_defaults(&a->req);
	a->mode = RL_XDP_AUTO;
	a->def_pps = a->def_bps = RL_UNLIMITED;
}

static int attach_operands(struct rl_parser *p, void *cfg, int argc,
			   char **argv)
{
	struct rl_attach_args *a = cfg;
	char err[RL_ERR_LEN];
	int ret;

	(void)p;
	if (argc != 1)
		return rl_usage_err(argc < 1 ?
				    "attach: name the interface: xdp-ratelimit attach IFACE [OPTIONS]" :
				    "attach: one interface at a time: xdp-ratelimit attach IFACE [OPTIONS]");
	a->iface = argv[0];
	ret = rl_iface_arg("attach", a->iface);
	if (ret)
		return ret;
	if (rl_settings_build(&a->s, &a->req, rl_cpu_ids(), err, sizeof(err)))
		return rl_usage_err("attach: %s", err);
	/* the default rule's budgets, refused now rather than after loading */
	if (rl_budgets_fit(&(struct rl_rule_change){
				.have_pps = a->def_pps != RL_UNLIMITED, .pps = a->def_pps,
				.have_bps = a->def_bps != RL_UNLIMITED, .bps = a->def_bps },
			   a->s.window_ns, "default-", err, sizeof(err)))
		return rl_usage_err("attach: %s", err);
	rl_settings_clock(&a->s, rl_coarse_tick_ns());
	return 0;
}

void rl_attach_print(const char *what, const char *iface, __u32 mode,
		     unsigned int prio, const struct rl_settings *s)
{
	char w[32], p[64];

	rl_format_duration(s->window_ns, w, sizeof(w));
	snprintf(p, sizeof(p), ", libxdp dispatcher, priority %u", prio);
	/* lines of 80 columns with a 15-character name: the rest indented */
	printf("%s %s (%s mode%s):\n"
	       "  window %s in %u buckets (%s clock), up to %llu sources%s\n%s",
	       what, iface, rl_mode_name(mode), prio ? p : "", w, s->nbuckets,
	       s->flags & RL_F_COARSE_CLOCK ? "coarse" : "precise",
	       (unsigned long long)s->max_sources,
	       s->flags & RL_F_DRY_RUN ? ", dry run" : "",
	       s->flags & RL_F_PASS_MALFORMED ? "  passing malformed frames\n" : "");
}

/* "memory: ..." of the maps attach made (xdp-ratelimit(8) Memory). */
static void print_memory(const struct rl_memory *mem, const struct rl_settings *s)
{
	char all[32], per[32], grow[32];

	rl_table_bytes(mem->total, " ", all, sizeof(all));
	rl_table_bytes(mem->per_source, " ", per, sizeof(per));
	rl_table_bytes(mem->grow_total, " ", grow, sizeof(grow));
	printf("memory: %s of kernel maps on %d possible CPUs,\n"
	       "  %s of it for --max-sources %llu;\n"
	       "  up to %s more as rules and fleet shares are written\n",
	       all, mem->ncpus, per, (unsigned long long)s->max_sources, grow);
}

/* Load, pin and attach (attach_txn.h); the interface is not attached and
 * we hold the lock. Returns an exit status; on failure nothing stays. */
static int do_attach(const struct rl_attach_args *a, int ifindex,
		     const struct rl_settings *s, const struct rl_rule *rules,
		     int n)
{
	struct rl_attach_result res = {};
	char err[RL_ERR_LEN];
	struct ratelimit *skel;
	struct rl_memory mem;
	bool have_mem;
	struct rl_maps m;
	int ret;

	skel = ratelimit__open();
	if (!skel)
		return rl_fail("cannot open the BPF object: %s", strerror(errno));
	if (rl_xdp_multi_support() == 0)	/* it goes in the stub's slot */
		rl_xdp_multi_slot_prog(skel->progs.xdp_ratelimit);
	ret = rl_load(skel->skeleton, &skel->rodata->settings, s, a->def_pps,
		      a->def_bps, &m, err, sizeof(err));
	if (!ret && rules)
		ret = rl_rule_replace(&m, rules, n, err, sizeof(err));
	if (ret > 0)
		ret = 0;	/* rules written */
	if (!ret)
		ret = rl_attach_commit(&(struct rl_attach_prog){
				.iface = a->iface, .prio = a->priority,
				.prog_fd = bpf_program__fd(skel->progs.xdp_ratelimit),
				.egress_fd = bpf_program__fd(skel->progs.rl_egress),
				.mode = a->mode }, ifindex, &m, &res, err, sizeof(err));
	/* read while the object holds the maps */
	have_mem = !ret && !rl_memory_read(&m, rl_ncpus(), &mem);
	ratelimit__destroy(skel);	/* the pins keep what attach made */
	if (res.native_err)
		printf("%s: native XDP not supported (%s),\n"
		       "  falling back to generic mode\n",
		       a->iface, strerror(res.native_err));
	if (ret)
		return rl_fail("%s", err);
	if (a->priority && a->priority != RL_RUN_PRIO && !res.prio)
		fprintf(stderr, "%s: --priority has no effect here:\n"
			"  this kernel runs one XDP program per interface\n"
			"  (libxdp's dispatcher needs freplace, which it refuses)\n",
			a->iface);
	rl_attach_print("attached to", a->iface, res.mode, res.prio, s);
	if (have_mem)
		print_memory(&mem, s);
	return RL_EXIT_OK;
}

int rl_attach_run(const struct rl_attach_args *a, const struct rl_rule *rules,
		  int n)
{
	const struct rl_kernel_need *need;
	char dir[PATH_MAX], config[PATH_MAX];
	struct rl_rt_probe rt;
	enum rl_rt_sign sign;
	struct utsname un;
	struct stat st;
	int ifindex;

	if (uname(&un))
		return rl_fail("attach: uname: %s", strerror(errno));
	/* per-CPU state is only safe while XDP runs to completion on a CPU */
	rl_rt_probe_init(&rt, un.version, un.release, config, sizeof(config));
	sign = rl_preempt_rt(&rt);
	if (sign != RL_RT_NONE)
		return rl_fail("attach: this kernel is PREEMPT_RT (%s): two XDP runs can interleave there on one CPU's per-source state, which xdp-ratelimit's counting does not allow; use a kernel without PREEMPT_RT",
			       sign == RL_RT_REALTIME ? "/sys/kernel/realtime is 1" :
			       sign == RL_RT_VERSION ? "uname -v says PREEMPT_RT" :
			       "its config sets CONFIG_PREEMPT_RT=y");
	if (!rl_cpu_ordered(un.machine))
		return rl_fail("attach: this CPU (%s) orders memory weakly: the program's cross-CPU counting relies on x86's order (doc/design/cpus.md in the source tree) and could pass a bucket twice here; use an x86_64 machine",
			       un.machine);
	need = rl_kernel_missing(rl_kernel_probe);
	if (need)
		return rl_fail("attach: this kernel lacks %s (Linux %s), which the program calls: use Linux 6.1 or later, such as Debian 12's own kernel (README \"Kernels and requirements\")",
			       need->what, need->since);
	ifindex = (int)if_nametoindex(a->iface);
	if (!ifindex)
		return rl_fail("attach: no interface named '%s' here: check 'ip link' (in a namespace, run under 'nsenter --net=/run/netns/NAME')",
			       a->iface);
	/* best effort: what stays, status reports and detach removes */
	(void)rl_attach_repair(a->iface);
	rl_pin_path(dir, sizeof(dir), a->iface, NULL);
	if (stat(dir, &st) == 0) {
		if (rl_link_ifindex(a->iface, NULL) > 0)
			return rl_fail("%s is already attached: to change its settings, keeping its rules, counters and bans, run 'xdp-ratelimit reload %s' with them (see 'xdp-ratelimit status')",
				       a->iface, a->iface);
		/* its maps may hold rules set since: not ours to drop */
		return rl_fail("%s has pins but no working attachment (%s; an interrupted attach or a removed link pin, see 'xdp-ratelimit status'): run 'xdp-ratelimit detach %s' to remove them, then attach again",
			       a->iface, dir, a->iface);
	}
	return do_attach(a, ifindex, &a->s, rules, n);
}

static int attach_run(void *cfg)
{
	return rl_attach_run(cfg, NULL, 0);
}

const struct rl_cmd rl_cmd_attach = {
	.name = "attach",
	.summary = "load, attach and pin the limiter on an interface",
	.args = "IFACE",
	.doc =
		"Load the limiter, attach it to IFACE as a pinned bpf_link and pin its\n"
		"maps under " RL_PIN_TOP "/NETNS/IFACE/. Returns once it enforces.\n",
	.opts = attach_opts,
	.notes =
		"RATE is a whole number with an optional k, M or G suffix (powers of 1000).\n"
		"\n"
		"Example:\n"
		"  xdp-ratelimit attach eth0 --default-pps 1000 --window 1s --buckets 10\n",
	.flags = RL_CMD_LOCK,
	.cfg_size = sizeof(struct rl_attach_args),
	.defaults = attach_defaults,
	.operands = attach_operands,
	.run = attach_run,
};
