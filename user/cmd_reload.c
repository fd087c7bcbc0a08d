// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit reload: replace the running program of an attached
 * interface with this binary's, with the same or new attach settings,
 * keeping every map (xdp-ratelimit(8), reload).
 *
 * The new program is loaded on the interface's pinned maps
 * (bpf_map__reuse_fd), so rules, bans, verified sources, windows and
 * counters are the ones the old program used. The commit point is
 * bpf_link_update() on the pinned link, which swaps the program the link
 * runs in one step: before it nothing visible has changed (a reload
 * killed or refused there leaves the old program enforcing), after it the
 * new program judges every packet. Then the egress hook's filters get the
 * new program (BPF_TC_F_REPLACE, in place), the filters of interfaces no
 * longer in --replies-via go, and the config map gets the new settings
 * last. A reload killed after the commit point is completed by running
 * it again: each of those steps is idempotent.
 *
 * Only settings that keep every map's size and meaning can change: not
 * --window, --buckets, --max-sources or --ipv6-prefix (the windows and
 * the table are laid out by them), nor the XDP mode (the link keeps it).
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cli.h"
#include "attach_txn.h"
#include "cmd_args.h"
#include "egress.h"
#include "iface.h"
#include "loader.h"
#include "pin.h"
#include "settings.h"
#include "values.h"
#include "xdp_multi.h"
#include "ratelimit.skel.h"

enum { OPT_NO_DRY_RUN = OPT_ATTACH_LAST, OPT_NO_PASS_MALFORMED };

static const struct rl_opt reload_opts[] = {
	{ OPT_MODE, "mode", "auto|native|generic",
	  "XDP mode; must be the running one (default: it)" },
	{ OPT_WINDOW, "window", "DURATION",
	  "sliding window; only the running one (see below)" },
	{ OPT_BUCKETS, "buckets", "N", "buckets per window; only the running number" },
	{ OPT_MAX_SOURCES, "max-sources", "N", "tracked sources; only the running number" },
	{ OPT_V6_PREFIX, "ipv6-prefix", "LEN", "IPv6 source prefix; only the running one" },
	{ OPT_DRY_RUN, "dry-run", NULL, "count what would be dropped, drop nothing" },
	{ OPT_NO_DRY_RUN, "no-dry-run", NULL, "drop again (end a dry run)" },
	{ OPT_PASS_MALFORMED, "pass-malformed", NULL,
	  "pass frames too short or bad to read" },
	{ OPT_NO_PASS_MALFORMED, "no-pass-malformed", NULL,
	  "drop frames too short or bad to read again" },
	{ OPT_REPLIES_VIA, "replies-via", "IFACE[,IFACE]",
	  "interfaces the host's answers leave by, up to 4\n"
	  "(name IFACE itself to hook it alone again)" },
	{ OPT_VERIFIED_TTL, "verified-ttl", "DURATION",
	  "how long one answer keeps a source verified,\n"
	  "1s to 24h" },
	{ OPT_PRIORITY, "priority", "N",
	  "priority under libxdp's dispatcher, 1 to 1000" },
	{ 0 }
};

struct reload_args {
	struct rl_attach_args a;	/* the options given, parsed as attach does */
	unsigned int given;		/* 1 << (id - OPT_MODE) of each given */
};

#define GIVEN(r, id)	((r)->given & (1U << ((id) - OPT_MODE)))

static void reload_defaults(void *cfg)
{
	struct reload_args *r = cfg;

	rl_attach_req_defaults(&r->a.req);
	r->a.mode = RL_XDP_AUTO;
}

static int reload_opt(struct rl_parser *p, void *cfg, int id, const char *arg)
{
	struct reload_args *r = cfg;

	(void)p;
	r->given |= 1U << (id - OPT_MODE);
	switch (id) {
	case OPT_NO_DRY_RUN:
	case OPT_NO_PASS_MALFORMED:
		return 0;
	default:
		return rl_attach_opt("reload", &r->a, id, arg);
	}
}

static int reload_operands(struct rl_parser *p, void *cfg, int argc, char **argv)
{
	struct reload_args *r = cfg;
	struct rl_attach_req check;
	char err[RL_ERR_LEN];

	(void)p;
	if (argc != 1)
		return rl_usage_err(argc < 1 ?
				    "reload: name the interface: xdp-ratelimit reload IFACE [OPTIONS]" :
				    "reload: one interface at a time: xdp-ratelimit reload IFACE [OPTIONS]");
	r->a.iface = argv[0];
	/* each value given in range, as attach checks it, before the
	 * interface is looked at; a window or bucket count given alone is
	 * checked against the running other half later */
	check = r->a.req;
	if (!GIVEN(r, OPT_BUCKETS))
		check.nbuckets = 1;
	if (!GIVEN(r, OPT_WINDOW))
		check.window_ns = RL_MAX_WINDOW_NS;
	if (rl_settings_build(&r->a.s, &check, rl_cpu_ids(), err, sizeof(err)))
		return rl_usage_err("reload: %s", err);
	if (GIVEN(r, OPT_DRY_RUN) && GIVEN(r, OPT_NO_DRY_RUN))
		return rl_usage_err("reload: --dry-run and --no-dry-run contradict each other: give one");
	if (GIVEN(r, OPT_PASS_MALFORMED) && GIVEN(r, OPT_NO_PASS_MALFORMED))
		return rl_usage_err("reload: --pass-malformed and --no-pass-malformed contradict each other: give one");
	return rl_iface_arg("reload", r->a.iface);
}

/* The running settings with what was given instead: the request attach
 * would have taken. */
static void new_request(const struct reload_args *r, const struct rl_settings *run,
			struct rl_attach_req *req)
{
	const struct rl_attach_req *g = &r->a.req;
	__u32 flags = run->flags & (RL_F_DRY_RUN | RL_F_PASS_MALFORMED);

	*req = (struct rl_attach_req){
		.window_ns = GIVEN(r, OPT_WINDOW) ? g->window_ns : run->window_ns,
		.nbuckets = GIVEN(r, OPT_BUCKETS) ? g->nbuckets : run->nbuckets,
		.v6_prefix = GIVEN(r, OPT_V6_PREFIX) ? g->v6_prefix : run->v6_prefix,
		.max_sources = GIVEN(r, OPT_MAX_SOURCES) ? g->max_sources : run->max_sources,
		.verified_ttl_ns = GIVEN(r, OPT_VERIFIED_TTL) ? g->verified_ttl_ns :
				   run->verified_ttl_ns,
	};
	if (GIVEN(r, OPT_DRY_RUN))
		flags |= RL_F_DRY_RUN;
	if (GIVEN(r, OPT_NO_DRY_RUN))
		flags &= ~RL_F_DRY_RUN;
	if (GIVEN(r, OPT_PASS_MALFORMED))
		flags |= RL_F_PASS_MALFORMED;
	if (GIVEN(r, OPT_NO_PASS_MALFORMED))
		flags &= ~RL_F_PASS_MALFORMED;
	req->flags = flags;
	memcpy(req->replies_via, GIVEN(r, OPT_REPLIES_VIA) ? g->replies_via :
	       run->replies_via, sizeof(req->replies_via));
}

/* --replies-via naming the interface alone is the default: none. */
static void via_default(__u32 via[RL_MAX_REPLIES_VIA], __u32 ifindex)
{
	if (via[0] == ifindex && !via[1])
		via[0] = 0;
}

/* The settings that lay out the maps, changed: what a reload cannot
 * carry. RL_EXIT_FAIL with a message naming them, or 0. */
static int layout_change(const struct rl_settings *run, const struct rl_settings *s,
			 const char *iface)
{
	char what[160] = "";
	size_t off = 0;

#define CHANGED(field, opt)						\
	if (run->field != s->field)					\
		off += (size_t)snprintf(what + off, sizeof(what) - off,	\
					"%s" opt, off ? ", " : "")
	CHANGED(window_ns, "--window");
	CHANGED(nbuckets, "--buckets");
	CHANGED(max_sources, "--max-sources");
	CHANGED(v6_prefix, "--ipv6-prefix");
	CHANGED(ncpus, "the number of possible CPUs");
#undef CHANGED
	if (!off)
		return 0;
	return rl_fail("reload: cannot change %s of %s in place: the maps are sized and laid out by it, and new maps would lose every window, counter, ban and verified source (the rules can be carried by save and restore); nothing changed. To go on: 'xdp-ratelimit save --iface %s > FILE', 'xdp-ratelimit detach %s', edit the settings on FILE's attach line, then 'xdp-ratelimit restore FILE'",
		       what, iface, iface, iface);
}

/* The pinned link of IFACE and the program it runs (prog_fd), checked to
 * be an XDP link on ifindex; else an exit status with a message. */
static int open_link(const char *iface, int ifindex, int *link_fd, int *prog_fd)
{
	char path[PATH_MAX];
	__u32 prog_id = 0;
	int at;

	rl_pin_path(path, sizeof(path), iface, RL_PIN_PROG);
	if (access(path, F_OK) == 0)
		return rl_fail("reload: %s runs under libxdp's dispatcher, where reload cannot swap the program in place yet: nothing changed. To go on: 'xdp-ratelimit save --iface %s > FILE', 'xdp-ratelimit detach %s', 'xdp-ratelimit restore FILE' (the windows, counters, bans and verified sources start afresh)",
			       iface, iface, iface);
	at = rl_link_ifindex(iface, &prog_id);
	if (at < 0 || !prog_id)
		return rl_fail("reload: %s has pins but no working attachment (%s): see 'xdp-ratelimit status'; 'xdp-ratelimit detach %s' and attach it again",
			       iface, strerror(at < 0 ? -at : ENOLINK), iface);
	if (at != ifindex)
		return rl_fail("reload: the link pinned for %s runs on another interface (ifindex %d, not %d): see 'xdp-ratelimit status'",
			       iface, at, ifindex);
	rl_pin_path(path, sizeof(path), iface, RL_PIN_LINK);
	*link_fd = bpf_obj_get(path);
	if (*link_fd < 0)
		return rl_fail("reload: cannot open %s: %s", path, strerror(errno));
	*prog_fd = bpf_prog_get_fd_by_id(prog_id);
	if (*prog_fd < 0) {
		close(*link_fd);
		return rl_fail("reload: cannot open the program %s runs (id %u): %s",
			       iface, prog_id, strerror(errno));
	}
	return 0;
}

/* After the commit point: the egress hook and the config map follow the
 * new program. */
static int finish(const struct rl_iface *ifc, int ifindex, int egress_fd,
		  const struct rl_settings *s)
{
	struct rl_config cfg;
	char err[RL_ERR_LEN];
	int ret;

	ret = rl_egress_replace(egress_fd, ifindex, s->replies_via, err, sizeof(err));
	if (ret)
		return rl_fail("reload: the new program runs on %s, but %s; run the same reload again to finish",
			       ifc->name, err);
	ret = rl_egress_sweep(ifindex, s->replies_via);
	if (ret)
		return rl_fail("reload: the new program runs on %s, but an egress hook filter of an interface no longer in --replies-via could not be removed (%s); run the same reload again to finish",
			       ifc->name, strerror(-ret));
	ret = rl_config_read(&ifc->m, &cfg);
	if (!ret) {
		/* mode and ifindex are the attachment's, kept */
		__u32 mode = cfg.set.mode, at = cfg.set.ifindex;

		cfg.set = *s;
		cfg.set.mode = mode;
		cfg.set.ifindex = at;
		ret = rl_config_write(&ifc->m, &cfg);
	}
	if (ret)
		return rl_fail("reload: the new program runs on %s, but the config map could not be written (%s): status shows the old settings; run the same reload again to finish",
			       ifc->name, strerror(-ret));
	return 0;
}

/* Load on the pinned maps and swap; `ifc` is open and checked. */
static int do_reload(const struct reload_args *r, const struct rl_iface *ifc,
		     int ifindex, const struct rl_settings *s)
{
	LIBBPF_OPTS(bpf_link_update_opts, opts, .flags = BPF_F_REPLACE);
	struct rl_settings rodata_set = *s;
	char err[RL_ERR_LEN];
	struct ratelimit *skel;
	int link_fd = -1, old_fd = -1, ret;

	ret = open_link(ifc->name, ifindex, &link_fd, &old_fd);
	if (ret)
		return ret;
	skel = ratelimit__open();
	if (!skel) {
		ret = rl_fail("reload: cannot open the BPF object: %s", strerror(errno));
		goto out;
	}
	ret = rl_load_reusing(skel->skeleton, &skel->rodata->settings, &rodata_set,
			      &ifc->m, err, sizeof(err));
	if (ret) {
		ret = rl_fail("reload: %s; nothing changed", err);
		goto out;
	}
	/* the commit point: the link runs the new program from the next
	 * packet on, if it still runs the old one */
	opts.old_prog_fd = old_fd;
	if (bpf_link_update(link_fd, bpf_program__fd(skel->progs.xdp_ratelimit), &opts)) {
		ret = rl_fail("reload: cannot swap the program of %s: %s; nothing changed",
			      ifc->name, strerror(errno));
		goto out;
	}
	ret = finish(ifc, ifindex, bpf_program__fd(skel->progs.rl_egress), s);
	if (ret)
		goto out;
	if (GIVEN(r, OPT_PRIORITY) && r->a.priority != RL_RUN_PRIO)
		fprintf(stderr, "%s: --priority has no effect here: the program runs as a bpf_link of its own, not under libxdp's dispatcher\n",
			ifc->name);
	rl_attach_print("reloaded", ifc->name, ifc->cfg.set.mode, 0, s);
out:
	ratelimit__destroy(skel);	/* the link and the filters hold the new program */
	close(old_fd);
	close(link_fd);
	return ret;
}

static int reload_run(void *cfg)
{
	const struct reload_args *r = cfg;
	const char *iface = r->a.iface;
	struct rl_attach_req req;
	struct rl_settings s;
	struct rl_iface ifc;
	char err[RL_ERR_LEN], dir[PATH_MAX];
	struct stat st;
	__u32 layout;
	int ifindex, ret;

	ifindex = (int)if_nametoindex(iface);
	if (!ifindex)
		return rl_fail("reload: no interface named '%s' here: check 'ip link' (in a namespace, run under 'nsenter --net=/run/netns/NAME')",
			       iface);
	rl_pin_path(dir, sizeof(dir), iface, NULL);
	if (stat(dir, &st))
		return rl_fail("reload: %s is not attached: nothing to reload; attach it with 'xdp-ratelimit attach %s' (see 'xdp-ratelimit status')",
			       iface, iface);
	layout = rl_iface_pinned_layout(iface);
	if (layout && layout != RL_LAYOUT_VERSION)
		return rl_fail("reload: %s was attached by a version of xdp-ratelimit with another map layout (%u; this one has %u), which reload cannot carry over yet: the running program keeps enforcing, nothing changed. To go on, losing windows, counters, bans and verified sources: 'xdp-ratelimit save --iface %s > FILE' (the older version's save, if this one refuses), 'xdp-ratelimit detach %s', 'xdp-ratelimit restore FILE'",
			       iface, layout, RL_LAYOUT_VERSION, iface, iface);
	ret = rl_iface_open(iface, &ifc, err, sizeof(err));
	if (ret)
		return rl_fail("reload: %s; nothing changed", err);
	new_request(r, &ifc.cfg.set, &req);
	via_default(req.replies_via, (__u32)ifindex);
	if (rl_settings_build(&s, &req, rl_cpu_ids(), err, sizeof(err))) {
		rl_iface_close(&ifc);
		return rl_usage_err("reload: %s", err);
	}
	rl_settings_clock(&s, rl_coarse_tick_ns());
	ret = layout_change(&ifc.cfg.set, &s, iface);
	if (ret) {
		rl_iface_close(&ifc);
		return ret;
	}
	if (GIVEN(r, OPT_MODE) && r->a.mode != RL_XDP_AUTO &&
	    (r->a.mode == RL_XDP_NATIVE) != (ifc.cfg.set.mode == RL_MODE_NATIVE)) {
		rl_iface_close(&ifc);
		return rl_fail("reload: %s runs in %s mode: a reload keeps the mode; to change it, detach and attach again (save and restore carry the rules); nothing changed",
			       iface, rl_mode_name(ifc.cfg.set.mode));
	}
	ret = do_reload(r, &ifc, ifindex, &s);
	rl_iface_close(&ifc);
	return ret;
}

const struct rl_cmd rl_cmd_reload = {
	.name = "reload",
	.summary = "replace the running program with this binary's, keeping its state",
	.args = "IFACE",
	.doc =
		"Load this binary's program on the maps pinned for IFACE and swap it in\n"
		"for the running one in one step (bpf_link update): no packet passes\n"
		"unjudged, and rules, bans, verified sources, windows and counters are\n"
		"kept. Settings not given keep their running values. All or nothing: a\n"
		"reload refused or killed before the swap changes nothing.\n",
	.opts = reload_opts,
	.notes =
		"--window, --buckets, --max-sources and --ipv6-prefix lay out the maps:\n"
		"reload refuses to change them (save, detach, then restore with the new\n"
		"settings). It also refuses pins of an older layout.\n"
		"\n"
		"Example:\n"
		"  xdp-ratelimit reload eth0 --no-dry-run --verified-ttl 5m\n",
	.flags = RL_CMD_LOCK,
	.cfg_size = sizeof(struct reload_args),
	.defaults = reload_defaults,
	.opt = reload_opt,
	.operands = reload_operands,
	.run = reload_run,
};
