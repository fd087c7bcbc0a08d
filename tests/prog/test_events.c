// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Events (xdp-ratelimit(8), "Events"), in the program: what it writes to
 * the `events` ring buffer on the test clock. limited on a tracked source's
 * first drop on a CPU, released on a pass a whole window after its last
 * drop there, banned when a ban is stored, unbanned once for the first
 * packet after the ban; nothing for refused sources; at most
 * RL_EVENTS_PER_PERIOD per CPU per period, the rest (and what a full ring
 * refuses) counted in events_lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ratelimit.h"
#include "lib/ban_map.h"
#include "../harness.h"
#include "fixture.h"

#define SRC "198.18.0.7"
#define BAN (10 * NSEC_S)
/* what a full ring holds at most: records of 64 bytes and an 8-byte header */
#define RING_RECORDS (RL_EVENTS_RING_BYTES / (sizeof(struct rl_event) + 8))

struct seen {
	struct rl_event ev[4096];
	int n;
};

static int collect(void *ctx, void *data, size_t size)
{
	struct seen *s = ctx;

	if (size == sizeof(struct rl_event) && s->n < (int)(sizeof(s->ev) / sizeof(s->ev[0])))
		memcpy(&s->ev[s->n++], data, size);
	return 0;
}

/* The events the program wrote since the last call, into s (reset). */
static bool read_events(struct ring_buffer *rb, struct seen *s)
{
	s->n = 0;
	return CHECK(ring_buffer__consume(rb) >= 0, "read the ring: %s", strerror(errno));
}

static struct ring_buffer *ring_of(struct fixture *f, struct seen *s)
{
	struct ring_buffer *rb = ring_buffer__new(f->m.events, collect, s, NULL);

	CHECK(rb, "ring_buffer__new: %s", strerror(errno));
	return rb;
}

static int sent(struct fixture *f, const char *addr, int n, int cpu, __u64 now)
{
	struct frame fr;

	frame_udp(&fr, addr, 100, 0);
	return fixture_send(f, &fr, n, cpu, now);
}

/* `n` segments from `addr` on the connection fixture_answer() answers. */
static int sent_answered(struct fixture *f, const char *addr, int n, int cpu,
			 __u64 now)
{
	struct frame fr;

	frame_tcp(&fr, addr, HOST_ADDR(addr), PEER_PORT, HOST_PORT, TCP_ACK);
	return fixture_send(f, &fr, n, cpu, now);
}

static bool rule(struct fixture *f, __u64 pps, __u64 ban_ns)
{
	struct rl_rule_change c = {
		.have_pps = true, .pps = pps,
		.have_ban = ban_ns != 0, .ban_ns = ban_ns,
	};

	return fixture_rule(f, "198.18.0.0/15", &c);
}

/* Is e the event `type` of SRC, at `now`, on `cpu`, naming 198.18.0.0/15? */
static bool is_event(const struct rl_event *e, __u32 type, __u64 now, int cpu,
		     const char *what)
{
	struct rl_key key;
	char err[RL_ERR_LEN];
	static const __u8 rule_addr[16] = { 198, 18 };

	if (!CHECK(rl_ban_key(SRC, RL_DEFAULT_V6_PREFIX, &key, err, sizeof(err)) == 0,
		   "key: %s", err))
		return false;
	return CHECK(e->type == type && e->time_ns == now && (int)e->cpu == cpu &&
		     !memcmp(&e->key, &key, sizeof(key)) &&
		     e->rule_flags == RL_EVENT_F_RULE && e->rule_prefixlen == 15 &&
		     !memcmp(e->rule_addr, rule_addr, sizeof(rule_addr)),
		     "%s: got type %u at %llu on CPU %u, rule flags %u /%u; want type %u at %llu on CPU %d, rule 198.18.0.0/15",
		     what, e->type, (unsigned long long)e->time_ns, e->cpu,
		     e->rule_flags, e->rule_prefixlen, type,
		     (unsigned long long)now, cpu);
}

TEST(events_limited_then_released)
{
	struct ring_buffer *rb = NULL;
	struct seen *s = calloc(1, sizeof(*s));
	struct fixture f;

	if (!fixture_open(&f, NULL) || !rule(&f, 5, 0) || !s || !(rb = ring_of(&f, s)))
		goto out;
	/* 100 ms buckets, T0 on the grid: the window of T0 + 0.9 s holds T0's */
	CHECK_EQ(sent(&f, SRC, 5, 0, T0), 5, "the quota passes");
	read_events(rb, s);
	CHECK_EQ(s->n, 0, "no event within the quota");
	CHECK_EQ(sent(&f, SRC, 3, 0, T0 + 900 * NSEC_MS), 0, "over quota");
	read_events(rb, s);
	if (CHECK_EQ(s->n, 1, "one event for three drops"))
		is_event(&s->ev[0], RL_EVENT_LIMITED, T0 + 900 * NSEC_MS, 0, "limited");
	/* T0's bucket left: passes, but only 150 ms after the last drop */
	CHECK_EQ(sent(&f, SRC, 1, 0, T0 + 1050 * NSEC_MS), 1, "passes again");
	read_events(rb, s);
	CHECK_EQ(s->n, 0, "not released within a window of the last drop");
	CHECK_EQ(sent(&f, SRC, 1, 0, T0 + 1899 * NSEC_MS), 1, "passes");
	read_events(rb, s);
	CHECK_EQ(s->n, 0, "999 ms after the last drop: not yet");
	CHECK_EQ(sent(&f, SRC, 1, 0, T0 + 1900 * NSEC_MS), 1, "passes");
	read_events(rb, s);
	if (CHECK_EQ(s->n, 1, "released once"))
		is_event(&s->ev[0], RL_EVENT_RELEASED, T0 + 1900 * NSEC_MS, 0, "released");
	CHECK_EQ(sent(&f, SRC, 2, 0, T0 + 1950 * NSEC_MS), 2, "passes");
	read_events(rb, s);
	CHECK_EQ(s->n, 0, "released only once");
	CHECK_EQ(fixture_totals(&f).events_lost, 0, "nothing lost");
out:
	ring_buffer__free(rb);
	free(s);
	fixture_close(&f);
}

/* Each CPU reports its own limited (the follower de-duplicates), and a
 * drop after a whole window of silence is limited again. */
TEST(events_limited_per_cpu)
{
	struct ring_buffer *rb = NULL;
	struct seen *s = calloc(1, sizeof(*s));
	int cpu1 = 1 % rl_ncpus();
	struct fixture f;

	if (!fixture_open(&f, NULL) || !rule(&f, 2, 0) || !s || !(rb = ring_of(&f, s)))
		goto out;
	CHECK_EQ(sent(&f, SRC, 4, 0, T0), 2, "two of four pass");
	CHECK_EQ(sent(&f, SRC, 2, cpu1, T0 + NSEC_MS), 0, "on another CPU: over quota");
	read_events(rb, s);
	if (rl_ncpus() > 1 && CHECK_EQ(s->n, 2, "limited on each CPU")) {
		is_event(&s->ev[0], RL_EVENT_LIMITED, T0, 0, "first CPU");
		is_event(&s->ev[1], RL_EVENT_LIMITED, T0 + NSEC_MS, cpu1, "second CPU");
	}
	/* silent for a window (the follower's sweep said released), then
	 * dropped again without a pass (the rule now blocks): limited again */
	if (!rule(&f, 0, 0))
		goto out;
	CHECK_EQ(sent(&f, SRC, 1, 0, T0 + 2 * NSEC_S), 0, "blocked");
	read_events(rb, s);
	if (CHECK_EQ(s->n, 1, "limited again"))
		is_event(&s->ev[0], RL_EVENT_LIMITED, T0 + 2 * NSEC_S, 0, "again");
out:
	ring_buffer__free(rb);
	free(s);
	fixture_close(&f);
}

TEST(events_banned_then_unbanned_once)
{
	struct ring_buffer *rb = NULL;
	struct seen *s = calloc(1, sizeof(*s));
	int cpu1 = 1 % rl_ncpus();
	__u64 end = T0 + BAN;
	struct rl_ban_row *rows = NULL;
	size_t nrows = 1;
	struct fixture f;

	if (!fixture_open(&f, NULL) || !rule(&f, 5, BAN) || !s || !(rb = ring_of(&f, s)))
		goto out;
	/* only the source's own answered packets ban: the host answers it */
	if (!fixture_answer(&f, SRC, 0, T0 - 1))
		goto out;
	read_events(rb, s);
	/* at its handshake's ACK, a window and a bucket before (fixture.h) */
	if (CHECK_EQ(s->n, 1, "verified, once"))
		is_event(&s->ev[0], RL_EVENT_VERIFIED, T0 - 1 - f.s.window_ns - f.s.bucket_ns,
			 0, "verified");
	CHECK(fixture_synack(&f, SRC, 0, T0 - 1 - f.s.window_ns - f.s.bucket_ns) &&
	      fixture_handshake_ack(&f, SRC, HOST_ISN + 1, 0,
				    T0 - 1 - f.s.window_ns - f.s.bucket_ns) == XDP_PASS,
	      "proved again");
	read_events(rb, s);
	CHECK_EQ(s->n, 0, "a proof of a verified source reports nothing");
	CHECK_EQ(sent_answered(&f, SRC, 6, 0, T0), 5, "the sixth is dropped");
	read_events(rb, s);
	/* the ban is stored while judging, limited counted after */
	if (CHECK_EQ(s->n, 2, "banned and limited")) {
		is_event(&s->ev[0], RL_EVENT_BANNED, T0, 0, "banned");
		CHECK_EQ(s->ev[0].until_ns, end, "banned until");
		is_event(&s->ev[1], RL_EVENT_LIMITED, T0, 0, "limited");
	}
	/* banned packets are drops: limited all along, nothing more */
	for (__u64 t = T0 + NSEC_S / 2; t < end; t += NSEC_S / 2)
		CHECK_EQ(sent_answered(&f, SRC, 2, 0, t), 0, "banned");
	CHECK_EQ(sent_answered(&f, SRC, 1, 0, end - 1), 0, "banned to the end");
	read_events(rb, s);
	CHECK_EQ(s->n, 0, "nothing more during the ban");
	CHECK_EQ(sent_answered(&f, SRC, 1, 0, end), 1, "the first packet after the ban");
	CHECK_EQ(sent_answered(&f, SRC, 1, cpu1, end + 1), 1, "and on another CPU");
	read_events(rb, s);
	if (CHECK_EQ(s->n, 1, "unbanned once")) {
		is_event(&s->ev[0], RL_EVENT_UNBANNED, end, 0, "unbanned");
		CHECK_EQ(s->ev[0].until_ns, end, "the ban's end");
	}
	/* banned packets were drops: released a window after the last one */
	CHECK_EQ(sent_answered(&f, SRC, 1, 0, end - 1 + NSEC_S), 1, "passes");
	read_events(rb, s);
	if (CHECK_EQ(s->n, 1, "released"))
		is_event(&s->ev[0], RL_EVENT_RELEASED, end - 1 + NSEC_S, 0, "released");
	if (CHECK_EQ(rl_bans_read(&f.m, end, &rows, &nrows), 0, "ban list"))
		CHECK_EQ(nrows, 0, "no ban listed");
	CHECK_EQ(fixture_totals(&f).events_lost, 0, "nothing lost");
out:
	free(rows);
	ring_buffer__free(rb);
	free(s);
	fixture_close(&f);
}

/* Sources refused before they take an entry (a blocked prefix) are not
 * reported: a spoofed flood would fill the ring. */
TEST(events_not_for_refused_sources)
{
	struct ring_buffer *rb = NULL;
	struct seen *s = calloc(1, sizeof(*s));
	struct fixture f;

	if (!fixture_open(&f, NULL) || !rule(&f, 0, 0) || !s || !(rb = ring_of(&f, s)))
		goto out;
	CHECK_EQ(sent(&f, SRC, 10, 0, T0), 0, "blocked");
	read_events(rb, s);
	CHECK_EQ(s->n, 0, "no event");
	CHECK_EQ(fixture_totals(&f).events_lost, 0, "none lost either");
out:
	ring_buffer__free(rb);
	free(s);
	fixture_close(&f);
}

/* Source i of 198.18.0.0/15 as text. */
static void source_addr(char *buf, size_t len, int i)
{
	snprintf(buf, len, "198.18.%d.%d", i / 250, 1 + i % 250);
}

/* n sources limited on `cpu` at `now` (each: one pass, one drop) */
static bool limit_sources(struct fixture *f, int first, int n, int cpu, __u64 now)
{
	char a[32];

	for (int i = first; i < first + n; i++) {
		source_addr(a, sizeof(a), i);
		if (!CHECK_EQ(sent(f, a, 2, cpu, now), 1, "one of two passes"))
			return false;
	}
	return true;
}

TEST(events_bounded_per_cpu_and_period)
{
	struct ring_buffer *rb = NULL;
	struct seen *s = calloc(1, sizeof(*s));
	int cpu1 = 1 % rl_ncpus();
	struct fixture f;

	if (!fixture_open(&f, NULL) || !rule(&f, 1, 0) || !s || !(rb = ring_of(&f, s)))
		goto out;
	fixture_hold(&f);
	if (!limit_sources(&f, 0, 100, 0, T0))
		goto out;
	read_events(rb, s);
	CHECK_EQ(s->n, RL_EVENTS_PER_PERIOD, "a period's budget reported");
	CHECK_EQ(fixture_totals(&f).events_lost, 100 - RL_EVENTS_PER_PERIOD, "the rest lost");
	if (rl_ncpus() > 1) {	/* per CPU: another CPU has its own budget */
		if (!limit_sources(&f, 100, 10, cpu1, T0))
			goto out;
		read_events(rb, s);
		CHECK_EQ(s->n, 10, "another CPU's budget");
	}
	/* the next period has a budget again */
	if (!limit_sources(&f, 200, 10, 0, T0 + RL_EVENTS_PERIOD_NS))
		goto out;
	read_events(rb, s);
	CHECK_EQ(s->n, 10, "the next period");
	CHECK_EQ(fixture_totals(&f).events_lost, 100 - RL_EVENTS_PER_PERIOD, "no more lost");
out:
	ring_buffer__free(rb);
	free(s);
	fixture_close(&f);
}

/* Nobody reads: the ring fills, and what it refuses is lost, counted. */
TEST(events_full_ring_counts_lost)
{
	int periods = (int)(RING_RECORDS / RL_EVENTS_PER_PERIOD) + 4;
	int sent = periods * RL_EVENTS_PER_PERIOD;
	struct ring_buffer *rb = NULL;
	struct seen *s = calloc(1, sizeof(*s));
	struct fixture f;
	__u64 lost;

	if (!fixture_open(&f, NULL) || !rule(&f, 1, 0) || !s)
		goto out;
	fixture_hold(&f);
	for (int p = 0; p < periods; p++)
		if (!limit_sources(&f, p * RL_EVENTS_PER_PERIOD, RL_EVENTS_PER_PERIOD, 0,
				   T0 + (__u64)p * RL_EVENTS_PERIOD_NS))
			goto out;
	if (!(rb = ring_of(&f, s)))
		goto out;
	read_events(rb, s);
	lost = fixture_totals(&f).events_lost;
	CHECK_LE(s->n, (int)RING_RECORDS, "what the ring holds");
	CHECK_GT(s->n, (int)RING_RECORDS - RL_EVENTS_PER_PERIOD, "a full ring");
	CHECK_EQ(lost, (__u64)(sent - s->n), "every other event counted lost");
	/* read out, it takes events again */
	if (limit_sources(&f, sent, 1, 0, T0 + (__u64)periods * RL_EVENTS_PERIOD_NS)) {
		read_events(rb, s);
		CHECK_EQ(s->n, 1, "reported again once read");
	}
out:
	ring_buffer__free(rb);
	free(s);
	fixture_close(&f);
}
