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
 * longer in --replies-via go, its pin follows (egress.h), and the config
 * map gets the new settings last. A reload killed after the commit point is completed by running
 * it again: each of those steps is idempotent.
 *
 * A setting that sizes or lays out the maps (--window, --buckets,
 * --max-sources, --ipv6-prefix), or pins of an older layout (7), take new
 * maps instead: the program is loaded on maps of its own, filled with what
 * can be carried (reload_carry.h), pinned with the link in a staging
 * directory, and the commit point is the same bpf_link_update(); then the
 * staging directory takes the place of IFACE's (reload_txn.h). The XDP
 * mode cannot change (the link keeps it).
 *
 * Under libxdp's dispatcher the link is libxdp's freplace link of a stub
 * (bpf/xdp_slot.bpf.c), which cannot change its program; the stub
 * tail-calls ours from the pinned slot, and the commit point is one
 * update of the slot's entry instead (xdp_multi.h), in place or onto new
 * maps: the stub uses the slot alone, so new maps change nothing of it,
 * and the staging directory pins the slot and the stub where a link
 * would be. A stub of an older version holds the maps itself: new maps
 * are refused there (the old ones would stay allocated under it).
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cli/cli.h"
#include "lib/attach_txn.h"
#include "cli/cmd_args.h"
#include "lib/egress.h"
#include "lib/cookie_host.h"
#include "lib/iface.h"
#include "lib/loader.h"
#include "lib/pin.h"
#include "lib/reload_carry.h"
#include "lib/reload_txn.h"
#include "lib/rule.h"
#include "lib/rule_store.h"
#include "lib/settings.h"
#include "cli/table.h"
#include "lib/values.h"
#include "lib/xdp_multi.h"
#include "ratelimit.skel.h"

/* Which options were given (RL_OPT_HAVE); the switches only reload has
 * are their own field here. */
struct reload_given {
	bool mode, window, buckets, def_pps, def_bps, max_sources, v6_prefix,
	     dry_run, no_dry_run, pass_malformed, no_pass_malformed,
	     replies_via, verified_ttl, priority, if_attached;
};

struct reload_args {
	struct rl_attach_args a;	/* the options given, parsed as attach does */
	struct reload_given given;
};

#define T struct reload_args
#define GIVEN(field)	RL_OPT_HAVE(T, given.field)
static const struct rl_opt reload_opts[] = {
	{ RL_ATTACH_OPT_MODE(T, a.), GIVEN(mode),
	  .help = "XDP mode; must be the running one (default: it)" },
	{ RL_ATTACH_OPT_WINDOW(T, a.), GIVEN(window),
	  .help = "sliding window (new maps: see below)" },
	{ RL_ATTACH_OPT_BUCKETS(T, a.), GIVEN(buckets),
	  .help = "buckets per window (new maps)" },
	{ RL_ATTACH_OPT_DEF_PPS(T, a.), GIVEN(def_pps),
	  .help = "packets per second per source for the default rule" },
	{ RL_ATTACH_OPT_DEF_BPS(T, a.), GIVEN(def_bps),
	  .help = "bytes per second per source for the default rule" },
	{ RL_ATTACH_OPT_MAX_SOURCES(T, a.), GIVEN(max_sources),
	  .help = "tracked sources (new maps)" },
	{ RL_ATTACH_OPT_V6_PREFIX(T, a.), GIVEN(v6_prefix),
	  .help = "IPv6 source prefix (new maps)" },
	{ RL_ATTACH_OPT_DRY_RUN(T, a.), GIVEN(dry_run),
	  .help = "count what would be dropped, drop nothing" },
	{ .name = "no-dry-run", .kind = RL_OPT_SWITCH,
	  RL_OPT_FIELD(T, given.no_dry_run), .help = "drop again (end a dry run)" },
	{ RL_ATTACH_OPT_PASS_MALFORMED(T, a.), GIVEN(pass_malformed),
	  .help = "pass frames too short or bad to read" },
	{ .name = "no-pass-malformed", .kind = RL_OPT_SWITCH,
	  RL_OPT_FIELD(T, given.no_pass_malformed),
	  .help = "drop frames too short or bad to read again" },
	{ RL_ATTACH_OPT_REPLIES_VIA(T, a.), GIVEN(replies_via),
	  .help = "interfaces the host's answers leave by, up to 4\n"
		  "(name IFACE itself to hook it alone again)" },
	{ RL_ATTACH_OPT_VERIFIED_TTL(T, a.), GIVEN(verified_ttl),
	  .help = "how long one answer keeps a source verified,\n"
		  "1s to 24h" },
	{ RL_ATTACH_OPT_PRIORITY(T, a.), GIVEN(priority),
	  .help = "priority under libxdp's dispatcher, 1 to 1000" },
	{ .name = "if-attached", .kind = RL_OPT_SWITCH,
	  RL_OPT_FIELD(T, given.if_attached),
	  .help = "when IFACE is not attached, do nothing and exit 0\n"
		  "(the systemd unit's start, before restore attaches it)" },
	{ 0 }
};
#undef GIVEN
#undef T

static void reload_defaults(void *cfg)
{
	struct reload_args *r = cfg;

	rl_attach_req_defaults(&r->a.req);
	r->a.mode = RL_XDP_AUTO;
	r->a.def_pps = r->a.def_bps = RL_UNLIMITED;
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
	if (!r->given.buckets)
		check.nbuckets = 1;
	if (!r->given.window)
		check.window_ns = RL_MAX_WINDOW_NS;
	if (rl_settings_build(&r->a.s, &check, rl_cpu_ids(), err, sizeof(err)))
		return rl_usage_err("reload: %s", err);
	if (r->given.dry_run && r->given.no_dry_run)
		return rl_usage_err("reload: --dry-run and --no-dry-run contradict each other: give one");
	if (r->given.pass_malformed && r->given.no_pass_malformed)
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
		.window_ns = r->given.window ? g->window_ns : run->window_ns,
		.nbuckets = r->given.buckets ? g->nbuckets : run->nbuckets,
		.v6_prefix = r->given.v6_prefix ? g->v6_prefix : run->v6_prefix,
		.max_sources = r->given.max_sources ? g->max_sources : run->max_sources,
		.verified_ttl_ns = r->given.verified_ttl ? g->verified_ttl_ns :
				   run->verified_ttl_ns,
	};
	if (r->given.dry_run)
		flags |= RL_F_DRY_RUN;
	if (r->given.no_dry_run)
		flags &= ~RL_F_DRY_RUN;
	if (r->given.pass_malformed)
		flags |= RL_F_PASS_MALFORMED;
	if (r->given.no_pass_malformed)
		flags &= ~RL_F_PASS_MALFORMED;
	memcpy(req->replies_via, r->given.replies_via ? g->replies_via :
	       run->replies_via, sizeof(req->replies_via));
	/* the qdiscs attach made stay detach's to remove while the hooks
	 * stay where they are */
	if (!memcmp(req->replies_via, run->replies_via, sizeof(req->replies_via)))
		flags |= run->flags & RL_F_OWN_CLSACT_ALL;
	req->flags = flags;
}

/* --replies-via naming the interface alone is the default: none. */
static void via_default(__u32 via[RL_MAX_REPLIES_VIA], __u32 ifindex)
{
	if (via[0] == ifindex && !via[1])
		via[0] = 0;
}

/* Do the new settings size or lay out a map otherwise? Then reload
 * builds new maps. */
static bool maps_resized(const struct rl_settings *run, const struct rl_settings *s)
{
	return run->window_ns != s->window_ns || run->nbuckets != s->nbuckets ||
	       run->max_sources != s->max_sources || run->v6_prefix != s->v6_prefix ||
	       run->ncpus != s->ncpus;
}

/* Under libxdp's dispatcher: the slot of IFACE's stub and the program
 * in it (prog_fd), and for new maps the stub (stub_fd), which the staging
 * directory pins too; else an exit status with a message. */
static int open_slot(const char *iface, bool rebuild, int *slot_fd, int *prog_fd,
		     int *stub_fd)
{
	char path[PATH_MAX];
	__u32 prog_id = 0;
	int at = rl_xdp_multi_where(iface, NULL), ret;

	if (rebuild && rl_xdp_multi_stub_on_maps(iface))
		return rl_fail("reload: %s was attached under libxdp's dispatcher by a version of xdp-ratelimit whose stub holds the maps: new maps (a new --window, --buckets, --max-sources or --ipv6-prefix, or pins of an older layout) would leave the old ones allocated under it until detach, so nothing changed. Reloads on the same maps work. To go on: 'xdp-ratelimit save --iface %s > FILE', 'xdp-ratelimit detach %s', then attach with the new settings and 'xdp-ratelimit restore FILE' (the windows, counters, bans and verified sources start afresh); later reloads take new maps in place",
			       iface, iface, iface);
	if (at <= 0)
		return rl_fail("reload: %s has pins but its program no longer runs under libxdp's dispatcher (%s): see 'xdp-ratelimit status'; 'xdp-ratelimit detach %s' and attach it again",
			       iface, strerror(at < 0 ? -at : ENODEV), iface);
	*slot_fd = rl_xdp_multi_slot(iface, &prog_id);
	if (*slot_fd == -ENOENT)
		return rl_fail("reload: %s was attached under libxdp's dispatcher by a version of xdp-ratelimit that cannot swap its program in place (no slot pinned): nothing changed. To go on: 'xdp-ratelimit save --iface %s > FILE', 'xdp-ratelimit detach %s', 'xdp-ratelimit restore FILE' (the windows, counters, bans and verified sources start afresh); later reloads swap in place",
			       iface, iface, iface);
	if (*slot_fd < 0)
		return rl_fail("reload: the slot pinned for %s is not the one its program under libxdp's dispatcher runs, or is empty (%s): see 'xdp-ratelimit status'; 'xdp-ratelimit detach %s' and attach it again",
			       iface, strerror(-*slot_fd), iface);
	*prog_fd = bpf_prog_get_fd_by_id(prog_id);
	if (*prog_fd < 0) {
		close(*slot_fd);
		*slot_fd = -1;
		return rl_fail("reload: cannot open the program the slot of %s holds (id %u): %s",
			       iface, prog_id, strerror(errno));
	}
	rl_pin_path(path, sizeof(path), iface, RL_PIN_PROG);
	*stub_fd = rebuild ? bpf_obj_get(path) : -1;
	if (rebuild && *stub_fd < 0) {
		ret = rl_fail("reload: cannot open %s: %s", path, strerror(errno));
		close(*prog_fd);
		close(*slot_fd);
		*prog_fd = *slot_fd = -1;
		return ret;
	}
	return 0;
}

/* The pinned link of IFACE and the program it runs (prog_fd), checked to
 * be an XDP link on ifindex, or under the dispatcher the slot (slot_fd),
 * the program in it and (rebuild) the stub; else an exit status with a
 * message. */
static int open_link(const char *iface, int ifindex, bool rebuild, int *link_fd,
		     int *slot_fd, int *prog_fd, int *stub_fd)
{
	char path[PATH_MAX];
	__u32 prog_id = 0;
	int at;

	rl_pin_path(path, sizeof(path), iface, RL_PIN_PROG);
	if (access(path, F_OK) == 0)
		return open_slot(iface, rebuild, slot_fd, prog_fd, stub_fd);
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

/* After the commit point: the egress hook, the default rule and the
 * config map follow the new program on its maps `m`. */
static int finish(const struct reload_args *r, const char *iface, int ifindex,
		  int egress_fd, const struct rl_maps *m, const struct rl_settings *s)
{
	struct rl_prefix def = { .is_default = true };
	struct rl_rule_change c;
	struct rl_config cfg;
	char err[RL_ERR_LEN];
	int ret;

	ret = rl_egress_replace(egress_fd, ifindex, s->replies_via, iface, err, sizeof(err));
	if (ret)
		return rl_fail("reload: the new program runs on %s, but %s; run the same reload again to finish",
			       iface, err);
	if (rl_rule_change_default(&c, r->a.def_pps, r->a.def_bps) &&
	    rl_rule_set(m, s, &def, &c, err, sizeof(err)))
		return rl_fail("reload: the new program runs on %s, but the default rule could not be set (%s); run the same reload again to finish",
			       iface, err);
	ret = rl_config_read(m, &cfg);
	if (!ret) {
		/* mode and ifindex are the attachment's, kept */
		__u32 mode = cfg.set.mode, at = cfg.set.ifindex;

		cfg.set = *s;
		cfg.set.mode = mode;
		cfg.set.ifindex = at;
		/* the MTU or the receive buffers may have changed since */
		rl_cookie_opts((int)at, &cfg.cookie_mss, &cfg.cookie_wscale);
		ret = rl_config_write(m, &cfg);
	}
	if (ret)
		return rl_fail("reload: the new program runs on %s, but the config map could not be written (%s): status shows the old settings; run the same reload again to finish",
			       iface, strerror(-ret));
	return 0;
}

static void print_done(const struct reload_args *r, const struct rl_iface *ifc,
		       const struct rl_settings *s, bool dispatcher)
{
	if (r->given.priority && !dispatcher && r->a.priority != RL_RUN_PRIO)
		fprintf(stderr, "%s: --priority has no effect here:\n"
			"  the program runs as a bpf_link of its own, not under libxdp's dispatcher\n",
			ifc->name);
	else if (r->given.priority && dispatcher &&
		 r->a.priority != rl_xdp_multi_prio(ifc->name))
		fprintf(stderr, "%s: --priority kept at %u:\n"
			"  a reload swaps the program behind the dispatcher's entry,\n"
			"  whose place libxdp fixed at attach (detach and attach to move it)\n",
			ifc->name, rl_xdp_multi_prio(ifc->name));
	rl_attach_print("reloaded", ifc->name, ifc->cfg.set.mode, 0, s);
}

/* What a reload onto new maps left behind, in its words: the verified
 * sources go on under the rest when large counts and a long name would
 * pass 80 columns (4096 rules, a ban and a verified source per each of
 * 16777216 sources: 88). */
void rl_reload_print_carried(FILE *f, const char *iface, const struct rl_carried *c,
			     __u32 layout)
{
	char head[128];
	int n;

	if (layout != RL_LAYOUT_VERSION)
		fprintf(f, "%s: pins of layout %u migrated to layout %u\n", iface,
			layout, RL_LAYOUT_VERSION);
	n = snprintf(head, sizeof(head), "%s: new maps: carried %d rules, %ld bans,", iface,
		     c->rules, c->bans);
	fprintf(f, "%s%s%ld verified sources,\n  %s\n", head,
		n + snprintf(NULL, 0, " %ld verified sources,", c->verified) > RL_VIEW_MIN_WIDTH ?
		"\n  " : " ", c->verified,
		c->windows ? "the sources' windows and counters" :
		"not the sources' windows and counters (every source starts a fresh window)");
}

/*
 * Load this binary's program and swap it in; `ifc` is open and checked
 * (pins of `layout`). In place (`rebuild` false): on the pinned maps.
 * Else on new maps sized by `s`, filled from the pinned ones and staged
 * with the link, the pin directory swapped after the program
 * (reload_txn.h).
 */
static int swap_in(const struct reload_args *r, const struct rl_iface *ifc,
		   __u32 layout, bool rebuild, int ifindex,
		   const struct rl_settings *s)
{
	LIBBPF_OPTS(bpf_link_update_opts, opts, .flags = BPF_F_REPLACE);
	struct rl_settings rodata_set = *s;
	char err[RL_ERR_LEN], stage[NAME_MAX + 1] = "";
	const struct rl_maps *m = &ifc->m;
	struct rl_carried carried;
	struct ratelimit *skel;
	int link_fd = -1, slot_fd = -1, stub_fd = -1, old_fd = -1, new_fd, ret;
	struct rl_reload_pin att[2];
	struct rl_maps nm;

	if (rebuild && rl_carry_check(ifc, s, err, sizeof(err)))
		return rl_fail("reload: %s; nothing changed", err);
	ret = open_link(ifc->name, ifindex, rebuild, &link_fd, &slot_fd, &old_fd,
			&stub_fd);
	if (ret)
		return ret;
	/* what IFACE's directory holds beside the maps, staged with them */
	if (slot_fd >= 0) {
		att[0] = (struct rl_reload_pin){ RL_PIN_SLOT, slot_fd };
		att[1] = (struct rl_reload_pin){ RL_PIN_PROG, stub_fd };
	} else {
		att[0] = (struct rl_reload_pin){ RL_PIN_LINK, link_fd };
	}
	skel = ratelimit__open();
	if (!skel) {
		ret = rl_fail("reload: cannot open the BPF object: %s", strerror(errno));
		goto out;
	}
	if (slot_fd >= 0)
		rl_xdp_multi_slot_prog(skel->progs.xdp_ratelimit);
	if (!rebuild) {
		ret = rl_load_reusing(skel->skeleton, &skel->rodata->settings,
				      &rodata_set, m, err, sizeof(err));
	} else {
		m = &nm;
		ret = rl_load(skel->skeleton, &skel->rodata->settings, &rodata_set,
			      RL_UNLIMITED, RL_UNLIMITED, &nm, err, sizeof(err));
		if (!ret)
			ret = rl_carry(ifc, s, &nm, &carried, err, sizeof(err));
		if (!ret)
			ret = rl_reload_stage(ifc->name, &nm, att, slot_fd >= 0 ? 2 : 1,
					      stage, err, sizeof(err));
	}
	if (ret) {
		ret = rl_fail("reload: %s; nothing changed", err);
		goto out;
	}
	/* the commit point: the link (or the stub's slot) runs the new
	 * program from the next packet on, if it still runs the old one */
	opts.old_prog_fd = old_fd;
	new_fd = bpf_program__fd(skel->progs.xdp_ratelimit);
	ret = slot_fd >= 0 ? rl_xdp_multi_swap(slot_fd, new_fd) :
	      bpf_link_update(link_fd, new_fd, &opts) ? -errno : 0;
	if (ret) {
		ret = rl_fail("reload: cannot swap the program of %s: %s; nothing changed",
			      ifc->name, strerror(-ret));
		if (rebuild)
			rl_pin_dir_remove(stage);
		goto out;
	}
	if (rebuild && rl_reload_swap(ifc->name, stage, err, sizeof(err))) {
		ret = rl_fail("reload: the new program runs on %s, but %s; run the same reload again to finish",
			      ifc->name, err);
		goto out;
	}
	ret = finish(r, ifc->name, ifindex, bpf_program__fd(skel->progs.rl_egress),
		     m, s);
	if (ret)
		goto out;
	if (rebuild) {
		/* what the old program banned or the old egress hook
		 * verified after the copy */
		rl_carry_late(ifc, s, &nm);
		rl_reload_print_carried(stdout, ifc->name, &carried, layout);
	}
	print_done(r, ifc, s, slot_fd >= 0);
out:
	/* the link (or slot), the filters and (new maps) the pins hold what
	 * we made */
	ratelimit__destroy(skel);
	close(old_fd);
	close(link_fd);
	close(slot_fd);
	close(stub_fd);
	return ret;
}

/* Pins reload cannot read: what would be lost and how to go on. */
static int layout_refused(const char *iface, __u32 layout)
{
	if (layout > RL_LAYOUT_VERSION)
		return rl_fail("reload: %s was attached by a newer version of xdp-ratelimit (map layout %u; this one has %u): reload it with that version; nothing changed",
			       iface, layout, RL_LAYOUT_VERSION);
	return rl_fail("reload: %s was attached by a version of xdp-ratelimit whose map layout (%u) is too old to carry (this one carries layout %u and later): a reload would lose its rules, bans, verified sources, windows and counters, so the running program keeps enforcing and nothing changed. To go on: 'xdp-ratelimit save --iface %s > FILE' with the older version (it saves the rules; bans, verified sources, windows and counters start afresh), 'xdp-ratelimit detach %s', 'xdp-ratelimit restore FILE' with this one",
		       iface, layout, RL_LAYOUT_OLDEST_CARRIED, iface, iface);
}

static int reload_iface(const struct reload_args *r, const char *iface, int ifindex);

static int reload_run(void *cfg)
{
	const struct reload_args *r = cfg;
	const char *iface = r->a.iface;
	char err[RL_ERR_LEN], dir[PATH_MAX];
	struct stat st;
	int ifindex, ret;

	ifindex = (int)if_nametoindex(iface);
	if (!ifindex)
		return rl_fail("reload: no interface named '%s' here: check 'ip link' (in a namespace, run under 'nsenter --net=/run/netns/NAME')",
			       iface);
	rl_pin_path(dir, sizeof(dir), iface, NULL);
	if (stat(dir, &st)) {
		/* an earlier release's pins: carried into this namespace's
		 * directory, and put back if the reload is refused (a refused
		 * reload changes nothing) */
		ret = rl_pins_carry_flat(iface, err, sizeof(err));
		if (ret < 0)
			return rl_fail("reload: %s; nothing changed", err);
		if (ret > 0) {
			ret = reload_iface(r, iface, ifindex);
			if (ret != RL_EXIT_OK && rl_pins_legacy_move(iface, true) < 0)
				rl_err("reload: cannot put the pins of %s back in %s: move %s there by hand",
				       iface, RL_PIN_TOP, dir);
			else if (ret == RL_EXIT_OK)
				rl_print_pins_moved(iface);
			return ret;
		}
	}
	return reload_iface(r, iface, ifindex);
}

/* reload_run's work on pins in this namespace's directory. */
static int reload_iface(const struct reload_args *r, const char *iface, int ifindex)
{
	struct rl_attach_req req;
	struct rl_settings s;
	struct rl_iface ifc;
	char err[RL_ERR_LEN], dir[PATH_MAX];
	struct stat st;
	__u32 layout;
	int ret;

	rl_pin_path(dir, sizeof(dir), iface, NULL);
	if (stat(dir, &st) && r->given.if_attached) {
		printf("%s is not attached: nothing to reload\n", iface);
		return RL_EXIT_OK;
	}
	if (stat(dir, &st))
		return rl_fail("reload: %s is not attached: nothing to reload; attach it with 'xdp-ratelimit attach %s' (see 'xdp-ratelimit status')",
			       iface, iface);
	ret = rl_reload_repair(iface);
	if (ret < 0)
		return rl_fail("reload: cannot complete or remove what an interrupted reload of %s left (%s): see 'ls %s'",
			       iface, strerror(-ret), rl_pin_root());
	layout = rl_iface_pinned_layout(iface);
	if (!layout)
		layout = RL_LAYOUT_VERSION;	/* rl_iface_open says what is wrong */
	if (layout < RL_LAYOUT_OLDEST_CARRIED || layout > RL_LAYOUT_VERSION)
		return layout_refused(iface, layout);
	ret = rl_iface_open_layout(iface, layout, &ifc, err, sizeof(err));
	if (ret)
		return rl_fail("reload: %s; nothing changed", err);
	new_request(r, &ifc.cfg.set, &req);
	via_default(req.replies_via, (__u32)ifindex);
	if (rl_settings_build(&s, &req, rl_cpu_ids(), err, sizeof(err))) {
		rl_iface_close(&ifc);
		return rl_usage_err("reload: %s", err);
	}
	rl_settings_clock(&s, rl_coarse_tick_ns());
	/* the default rule's budgets in the new window */
	if (rl_budgets_fit(&(struct rl_rule_change){
				.have_pps = r->a.def_pps != RL_UNLIMITED, .pps = r->a.def_pps,
				.have_bps = r->a.def_bps != RL_UNLIMITED, .bps = r->a.def_bps },
			   s.window_ns, "default-", err, sizeof(err))) {
		rl_iface_close(&ifc);
		return rl_usage_err("reload: %s", err);
	}
	if (r->given.mode && r->a.mode != RL_XDP_AUTO &&
	    (r->a.mode == RL_XDP_NATIVE) != (ifc.cfg.set.mode == RL_MODE_NATIVE)) {
		rl_iface_close(&ifc);
		return rl_fail("reload: %s runs in %s mode: a reload keeps the mode; to change it, detach and attach again (save and restore carry the rules); nothing changed",
			       iface, rl_mode_name(ifc.cfg.set.mode));
	}
	ret = swap_in(r, &ifc, layout,
		      layout != RL_LAYOUT_VERSION || maps_resized(&ifc.cfg.set, &s),
		      ifindex, &s);
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
		"reload refused or killed before the swap changes nothing. Under libxdp's\n"
		"dispatcher the swap is of the program its stub tail-calls (the slot),\n"
		"the other programs and the stub's place untouched.\n",
	.opts = reload_opts,
	.notes =
		"--window, --buckets, --max-sources and --ipv6-prefix size the maps, and\n"
		"pins of layout 8 have other shapes: reload then builds new maps and\n"
		"carries rules (budgets recomputed), bans, verified sources and counters\n"
		"into them. A new --window, --buckets or --ipv6-prefix starts every source\n"
		"with a fresh window. Pins older than layout 8 are refused. Under libxdp's\n"
		"dispatcher new maps go in the same slot; an interface attached there by\n"
		"a version whose stub holds the maps takes only the reload on the same\n"
		"maps (save, detach, attach, restore once).\n"
		"\n"
		"Example:\n"
		"  xdp-ratelimit reload eth0 --no-dry-run --verified-ttl 5m\n",
	.flags = RL_CMD_LOCK,
	.cfg_size = sizeof(struct reload_args),
	.defaults = reload_defaults,
	.operands = reload_operands,
	.run = reload_run,
};
