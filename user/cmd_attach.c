// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit attach: load, attach as a bpf_link, pin (SPEC "Commands").
 *
 * The maps are pinned in a staging directory (rl_pin_stage_name) renamed
 * to RL_PIN_ROOT/IFACE when complete; the link is pinned last, under
 * IFACE, so an attach killed before that pin leaves no program attached
 * (the link dies with the process), only pins that status reports and
 * detach removes. See do_attach.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include "cli.h"
#include "loader.h"
#include "pin.h"
#include "settings.h"
#include "units.h"
#include "ratelimit.skel.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-ratelimit attach IFACE [OPTIONS]\n"
		"\n"
		"Load the limiter, attach it to IFACE as a pinned bpf_link and pin its\n"
		"maps under " RL_PIN_ROOT "/IFACE/. Returns once it enforces.\n"
		"\n"
		"Options:\n"
		"  --mode auto|native|generic  XDP mode; auto tries native, then generic (default auto)\n"
		"  --window DURATION    sliding window, e.g. 500ms, 1s, 1m (default 1s, at most 1m)\n"
		"  --buckets N          buckets per window, 1 to %u (default %u); each at least 1ms\n"
		"  --default-pps RATE   packets per second per source for the default rule\n"
		"  --default-bps RATE   bytes per second per source for the default rule\n"
		"                       (without either, sources without a rule are only counted)\n"
		"  --max-sources N      tracked sources, %u to %u (default %u)\n"
		"  --ipv6-prefix LEN    track IPv6 sources per /LEN, 1 to 128 (default %u)\n"
		"  --dry-run            count what would be dropped, drop nothing\n"
		"  --pass-malformed     pass frames too short or bad to read (default: drop)\n"
		"  -h, --help           this help\n"
		"\n"
		"RATE is a whole number with an optional k, M or G suffix (powers of 1000).\n"
		"\n"
		"Example:\n"
		"  xdp-ratelimit attach eth0 --default-pps 1000 --window 1s --buckets 10\n",
		RL_MAX_BUCKETS, RL_DEFAULT_BUCKETS, RL_MIN_MAX_SOURCES,
		RL_MAX_MAX_SOURCES, RL_DEFAULT_MAX_SOURCES, RL_DEFAULT_V6_PREFIX);
}

enum { OPT_MODE = 256, OPT_WINDOW, OPT_BUCKETS, OPT_DEF_PPS, OPT_DEF_BPS,
       OPT_MAX_SOURCES, OPT_V6_PREFIX, OPT_DRY_RUN, OPT_PASS_MALFORMED };

enum attach_mode { MODE_AUTO, MODE_NATIVE, MODE_GENERIC };

struct attach_args {
	const char *iface;
	enum attach_mode mode;
	struct rl_attach_req req;
	__u64 def_pps, def_bps;
};

static int parse_args(int argc, char **argv, struct attach_args *a)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "buckets", required_argument, NULL, OPT_BUCKETS },
		{ "default-pps", required_argument, NULL, OPT_DEF_PPS },
		{ "default-bps", required_argument, NULL, OPT_DEF_BPS },
		{ "max-sources", required_argument, NULL, OPT_MAX_SOURCES },
		{ "ipv6-prefix", required_argument, NULL, OPT_V6_PREFIX },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "pass-malformed", no_argument, NULL, OPT_PASS_MALFORMED },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char err[RL_ERR_LEN];
	__u64 v;
	int c;

	rl_attach_req_defaults(&a->req);
	a->mode = MODE_AUTO;
	a->def_pps = a->def_bps = RL_UNLIMITED;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		int ret = 0;

		switch (c) {
		case 'h':
			usage(stdout);
			return -1;
		case OPT_MODE:
			if (!strcmp(optarg, "auto"))
				a->mode = MODE_AUTO;
			else if (!strcmp(optarg, "native"))
				a->mode = MODE_NATIVE;
			else if (!strcmp(optarg, "generic"))
				a->mode = MODE_GENERIC;
			else
				return rl_usage_err("attach: bad --mode '%s': use auto, native or generic",
						    optarg);
			break;
		case OPT_WINDOW:
			ret = rl_parse_duration(optarg, &a->req.window_ns, err, sizeof(err));
			break;
		case OPT_BUCKETS:
			ret = rl_parse_uint(optarg, "--buckets", 1, RL_MAX_BUCKETS, &v,
					    err, sizeof(err));
			a->req.nbuckets = (__u32)v;
			break;
		case OPT_DEF_PPS:
			ret = rl_parse_rate(optarg, false, &a->def_pps, err, sizeof(err));
			break;
		case OPT_DEF_BPS:
			ret = rl_parse_rate(optarg, false, &a->def_bps, err, sizeof(err));
			break;
		case OPT_MAX_SOURCES:
			ret = rl_parse_uint(optarg, "--max-sources", RL_MIN_MAX_SOURCES,
					    RL_MAX_MAX_SOURCES, &a->req.max_sources,
					    err, sizeof(err));
			break;
		case OPT_V6_PREFIX:
			ret = rl_parse_uint(optarg, "--ipv6-prefix", 1, 128, &v, err,
					    sizeof(err));
			a->req.v6_prefix = (__u32)v;
			break;
		case OPT_DRY_RUN:
			a->req.flags |= RL_F_DRY_RUN;
			break;
		case OPT_PASS_MALFORMED:
			a->req.flags |= RL_F_PASS_MALFORMED;
			break;
		default:
			return rl_bad_option("attach", c, argv);
		}
		if (ret)
			return rl_usage_err("attach: %s", err);
	}
	if (optind != argc - 1)
		return rl_usage_err(optind >= argc ?
				    "attach: name the interface: xdp-ratelimit attach IFACE [OPTIONS]" :
				    "attach: one interface at a time: xdp-ratelimit attach IFACE [OPTIONS]");
	a->iface = argv[optind];
	return rl_iface_arg("attach", a->iface);
}

/* The bpf_link in the asked mode; auto falls back to generic, saying so. */
static int attach_link(int prog_fd, int ifindex, const char *iface,
		       enum attach_mode mode, enum rl_mode *got)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	int fd;

	if (mode != MODE_GENERIC) {
		opts.flags = XDP_FLAGS_DRV_MODE;
		fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &opts);
		if (fd >= 0) {
			*got = RL_MODE_NATIVE;
			return fd;
		}
		if (mode == MODE_NATIVE || (errno != EOPNOTSUPP && errno != EINVAL))
			return -errno;
		printf("%s: native XDP not supported (%s), falling back to generic mode\n",
		       iface, strerror(errno));
	}
	opts.flags = XDP_FLAGS_SKB_MODE;
	fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &opts);
	if (fd < 0)
		return -errno;
	*got = RL_MODE_GENERIC;
	return fd;
}

static int link_error(int ret, const char *iface, enum attach_mode mode)
{
	if (ret == -EBUSY || ret == -EEXIST)
		return rl_fail("%s already has an XDP program attached by another tool: remove it first (ip link set dev %s xdp off), then attach again",
			       iface, iface);
	if (mode == MODE_NATIVE && (ret == -EOPNOTSUPP || ret == -EINVAL))
		return rl_fail("%s does not support native XDP (%s): use --mode generic or --mode auto",
			       iface, strerror(-ret));
	return rl_fail("cannot attach to %s: %s", iface, strerror(-ret));
}

/*
 * Everything after the checks: the interface is not attached, we hold the
 * lock. Returns an exit status; on failure nothing stays behind.
 *
 * The maps are pinned in a staging directory, renamed to IFACE once
 * complete, and the link is pinned last, directly under IFACE: that pin
 * is the commit point. Killed before it, the link dies with the process
 * (the program detaches) and what is left is either a staging directory
 * or an IFACE directory without a link, both reported by status and
 * removed by detach; killed after it, the attach is complete.
 */
static int do_attach(const struct attach_args *a, int ifindex,
		     const struct rl_settings *s)
{
	char stage[PATH_MAX], path[PATH_MAX], final[PATH_MAX];
	char err[RL_ERR_LEN], name[NAME_MAX];
	struct ratelimit *skel;
	struct rl_config cfg;
	struct rl_maps m;
	enum rl_mode got = RL_MODE_NATIVE;
	const char *pinned = NULL;	/* the directory to remove on failure */
	int link_fd = -1, ret, status = RL_EXIT_FAIL;

	skel = ratelimit__open();
	if (!skel)
		return rl_fail("cannot open the BPF object: %s", strerror(errno));
	ret = rl_loader_prepare(skel->obj, &skel->rodata->settings, s);
	if (!ret)
		ret = ratelimit__load(skel);
	if (ret) {
		rl_err("cannot load the XDP program: %s (the kernel log above says why)",
		       strerror(-ret));
		goto out;
	}
	rl_maps_from_obj(skel->obj, &m);
	if (rl_loader_init(&m, s, a->def_pps, a->def_bps, err, sizeof(err))) {
		rl_err("%s", err);
		goto out;
	}

	rl_pin_stage_name(name, sizeof(name), a->iface, (int)getpid());
	rl_pin_path(stage, sizeof(stage), name, NULL);
	if (mkdir(stage, 0700)) {
		rl_err("cannot create %s: %s", stage, strerror(errno));
		goto out;
	}
	pinned = name;
	for (int i = 0; i < RL_NR_MAPS; i++) {
		rl_pin_path(path, sizeof(path), name, rl_map_names[i]);
		if (bpf_obj_pin(*rl_maps_fd(&m, i), path)) {
			rl_err("cannot pin %s: %s", path, strerror(errno));
			goto unpin;
		}
	}
	link_fd = attach_link(bpf_program__fd(skel->progs.xdp_ratelimit),
			      ifindex, a->iface, a->mode, &got);
	if (link_fd < 0) {
		status = link_error(link_fd, a->iface, a->mode);
		goto unpin;
	}
	/* mode is informational (status, stats): set before it is visible */
	if (rl_config_read(&m, &cfg) == 0) {
		cfg.set.mode = got;
		cfg.set.ifindex = (__u32)ifindex;
		rl_config_write(&m, &cfg);
	}
	rl_pin_path(final, sizeof(final), a->iface, NULL);
	if (rename(stage, final)) {
		rl_err("cannot move %s to %s: %s", stage, final, strerror(errno));
		goto unpin;
	}
	pinned = a->iface;
	rl_pin_path(path, sizeof(path), a->iface, RL_PIN_LINK);
	if (bpf_obj_pin(link_fd, path)) {
		rl_err("cannot pin %s: %s", path, strerror(errno));
		goto unpin;
	}
	status = RL_EXIT_OK;
	goto out;
unpin:
	rl_pin_dir_remove(pinned);
out:
	if (link_fd >= 0)
		close(link_fd);	/* the pin, if any, keeps it attached */
	ratelimit__destroy(skel);
	if (status == RL_EXIT_OK) {
		char w[32];

		rl_format_duration(s->window_ns, w, sizeof(w));
		printf("attached to %s (%s mode): window %s in %u buckets (%s clock), up to %llu sources%s%s\n",
		       a->iface, got == RL_MODE_NATIVE ? "native" : "generic",
		       w, s->nbuckets, s->flags & RL_F_COARSE_CLOCK ? "coarse" : "precise",
		       (unsigned long long)s->max_sources,
		       s->flags & RL_F_DRY_RUN ? ", dry run" : "",
		       s->flags & RL_F_PASS_MALFORMED ? ", passing malformed frames" : "");
	}
	return status;
}

int cmd_attach(int argc, char **argv)
{
	char err[RL_ERR_LEN], dir[PATH_MAX];
	struct attach_args a = {};
	struct rl_settings s;
	struct stat st;
	int ifindex, lock, ret;

	ret = parse_args(argc, argv, &a);
	if (ret)
		return ret < 0 ? RL_EXIT_OK : ret;
	if (rl_settings_build(&s, &a.req, rl_cpu_ids(), err, sizeof(err)))
		return rl_usage_err("attach: %s", err);
	if (rl_require_root())
		return RL_EXIT_FAIL;
	/* per-CPU state is only safe while XDP runs to completion on a CPU */
	if (rl_preempt_rt("/sys/kernel/realtime"))
		return rl_fail("attach: this kernel is PREEMPT_RT (/sys/kernel/realtime is 1): two XDP runs can interleave there on one CPU's per-source state, which xdp-ratelimit's counting does not allow; use a kernel without PREEMPT_RT");
	rl_settings_clock(&s, rl_coarse_tick_ns());
	ifindex = (int)if_nametoindex(a.iface);
	if (!ifindex)
		return rl_fail("attach: no interface named '%s' here: check 'ip link' (in a namespace, run under 'nsenter --net=/run/netns/NAME')",
			       a.iface);
	lock = rl_change_begin();
	if (lock < 0)
		return RL_EXIT_FAIL;
	rl_pin_dirs_reap(a.iface);
	rl_pin_path(dir, sizeof(dir), a.iface, NULL);
	if (stat(dir, &st) == 0) {
		if (rl_link_ifindex(a.iface, NULL) > 0)
			ret = rl_fail("%s is already attached: see 'xdp-ratelimit status'; to change its settings, detach it first",
				      a.iface);
		else	/* its maps may hold rules set since: not ours to drop */
			ret = rl_fail("%s has pins but no working attachment (%s; an interrupted attach or a removed link pin, see 'xdp-ratelimit status'): run 'xdp-ratelimit detach %s' to remove them, then attach again",
				      a.iface, dir, a.iface);
	} else {
		ret = do_attach(&a, ifindex, &s);
	}
	rl_unlock(lock);
	return ret;
}
