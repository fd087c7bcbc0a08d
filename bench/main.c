// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ratelimit-bench: the C half of `make bench`; bench/run.sh drives it.
 *
 *   cost [--rounds N] [--ms MS] [--cpu CPU]   per-packet cost (cost.c)
 *   cpus [--rounds N] [--ms MS] [--cpu CPU]   the same against possible CPUs (cpus.c)
 *   recv --duration S --budget N ...         accuracy receiver (recv.c)
 *   xdp IFACE pass|drop                      attach a baseline and exit
 *   xdp IFACE minimal [SOURCES [WINDOW_S]]   the minimal limiter, likewise
 *   sizes MAX_SOURCES NCPUS                  the per-source maps' sizing
 *   counters NETNS_PATH DEV                  frames received, passed, dropped
 *   progs NAME=ID...                         per-packet cost of loaded programs
 */
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>
#include <bpf/libbpf.h>
#include "ratelimit.h"
#include "source_index.h"
#include "baselines.skel.h"
#include "minimal.skel.h"
#include "lib/maps.h"
#include "lib/map_memory.h"
#include "lib/settings.h"
#include "bench.h"

/* Attach in native mode by netlink: it stays attached after we exit and
 * goes with the device. */
static int attach_fd(const char *dev, int fd)
{
	int ifindex = (int)if_nametoindex(dev);

	if (!ifindex) {
		fprintf(stderr, "ratelimit-bench: %s: no such device\n", dev);
		return 1;
	}
	if (bpf_xdp_attach(ifindex, fd, XDP_FLAGS_DRV_MODE, NULL)) {
		fprintf(stderr, "ratelimit-bench: attach to %s failed\n", dev);
		return 1;
	}
	return 0;
}

static int attach_bare(const char *dev, const char *what)
{
	struct baselines *b = baselines__open();
	int ret = 1;

	if (!b)
		return 1;
	bpf_map__set_max_entries(b->maps.passed, 4096);
	if (!baselines__load(b))
		ret = attach_fd(dev, bpf_program__fd(!strcmp(what, "drop") ? b->progs.xdp_drop :
						     b->progs.xdp_pass));
	baselines__destroy(b);
	return ret;
}

/* The minimal limiter with room for SOURCES (default 65,536), as an LRU
 * hash needs it (the program's `history`: rl_sources_map_size), 1 packet a
 * window of WINDOW_S seconds (default 1: --default-pps 1), on the clock
 * xdp-ratelimit's attach with that window chooses here. */
static int attach_minimal(const char *dev, int argc, char **argv)
{
	__u64 n = argc > 0 ? strtoull(argv[0], NULL, 10) : 65536;
	__u64 win = (argc > 1 ? strtoull(argv[1], NULL, 10) : 1) * RL_NSEC_PER_SEC;
	struct minimal *m;
	int ret;

	if (!n || !win || n > UINT32_MAX) {
		fprintf(stderr, "ratelimit-bench: xdp minimal: bad SOURCES or WINDOW_S\n");
		return 2;
	}
	/* the entries xdp-ratelimit's --max-sources SOURCES gives its LRU
	 * hash (history; `sources` itself up to layout 13) */
	m = bench_load_minimal(rl_sources_map_size(n, rl_ncpus()), 1, win,
			       bench_program_clock_coarse(win));
	if (!m)
		return 1;
	ret = attach_fd(dev, bpf_program__fd(m->progs.xdp_minimal));
	minimal__destroy(m);
	return ret;
}

/* The maps --max-sources MAX sizes per source on NCPUS possible CPUs:
 * `sources` (a slot per way of the index), `source_index` (its buckets),
 * `source_keys` (a key per slot) and `history` (an LRU hash), their
 * shapes and the bytes the library's model of the kernel's accounting
 * gives each (user/lib/map_memory.c): the projection to other CPU counts
 * (64) and the sweep's memory check. */
static int sizes(const char *n, const char *cpus)
{
	__u64 max = strtoull(n, NULL, 10);
	int c = atoi(cpus);
	__u32 nb = rl_index_buckets(max);
	struct rl_map_shape src = {
		.type = BPF_MAP_TYPE_PERCPU_ARRAY, .key_size = sizeof(__u32),
		.value_size = sizeof(struct rl_source), .max_entries = nb * RL_INDEX_WAYS,
	};
	struct rl_map_shape idx = {
		.type = BPF_MAP_TYPE_ARRAY, .key_size = sizeof(__u32),
		.value_size = sizeof(struct rl_index_bucket), .max_entries = nb,
		.flags = BPF_F_MMAPABLE,
	};
	struct rl_map_shape keys = {
		.type = BPF_MAP_TYPE_ARRAY, .key_size = sizeof(__u32),
		.value_size = sizeof(struct rl_key), .max_entries = src.max_entries,
		.flags = BPF_F_MMAPABLE,
	};
	struct rl_map_shape hist = {
		.type = BPF_MAP_TYPE_LRU_HASH, .key_size = sizeof(struct rl_key),
		.value_size = sizeof(struct rl_history),
		.max_entries = rl_sources_map_size(max, c),
	};
	__u64 sb = rl_map_bytes(&src, c, NULL), ib = rl_map_bytes(&idx, c, NULL);
	__u64 kb = rl_map_bytes(&keys, c, NULL), hb = rl_map_bytes(&hist, c, NULL);

	return bench_print_json(json_pack(
		"{s:I, s:i, s:I, s:I, s:I, s:i, s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I}",
		"max_sources", (json_int_t)max, "ncpus", c,
		"slots", (json_int_t)src.max_entries, "buckets", (json_int_t)nb,
		"history_entries", (json_int_t)hist.max_entries,
		"value_size", (int)sizeof(struct rl_source),
		"bucket_size", (int)sizeof(struct rl_index_bucket),
		"history_value_size", (int)sizeof(struct rl_history),
		"key_size", (int)sizeof(struct rl_key),
		"sources_bytes", (json_int_t)sb, "index_bytes", (json_int_t)ib,
		"keys_bytes", (json_int_t)kb, "history_bytes", (json_int_t)hb,
		"memlock", (json_int_t)(sb + ib + kb + hb))) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "cost"))
		return bench_cost(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "cpus"))
		return bench_cpus(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "recv"))
		return bench_recv(argc - 1, argv + 1);
	if (argc >= 4 && argc <= 6 && !strcmp(argv[1], "xdp") && !strcmp(argv[3], "minimal"))
		return attach_minimal(argv[2], argc - 4, argv + 4);
	if (argc == 4 && !strcmp(argv[1], "xdp") &&
	    (!strcmp(argv[3], "pass") || !strcmp(argv[3], "drop")))
		return attach_bare(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "sizes"))
		return sizes(argv[2], argv[3]);
	if (argc >= 2 && !strcmp(argv[1], "counters"))
		return bench_counters(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "progs"))
		return bench_progs(argc - 1, argv + 1);
	fprintf(stderr,
		"Usage: ratelimit-bench cost [--rounds N] [--ms MS] [--cpu CPU]\n"
		"       ratelimit-bench cpus [--rounds N] [--ms MS] [--cpu CPU]\n"
		"       ratelimit-bench recv --duration S --budget N [--window-ms MS]\n"
		"                            [--buckets B] [--port P] [--ready FILE] [--times]\n"
		"       ratelimit-bench xdp IFACE pass|drop\n"
		"       ratelimit-bench xdp IFACE minimal [SOURCES [WINDOW_S]]\n"
		"       ratelimit-bench sizes MAX_SOURCES NCPUS\n"
		"       ratelimit-bench counters NETNS_PATH DEV\n"
		"       ratelimit-bench progs [--rounds N] [--ms MS] [--cpu CPU] [--src ADDR]\n"
		"                             NAME=PROG_ID...\n"
		"Run by bench/run.sh (make bench).\n");
	return 2;
}
