// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxdp's own dispatcher program (Debian's xdp-dispatcher.o, as libxdp
 * loads it), configured for one entry that chain-calls on XDP_PASS, and
 * loaded as a plain XDP program: its entry keeps the body it has before
 * libxdp replaces it with a program by freplace (it returns a value the
 * config chain-calls on, as libxdp's dispatcher does for XDP_PASS).
 * `ratelimit-bench cost` runs it to measure, natively, what the
 * dispatcher adds to each frame on kernels that refuse the freplace
 * links that would put xdp-ratelimit in it (this machine's 6.18).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "bench.h"

/* libxdp's xdp_dispatcher.h: the config's magic, and what an entry
 * returns before a program replaces it */
#define XDP_DISPATCHER_MAGIC	236
#define XDP_DISPATCHER_RETVAL	31

/* where libxdp looks for it: LIBXDP_OBJECT_PATH, else its build's path */
static const char *const dirs[] = {
	"/usr/lib/x86_64-linux-gnu/bpf", "/usr/lib/aarch64-linux-gnu/bpf",
	"/usr/lib/bpf", "/usr/local/lib/bpf",
};

/* Offset in `conf` of member NAME of its struct (BTF), or -1. */
static long member_offset(const struct btf *btf, const char *name)
{
	int id = btf__find_by_name_kind(btf, "xdp_dispatcher_config", BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, (__u32)id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), name))
			return (long)(m->offset / 8);
	return -1;
}

static struct bpf_object *open_object(char *path, size_t len)
{
	const char *env = getenv("LIBXDP_OBJECT_PATH");
	struct bpf_object *obj;

	for (int i = -1; i < (int)(sizeof(dirs) / sizeof(dirs[0])); i++) {
		const char *d = i < 0 ? env : dirs[i];

		if (!d)
			continue;
		snprintf(path, len, "%s/xdp-dispatcher.o", d);
		if (access(path, R_OK))
			continue;
		obj = bpf_object__open_file(path, NULL);
		if (obj)
			return obj;
	}
	return NULL;
}

struct bpf_object *bench_load_dispatcher(int *prog_fd)
{
	char path[256];
	struct bpf_object *obj = open_object(path, sizeof(path));
	struct bpf_program *p, *main_prog = NULL;
	long n_off, a_off;
	struct bpf_map *rodata = NULL, *m;
	const void *init;
	__u8 conf[256];
	size_t size = 0;

	if (!obj) {
		fprintf(stderr, "ratelimit-bench: libxdp's xdp-dispatcher.o not found (libxdp1; LIBXDP_OBJECT_PATH)\n");
		return NULL;
	}
	bpf_object__for_each_program(p, obj) {
		bool is_main = !strcmp(bpf_program__name(p), "xdp_dispatcher");

		bpf_program__set_autoload(p, is_main);
		if (is_main)
			main_prog = p;
	}
	bpf_object__for_each_map(m, obj)
		if (strstr(bpf_map__name(m), ".rodata"))
			rodata = m;
	n_off = member_offset(bpf_object__btf(obj), "num_progs_enabled");
	a_off = member_offset(bpf_object__btf(obj), "chain_call_actions");
	init = rodata ? bpf_map__initial_value(rodata, &size) : NULL;
	if (!main_prog || !init || size > sizeof(conf) || n_off < 0 || a_off < 0 ||
	    (size_t)a_off + sizeof(__u32) > size) {
		fprintf(stderr, "ratelimit-bench: %s is not a dispatcher this benchmark knows\n",
			path);
		bpf_object__close(obj);
		return NULL;
	}
	/* as libxdp writes it for one program: enabled, chain on XDP_PASS;
	 * and on the value the entry's own body returns, so that the frame
	 * goes on to the dispatcher's end as a passed one does */
	memcpy(conf, init, size);
	conf[0] = XDP_DISPATCHER_MAGIC;
	conf[n_off] = 1;
	*(__u32 *)(conf + a_off) = 1U << XDP_PASS | 1U << XDP_DISPATCHER_RETVAL;
	if (bpf_map__set_initial_value(rodata, conf, size) || bpf_object__load(obj)) {
		fprintf(stderr, "ratelimit-bench: loading %s: %s\n", path, strerror(errno));
		bpf_object__close(obj);
		return NULL;
	}
	*prog_fd = bpf_program__fd(main_prog);
	return obj;
}
