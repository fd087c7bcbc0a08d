// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The sync agent's state in the `sync` map (sync_status.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/maps.h"
#include "ratelimit.h"
#include "lib/sync_status.h"

static bool pid_alive(__u32 pid)
{
	return pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

int rl_sync_state_read(const struct rl_maps *m, struct rl_sync_state *st,
		       bool *alive)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(m->sync, &zero, st))
		return -errno;
	if (!st->pid)
		return 0;
	st->fleet[sizeof(st->fleet) - 1] = '\0';
	st->error[sizeof(st->error) - 1] = '\0';
	*alive = pid_alive(st->pid);
	return 1;
}

int rl_sync_state_write(const struct rl_maps *m, const struct rl_sync_state *st)
{
	__u32 zero = 0;

	return bpf_map_update_elem(m->sync, &zero, st, BPF_ANY) ? -errno : 0;
}

/* Under the CLI's lock (the agent's join step), so two agents starting at
 * once cannot both claim it. */
int rl_sync_state_claim(const struct rl_maps *m, const struct rl_sync_state *st,
			__u32 *other)
{
	struct rl_sync_state old;
	bool alive;
	int ret = rl_sync_state_read(m, &old, &alive);

	if (ret < 0)
		return ret;
	if (ret == 1 && alive && old.pid != st->pid) {
		*other = old.pid;
		return -EEXIST;
	}
	return rl_sync_state_write(m, st);
}

void rl_sync_state_release(const struct rl_maps *m)
{
	struct rl_sync_state st, none = { 0 };
	bool alive;

	/* only our own: another agent may have claimed a state left by us
	 * for dead */
	if (rl_sync_state_read(m, &st, &alive) == 1 && st.pid == (__u32)getpid())
		rl_sync_state_write(m, &none);
}

static __u64 realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

void rl_sync_state_format(const struct rl_sync_state *st, bool alive,
			  char *buf, size_t len)
{
	__u64 now = realtime_ns(), bad = 0;
	char when[32], ignored[128] = "";
	time_t t;

	for (int k = 0; k < RL_SYNC_REJECTS; k++)
		bad += st->rejected[k];
	if (bad || st->key_errors)
		snprintf(ignored, sizeof(ignored),
			 "; ignored: %llu fields (format %llu, mac %llu, range %llu, date %llu), %llu key errors",
			 (unsigned long long)bad, (unsigned long long)st->rejected[0],
			 (unsigned long long)st->rejected[1], (unsigned long long)st->rejected[2],
			 (unsigned long long)st->rejected[3], (unsigned long long)st->key_errors);

	if (!alive) {
		snprintf(buf, len, "agent gone (pid %u stopped without cleaning up), fleet %s: local counts only",
			 st->pid, st->fleet);
		return;
	}
	if (st->health == RL_SYNC_DEGRADED) {
		t = (time_t)(st->degraded_ns / RL_NSEC_PER_SEC);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
		snprintf(buf, len, "degraded since %s (%s), fleet %s: local counts only%s",
			 when, st->error, st->fleet, ignored);
		return;
	}
	if (st->health == RL_SYNC_STARTING || !st->last_ok_ns) {
		snprintf(buf, len, "starting, fleet %s (pid %u)", st->fleet, st->pid);
		return;
	}
	snprintf(buf, len, "ok, fleet %s (last exchange %llu ms ago, %llu sources)%s",
		 st->fleet,
		 (unsigned long long)(now > st->last_ok_ns ? (now - st->last_ok_ns) / RL_NSEC_PER_MSEC : 0),
		 (unsigned long long)st->sources, ignored);
}

const char *rl_sync_health_name(const struct rl_sync_state *st, bool alive)
{
	if (!alive)
		return "gone";
	if (st->health == RL_SYNC_DEGRADED)
		return "degraded";
	return st->health == RL_SYNC_OK && st->last_ok_ns ? "ok" : "starting";
}
