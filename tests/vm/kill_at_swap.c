// SPDX-License-Identifier: GPL-2.0
/* LD_PRELOAD shim: SIGKILL the process at a reload's commit point, its
 * update of the slot (the only prog array it writes). RL_KILL=at kills
 * on entering that update, RL_KILL=after as it returns.
 *
 * strace's inject=...:when=N counts bpf() calls, and a reload onto new
 * maps makes as many as the entries it carries: a count taken from one
 * run can land before the slot's update in the next (tests/vm/multi.sh). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef long (*syscall_fn)(long, ...);

static bool updates_prog_array(syscall_fn real, const union bpf_attr *attr)
{
	struct bpf_map_info info;
	union bpf_attr q;

	memset(&info, 0, sizeof(info));
	memset(&q, 0, sizeof(q));
	q.info.bpf_fd = attr->map_fd;
	q.info.info_len = sizeof(info);
	q.info.info = (uintptr_t)&info;
	return !real(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &q, sizeof(q)) &&
	       info.type == BPF_MAP_TYPE_PROG_ARRAY;
}

/* glibc's own syscall(2) reads six arguments whatever the call takes */
long syscall(long nr, ...)
{
	static syscall_fn real;
	const char *when = getenv("RL_KILL");
	bool slot = false;
	long a[6], ret;
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
	if (when && nr == __NR_bpf && a[0] == BPF_MAP_UPDATE_ELEM)
		slot = updates_prog_array(real, (const union bpf_attr *)a[1]);
	if (slot && !strcmp(when, "at"))
		kill(getpid(), SIGKILL);
	ret = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (slot && !strcmp(when, "after"))
		kill(getpid(), SIGKILL);
	return ret;
}
