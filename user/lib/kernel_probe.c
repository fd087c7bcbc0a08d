// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Before attach loads the program: does this kernel have what it calls?
 * Without this, an old kernel's answer is a verifier log ("unknown func"),
 * not what is missing and what would work. Newest first, so that the
 * message names the version to upgrade to (README "Kernels and requirements").
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/kernel_probe.h"

static const struct rl_kernel_need needs[] = {
	{ "bpf_map_lookup_percpu_elem()", "5.19", BPF_FUNC_map_lookup_percpu_elem, 0 },
	{ "bpf_loop()", "5.17", BPF_FUNC_loop, 0 },
	{ "bpf_ktime_get_coarse_ns()", "5.11", BPF_FUNC_ktime_get_coarse_ns, 0 },
	{ "BPF_MAP_TYPE_RINGBUF", "5.8", 0, BPF_MAP_TYPE_RINGBUF },
};

const struct rl_kernel_need *rl_kernel_missing(rl_kernel_probe_fn probe)
{
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
		if (probe(&needs[i]) == 0)
			return &needs[i];
	return NULL;
}

/*
 * Is helper `id` callable from XDP? A two-instruction program that calls
 * it: the verifier names a helper it does not know ("invalid func") or
 * does not allow here ("unknown func") in its log; any other outcome means
 * it knows it. libbpf 1.1's libbpf_probe_bpf_helper() does the same but
 * reads its log buffer without clearing it first (valgrind: uninitialised
 * reads), so the log here starts empty.
 */
static int probe_helper(int id)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = id },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	char log[4096] = "";
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = log,
		    .log_size = sizeof(log), .log_level = 1);
	int fd;

	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, NULL, "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (errno == EPERM)
		return -EPERM;	/* not allowed to tell */
	return !(strstr(log, "invalid func ") || strstr(log, "unknown func "));
}

int rl_kernel_probe(const struct rl_kernel_need *n)
{
	if (n->helper)
		return probe_helper(n->helper);
	return libbpf_probe_bpf_map_type(n->map_type, NULL);
}
