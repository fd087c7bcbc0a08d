// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ratelimit-bench recv: the accuracy receiver. Run in the receiving
 * namespace behind the limiter under test (xdp-ratelimit, an nftables
 * meter or hashlimit): a UDP socket on the generator's port whose socket
 * filter (baselines.bpf.c: sock_record) records the time and source of
 * every packet that got through, on the clock the XDP program's windows
 * use (bpf_ktime_get_ns, or with --program-clock the coarse clock when
 * xdp-ratelimit's attach would choose it). Then, per source:
 *
 * - windows on the limiter's grid: the bucket containing t and the B-1
 *   before it (xdp-ratelimit(8) "Window"), buckets being multiples of W/B on the
 *   monotonic clock. Every window is checked for the worst excess; those
 *   wholly inside the traffic (not the first or last bucket) give the
 *   median, min and max packets passed per window.
 * - any interval [t, t + W): the worst excess wherever the window starts,
 *   which is what a fixed window or a token bucket lets through at a
 *   boundary; and any interval of W - W/B, which a window of B buckets
 *   always covers, whatever the phase.
 *
 * With --times it also lists every pass (source, CLOCK_REALTIME ns), for a
 * test to compare with times of its own (tests/e2e: the sliding window).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "baselines.skel.h"
#include "bench_bpf.h"
#include "lib/maps.h"
#include "bench.h"
#include "lib/settings.h"

struct events {
	struct bench_pass *v;
	size_t n, cap;
};

static int on_event(void *ctx, void *data, size_t size)
{
	struct events *e = ctx;

	if (size < sizeof(struct bench_pass))
		return 0;
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 65536;
		struct bench_pass *v = realloc(e->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		e->v = v;
		e->cap = cap;
	}
	memcpy(&e->v[e->n++], data, sizeof(struct bench_pass));
	return 0;
}

static int by_source_time(const void *a, const void *b)
{
	const struct bench_pass *x = a, *y = b;

	if (x->saddr != y->saddr)
		return x->saddr < y->saddr ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

struct analysis {
	__u64 budget, window_ns, bucket_ns;
	__u32 nbuckets;
	long worst_aligned;	/* max passed - budget */
	long worst_any;
	long worst_short;	/* in any interval of W - W/B */
	__u64 sources;
	double *full;		/* passed per full window */
	size_t nfull, capfull;
};

static int add_full(struct analysis *a, double v)
{
	if (a->nfull == a->capfull) {
		size_t cap = a->capfull ? a->capfull * 2 : 4096;
		double *p = realloc(a->full, cap * sizeof(*p));

		if (!p)
			return -1;
		a->full = p;
		a->capfull = cap;
	}
	a->full[a->nfull++] = v;
	return 0;
}

/* Most passes in any interval [t, t + len) minus budget, into *worst. */
static void worst_in(const struct bench_pass *v, size_t n, __u64 len,
		     __u64 budget, long *worst)
{
	size_t i = 0, j;

	for (j = 0; j < n; j++) {
		while (v[j].ts - v[i].ts >= len)
			i++;
		if ((long)(j - i + 1) - (long)budget > *worst)
			*worst = (long)(j - i + 1) - (long)budget;
	}
}

/* One source's passes v[0..n), sorted by time; first/last: the buckets
 * of the whole run. */
static int analyse_source(struct analysis *a, const struct bench_pass *v,
			  size_t n, __u64 first, __u64 last, __u32 *counts)
{
	__u64 nb = last - first + 1, k;
	long sum = 0;
	size_t i;

	memset(counts, 0, nb * sizeof(*counts));
	for (i = 0; i < n; i++)
		counts[v[i].ts / a->bucket_ns - first]++;
	/* windows ending at bucket k, to the last one still holding a pass */
	for (k = 0; k < nb + a->nbuckets - 1; k++) {
		if (k < nb)
			sum += counts[k];
		if (k >= a->nbuckets && k - a->nbuckets < nb)
			sum -= counts[k - a->nbuckets];
		if (sum - (long)a->budget > a->worst_aligned)
			a->worst_aligned = sum - (long)a->budget;
		if (k >= a->nbuckets && k + 1 < nb && add_full(a, (double)sum))
			return -1;
	}
	worst_in(v, n, a->window_ns, a->budget, &a->worst_any);
	worst_in(v, n, a->window_ns - a->bucket_ns, a->budget, &a->worst_short);
	return 0;
}

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static int usage(void)
{
	fprintf(stderr, "Usage: ratelimit-bench recv --duration S --budget N "
		"[--window-ms MS] [--buckets B] [--port P] [--ready FILE] [--times]\n"
		"                              [--program-clock]\n");
	return 2;
}

/* CLOCK_REALTIME minus the program's clock (CLOCK_MONOTONIC), in ns. */
static __s64 realtime_offset(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__s64)((__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec -
		       rl_now_ns());
}

/* [{"source": "198.18.0.1", "realtime_ns": N}, ...] by source, then time. */
static json_t *passes_json(const struct events *ev)
{
	json_t *a = json_array();
	__s64 off = realtime_offset();
	char src[INET_ADDRSTRLEN];

	for (size_t i = 0; a && i < ev->n; i++) {
		inet_ntop(AF_INET, &ev->v[i].saddr, src, sizeof(src));
		if (json_array_append_new(a, json_pack("{s:s, s:I}", "source", src,
				"realtime_ns", (json_int_t)(ev->v[i].ts + off)))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

int bench_recv(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "budget", required_argument, NULL, 'b' },
		{ "window-ms", required_argument, NULL, 'w' },
		{ "buckets", required_argument, NULL, 'B' },
		{ "port", required_argument, NULL, 'p' },
		{ "ready", required_argument, NULL, 'r' },
		{ "times", no_argument, NULL, 't' },
		/* stamp passes with the clock xdp-ratelimit's attach chooses
		 * for this window (doc/design/window.md): its windows are on it */
		{ "program-clock", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct analysis a = { .window_ns = 1000000000ULL, .nbuckets = 10,
			      .worst_aligned = -(1L << 62), .worst_any = -(1L << 62),
			      .worst_short = -(1L << 62) };
	struct events ev = { 0 };
	struct ring_buffer *rb = NULL;
	struct baselines *b = NULL;
	const char *ready = NULL;
	bool times = false;
	json_t *doc;
	double duration = 0;
	int port = 9, opt, fd = -1, ret = 1, one = 1, program_clock = 0;
	__u32 *counts = NULL;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'd': duration = atof(optarg); break;
		case 'b': a.budget = strtoull(optarg, NULL, 10); break;
		case 'w': a.window_ns = strtoull(optarg, NULL, 10) * 1000000ULL; break;
		case 'B': a.nbuckets = (__u32)atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		case 'r': ready = optarg; break;
		case 't': times = true; break;
		case 'c': program_clock = 1; break;
		default: return usage();
		}
	}
	if (duration <= 0 || !a.budget || !a.nbuckets || !a.window_ns)
		return usage();
	a.bucket_ns = a.window_ns / a.nbuckets;

	b = baselines__open();
	if (b && program_clock) {
		struct rl_settings s = { .bucket_ns = a.bucket_ns };

		rl_settings_clock(&s, rl_coarse_tick_ns());
		b->rodata->record_coarse = !!(s.flags & RL_F_COARSE_CLOCK);
	}
	if (b && baselines__load(b)) {
		baselines__destroy(b);
		b = NULL;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (!b || fd < 0) {
		fprintf(stderr, "ratelimit-bench recv: setup failed\n");
		goto out;
	}
	{
		struct sockaddr_in sa = { .sin_family = AF_INET,
					  .sin_port = htons((__u16)port) };
		int pfd = bpf_program__fd(b->progs.sock_record);

		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
		    setsockopt(fd, SOL_SOCKET, SO_ATTACH_BPF, &pfd, sizeof(pfd))) {
			fprintf(stderr, "ratelimit-bench recv: socket: %s\n",
				strerror(errno));
			goto out;
		}
	}
	rb = ring_buffer__new(bpf_map__fd(b->maps.passed), on_event, &ev, NULL);
	if (!rb)
		goto out;
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (f)
			fclose(f);
	}
	{
		__u64 end = rl_now_ns() + (__u64)(duration * 1e9);
		struct sigaction sa = { .sa_handler = on_stop };

		/* SIGINT or SIGTERM: stop early, and report as at the end */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		while (!stop && rl_now_ns() < end)
			if (ring_buffer__poll(rb, 20) < 0 && errno != EINTR)
				goto out;
		if (ring_buffer__consume(rb) < 0)
			goto out;
	}

	qsort(ev.v, ev.n, sizeof(*ev.v), by_source_time);
	if (ev.n) {
		__u64 first = UINT64_MAX, last = 0;
		size_t i, j;

		for (i = 0; i < ev.n; i++) {
			__u64 bk = ev.v[i].ts / a.bucket_ns;

			first = bk < first ? bk : first;
			last = bk > last ? bk : last;
		}
		counts = calloc(last - first + 1, sizeof(*counts));
		if (!counts)
			goto out;
		for (i = 0; i < ev.n; i = j) {
			for (j = i; j < ev.n && ev.v[j].saddr == ev.v[i].saddr; j++)
				;
			a.sources++;
			if (analyse_source(&a, ev.v + i, j - i, first, last, counts))
				goto out;
		}
	}
	doc = json_pack(
		"{s:I, s:I, s:I, s:I, s:I, s:i, s:I, s:I, s:I, s:I, s:o}",
		"passed", (json_int_t)ev.n,
		"lost", (json_int_t)b->bss->record_lost,
		"sources", (json_int_t)a.sources,
		"budget", (json_int_t)a.budget,
		"window_ms", (json_int_t)(a.window_ns / 1000000),
		"buckets", (int)a.nbuckets,
		"full_windows", (json_int_t)a.nfull,
		"worst_excess", (json_int_t)(ev.n ? a.worst_aligned : 0),
		"worst_excess_any_interval", (json_int_t)(ev.n ? a.worst_any : 0),
		"worst_excess_any_short_interval", (json_int_t)(ev.n ? a.worst_short : 0),
		"per_window", bench_summary_json(bench_summarize(a.full, (int)a.nfull)));
	if (doc && times && json_object_set_new(doc, "passes", passes_json(&ev))) {
		json_decref(doc);
		doc = NULL;
	}
	ret = bench_print_json(doc) ? 1 : 0;
out:
	free(counts);
	free(ev.v);
	free(a.full);
	ring_buffer__free(rb);
	if (fd >= 0)
		close(fd);
	baselines__destroy(b);
	return ret;
}
