// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* One frame on several CPUs at once (spread.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <bpf/bpf.h>
#include "lib/maps.h"
#include "../harness.h"
#include "spread.h"

struct spread {
	int prog_fd;
	const struct frame *fr;
	int n;			/* threads */
	int ready;		/* threads pinned and at the barrier (atomic) */
	int cancel;		/* a thread could not be created: nobody runs */
	__u32 repeat;		/* frames per thread */
};

/* Pin to its CPU, wait for every other thread, then run the same frame
 * sp->repeat times in one BPF_PROG_TEST_RUN. No checks here: the
 * harness is not thread-safe, the main thread checks what is recorded. */
static void *spread_thread(void *arg)
{
	struct spread_cpu *c = arg;
	struct spread *sp = c->sp;
	cpu_set_t set;
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = sp->fr->data,
		.data_size_in = sp->fr->len,
		.repeat = sp->repeat,
	);

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		c->err = errno;
		c->what = "sched_setaffinity";
	}
	/* a spinning barrier: all leave it within microseconds of the last
	 * arrival, not one futex wake-up after another */
	__atomic_add_fetch(&sp->ready, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&sp->ready, __ATOMIC_ACQUIRE) < sp->n) {
		if (__atomic_load_n(&sp->cancel, __ATOMIC_ACQUIRE))
			return NULL;
		sched_yield();	/* to the main thread, if it shares the CPU */
	}
	if (c->err)
		return NULL;
	c->start = rl_now_ns();
	if (bpf_prog_test_run_opts(sp->prog_fd, &opts)) {
		c->err = errno;
		c->what = "BPF_PROG_TEST_RUN";
	}
	c->end = rl_now_ns();
	c->ran_on = sched_getcpu();
	return NULL;
}

bool spread_prepare(struct fixture *f, __u64 now)
{
	struct rl_config cfg;

	/* one run per thread and round: held, the program is not re-added to
	 * the dispatcher (a mutex and an RCU grace period) for each of them,
	 * which would start the threads one after another */
	fixture_hold(f);
	if (!CHECK_EQ(rl_config_read(&f->m, &cfg), 0, "read config"))
		return false;
	cfg.test_now_ns = now;
	return CHECK_EQ(rl_config_write(&f->m, &cfg), 0, "write config");
}

bool spread_round(struct fixture *f, const struct frame *fr, __u32 repeat,
		  struct spread_cpu *c, int n)
{
	struct spread sp = { .prog_fd = f->prog_fd, .fr = fr, .n = n, .repeat = repeat };
	bool ok = true;
	int started = 0;

	for (int i = 0; i < n; i++) {
		c[i].sp = &sp;
		c[i].err = 0;
		c[i].what = NULL;
		c[i].ran_on = -1;
		c[i].start = c[i].end = 0;
		if (!CHECK_EQ(pthread_create(&c[i].tid, NULL, spread_thread, &c[i]), 0,
			      "pthread_create")) {
			__atomic_store_n(&sp.cancel, 1, __ATOMIC_RELEASE);
			ok = false;
			break;
		}
		started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(c[i].tid, NULL);
		if (!ok)
			continue;
		ok &= CHECK(!c[i].err, "CPU %d: %s: %s", c[i].cpu, c[i].what,
			    strerror(c[i].err));
		ok &= CHECK_EQ(c[i].ran_on, c[i].cpu, "thread ran on its CPU");
	}
	return ok;
}
