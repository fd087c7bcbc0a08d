// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The minimal limiter (bench/minimal.bpf.c), loaded as the benchmark
 * compares it: sized for the population, on the program's clock. */
#include <stdio.h>
#include <bpf/libbpf.h>
#include "ratelimit.h"
#include "minimal.skel.h"
#include "lib/maps.h"
#include "lib/settings.h"
#include "lib/values.h"
#include "bench.h"

bool bench_program_clock_coarse(__u64 window_ns)
{
	struct rl_attach_req req;
	struct rl_settings s;
	char err[RL_ERR_LEN];

	rl_attach_req_defaults(&req);
	if (window_ns)
		req.window_ns = window_ns;
	if (rl_settings_build(&s, &req, rl_cpu_ids(), err, sizeof(err))) {
		fprintf(stderr, "ratelimit-bench: settings: %s\n", err);
		return false;
	}
	rl_settings_clock(&s, rl_coarse_tick_ns());	/* as attach does */
	return s.flags & RL_F_COARSE_CLOCK;
}

struct minimal *bench_load_minimal(__u64 max_sources, __u64 limit, __u64 window_ns,
				   bool coarse)
{
	struct minimal *m = minimal__open();

	if (!m)
		return NULL;
	m->rodata->min_limit = limit;
	m->rodata->min_window_ns = window_ns;
	m->rodata->min_coarse = coarse;
	if (bpf_map__set_max_entries(m->maps.min_sources, (__u32)max_sources) ||
	    minimal__load(m)) {
		fprintf(stderr, "ratelimit-bench: loading the minimal limiter (%llu sources) failed\n",
			(unsigned long long)max_sources);
		minimal__destroy(m);
		return NULL;
	}
	return m;
}
