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
#include <stdio.h>
#include <unistd.h>
#include <zlib.h>
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

void rl_rt_probe_init(struct rl_rt_probe *p, const char *version,
		      const char *release, char *buf, size_t size)
{
	p->realtime_path = "/sys/kernel/realtime";
	p->version = version;
	p->config_paths[0] = "/proc/config.gz";
	p->config_paths[1] = NULL;
	if (release && (size_t)snprintf(buf, size, "/boot/config-%s", release) < size)
		p->config_paths[1] = buf;
}

/* Does `s` name PREEMPT_RT as a word (not PREEMPT_RTX)? */
static int names_preempt_rt(const char *s)
{
	const char *w = "PREEMPT_RT";
	size_t n = strlen(w);

	for (const char *at = strstr(s, w); at; at = strstr(at + 1, w)) {
		char after = at[n];

		if ((at == s || !(at[-1] == '_' || (at[-1] >= 'A' && at[-1] <= 'Z'))) &&
		    !(after == '_' || (after >= 'A' && after <= 'Z') ||
		      (after >= '0' && after <= '9')))
			return 1;
	}
	return 0;
}

/* 1: the config at `path` sets CONFIG_PREEMPT_RT=y, 0: it does not, -errno: it
 * cannot be read. gzread() reads a plain file as it is. */
static int config_preempt_rt(const char *path)
{
	char line[256];
	gzFile f = gzopen(path, "rb");
	int rt = 0;

	if (!f)
		return errno ? -errno : -ENOMEM;
	while (gzgets(f, line, sizeof(line)))
		if (!strcmp(line, "CONFIG_PREEMPT_RT=y\n") ||
		    !strcmp(line, "CONFIG_PREEMPT_RT=y")) {
			rt = 1;
			break;
		}
	gzclose(f);
	return rt;
}

enum rl_rt_sign rl_preempt_rt(const struct rl_rt_probe *p)
{
	if (p->realtime_path) {
		FILE *f = fopen(p->realtime_path, "r");
		char c = 0;

		if (f) {	/* none: not the RT patch set */
			if (fread(&c, 1, 1, f) != 1)
				c = 0;
			fclose(f);
			if (c == '1')
				return RL_RT_REALTIME;
		}
	}
	if (p->version && names_preempt_rt(p->version))
		return RL_RT_VERSION;
	for (int i = 0; i < 2; i++) {
		int rt;

		if (!p->config_paths[i])
			continue;
		rt = config_preempt_rt(p->config_paths[i]);
		if (rt >= 0)
			return rt ? RL_RT_CONFIG : RL_RT_NONE;
	}
	return RL_RT_NONE;
}
