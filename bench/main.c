// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ratelimit-bench: the C half of `make bench`; bench/run.sh drives it.
 *
 *   cost [--rounds N] [--ms MS] [--cpu CPU]   per-packet cost (cost.c)
 *   recv --duration S --budget N ...         accuracy receiver (recv.c)
 *   xdp IFACE pass|drop|minimal              attach a baseline and exit
 *   sizes MAX_SOURCES NCPUS                  the sources map's sizing
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
#include "baselines.skel.h"
#include "lib/settings.h"
#include "bench.h"

/* Attach a bare program in native mode by netlink: it stays attached after
 * we exit and goes with the device. */
static int attach_bare(const char *dev, const char *what)
{
	struct baselines *b = baselines__open();
	int ifindex = (int)if_nametoindex(dev), ret = 1;
	struct bpf_program *p;

	if (!b || !ifindex) {
		fprintf(stderr, "ratelimit-bench: %s: no such device\n", dev);
		goto out;
	}
	bpf_map__set_max_entries(b->maps.passed, 4096);
	if (baselines__load(b))
		goto out;
	p = !strcmp(what, "drop") ? b->progs.xdp_drop :
	    !strcmp(what, "minimal") ? b->progs.xdp_minimal : b->progs.xdp_pass;
	if (bpf_xdp_attach(ifindex, bpf_program__fd(p), XDP_FLAGS_DRV_MODE, NULL)) {
		fprintf(stderr, "ratelimit-bench: attach to %s failed\n", dev);
		goto out;
	}
	ret = 0;
out:
	baselines__destroy(b);
	return ret;
}

static int sizes(const char *n, const char *cpus)
{
	__u64 max = strtoull(n, NULL, 10);
	int c = atoi(cpus);

	return bench_print_json(json_pack("{s:I, s:i, s:I, s:i, s:i}",
		"max_sources", (json_int_t)max, "ncpus", c,
		"entries", (json_int_t)rl_sources_map_size(max, c),
		"value_size", (int)sizeof(struct rl_source),
		"key_size", (int)sizeof(struct rl_key))) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "cost"))
		return bench_cost(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "recv"))
		return bench_recv(argc - 1, argv + 1);
	if (argc == 4 && !strcmp(argv[1], "xdp"))
		return attach_bare(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "sizes"))
		return sizes(argv[2], argv[3]);
	if (argc >= 2 && !strcmp(argv[1], "counters"))
		return bench_counters(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "progs"))
		return bench_progs(argc - 1, argv + 1);
	fprintf(stderr,
		"Usage: ratelimit-bench cost [--rounds N] [--ms MS] [--cpu CPU]\n"
		"       ratelimit-bench recv --duration S --budget N [--window-ms MS]\n"
		"                            [--buckets B] [--port P] [--ready FILE] [--times]\n"
		"       ratelimit-bench xdp IFACE pass|drop|minimal\n"
		"       ratelimit-bench sizes MAX_SOURCES NCPUS\n"
		"       ratelimit-bench counters NETNS_PATH DEV\n"
		"       ratelimit-bench progs [--rounds N] [--ms MS] [--cpu CPU] [--src ADDR]\n"
		"                             NAME=PROG_ID...\n"
		"Run by bench/run.sh (make bench).\n");
	return 2;
}
