// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The sync agent's state pin (sync_status.h). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "iface.h"
#include "pin.h"
#include "ratelimit.h"
#include "sync_status.h"

static void state_path(const char *iface, char *buf, size_t len)
{
	rl_pin_path(buf, len, iface, RL_PIN_SYNC);
}

static bool pid_alive(__u32 pid)
{
	return pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

static int open_pin(const char *path)
{
	return rl_map_pin_open(path, BPF_MAP_TYPE_ARRAY, sizeof(__u32),
			       sizeof(struct rl_sync_state), NULL);
}

int rl_sync_state_read(const char *iface, struct rl_sync_state *st,
		       bool *alive)
{
	char path[PATH_MAX];
	__u32 zero = 0;
	int fd, ret = 1;

	state_path(iface, path, sizeof(path));
	fd = open_pin(path);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (bpf_map_lookup_elem(fd, &zero, st))
		ret = -errno;
	close(fd);
	if (ret == 1) {
		st->fleet[sizeof(st->fleet) - 1] = '\0';
		st->error[sizeof(st->error) - 1] = '\0';
		*alive = pid_alive(st->pid);
	}
	return ret;
}

int rl_sync_state_create(const char *iface, const struct rl_sync_state *st,
			 __u32 *other)
{
	struct rl_sync_state old;
	char path[PATH_MAX];
	bool alive;
	int fd, ret;

	ret = rl_sync_state_read(iface, &old, &alive);
	if (ret == 1 && alive && old.pid != (__u32)getpid()) {
		*other = old.pid;
		return -EEXIST;
	}
	state_path(iface, path, sizeof(path));
	if (ret != 0 && unlink(path) && errno != ENOENT)	/* a dead agent's */
		return -errno;
	/* no name: libbpf 1.1 probes for names with a half-written bpf_attr
	 * (tests/valgrind.supp); the pin path names it */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(__u32),
			    sizeof(struct rl_sync_state), 1, NULL);
	if (fd < 0)
		return -errno;
	if (rl_sync_state_write(fd, st) || bpf_obj_pin(fd, path)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

int rl_sync_state_write(int fd, const struct rl_sync_state *st)
{
	__u32 zero = 0;

	return bpf_map_update_elem(fd, &zero, st, BPF_ANY) ? -errno : 0;
}

void rl_sync_state_remove(const char *iface, int fd)
{
	struct rl_sync_state st;
	char path[PATH_MAX];
	bool alive;

	/* only our own pin: after a detach and attach, it is not there */
	state_path(iface, path, sizeof(path));
	if (rl_sync_state_read(iface, &st, &alive) == 1 &&
	    st.pid == (__u32)getpid())
		unlink(path);
	if (fd >= 0)
		close(fd);
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
	__u64 now = realtime_ns();
	char when[32];
	time_t t;

	if (!alive) {
		snprintf(buf, len, "agent gone (pid %u stopped without cleaning up), fleet %s: local counts only",
			 st->pid, st->fleet);
		return;
	}
	if (st->health == RL_SYNC_DEGRADED) {
		t = (time_t)(st->degraded_ns / RL_NSEC_PER_SEC);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
		snprintf(buf, len, "degraded since %s (%s), fleet %s: local counts only",
			 when, st->error, st->fleet);
		return;
	}
	if (st->health == RL_SYNC_STARTING || !st->last_ok_ns) {
		snprintf(buf, len, "starting, fleet %s (pid %u)", st->fleet, st->pid);
		return;
	}
	snprintf(buf, len, "ok, fleet %s (last exchange %llu ms ago, %llu sources)",
		 st->fleet,
		 (unsigned long long)(now > st->last_ok_ns ? (now - st->last_ok_ns) / RL_NSEC_PER_MSEC : 0),
		 (unsigned long long)st->sources);
}

const char *rl_sync_health_name(const struct rl_sync_state *st, bool alive)
{
	if (!alive)
		return "gone";
	if (st->health == RL_SYNC_DEGRADED)
		return "degraded";
	return st->health == RL_SYNC_OK && st->last_ok_ns ? "ok" : "starting";
}
