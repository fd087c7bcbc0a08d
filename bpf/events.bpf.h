/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Events: limited, released, banned and unbanned reported through the
 * `events` ring within a budget per CPU (include/events.h).
 */
#ifndef RL_EVENTS_BPF_H
#define RL_EVENTS_BPF_H

#include "maps.bpf.h"
#include "events.h"
#include "ban.h"

/*
 * May this CPU report one more event at `now`? The flags to submit it
 * with, or -1 with the event counted lost: never waited for. The first
 * RL_EVENTS_WAKEUPS of a period may wake a follower that waits (only if
 * it read everything before); the rest never do, and it finds them when
 * it next polls: a flood costs no wakeups.
 */
static __always_inline long event_budget(struct rl_counters *cnt, __u64 now)
{
	__u64 rank = rl_period_take(&cnt->events_period, &cnt->events_sent, now,
				    RL_EVENTS_PERIOD_NS, RL_EVENTS_PER_PERIOD);

	if (!rank) {
		cnt->events_lost++;
		return -1;
	}
	return rank <= RL_EVENTS_WAKEUPS ? 0 : BPF_RB_NO_WAKEUP;
}

/* A record for an event in the ring, or NULL (full: counted lost). */
static __always_inline struct rl_event *event_reserve(__u32 type,
						      const struct rl_key *key,
						      __u64 now)
{
	struct rl_counters *cnt;
	struct rl_event *e;
	__u32 zero = 0;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		cnt = bpf_map_lookup_elem(&counters, &zero);
		if (cnt)
			cnt->events_lost++;
		return NULL;
	}
	e->time_ns = now;
	__builtin_memcpy(&e->key, key, sizeof(e->key));
	e->type = type;
	e->cpu = bpf_get_smp_processor_id();
	e->until_ns = 0;
	return e;
}

/* Report `limited` or `released` of source `key` on this CPU, naming
 * rule slot `rule_id` (RL_NO_RULE: none), within the budget event_budget
 * gave (`flags`). Global functions, these two: verified once, not on
 * every path that reaches them. */
__noinline int report_source(__u32 type, const struct rl_key *key,
			     __u32 rule_id, __u64 now, __u64 flags)
{
	const struct rl_rule *r = NULL;
	struct rl_event *e;

	if (!key)
		return 0;	/* cannot happen: the caller's key */
	e = event_reserve(type, key, now);
	if (!e)
		return 0;
	if (rule_id != RL_NO_RULE)
		r = bpf_map_lookup_elem(&rules, &rule_id);
	if (r && !(r->flags & RL_RULE_F_USED)) {
		r = NULL;	/* deleted since */
		barrier_var(r);
	}
	rl_event_rule(e, r);
	bpf_ringbuf_submit(e, flags);
	return 1;
}

/* Report `banned` or `unbanned` of source `key` under ban `b`, which
 * ends (or ended) at `until`. */
__noinline int report_ban(__u32 type, const struct rl_key *key,
			  const struct rl_ban *b, __u64 now, __u64 until)
{
	struct rl_counters *cnt;
	struct rl_event *e;
	__u32 zero = 0;
	long flags;

	if (!key || !b)
		return 0;	/* cannot happen: the caller's pointers */
	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!cnt)
		return 0;	/* cannot happen: an array */
	flags = event_budget(cnt, now);
	if (flags < 0)
		return 0;
	e = event_reserve(type, key, now);
	if (!e)
		return 0;
	rl_event_ban_rule(e, b);
	e->until_ns = until;
	bpf_ringbuf_submit(e, flags);
	return 1;
}

/* A packet of a tracked source, passed or dropped: limited or released?
 * The budget is checked here, so that a flood of events costs a counter,
 * not a call. */
static __always_inline void source_event(struct rl_source *src,
					 const struct rl_key *key, int pass,
					 __u64 now, struct rl_counters *cnt)
{
	__u32 type;
	long flags;

	if (no_events)
		return;
	type = rl_event_of_packet(&src->limited_ns, pass, now, settings.window_ns);
	if (type == RL_EVENT_NONE)
		return;
	flags = event_budget(cnt, now);
	if (flags >= 0)
		report_source(type, key, src->rule_id, now, flags);
}
#endif /* RL_EVENTS_BPF_H */
