// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "ratelimit_test.skel.h"
#include "lib/loader.h"
#include "lib/values.h"
#include "../harness.h"
#include "gen/frames.h"
#include "fixture.h"
#include "lib/xdp_multi.h"
#include "lib/ban_map.h"
#include "lib/source_index_map.h"
#include "verified.h"

const char *harness_suite = "prog";

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || rl_run_config_note(level, fmt))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

bool fixture_open(struct fixture *f, const struct rl_attach_req *req)
{
	struct rl_attach_req def;
	char err[RL_ERR_LEN];

	memset(f, 0, sizeof(*f));
	f->hold.link_fd = -1;
	rl_maps_init(&f->m);
	if (!harness_require_root())
		return false;
	libbpf_set_print(quiet_print);
	if (!req) {
		rl_attach_req_defaults(&def);
		req = &def;
	}
	if (!CHECK(rl_settings_build(&f->s, req, rl_cpu_ids(), err, sizeof(err)) == 0,
		   "settings: %s", err))
		return false;
	f->skel = ratelimit_test__open();
	if (!CHECK(f->skel, "open test skeleton: %s", strerror(errno)))
		return false;
	if (!CHECK_EQ(rl_loader_prepare(f->skel->obj, &f->skel->rodata->settings,
					&f->s), 0, "loader prepare"))
		return false;
	if (getenv("RL_VERIFIER_STATS")) {
		/* the verifier's work on the program as loaded here (its
		 * settings fixed): how near its 1,000,000 instructions */
		static char vlog[1 << 24];

		bpf_program__set_log_buf(f->skel->progs.xdp_ratelimit, vlog, sizeof(vlog));
		bpf_program__set_log_level(f->skel->progs.xdp_ratelimit, getenv("RL_VERIFIER_LOG") ? 1 : 4);
	}
	if (!CHECK_EQ(ratelimit_test__load(f->skel), 0, "load test program")) {
		size_t n;
		const char *l = getenv("RL_VERIFIER_STATS") ?
			bpf_program__log_buf(f->skel->progs.xdp_ratelimit, &n) : NULL;

		/* the verifier's last words: why it refused */
		if (l && strlen(l) > 4096)
			l += strlen(l) - 4096;
		if (l)
			fprintf(stderr, "  verifier: ...%s\n", l);
		return false;
	}
	if (getenv("RL_VERIFIER_STATS")) {
		size_t n;
		const char *l = strstr(bpf_program__log_buf(f->skel->progs.xdp_ratelimit,
							    &n), "verification time");

		fprintf(stderr, "  verifier: %s", l ? l : "(no statistics)\n");
	}
	if (!CHECK_EQ(rl_maps_from_obj(f->skel->obj, &f->m), 0, "maps"))
		return false;
	if (!CHECK(rl_loader_init(&f->m, &f->s, RL_UNLIMITED, RL_UNLIMITED, err,
				  sizeof(err)) == 0, "init: %s", err))
		return false;
	f->prog_fd = bpf_program__fd(f->skel->progs.xdp_ratelimit);
	return true;
}

void fixture_hold(struct fixture *f)
{
	int err = xdp_hold(&f->hold, f->prog_fd);

	if (err)
		fprintf(stderr, "  (cannot hold the program in the XDP dispatcher: %s;"
			" test runs will be slow)\n", strerror(-err));
}

void fixture_close(struct fixture *f)
{
	xdp_hold_release(&f->hold);
	/* the fds belong to the skeleton */
	ratelimit_test__destroy(f->skel);
	f->skel = NULL;
}

static bool pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return CHECK(sched_setaffinity(0, sizeof(set), &set) == 0,
		     "pin to CPU %d: %s", cpu, strerror(errno));
}

/* Run program `prog_fd` of the fixture on one frame on `cpu` at `now`:
 * its return code, or -1 and a failed check. */
static int run_prog_out(struct fixture *f, int prog_fd, const void *frame,
			size_t len, int cpu, __u64 now, void *out, size_t *out_len)
{
	struct rl_config cfg;
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = frame,
		.data_size_in = len,
		.data_out = out,
		.data_size_out = out ? (__u32)*out_len : 0,
		.repeat = 1,
	);

	if (!CHECK_EQ(rl_config_read(&f->m, &cfg), 0, "read config"))
		return -1;
	cfg.test_now_ns = now;
	if (!CHECK_EQ(rl_config_write(&f->m, &cfg), 0, "write config"))
		return -1;
	if (!pin_cpu(cpu))
		return -1;
	if (!CHECK(bpf_prog_test_run_opts(prog_fd, &opts) == 0,
		   "BPF_PROG_TEST_RUN: %s", strerror(errno)))
		return -1;
	if (out_len)
		*out_len = opts.data_size_out;
	return (int)opts.retval;
}

static int run_prog(struct fixture *f, int prog_fd, const void *frame, size_t len,
		    int cpu, __u64 now)
{
	return run_prog_out(f, prog_fd, frame, len, cpu, now, NULL, NULL);
}

int fixture_run_frame(struct fixture *f, struct frame *fr, int cpu, __u64 now)
{
	struct frame in = *fr;
	size_t len = sizeof(fr->data);
	int ret = run_prog_out(f, f->prog_fd, in.data, in.len, cpu, now, fr->data, &len);

	fr->len = len;
	return ret;
}

int fixture_run(struct fixture *f, const void *frame, size_t len, int cpu,
		__u64 now)
{
	return run_prog(f, f->prog_fd, frame, len, cpu, now);
}

int fixture_egress(struct fixture *f, const struct frame *fr, int cpu, __u64 now)
{
	return run_prog(f, bpf_program__fd(f->skel->progs.rl_egress), fr->data,
			fr->len, cpu, now);
}

void frame_tcp_numbers(struct frame *fr, __u32 seq, __u32 ack)
{
	__u8 *l4 = fr->data + ETH_HLEN + (fr->data[12] == 0x86 ? 40 : 20);

	tg_put16(l4 + 4, (__u16)(seq >> 16));
	tg_put16(l4 + 6, (__u16)seq);
	tg_put16(l4 + 8, (__u16)(ack >> 16));
	tg_put16(l4 + 10, (__u16)ack);
}

bool fixture_synack(struct fixture *f, const char *peer, int cpu, __u64 now)
{
	struct frame fr;

	frame_tcp(&fr, HOST_ADDR(peer), peer, HOST_PORT, PEER_PORT, TCP_SYN | TCP_ACK);
	frame_tcp_numbers(&fr, HOST_ISN, PEER_ISN + 1);
	return CHECK(fixture_egress(f, &fr, cpu, now) == TC_ACT_UNSPEC,
		     "egress run of a SYN-ACK to %s returns TC_ACT_UNSPEC", peer);
}

int fixture_handshake_ack(struct fixture *f, const char *peer, __u32 ack, int cpu,
			  __u64 now)
{
	struct frame fr;

	frame_tcp(&fr, peer, HOST_ADDR(peer), PEER_PORT, HOST_PORT, TCP_ACK);
	frame_tcp_numbers(&fr, PEER_ISN + 1, ack);
	return fixture_run(f, fr.data, fr.len, cpu, now);
}

bool fixture_answer(struct fixture *f, const char *peer, int cpu, __u64 now)
{
	/* a window and a bucket before: out of the window at `now` */
	__u64 then = now - f->s.window_ns - f->s.bucket_ns;
	char err[RL_ERR_LEN];
	struct rl_verified v;
	struct rl_key key;

	if (!CHECK(rl_ban_key(peer, f->s.v6_prefix, &key, err, sizeof(err)) == 0,
		   "key of %s: %s", peer, err))
		return false;
	if (!bpf_map_lookup_elem(f->m.verified, &key, &v) &&
	    rl_verified_holds(v.answered_ns, now, f->s.verified_ttl_ns))
		return true;	/* proved already: its connection goes on */
	return fixture_synack(f, peer, cpu, then) &&
	       CHECK(fixture_handshake_ack(f, peer, HOST_ISN + 1, cpu, then) >= 0,
		     "XDP run of %s's ACK", peer);
}

int fixture_send(struct fixture *f, const struct frame *fr, int n, int cpu,
		 __u64 now)
{
	int passed = 0;

	for (int i = 0; i < n; i++) {
		int v = fixture_run(f, fr->data, fr->len, cpu, now);

		if (v == XDP_PASS)
			passed++;
		else if (!CHECK_EQ(v, XDP_DROP, "verdict is pass or drop"))
			return -1;
	}
	return passed;
}

int fixture_run_counted(struct fixture *f, const void *frame, size_t len,
			int cpu, __u64 now, struct rl_counters *moved)
{
	struct rl_counters before = fixture_totals(f), after;
	__u64 *b = (__u64 *)&before, *a = (__u64 *)&after, *m = (__u64 *)moved;
	int v = fixture_run(f, frame, len, cpu, now);

	after = fixture_totals(f);
	for (size_t i = 0; i < sizeof(*moved) / sizeof(__u64); i++)
		m[i] = a[i] - b[i];
	return v;
}

static cpu_set_t start_cpus;

__attribute__((constructor)) static void save_start_cpus(void)
{
	if (sched_getaffinity(0, sizeof(start_cpus), &start_cpus))
		CPU_SET(0, &start_cpus);
}

int fixture_cpus(int *cpus, int max)
{
	int n = 0;

	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &start_cpus))
			cpus[n++] = c;
	return n;
}

bool fixture_rule_scoped(struct fixture *f, const char *prefix,
			 const struct rl_scope *scope,
			 const struct rl_rule_change *c)
{
	char err[RL_ERR_LEN];
	struct rl_prefix p;

	if (!CHECK(rl_parse_prefix(prefix, &p, err, sizeof(err)) == 0,
		   "prefix %s: %s", prefix, err))
		return false;
	if (!c)
		return CHECK(rl_rule_del_scoped(&f->m, &p, scope, err, sizeof(err)) == 0,
			     "quota del %s: %s", prefix, err);
	return CHECK(rl_rule_set_scoped(&f->m, &f->s, &p, scope, c, err, sizeof(err)) == 0,
		     "quota set %s: %s", prefix, err);
}

bool fixture_rule(struct fixture *f, const char *prefix,
		  const struct rl_rule_change *c)
{
	return fixture_rule_scoped(f, prefix, NULL, c);
}

bool fixture_quota(struct fixture *f, const char *prefix, __u64 pps,
		   __u64 bps, __u64 agg_pps, __u64 agg_bps)
{
	struct rl_rule_change c = {
		.have_pps = pps != RL_UNLIMITED, .pps = pps,
		.have_bps = bps != RL_UNLIMITED, .bps = bps,
		.have_agg_pps = agg_pps != RL_UNLIMITED, .agg_pps = agg_pps,
		.have_agg_bps = agg_bps != RL_UNLIMITED, .agg_bps = agg_bps,
	};

	if (!rl_rule_change_any(&c))
		c.have_pps = true;	/* pps = unlimited: allow-list */
	return fixture_rule(f, prefix, &c);
}

bool fixture_pps(struct fixture *f, const char *prefix, __u64 pps)
{
	return fixture_quota(f, prefix, pps, RL_UNLIMITED, RL_UNLIMITED, RL_UNLIMITED);
}

struct rl_counters fixture_totals(struct fixture *f)
{
	struct rl_counters c;

	CHECK_EQ(rl_counters_sum(&f->m, &c), 0, "sum counters");
	return c;
}

void fixture_kernel_cookies(struct fixture *f, __u64 until)
{
	f->skel->bss->kernel_cookies_until = until;
}

bool fixture_refusing(struct fixture *f, __u64 now)
{
	return now < f->skel->bss->refusing_until;
}

__u64 fixture_refused(struct fixture *f, const char *addr)
{
	char err[RL_ERR_LEN];
	struct rl_refused r;
	struct rl_key key;

	if (!CHECK(!rl_ban_key(addr, RL_DEFAULT_V6_PREFIX, &key, err, sizeof(err)),
		   "key of %s: %s", addr, err) ||
	    bpf_map_lookup_elem(f->m.refused, &key, &r))
		return 0;
	return r.dropped_pkts;
}

bool fixture_source(struct fixture *f, const char *addr, __u64 now,
		    struct rl_source_sum *out)
{
	struct rl_key key = { .addr = { [10] = 0xff, [11] = 0xff } };

	if (strchr(addr, ':')) {
		if (inet_pton(AF_INET6, addr, key.addr) != 1)
			return CHECK(false, "bad address %s", addr);
	} else if (inet_pton(AF_INET, addr, &key.addr[12]) != 1) {
		return CHECK(false, "bad address %s", addr);
	}
	return CHECK(rl_source_read(&f->m, &f->s, &key, now, out) == 0,
		     "source %s is not tracked", addr);
}

bool fixture_index(struct fixture *f, struct rl_index *x)
{
	return CHECK_EQ(rl_index_open(x, &f->m), 0, "the index of `sources`");
}

int fixture_source_vals(struct fixture *f, const struct rl_key *key, void *vals)
{
	struct rl_index x;

	return fixture_index(f, &x) ? rl_index_lookup(&x, key, vals) : -EIO;
}

int fixture_evict(struct fixture *f, const struct rl_key *key)
{
	struct rl_index x;

	return fixture_index(f, &x) ? rl_index_remove(&x, key) : -EIO;
}

int fixture_place(struct fixture *f, const struct rl_key *key, const void *vals,
		  bool verified)
{
	struct rl_config cfg;
	struct rl_index x;

	/* stamped at the test clock's time, as a packet would */
	if (!CHECK_EQ(rl_config_read(&f->m, &cfg), 0, "read config"))
		return -EIO;
	return fixture_index(f, &x) ? rl_index_place(&x, key, vals, verified,
						     cfg.test_now_ns) : -EIO;
}

int fixture_walk(struct fixture *f,
		 int (*each)(void *ctx, const struct rl_key *key, __u32 slot,
			     const void *vals),
		 void *ctx)
{
	struct rl_index x;

	return fixture_index(f, &x) ? rl_index_walk(&x, each, ctx) : -EIO;
}

static int count_one(void *ctx, const struct rl_key *key, __u32 slot,
		     const void *vals)
{
	(void)key;
	(void)slot;
	(void)vals;
	++*(long *)ctx;
	return 0;
}

long fixture_tracked(struct fixture *f)
{
	long n = 0;
	int err = fixture_walk(f, count_one, &n);

	return err ? err : n;
}

void frame_udp(struct frame *fr, const char *src, size_t len, int nvlan)
{
	bool v6 = strchr(src, ':') != NULL;
	/* shorter than its headers: the smallest frame, cut to len */
	bool cut = len < tg_headers_len((unsigned int)nvlan, v6);
	int n = tg_frame_udp(fr->data, sizeof(fr->data), src,
			     cut ? 0 : (unsigned int)len, (unsigned int)nvlan);

	CHECK(n > 0, "frame from %s of %zu bytes behind %d tags", src, len, nvlan);
	fr->len = n > 0 && !cut ? (size_t)n : len;
}

void frame_tcp(struct frame *fr, const char *src, const char *dst,
	       __u16 sport, __u16 dport, __u8 flags)
{
	bool v6 = strchr(src, ':') != NULL;
	__u8 *p = fr->data, *l4;
	size_t l3 = v6 ? 40 : 20;

	memset(fr->data, 0, sizeof(fr->data));
	memset(p, 0x02, 12);	/* locally administered MACs */
	tg_put16(p + 12, v6 ? ETH_P_IPV6 : ETH_P_IP);
	p += ETH_HLEN;
	if (v6) {
		p[0] = 0x60;
		tg_put16(p + 4, 20);
		p[6] = 6;	/* TCP */
		p[7] = 64;
		CHECK(inet_pton(AF_INET6, src, p + 8) == 1, "IPv6 %s", src);
		CHECK(inet_pton(AF_INET6, dst, p + 24) == 1, "IPv6 %s", dst);
	} else {
		p[0] = 0x45;
		tg_put16(p + 2, 40);
		p[8] = 64;
		p[9] = 6;	/* TCP */
		CHECK(inet_pton(AF_INET, src, p + 12) == 1, "IPv4 %s", src);
		CHECK(inet_pton(AF_INET, dst, p + 16) == 1, "IPv4 %s", dst);
	}
	l4 = p + l3;
	tg_put16(l4, sport);
	tg_put16(l4 + 2, dport);
	l4[12] = 5 << 4;	/* data offset: 20 bytes */
	l4[13] = flags;
	tg_put16(l4 + 14, 65535);
	fr->len = ETH_HLEN + l3 + 20;
	if (fr->len < 60)
		fr->len = 60;
}

void frame_encap(struct frame *fr, const char *src, __u16 proto,
		 const void *hdr, size_t hlen)
{
	frame_udp(fr, src, 100, 0);
	memmove(fr->data + ETH_HLEN + hlen, fr->data + ETH_HLEN, fr->len - ETH_HLEN);
	memcpy(fr->data + ETH_HLEN, hdr, hlen);
	tg_put16(fr->data + 12, proto);
	fr->len += hlen;
}

void frame_arp(struct frame *fr)
{
	struct ethhdr eth = { .h_proto = htons(ETH_P_ARP) };

	memset(fr, 0, sizeof(*fr));
	/* the MAC addresses of tg_frame_udp() */
	memcpy(eth.h_dest, "\x02\x00\x00\x00\x00\x02", ETH_ALEN);
	memcpy(eth.h_source, "\x02\x00\x00\x00\x00\x01", ETH_ALEN);
	memcpy(fr->data, &eth, sizeof(eth));
	fr->len = TG_MIN_FRAME;
}
