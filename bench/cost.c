// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ratelimit-bench cost: per-packet cost with BPF_PROG_TEST_RUN.
 *
 * The real program (build/ratelimit.bpf.o, configured with the loader's own
 * steps) and the baselines of bench/baselines.bpf.c run the same frames on
 * one pinned CPU. Each sample is one test run of `repeat` frames timed
 * around the syscall (the kernel's own figure is whole nanoseconds per
 * frame, too coarse for a 3 ns program); `repeat` is sized so that a sample
 * lasts --ms milliseconds, against microseconds of syscall overhead. Every
 * program is kept in the XDP dispatcher by a native attachment to a veth in
 * a network namespace of our own (unshare), otherwise each run would wait
 * for two RCU grace periods. Rounds run every case once, in turn, so that
 * load from elsewhere hits every case alike; ratios are taken within a
 * round, then summarised (median, min, max) over rounds.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ratelimit.h"
#include "ratelimit.skel.h"
#include "baselines.skel.h"
#include "minimal.skel.h"
#include "bench_bpf.h"
#include "xdp_slot.skel.h"
#include "lib/loader.h"
#include "lib/maps.h"
#include "lib/rule.h"
#include "lib/rule_store.h"
#include "lib/settings.h"
#include "lib/values.h"
#include "lib/xdp_multi.h"
#include "bench.h"
#include "gen/frames.h"

#define CHURN_SOURCES	1000000
#define CHURN_MAX	65536
/* events' flood: sources of 2 frames each (a pass, then a drop), each
 * back 13 ms later (65,536 x 2 x ~100 ns), after a window of 1 ms: every
 * frame reports released or limited, and the budget per CPU refuses
 * nearly all of them */
#define EVENT_SOURCES	65536
#define EVENT_WINDOW_NS	RL_NSEC_PER_MSEC
/* "under quota": a budget no sample can fill (1e9 packets per 1 s window) */
#define HUGE_PPS	1000000000ULL
/* indices of the minimal limiter's cases, the base of the ratios */
#define MIN_UNDER	4
#define MIN_OVER	5

#define COST_CASES	48

/* each case's base of comparison (a minimal limiter's case), or -1 */
static int base_of[COST_CASES];

static struct baselines *bu;		/* bare programs, the churn driver */
static struct minimal *mu, *mo;		/* minimal limiter: under, over quota */
static struct baselines *bev;		/* events' churn driver */
static int ncpus;

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || rl_run_config_note(level, fmt))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* loops, skip: the xcpu program's loop (fixed at load: the verifier
 * needs the bound of the loop over a callback with a loop inside); the
 * churn driver's sources, 2^shift frames each */
static struct baselines *load_baselines_churn(int loops, int skip, __u32 churn_n,
					      __u32 shift)
{
	struct baselines *b = baselines__open();

	if (!b)
		return NULL;
	b->rodata->xcpu_loops = (__u32)loops;
	b->rodata->xcpu_skip_self = (__u32)skip;
	b->rodata->churn_n = churn_n;
	b->rodata->churn_shift = shift;
	b->rodata->xcpu_ncpus = (__u32)ncpus;
	b->rodata->xcpu_bucket_ns = RL_DEFAULT_WINDOW_NS / RL_DEFAULT_BUCKETS;
	b->rodata->xcpu_nbuckets = RL_DEFAULT_BUCKETS;
	/* the accuracy receiver's ring is not used here */
	bpf_map__set_max_entries(b->maps.passed, 4096);
	if (baselines__load(b)) {
		baselines__destroy(b);
		return NULL;
	}
	return b;
}

static struct baselines *load_baselines(int loops, int skip)
{
	return load_baselines_churn(loops, skip, CHURN_SOURCES, 0);
}

struct rl_inst {
	struct ratelimit *skel;
	struct rl_maps m;
	struct rl_settings s;
};

/* xdp-ratelimit as attach loads it with `req`; without events: the
 * baseline of their cost */
static int load_rl_req(struct rl_inst *r, const struct rl_attach_req *req,
		       bool no_events)
{
	char err[RL_ERR_LEN];

	rl_maps_init(&r->m);
	if (rl_settings_build(&r->s, req, rl_cpu_ids(), err, sizeof(err))) {
		fprintf(stderr, "ratelimit-bench: settings: %s\n", err);
		return -1;
	}
	rl_settings_clock(&r->s, rl_coarse_tick_ns());	/* as attach does */
	r->skel = ratelimit__open();
	if (r->skel)
		r->skel->rodata->no_events = no_events;
	if (!r->skel ||
	    rl_loader_prepare(r->skel->obj, &r->skel->rodata->settings, &r->s) ||
	    ratelimit__load(r->skel) || rl_maps_from_obj(r->skel->obj, &r->m) ||
	    rl_loader_init(&r->m, &r->s, RL_UNLIMITED, RL_UNLIMITED, err,
			   sizeof(err))) {
		fprintf(stderr, "ratelimit-bench: loading xdp-ratelimit failed\n");
		return -1;
	}
	return 0;
}

static int load_rl(struct rl_inst *r, __u64 max_sources)
{
	struct rl_attach_req req;

	rl_attach_req_defaults(&req);
	req.max_sources = max_sources;
	return load_rl_req(r, &req, false);
}

/* events' flood (EVENT_SOURCES): --window 1ms --buckets 1, one packet a
 * window per source */
static int load_rl_events(struct rl_inst *r, bool no_events)
{
	struct rl_attach_req req;

	rl_attach_req_defaults(&req);
	req.max_sources = EVENT_SOURCES;
	req.window_ns = EVENT_WINDOW_NS;
	req.nbuckets = 1;
	return load_rl_req(r, &req, no_events);
}

/* xdp-ratelimit's stub, its slot holding prog_fd */
static struct xdp_slot *load_stub(int prog_fd)
{
	struct xdp_slot *s = xdp_slot__open();
	__u32 zero = 0;

	if (!s || xdp_slot__load(s) ||
	    bpf_map_update_elem(bpf_map__fd(s->maps.slot), &zero, &prog_fd, BPF_ANY)) {
		fprintf(stderr, "ratelimit-bench: loading the dispatcher's stub failed\n");
		xdp_slot__destroy(s);
		return NULL;
	}
	return s;
}

/* quota set default with `c` */
static int default_rule(struct rl_inst *r, const struct rl_rule_change *c)
{
	char err[RL_ERR_LEN];
	struct rl_prefix p = { .is_default = true };

	if (rl_rule_set(&r->m, &r->s, &p, c, err, sizeof(err))) {
		fprintf(stderr, "ratelimit-bench: quota set default: %s\n", err);
		return -1;
	}
	return 0;
}

/* quota set default --pps 1000 with an aggregate or a newcomer budget of
 * 10 pps: a spoofed flood (every packet a new source) is refused by it */
static int spoof_rule(struct rl_inst *r, bool newcomer)
{
	return default_rule(r, &(struct rl_rule_change){
		.have_pps = true, .pps = 1000,
		.have_agg_pps = !newcomer, .agg_pps = 10,
		.have_new_pps = newcomer, .new_pps = 10,
	});
}

/* quota set default --pps HUGE_PPS with a newcomer budget or a ban: the
 * rules that read verification */
static int verified_rule(struct rl_inst *r, bool ban)
{
	return default_rule(r, &(struct rl_rule_change){
		.have_pps = true, .pps = HUGE_PPS,
		.have_new_pps = !ban, .new_pps = 10,
		.have_ban = ban, .ban_ns = 60 * RL_NSEC_PER_SEC,
	});
}

/* quota set default --proto tcp --syn --pps HUGE_PPS beside the unscoped
 * default of load time (scope_syn, scope_unscoped) */
static int syn_rule(struct rl_inst *r)
{
	struct rl_rule_change c = { .have_pps = true, .pps = HUGE_PPS };
	struct rl_scope syn = rl_scope_of(6, RL_SCOPE_F_SYN, 0, 0);
	struct rl_prefix p = { .is_default = true };
	char err[RL_ERR_LEN];

	if (default_rule(r, &c))
		return -1;
	if (rl_rule_set_scoped(&r->m, &r->s, &p, &syn, &c, err, sizeof(err))) {
		fprintf(stderr, "ratelimit-bench: quota set default --syn: %s\n", err);
		return -1;
	}
	return 0;
}

/* quota set default --pps 1000 --new-pps 10, with --syn-cookies or not:
 * a spoofed SYN flood answered with cookies, or refused */
static int cookie_rule(struct rl_inst *r)
{
	return default_rule(r, &(struct rl_rule_change){
		.have_pps = true, .pps = 1000,
		.have_new_pps = true, .new_pps = 10,
		.have_cookies = true, .cookies = true,
	});
}

/* The SYN cookie cases' frames (xdp_tcp_churn writes each repeat's
 * source): IPv6 2001:db8::1 port 40000 to 2001:db8:ffff::1 port 80, a SYN
 * with Linux's options (MSS, SACK, timestamp, window scale), or an ACK of
 * a cookie no source of the flood was sent (padded to the same length). */
static void tcp6_frame(__u8 *f, bool syn)
{
	static const __u8 opts[20] = { 2, 4, 0x05, 0xa0, 4, 2, 8, 10, 0, 0, 0, 1,
				       0, 0, 0, 0, 1, 3, 3, 7 };
	__u8 *ip = f + 14, *t = ip + 40;

	memset(f, 0, BENCH_TCP_LEN);
	memset(f, 0x02, 12);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip[0] = 0x60;
	ip[5] = syn ? 40 : 20;
	ip[6] = 6;
	ip[7] = 64;
	inet_pton(AF_INET6, "2001:db8::1", ip + 8);
	inet_pton(AF_INET6, "2001:db8:ffff::1", ip + 24);
	t[0] = 40000 >> 8; t[1] = 40000 & 0xff;
	t[3] = 80;
	t[4] = 0x11; t[7] = 0x44;		/* seq */
	if (syn) {
		t[12] = 10 << 4;
		t[13] = 0x02;
		memcpy(t + 20, opts, sizeof(opts));
	} else {
		t[7] = 0x45;
		t[8] = 0x12; t[11] = 0x34;	/* ack: no cookie of theirs */
		t[12] = 5 << 4;
		t[13] = 0x10;
	}
	t[14] = 0xfa;
}

/* A TCP segment SRC:SPORT -> DST:DPORT (IPv4), as the connection the
 * verified cases use (198.18.0.1:40000 and 198.18.255.1:80). */
static void tcp_frame(struct bench_frame *fr, const char *src, const char *dst,
		      __u16 sport, __u16 dport, __u8 flags)
{
	__u8 *p = fr->data, *t;

	memset(fr->data, 0, sizeof(fr->data));
	memset(p, 0x02, 12);
	p[12] = 0x08;
	p += 14;
	p[0] = 0x45;
	p[3] = 40;
	p[8] = 64;
	p[9] = 6;
	inet_pton(AF_INET, src, p + 12);
	inet_pton(AF_INET, dst, p + 16);
	t = p + 20;
	t[0] = sport >> 8; t[1] = sport & 0xff;
	t[2] = dport >> 8; t[3] = dport & 0xff;
	t[12] = 5 << 4;
	t[13] = flags;
	t[14] = t[15] = 0xff;	/* window 65535 */
	if (flags & 0x02) {	/* a SYN-ACK: sequence number 1000 */
		t[6] = 1000 >> 8;
		t[7] = 1000 & 0xff;
	} else if (flags & 0x10 && dport == 80) {	/* the peer's: ack 1001 */
		t[10] = 1001 >> 8;
		t[11] = 1001 & 0xff;
	}
	fr->len = 60;
}

/* 198.18.0.1's handshake: the host's SYN-ACK through the egress hook,
 * then its ACK of it through the XDP program (the proof): verified, and
 * its connection established, as the verified cases find them. */
static int answer(struct rl_inst *r)
{
	struct bench_frame fr, ack;
	LIBBPF_OPTS(bpf_test_run_opts, o, .repeat = 1);
	LIBBPF_OPTS(bpf_test_run_opts, a, .repeat = 1);

	tcp_frame(&fr, "198.18.255.1", "198.18.0.1", 80, 40000, 0x12);
	o.data_in = fr.data;
	o.data_size_in = (__u32)fr.len;
	tcp_frame(&ack, "198.18.0.1", "198.18.255.1", 40000, 80, 0x10);
	a.data_in = ack.data;
	a.data_size_in = (__u32)ack.len;
	return bpf_prog_test_run_opts(bpf_program__fd(r->skel->progs.rl_egress), &o) ||
	       o.retval != (__u32)-1 /* TC_ACT_UNSPEC */ ||
	       bpf_prog_test_run_opts(bpf_program__fd(r->skel->progs.xdp_ratelimit), &a) ||
	       a.retval != XDP_PASS ? -1 : 0;
}

/* quota set PREFIX --pps PPS (RL_UNLIMITED: unlimited) */
static int quota(struct rl_inst *r, const char *prefix, __u64 pps)
{
	struct rl_rule_change c = { .have_pps = true, .pps = pps };
	char err[RL_ERR_LEN];
	struct rl_prefix p;

	if (rl_parse_prefix(prefix, &p, err, sizeof(err)) ||
	    rl_rule_set(&r->m, &r->s, &p, &c, err, sizeof(err))) {
		fprintf(stderr, "ratelimit-bench: quota set %s: %s\n", prefix, err);
		return -1;
	}
	return 0;
}

/* The xcpu program needs its source's slot, owned by it. */
static int make_xcpu_entry(struct baselines *b)
{
	struct rl_key key = { .addr = { [10] = 0xff, [11] = 0xff, [12] = 198,
					[13] = 18, [15] = 1 } };
	void *val = rl_percpu_alloc(sizeof(struct rl_source));
	__u32 slot = BENCH_XCPU_SLOT;
	int ret;

	if (!val)
		return -1;
	/* owned by the key on every CPU, as the program's values are */
	for (int cpu = 0; cpu < rl_ncpus(); cpu++)
		((struct rl_source *)RL_PERCPU_VAL(val, sizeof(struct rl_source),
						   cpu))->owner = key;
	ret = bpf_map_update_elem(bpf_map__fd(b->maps.xcpu_sources), &slot, val,
				  BPF_ANY);
	free(val);
	return ret;
}

static void add_case(struct bench_case *cs, int *n, const char *name,
		     const char *label, int fd, const char *src, int nvlan,
		     int expect, int base)
{
	struct bench_case *c = &cs[*n];
	int len;

	base_of[(*n)++] = base;
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->label = label;
	c->fd = fd;
	c->tail_map = -1;
	c->expect = expect;
	c->cal = 20000;
	len = tg_frame_udp(c->fr.data, sizeof(c->fr.data), src, 0, (unsigned int)nvlan);
	c->fr.len = len > 0 ? (size_t)len : 0;
}

/* A case of `src`'s TCP ACK to the host's port 80 through XDP program
 * `fd`, which passes it, against the minimal limiter under quota. */
static void add_ack_case(struct bench_case *cs, int *n, const char *name,
			 const char *label, int fd, const char *src)
{
	add_case(cs, n, name, label, fd, src, 0, XDP_PASS, MIN_UNDER);
	tcp_frame(&cs[*n - 1].fr, src, "198.18.255.1", 40000, 80, 0x10);
}

/* A case run through the churn driver `drv`, tail-calling `tail_fd` */
static void churn_case(struct bench_case *c, const struct baselines *drv, int tail_fd)
{
	c->tail_map = bpf_map__fd(drv->maps.churn_target);
	c->tail_fd = tail_fd;
}

/* xdp_tcp_churn's frame, written before every run: cases share the driver */
static void tcp_template(const struct bench_case *c)
{
	memcpy(bu->bss->tcp_frame, c->arg, BENCH_TCP_LEN);
}

/* A SYN cookie case: xdp_tcp_churn from `tmpl`, tail-calling `tail_fd` */
static void tcp_case(struct bench_case *c, const __u8 *tmpl, int tail_fd)
{
	memcpy(c->fr.data, tmpl, BENCH_TCP_LEN);
	c->fr.len = BENCH_TCP_LEN;
	c->before_run = tcp_template;
	c->arg = tmpl;
	churn_case(c, bu, tail_fd);
}

/* y = a + b k over the emulated loops of one round, least squares of the
 * relative error (weights 1/y^2): 1 read costs ~8 ns, 64 reads ~800 ns,
 * and a plain fit would ignore the small counts this machine has. */
static void fit(const double *k, const double *y, int n, double *a, double *b)
{
	double s = 0, sk = 0, sy = 0, skk = 0, sky = 0;

	for (int i = 0; i < n; i++) {
		double w = y[i] > 0 ? 1 / (y[i] * y[i]) : 0;

		s += w;
		sk += w * k[i];
		sy += w * y[i];
		skk += w * k[i] * k[i];
		sky += w * k[i] * y[i];
	}
	*b = (s * sky - sk * sy) / (s * skk - sk * sk);
	*a = (sy - *b * sk) / s;
}

/* Emulated machines of n CPUs: the program's loop of n iterations, this
 * CPU's skipped, n - 1 reads of other CPUs' values. */
static const int xcpu_ns[] = { 2, 3, 5, 9, 17, 33, 65 };
#define NKS ((int)(sizeof(xcpu_ns) / sizeof(xcpu_ns[0])))

/* The cross-CPU part: measured here, and its growth with CPUs, fitted
 * t(n) = a + b (n - 1) within each round (the spread over rounds), and
 * once to the medians over rounds of each case (the figure to quote: a
 * round that load from elsewhere disturbed moves a median little, but a
 * difference taken within that round a lot). */
static json_t *xcpu_json(struct bench_case *cs, int n, int rounds)
{
	int none = bench_case_find(cs, n, "xcpu_none");
	int prog = bench_case_find(cs, n, "xcpu_program");
	double *a = calloc((size_t)rounds, sizeof(double));
	double *b = calloc((size_t)rounds, sizeof(double));
	double *here = calloc((size_t)rounds, sizeof(double));
	double *pred = calloc((size_t)rounds, sizeof(double));
	double *x64 = calloc((size_t)rounds, sizeof(double));
	double *err = calloc((size_t)rounds, sizeof(double));
	double *ys[NKS] = { 0 };
	double k[NKS], y[NKS], ym[NKS], ma, mb, mhere, mnone;
	json_t *j = NULL, *points;
	int idx[NKS];

	if (!a || !b || !here || !pred || !x64 || !err || none < 0 || prog < 0)
		goto out;
	for (int i = 0; i < NKS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "xcpu_n%d", xcpu_ns[i]);
		idx[i] = bench_case_find(cs, n, name);
		ys[i] = calloc((size_t)rounds, sizeof(double));
		if (idx[i] < 0 || !ys[i])
			goto out;
		k[i] = xcpu_ns[i] - 1;
	}
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < NKS; i++) {
			/* the cross-CPU part of one refresh: loop and reads */
			y[i] = ys[i][r] = cs[idx[i]].ns[r] - cs[none].ns[r];
		}
		fit(k, y, NKS, &a[r], &b[r]);
		here[r] = cs[prog].ns[r] - cs[none].ns[r];
		pred[r] = a[r] + b[r] * (ncpus - 1);
		x64[r] = a[r] + b[r] * 63;
		err[r] = here[r] != 0 ? pred[r] / here[r] - 1 : 0;
	}
	points = json_array();
	mnone = bench_summarize(cs[none].ns, rounds).median;
	for (int i = 0; i < NKS; i++) {
		ym[i] = bench_summarize(cs[idx[i]].ns, rounds).median - mnone;
		json_array_append_new(points, json_pack("{s:i, s:f, s:o}", "ncpus", xcpu_ns[i],
			"median_ns", ym[i],
			"per_round_ns", bench_summary_json(bench_summarize(ys[i], rounds))));
	}
	fit(k, ym, NKS, &ma, &mb);
	mhere = bench_summarize(cs[prog].ns, rounds).median - mnone;
	j = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:{s:f, s:f, s:f, s:f, s:f}}",
		      "ncpus", ncpus,
		      "points", points,
		      "fixed_ns", bench_summary_json(bench_summarize(a, rounds)),
		      "per_cpu_ns", bench_summary_json(bench_summarize(b, rounds)),
		      "measured_here_ns", bench_summary_json(bench_summarize(here, rounds)),
		      "formula_here_ns", bench_summary_json(bench_summarize(pred, rounds)),
		      "formula_error", bench_summary_json(bench_summarize(err, rounds)),
		      "formula_64_ns", bench_summary_json(bench_summarize(x64, rounds)),
		      "fit_of_medians",
		      "fixed_ns", ma, "per_cpu_ns", mb,
		      "formula_here_ns", ma + mb * (ncpus - 1),
		      "measured_here_ns", mhere,
		      "formula_64_ns", ma + mb * 63);
out:
	for (int i = 0; i < NKS; i++)
		free(ys[i]);
	free(a);
	free(b);
	free(here);
	free(pred);
	free(x64);
	free(err);
	return j;
}

/* What events cost under a flood that reports on every packet: within
 * each round, the program with them against the program without, net of
 * the churn driver (its run to XDP_PASS), and the ns they add; and the
 * share of the flood's packets whose event was counted lost (nearly all:
 * it shows the flood did report on every packet, and the budget held). */
static json_t *events_json(struct bench_case *cs, int n, int rounds,
			   struct rl_inst *on_inst)
{
	int on = bench_case_find(cs, n, "events_on");
	int off = bench_case_find(cs, n, "events_off");
	int drv = bench_case_find(cs, n, "churn_driver");
	double ratio[rounds], extra[rounds];
	struct rl_counters t;

	if (on < 0 || off < 0 || drv < 0 || rl_counters_sum(&on_inst->m, &t))
		return json_null();
	for (int r = 0; r < rounds; r++) {
		ratio[r] = (cs[on].ns[r] - cs[drv].ns[r]) / (cs[off].ns[r] - cs[drv].ns[r]);
		extra[r] = cs[on].ns[r] - cs[off].ns[r];
	}
	return json_pack("{s:o, s:o, s:f, s:I, s:I, s:I}",
			 "on_vs_off", bench_summary_json(bench_summarize(ratio, rounds)),
			 "extra_ns", bench_summary_json(bench_summarize(extra, rounds)),
			 "lost_per_packet", (double)t.events_lost /
				 (double)(t.passed_pkts + t.dropped_pkts),
			 "packets", (json_int_t)(t.passed_pkts + t.dropped_pkts),
			 "new_sources", (json_int_t)t.new_sources,
			 "untracked_packets", (json_int_t)t.untracked_pkts);
}

int bench_cost(int argc, char **argv)
{
	static const struct option opts[] = {
		BENCH_ROUNDS_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct bench_rounds ro = { .rounds = 11, .ms = 20, .cpu = 0 };
	int rounds, cpu, n = 0, opt, ret = 1;
	double ms;
	struct bench_case cs[COST_CASES];
	struct rl_inst rl = { 0 }, rc = { 0 }, ra = { 0 }, rn = { 0 };
	struct rl_inst rvn = { 0 }, rvb = { 0 };	/* verification read */
	struct rl_inst rvp = { 0 };			/* and not: a plain rule */
	struct rl_inst rsc = { 0 };			/* a SYN rule: scopes in use */
	struct rl_inst rev = { 0 }, roff = { 0 };	/* events on, off */
	struct rl_inst rk = { 0 };			/* SYN cookies */
	struct rl_inst rvh = { 0 }, rkh = { 0 };	/* kernel cookies out */
	static __u8 syn6[BENCH_TCP_LEN], ack6[BENCH_TCP_LEN];
	struct baselines *xprog = NULL, *xk[NKS] = { 0 };
	struct xdp_slot *stub = NULL;			/* under libxdp's dispatcher */
	struct bpf_object *disp = NULL;			/* libxdp's dispatcher */
	int disp_fd = -1;
	json_t *cases, *doc;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1)
		if (!bench_rounds_opt(&ro, opt, optarg))
			return bench_usage("cost", "");
	rounds = ro.rounds, ms = ro.ms, cpu = ro.cpu;
	if (rounds < 1 || ms <= 0)
		return bench_usage("cost", "");
	libbpf_set_print(quiet);
	ncpus = rl_ncpus();
	if (bench_pin_cpu(cpu)) {
		fprintf(stderr, "ratelimit-bench: cannot pin to CPU %d\n", cpu);
		return 1;
	}
	/* our own network namespace: the veths holding the programs go with it */
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "ratelimit-bench: unshare: %s\n", strerror(errno));
		return 1;
	}
	bu = load_baselines(0, 0);
	xprog = load_baselines(ncpus, 1);
	for (int i = 0; i < NKS; i++)
		if (!(xk[i] = load_baselines(xcpu_ns[i], 1)) || make_xcpu_entry(xk[i]))
			goto out;
	if (!bu || !xprog || load_rl(&rl, RL_DEFAULT_MAX_SOURCES) ||
	    load_rl(&rc, CHURN_MAX) || make_xcpu_entry(bu) || make_xcpu_entry(xprog)) {
		fprintf(stderr, "ratelimit-bench: loading the programs failed\n");
		goto out;
	}
	/* the minimal limiter on the program's own clock, sized as the
	 * program's LRU hash (history) for its --max-sources: the per-packet
	 * comparison reads the same clock */
	mu = bench_load_minimal(rl_sources_map_size(RL_DEFAULT_MAX_SOURCES, ncpus), ~0ULL >> 1, RL_DEFAULT_WINDOW_NS,
				rl.s.flags & RL_F_COARSE_CLOCK);
	mo = bench_load_minimal(rl_sources_map_size(RL_DEFAULT_MAX_SOURCES, ncpus), 1, RL_DEFAULT_WINDOW_NS,
				rl.s.flags & RL_F_COARSE_CLOCK);
	if (!mu || !mo)
		goto out;
	/* the single-source cases: every rule they need, in one program */
	if (quota(&rl, "default", HUGE_PPS) || quota(&rl, "198.18.200.0/24", 1) ||
	    quota(&rl, "198.18.128.0/17", HUGE_PPS) ||
	    quota(&rl, "198.18.7.7", RL_UNLIMITED) ||
	    quota(&rc, "default", 1000))
		goto out;
	/* spoofed floods refused by an aggregate (today) and by a
	 * newcomer budget, both driven by churn: every packet a new source */
	if (load_rl(&ra, RL_DEFAULT_MAX_SOURCES) || load_rl(&rn, RL_DEFAULT_MAX_SOURCES) ||
	    spoof_rule(&ra, false) || spoof_rule(&rn, true))
		goto out;
	/* a verified source under a rule with a newcomer budget, and with a
	 * ban (its connection answered): the established path when the rule
	 * reads verification; and the egress hook's cost per answer */
	if (load_rl(&rvn, RL_DEFAULT_MAX_SOURCES) || load_rl(&rvb, RL_DEFAULT_MAX_SOURCES) ||
	    verified_rule(&rvn, false) || verified_rule(&rvb, true) ||
	    answer(&rvn) || answer(&rvb))
		goto out;
	/* the same under a rule that reads no verification, whose TCP
	 * segments read it all the same (for the source table's eviction) */
	if (load_rl(&rvp, RL_DEFAULT_MAX_SOURCES) || quota(&rvp, "default", HUGE_PPS) ||
	    answer(&rvp))
		goto out;
	/* rule scope: a SYN under a SYN rule beside the unscoped default,
	 * and a packet in no scope while the scope is in use */
	if (load_rl(&rsc, RL_DEFAULT_MAX_SOURCES) || syn_rule(&rsc))
		goto out;
	/* SYN cookies: a spoofed SYN flood answered with them, and its ACKs
	 * (rk); refused by a newcomer budget today (rn, above) */
	if (load_rl(&rk, RL_DEFAULT_MAX_SOURCES) || cookie_rule(&rk))
		goto out;
	/* the same two while the kernel may have SYN cookies out (the
	 * egress hook saw a SYN-ACK from no socket): a forged ACK with no
	 * SYN-ACK on record is checked for one (bpf/cookie_check.bpf.h) */
	if (load_rl(&rvh, RL_DEFAULT_MAX_SOURCES) || verified_rule(&rvh, true) ||
	    answer(&rvh) || load_rl(&rkh, RL_DEFAULT_MAX_SOURCES) || cookie_rule(&rkh))
		goto out;
	rvh.skel->bss->kernel_cookies_until = ~0ULL;
	rkh.skel->bss->kernel_cookies_until = ~0ULL;
	tcp6_frame(syn6, true);
	tcp6_frame(ack6, false);
	/* events: the same flood with and without them (quota set default
	 * --pps 1: one pass a window per source, then drops) */
	bev = load_baselines_churn(0, 0, EVENT_SOURCES, 1);
	if (!bev || load_rl_events(&rev, false) || load_rl_events(&roff, true) ||
	    quota(&rev, "default", 1) || quota(&roff, "default", 1))
		goto out;

	int pass_fd = bpf_program__fd(bu->progs.xdp_pass);
	int rl_fd = bpf_program__fd(rl.skel->progs.xdp_ratelimit);

	/* the stub libxdp's dispatcher runs (bpf/xdp_slot.bpf.c), its slot
	 * holding the program of the single-source cases: what it adds on
	 * the path of every frame is one tail call */
	stub = load_stub(rl_fd);
	disp = bench_load_dispatcher(&disp_fd);
	if (!stub || !disp)
		goto out;
	int churn_fd = bpf_program__fd(bu->progs.xdp_churn);
	int xcpu_fd = bpf_program__fd(bu->progs.xdp_xcpu);

	add_case(cs, &n, "xdp_pass", "bare XDP_PASS", pass_fd, "198.18.0.1", 0,
		 XDP_PASS, -1);
	add_case(cs, &n, "xdp_drop", "bare XDP_DROP",
		 bpf_program__fd(bu->progs.xdp_drop), "198.18.0.1", 0, XDP_DROP, -1);
	add_case(cs, &n, "clock", "bpf_ktime_get_ns() alone",
		 bpf_program__fd(bu->progs.xdp_clock), "198.18.0.1", 0, XDP_PASS, -1);
	add_case(cs, &n, "clock_coarse", "bpf_ktime_get_coarse_ns() alone",
		 bpf_program__fd(bu->progs.xdp_clock_coarse), "198.18.0.1", 0,
		 XDP_PASS, -1);
	add_case(cs, &n, "minimal_under", "minimal limiter, under quota (the program's clock)",
		 bpf_program__fd(mu->progs.xdp_minimal), "198.18.0.1", 0, XDP_PASS, -1);
	add_case(cs, &n, "minimal_over", "minimal limiter, over quota (the program's clock)",
		 bpf_program__fd(mo->progs.xdp_minimal), "198.18.0.1", 0, XDP_DROP, -1);
	add_case(cs, &n, "under", "1 source under quota", rl_fd, "198.18.0.1", 0,
		 XDP_PASS, MIN_UNDER);
	add_case(cs, &n, "over", "1 source over quota (drops)", rl_fd,
		 "198.18.200.1", 0, XDP_DROP, MIN_OVER);
	add_case(cs, &n, "slot", "1 source under quota, through the dispatcher's stub",
		 bpf_program__fd(stub->progs.xdp_ratelimit), "198.18.0.1", 0,
		 XDP_PASS, MIN_UNDER);
	add_case(cs, &n, "dispatcher", "libxdp's dispatcher, its entry passing",
		 disp_fd, "198.18.0.1", 0, XDP_PASS, -1);
	add_case(cs, &n, "ipv6", "IPv6 source under quota", rl_fd, "2001:db8::1",
		 0, XDP_PASS, MIN_UNDER);
	add_case(cs, &n, "vlan2", "two VLAN tags, under quota", rl_fd,
		 "198.18.0.2", 2, XDP_PASS, MIN_UNDER);
	add_case(cs, &n, "cidr", "source matched by a /17 rule", rl_fd,
		 "198.18.130.5", 0, XDP_PASS, MIN_UNDER);
	add_case(cs, &n, "unlimited", "allow-listed source", rl_fd, "198.18.7.7",
		 0, XDP_PASS, MIN_UNDER);
	add_case(cs, &n, "verified_newcomer_rule",
		 "1 verified source, rule with a newcomer budget",
		 bpf_program__fd(rvn.skel->progs.xdp_ratelimit), "198.18.0.1", 0,
		 XDP_PASS, MIN_UNDER);
	add_ack_case(cs, &n, "verified_ban_rule",
		     "1 verified source on an answered connection, rule with --ban",
		     bpf_program__fd(rvb.skel->progs.xdp_ratelimit), "198.18.0.1");
	add_ack_case(cs, &n, "proof_miss",
		     "an unverified source's ACK, no SYN-ACK recorded (a forged ACK)",
		     bpf_program__fd(rvb.skel->progs.xdp_ratelimit), "198.18.0.2");
	add_ack_case(cs, &n, "verified_plain_rule",
		     "1 verified source's TCP ACK, rule without --ban or a newcomer budget",
		     bpf_program__fd(rvp.skel->progs.xdp_ratelimit), "198.18.0.1");
	add_ack_case(cs, &n, "proof_miss_plain",
		     "an unverified source's ACK under that rule (a forged ACK)",
		     bpf_program__fd(rvp.skel->progs.xdp_ratelimit), "198.18.0.2");
	add_ack_case(cs, &n, "proof_miss_hint",
		     "the same forged ACK while the kernel may have SYN cookies out",
		     bpf_program__fd(rvh.skel->progs.xdp_ratelimit), "198.18.0.2");
	/* tc programs: no XDP dispatcher holds them */
	add_case(cs, &n, "egress_reply",
		 "egress hook: one segment (TCP ACK) of a socket not established",
		 bpf_program__fd(rvb.skel->progs.rl_egress), "198.18.0.1", 0,
		 -1 /* TC_ACT_UNSPEC */, -1);
	tcp_frame(&cs[n - 1].fr, "198.18.255.1", "198.18.0.1", 80, 40000, 0x10);
	cs[n - 1].no_hold = true;
	add_case(cs, &n, "egress_synack", "egress hook: one SYN-ACK of the host, recorded",
		 bpf_program__fd(rvb.skel->progs.rl_egress), "198.18.0.3", 0,
		 -1 /* TC_ACT_UNSPEC */, -1);
	tcp_frame(&cs[n - 1].fr, "198.18.255.1", "198.18.0.3", 80, 40000, 0x12);
	cs[n - 1].no_hold = true;
	add_case(cs, &n, "scope_syn", "a SYN under a SYN rule and an unscoped one",
		 bpf_program__fd(rsc.skel->progs.xdp_ratelimit), "198.18.0.1", 0,
		 XDP_PASS, MIN_UNDER);
	tcp_frame(&cs[n - 1].fr, "198.18.0.1", "198.18.255.1", 40000, 80, 0x02);
	add_case(cs, &n, "scope_unscoped", "a packet in no scope, a SYN rule in use",
		 bpf_program__fd(rsc.skel->progs.xdp_ratelimit), "198.18.0.2", 0,
		 XDP_PASS, MIN_UNDER);
	add_case(cs, &n, "churn_driver", "churn driver -> XDP_PASS", churn_fd,
		 "2001:db8::1", 0, XDP_PASS, -1);
	churn_case(&cs[n - 1], bu, pass_fd);
	add_case(cs, &n, "churn", "churn 1M sources, --max-sources 64Ki",
		 churn_fd, "2001:db8::1", 0, XDP_PASS, -1);
	churn_case(&cs[n - 1], bu, bpf_program__fd(rc.skel->progs.xdp_ratelimit));
	/* its calibration also fills the table and starts cycling (more
	 * runs than sources) */
	cs[n - 1].cal = CHURN_SOURCES + CHURN_MAX * 2;
	add_case(cs, &n, "spoof_aggregate", "spoofed flood refused by an aggregate budget",
		 churn_fd, "2001:db8::1", 0, -1, -1);
	churn_case(&cs[n - 1], bu, bpf_program__fd(ra.skel->progs.xdp_ratelimit));
	add_case(cs, &n, "spoof_newcomer", "spoofed flood refused by a newcomer budget",
		 churn_fd, "2001:db8::1", 0, -1, -1);
	churn_case(&cs[n - 1], bu, bpf_program__fd(rn.skel->progs.xdp_ratelimit));
	add_case(cs, &n, "syn_driver", "SYN churn driver -> XDP_PASS",
		 bpf_program__fd(bu->progs.xdp_tcp_churn), "2001:db8::1", 0, XDP_PASS, -1);
	tcp_case(&cs[n - 1], syn6, pass_fd);
	add_case(cs, &n, "syn_refused", "spoofed SYN flood refused by a newcomer budget",
		 bpf_program__fd(bu->progs.xdp_tcp_churn), "2001:db8::1", 0, XDP_DROP, -1);
	tcp_case(&cs[n - 1], syn6, bpf_program__fd(rn.skel->progs.xdp_ratelimit));
	/* any verdict: the SYN-ACK budget (RL_COOKIES_PER_PERIOD) answers
	 * the first SYNs of a run and refuses the rest, as a flood past it
	 * would be; tests/prog checks the verdicts */
	add_case(cs, &n, "syn_cookie", "spoofed SYN flood answered with SYN cookies (XDP_TX), then past the SYN-ACK budget",
		 bpf_program__fd(bu->progs.xdp_tcp_churn), "2001:db8::1", 0, -1, -1);
	tcp_case(&cs[n - 1], syn6, bpf_program__fd(rk.skel->progs.xdp_ratelimit));
	add_case(cs, &n, "cookie_ack", "spoofed ACKs under a cookie rule: checked, refused",
		 bpf_program__fd(bu->progs.xdp_tcp_churn), "2001:db8::1", 0, XDP_DROP, -1);
	tcp_case(&cs[n - 1], ack6, bpf_program__fd(rk.skel->progs.xdp_ratelimit));
	add_case(cs, &n, "cookie_ack_hint",
		 "the same ACKs while the kernel may have SYN cookies out",
		 bpf_program__fd(bu->progs.xdp_tcp_churn), "2001:db8::1", 0, XDP_DROP, -1);
	tcp_case(&cs[n - 1], ack6, bpf_program__fd(rkh.skel->progs.xdp_ratelimit));
	add_case(cs, &n, "events_on", "events: a flood reporting on every packet",
		 bpf_program__fd(bev->progs.xdp_churn), "2001:db8::1", 0, -1, -1);
	churn_case(&cs[n - 1], bev, bpf_program__fd(rev.skel->progs.xdp_ratelimit));
	cs[n - 1].cal = 4 * EVENT_SOURCES;
	add_case(cs, &n, "events_off", "the same flood, program without events",
		 bpf_program__fd(bev->progs.xdp_churn), "2001:db8::1", 0, -1, -1);
	churn_case(&cs[n - 1], bev, bpf_program__fd(roff.skel->progs.xdp_ratelimit));
	cs[n - 1].cal = 4 * EVENT_SOURCES;
	add_case(cs, &n, "xcpu_none", "refresh without the loop", xcpu_fd,
		 "198.18.0.1", 0, XDP_PASS, -1);
	add_case(cs, &n, "xcpu_program", "refresh, the program's loop",
		 bpf_program__fd(xprog->progs.xdp_xcpu), "198.18.0.1", 0,
		 XDP_PASS, -1);
	for (int i = 0; i < NKS; i++) {
		static char names[NKS][16], labels[NKS][48];

		snprintf(names[i], sizeof(names[i]), "xcpu_n%d", xcpu_ns[i]);
		snprintf(labels[i], sizeof(labels[i]), "refresh, %d CPUs (%d reads)",
			 xcpu_ns[i], xcpu_ns[i] - 1);
		add_case(cs, &n, names[i], labels[i],
			 bpf_program__fd(xk[i]->progs.xdp_xcpu), "198.18.0.1", 0,
			 -1, -1);
	}

	if (bench_cases_run(cs, n, &ro))
		goto out;

	cases = json_array();
	for (int i = 0; i < n; i++) {
		struct bench_case *c = &cs[i];
		json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:i, s:o, s:o}",
				      "name", c->name, "label", c->label,
				      "repeat", (json_int_t)c->repeat,
				      "verdict", c->expect == XDP_PASS ? "pass" :
					 c->expect == XDP_DROP ? "drop" : "any",
				      "wrong_verdicts", (int)c->bad_verdicts,
				      "ns", bench_summary_json(bench_summarize(c->ns, rounds)),
				      "ratio_pass", bench_ratio_json(cs, i, 0, rounds));

		if (base_of[i] >= 0)
			json_object_set_new(o, "ratio_minimal",
					    bench_ratio_json(cs, i, base_of[i], rounds));
		json_array_append_new(cases, o);
	}
	{
		/* churn net of its driver: churn - driver + bare pass */
		int ch = bench_case_find(cs, n, "churn");
		int dr = bench_case_find(cs, n, "churn_driver");
		double net[rounds], ratio[rounds];

		for (int r = 0; r < rounds; r++) {
			net[r] = cs[ch].ns[r] - cs[dr].ns[r] + cs[0].ns[r];
			ratio[r] = net[r] / cs[0].ns[r];
		}
		json_array_append_new(cases, json_pack(
			"{s:s, s:s, s:s, s:i, s:o, s:o}", "name", "churn_net",
			"label", "churn, net of the driver", "verdict", "pass",
			"wrong_verdicts", (int)cs[ch].bad_verdicts,
			"ns", bench_summary_json(bench_summarize(net, rounds)),
			"ratio_pass", bench_summary_json(bench_summarize(ratio, rounds))));
	}
	doc = json_pack("{s:i, s:i, s:i, s:f, s:o, s:o, s:o, s:o}", "cpu", cpu, "ncpus", ncpus,
			"rounds", rounds, "ms_per_sample", ms, "cases", cases,
			"cross_cpu", xcpu_json(cs, n, rounds),
			"events", events_json(cs, n, rounds, &rev),
			/* within each round: what refusing costs, newcomer
			 * budget over aggregate (the churn driver in both) */
			"spoof_newcomer_vs_aggregate",
			bench_ratio_json(cs, bench_case_find(cs, n, "spoof_newcomer"),
					 bench_case_find(cs, n, "spoof_aggregate"), rounds));
	/* as a rate, the share of bare XDP_DROP's: one source under quota,
	 * and a spoofed flood refused by a newcomer budget net of the churn
	 * driver (its run to XDP_PASS taken out, bare XDP_DROP put in) */
	{
		int dr = bench_case_find(cs, n, "xdp_drop");
		int un = bench_case_find(cs, n, "under");
		int sp = bench_case_find(cs, n, "spoof_newcomer");
		int cd = bench_case_find(cs, n, "churn_driver");
		double one[rounds], spoof[rounds];

		for (int r = 0; r < rounds; r++) {
			one[r] = cs[dr].ns[r] / cs[un].ns[r];
			spoof[r] = cs[dr].ns[r] /
				   (cs[sp].ns[r] - cs[cd].ns[r] + cs[dr].ns[r]);
		}
		json_object_set_new(doc, "under_rate_vs_drop",
				    bench_summary_json(bench_summarize(one, rounds)));
		json_object_set_new(doc, "spoof_newcomer_rate_vs_drop",
				    bench_summary_json(bench_summarize(spoof, rounds)));
	}
	/* a SYN answered with a cookie against one refused today, both net
	 * of the driver's copy of the frame */
	json_object_set_new(doc, "syn_cookie_vs_refused",
			    bench_ratio_json(cs, bench_case_find(cs, n, "syn_cookie"),
					     bench_case_find(cs, n, "syn_refused"), rounds));
	/* ratios within each round to one source under one rule:
	 * - a verified source's packet under a rule that reads verification
	 *   (with a newcomer budget, with --ban);
	 * - rule scope: a SYN judged by a SYN rule (target 1.5), a packet in
	 *   no scope while scopes are in use;
	 * - the stub's tail call: under libxdp's dispatcher against a direct
	 *   attach, without the dispatcher's own part (below) */
	static const char *const vs_under[][2] = {
		{ "verified_newcomer_vs_under", "verified_newcomer_rule" },
		{ "verified_ban_vs_under", "verified_ban_rule" },
		{ "scope_syn_vs_under", "scope_syn" },
		{ "scope_unscoped_vs_under", "scope_unscoped" },
		{ "slot_vs_under", "slot" },
	};
	for (size_t i = 0; i < sizeof(vs_under) / sizeof(vs_under[0]); i++)
		json_object_set_new(doc, vs_under[i][0],
				    bench_ratio_json(cs, bench_case_find(cs, n, vs_under[i][1]),
						     bench_case_find(cs, n, "under"), rounds));
	/* the whole path under libxdp's dispatcher, from its parts measured
	 * here: the program through the stub, plus what the dispatcher adds
	 * to a bare XDP_PASS (its entry's body standing for the jump the
	 * freplace link patches in), against the program alone */
	{
		int sl = bench_case_find(cs, n, "slot");
		int di = bench_case_find(cs, n, "dispatcher");
		int un = bench_case_find(cs, n, "under");
		double r[rounds];

		for (int i = 0; i < rounds; i++)
			r[i] = (cs[sl].ns[i] + cs[di].ns[i] - cs[0].ns[i]) / cs[un].ns[i];
		json_object_set_new(doc, "dispatcher_path_vs_under",
				    bench_summary_json(bench_summarize(r, rounds)));
	}
	ret = bench_print_json(doc) ? 1 : 0;
out:
	xdp_slot__destroy(stub);
	bpf_object__close(disp);
	bench_cases_free(cs, n);
	if (rl.skel)
		ratelimit__destroy(rl.skel);
	if (rc.skel)
		ratelimit__destroy(rc.skel);
	if (ra.skel)
		ratelimit__destroy(ra.skel);
	if (rn.skel)
		ratelimit__destroy(rn.skel);
	if (rk.skel)
		ratelimit__destroy(rk.skel);
	if (rkh.skel)
		ratelimit__destroy(rkh.skel);
	if (rvh.skel)
		ratelimit__destroy(rvh.skel);
	if (rvn.skel)
		ratelimit__destroy(rvn.skel);
	if (rvb.skel)
		ratelimit__destroy(rvb.skel);
	if (rvp.skel)
		ratelimit__destroy(rvp.skel);
	if (rsc.skel)
		ratelimit__destroy(rsc.skel);
	if (rev.skel)
		ratelimit__destroy(rev.skel);
	if (roff.skel)
		ratelimit__destroy(roff.skel);
	baselines__destroy(bev);
	baselines__destroy(bu);
	minimal__destroy(mu);
	minimal__destroy(mo);
	baselines__destroy(xprog);
	for (int i = 0; i < NKS; i++)
		baselines__destroy(xk[i]);
	return ret;
}
