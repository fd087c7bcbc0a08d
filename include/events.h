/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Events (xdp-ratelimit(8), "Events"): when the program reports limited,
 * released, banned and unbanned, and at what rate. Plain C shared by the
 * XDP program and the host tests, like window.h; the ring buffer itself is
 * bpf/ratelimit.bpf.c's.
 *
 * limited and released are decided per CPU, from one field of the
 * source's per-CPU value, rl_source.limited_ns: the time of this CPU's
 * last drop of the source while it counts as limited here, 0 when not. A
 * drop of a source not limited here (or whose last drop here is a whole
 * window old) reports `limited`; a pass a whole window after the last drop
 * reports `released`. Only tracked sources (with a `sources` entry) are
 * reported: a spoofed flood refused without an entry would fill the ring.
 * A source spread over CPUs is reported by each: `xdp-ratelimit events`
 * prints `limited` for the first and `released` for the last, and finds
 * the sources that went silent (which run no program) from the same
 * field (rl_event_limited).
 *
 * Each CPU reports at most RL_EVENTS_PER_PERIOD events per
 * RL_EVENTS_PERIOD_NS; what it cannot report (budget spent, ring full)
 * is counted in events_lost, never waited for.
 */
#ifndef RL_EVENTS_H
#define RL_EVENTS_H

#include "ratelimit.h"
#include "compiler.h"

/*
 * Take one of `max` per period of `period_ns` from a per-CPU budget whose
 * current period and count are *period and *used: its rank in the period
 * (1 for the first), or 0 when the period's budget is spent.
 */
RL_INLINE __u64 rl_period_take(__u64 *period, __u64 *used, __u64 now,
			       __u64 period_ns, __u64 max)
{
	__u64 p = now / period_ns;

	if (*period != p) {
		*period = p;
		*used = 0;
	}
	if (*used >= max)
		return 0;
	return ++*used;
}

/* A CPU's share of a per-period budget of `total` for the whole interface,
 * spread over `ncpus` CPUs: rounded up (never 0), so the interface takes at
 * most total + ncpus - 1 per period whatever the CPU count. */
RL_INLINE __u64 rl_per_cpu_share(__u64 total, __u32 ncpus)
{
	return ncpus > 1 ? (total + ncpus - 1) / ncpus : total;
}

/* Is a CPU whose marker is `limited_ns` still limiting the source at
 * `now`: a drop less than a window ago? */
RL_INLINE int rl_event_limited(__u64 limited_ns, __u64 now, __u64 window_ns)
{
	return limited_ns && (__s64)(now - limited_ns) < (__s64)window_ns;
}

/*
 * A packet of a tracked source, passed or dropped on this CPU at `now`:
 * what it reports (RL_EVENT_LIMITED, RL_EVENT_RELEASED or RL_EVENT_NONE),
 * with the marker moved. A drop after a whole window without one here is
 * `limited` again: the follower reported the silent source released.
 */
RL_INLINE __u32 rl_event_of_packet(__u64 *limited_ns, int pass, __u64 now,
				   __u64 window_ns)
{
	__u64 last = *limited_ns;

	if (!pass) {
		*limited_ns = now ? now : 1;	/* 0 is "not limited" */
		return rl_event_limited(last, now, window_ns) ?
		       RL_EVENT_NONE : RL_EVENT_LIMITED;
	}
	if (!last || rl_event_limited(last, now, window_ns))
		return RL_EVENT_NONE;
	*limited_ns = 0;
	return RL_EVENT_RELEASED;
}

/*
 * Is the first packet after ban `b` ended the one to report `unbanned`?
 * One caller wins, on whatever CPU: it swaps until_ns for 0 (no ban
 * either, and never listed), and *until gets the deadline that passed.
 */
RL_INLINE int rl_ban_claim_end(struct rl_ban *b, __u64 now, __u64 *until)
{
	__u64 u = RL_READ(b->until_ns);

	if (!u || (__s64)(u - now) > 0)	/* none, or it holds */
		return 0;
	*until = u;
	return __sync_bool_compare_and_swap(&b->until_ns, u, 0);
}

/* The rule an event names: rule `r`, or none (NULL). */
RL_INLINE void rl_event_rule(struct rl_event *e, const struct rl_rule *r)
{
	e->rule_flags = r ? RL_EVENT_F_RULE | (r->flags & RL_RULE_F_V6) : 0;
	e->rule_prefixlen = r ? r->prefixlen : 0;
	if (r)
		__builtin_memcpy(e->rule_addr, r->addr, sizeof(e->rule_addr));
	else
		__builtin_memset(e->rule_addr, 0, sizeof(e->rule_addr));
}

/* The rule that imposed ban `b` (kept in the ban: rules may have changed). */
RL_INLINE void rl_event_ban_rule(struct rl_event *e, const struct rl_ban *b)
{
	e->rule_flags = RL_EVENT_F_RULE | (b->rule_flags & RL_RULE_F_V6);
	e->rule_prefixlen = b->rule_prefixlen;
	__builtin_memcpy(e->rule_addr, b->rule_addr, sizeof(e->rule_addr));
}

#endif /* RL_EVENTS_H */
