// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What the compact per-source state (layout 3) asks of attach and quota
 * set: a loop bound over CPU ids, not a count of CPUs; budgets the 32-bit
 * window counts exactly, refused beyond with the allowed range; the coarse
 * clock only for buckets of many ticks; PREEMPT_RT kernels recognised.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "lib/kernel_probe.h"
#include "lib/maps.h"
#include "lib/rule.h"
#include "lib/settings.h"
#include "lib/values.h"
#include "harness.h"

TEST(cpu_ids_bound_not_count)
{
	static const struct {
		const char *mask;
		int bound;
	} ok[] = {
		{ "0\n", 1 }, { "0-1\n", 2 }, { "0-3,8-11\n", 12 },
		{ "0,2,4,6\n", 7 }, { "0-7,64-127", 128 }, { "5", 6 },
		{ "0-8191\n", 8192 },
	};
	static const char *const bad[] = { "", "\n", "a", "3-1", "0-", "-1", "0,,1", "0 1" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CHECK(rl_cpu_mask_bound(ok[i].mask) == ok[i].bound,
		      "'%s': got %d, want %d", ok[i].mask,
		      rl_cpu_mask_bound(ok[i].mask), ok[i].bound);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(rl_cpu_mask_bound(bad[i]) == -EINVAL, "'%s' refused", bad[i]);
}

TEST(settings_cpu_ids_range)
{
	struct rl_attach_req r;
	struct rl_settings s;
	char err[256] = "";

	rl_attach_req_defaults(&r);
	CHECK_EQ(rl_settings_build(&s, &r, RL_MAX_CPUS, err, sizeof(err)), 0,
		 "8192 CPU ids (ids 0 to 8191) accepted");
	CHECK_EQ(s.ncpus, RL_MAX_CPUS, "ncpus is the id bound");
	CHECK(rl_settings_build(&s, &r, RL_MAX_CPUS + 1, err, sizeof(err)) != 0 &&
	      strstr(err, "ids 0 to 8191"), "over 8192 refused with the range: %s", err);
}

TEST(budget_range_refused_with_the_range)
{
	struct rl_rule_change c = { .have_pps = true, .pps = 71582788 };
	char err[512] = "";

	/* 71,582,788 pps x 60 s = 4,294,967,280: fits; the next million does not */
	CHECK_EQ(rl_budgets_fit(&c, 60 * RL_NSEC_PER_SEC, "", err, sizeof(err)), 0,
		 "71582788 pps over 1m fits");
	c.pps = 72000000;
	CHECK(rl_budgets_fit(&c, 60 * RL_NSEC_PER_SEC, "", err, sizeof(err)) == -ERANGE &&
	      strstr(err, "--pps 72000000") && strstr(err, "--pps 71582788 or less"),
	      "refused, naming the most that fits: %s", err);
	CHECK(rl_budgets_fit(&c, 60 * RL_NSEC_PER_SEC, "default-", err, sizeof(err)) == -ERANGE &&
	      strstr(err, "--default-pps 71582788 or less"),
	      "attach names its own option: %s", err);
	c = (struct rl_rule_change){ .have_bps = true, .bps = 100000000 };
	CHECK_EQ(rl_budgets_fit(&c, RL_NSEC_PER_SEC, "", err, sizeof(err)), 0,
		 "100 MB/s over 1 s fits");
	CHECK(rl_budgets_fit(&c, 60 * RL_NSEC_PER_SEC, "", err, sizeof(err)) == -ERANGE &&
	      strstr(err, "--bps 71582788 or less"), "100 MB/s over 1m refused: %s", err);
	c = (struct rl_rule_change){ .have_agg_bps = true, .agg_bps = 5000000000ULL };
	CHECK(rl_budgets_fit(&c, RL_NSEC_PER_SEC, "", err, sizeof(err)) == -ERANGE &&
	      strstr(err, "--aggregate-bps"), "aggregate too: %s", err);
	c = (struct rl_rule_change){ .have_new_pps = true, .new_pps = 5000000000ULL };
	CHECK(rl_budgets_fit(&c, RL_NSEC_PER_SEC, "", err, sizeof(err)) == -ERANGE &&
	      strstr(err, "--new-pps 4294967294 or less"), "newcomer budget too: %s", err);
	c = (struct rl_rule_change){ .have_bps = true, .bps = RL_UNLIMITED,
				     .have_pps = true, .pps = 0 };
	CHECK_EQ(rl_budgets_fit(&c, 60 * RL_NSEC_PER_SEC, "", err, sizeof(err)), 0,
		 "unlimited and 0 always fit");
}

/* quota set's check tells a budget out of range (-ERANGE: the CLI's bad
 * usage, exit 2, as attach's) from a rule the interface cannot take
 * (-EINVAL: exit 1). */
TEST(rule_check_tells_range_from_failure)
{
	struct rl_settings s = { .window_ns = RL_NSEC_PER_SEC, .v6_prefix = 64 };
	struct rl_rule_change c = { .have_pps = true, .pps = 5000000000ULL };
	struct rl_prefix v4, v6;
	char err[512] = "";

	if (!CHECK_EQ(rl_parse_prefix("198.18.0.0/15", &v4, err, sizeof(err)), 0, "v4") ||
	    !CHECK_EQ(rl_parse_prefix("2001:db8::/96", &v6, err, sizeof(err)), 0, "v6"))
		return;
	CHECK(rl_rule_check(&s, &v4, NULL, &c, err, sizeof(err)) == -ERANGE &&
	      strstr(err, "--pps 4294967294 or less"), "5G pps over 1 s: %s", err);
	c.pps = 1000;
	CHECK_EQ(rl_rule_check(&s, &v4, NULL, &c, err, sizeof(err)), 0, "1000 pps fits");
	CHECK(rl_rule_check(&s, &v6, NULL, &c, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "/64"), "a /96 under --ipv6-prefix 64: %s", err);
}

TEST(coarse_clock_by_bucket_width)
{
	struct rl_settings s = { .bucket_ns = 100 * RL_NSEC_PER_MSEC };

	rl_settings_clock(&s, 4 * RL_NSEC_PER_MSEC);	/* HZ=250: 25 ticks */
	CHECK(s.flags & RL_F_COARSE_CLOCK, "100 ms buckets, 4 ms ticks: coarse");
	rl_settings_clock(&s, 10 * RL_NSEC_PER_MSEC);	/* HZ=100: 10 ticks */
	CHECK(!(s.flags & RL_F_COARSE_CLOCK), "100 ms buckets, 10 ms ticks: precise");
	s.bucket_ns = 80 * RL_NSEC_PER_MSEC;
	rl_settings_clock(&s, 4 * RL_NSEC_PER_MSEC);
	CHECK(s.flags & RL_F_COARSE_CLOCK, "exactly 20 ticks: coarse");
	s.bucket_ns = 80 * RL_NSEC_PER_MSEC - 1;
	rl_settings_clock(&s, 4 * RL_NSEC_PER_MSEC);
	CHECK(!(s.flags & RL_F_COARSE_CLOCK), "under 20 ticks: precise");
	rl_settings_clock(&s, 0);
	CHECK(!(s.flags & RL_F_COARSE_CLOCK), "tick unknown: precise");
}

TEST(cpu_order_recognised)
{
	CHECK_EQ(rl_cpu_ordered("x86_64"), 1, "x86_64: ordered (TSO)");
	CHECK_EQ(rl_cpu_ordered("aarch64"), 0, "aarch64: weakly ordered, refused");
	CHECK_EQ(rl_cpu_ordered("riscv64"), 0, "riscv64: refused");
	CHECK_EQ(rl_cpu_ordered("ppc64le"), 0, "ppc64le: refused");
	CHECK_EQ(rl_cpu_ordered(""), 0, "unknown: refused");
}

/* Fake kernels for rl_kernel_missing(): one without bpf_loop (5.15), one
 * whose probe cannot tell, one with everything. */
static int kernel_5_15(const struct rl_kernel_need *n)
{
	/* the ring buffer and the coarse clock, not bpf_loop nor
	 * bpf_map_lookup_percpu_elem */
	return strcmp(n->since, "5.17") != 0 && strcmp(n->since, "5.19") != 0;
}

static int kernel_unknown(const struct rl_kernel_need *n)
{
	(void)n;
	return -EPERM;
}

static int kernel_recent(const struct rl_kernel_need *n)
{
	(void)n;
	return 1;
}

TEST(kernel_missing_named)
{
	const struct rl_kernel_need *n = rl_kernel_missing(kernel_5_15);

	if (!CHECK(n != NULL, "5.15: something missing"))
		return;
	CHECK(strcmp(n->what, "bpf_map_lookup_percpu_elem()") == 0 &&
	      strcmp(n->since, "5.19") == 0,
	      "5.15: the newest need named first, got %s (%s)", n->what, n->since);
	CHECK(rl_kernel_missing(kernel_unknown) == NULL,
	      "a probe that cannot tell refuses nothing (the load says why)");
	CHECK(rl_kernel_missing(kernel_recent) == NULL, "6.1: nothing missing");
	/* this machine's kernel has it all: the real probe agrees, and it
	 * does tell a helper no kernel has */
	if (geteuid() == 0) {
		struct rl_kernel_need none = { "no such helper", "-", 100000, 0 };

		CHECK(rl_kernel_missing(rl_kernel_probe) == NULL,
		      "this kernel: nothing missing");
		CHECK_EQ(rl_kernel_probe(&none), 0, "a helper id no kernel has");
	}
}

/* A file of the test's own with `text` (gzipped when `gz`); its path. */
static bool rt_file(char *path, const char *text, int gz)
{
	int fd = mkstemp(path);
	gzFile z;

	if (!CHECK(fd >= 0, "mkstemp"))
		return false;
	if (!gz) {
		bool ok = CHECK_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text), "write");

		close(fd);
		return ok;
	}
	z = gzdopen(fd, "wb");
	if (!CHECK(z != NULL, "gzdopen"))
		return false;
	CHECK_EQ(gzputs(z, text), (int)strlen(text), "gzputs");
	return CHECK_EQ(gzclose(z), Z_OK, "gzclose");
}

/* The RT patch set by /sys/kernel/realtime, mainline PREEMPT_RT (6.12+, no
 * such file) by uname -v or the kernel's config, plain or gzipped, each
 * injected here. */
TEST(preempt_rt_recognised)
{
	char rt1[] = "/tmp/rl-realtime-XXXXXX", rt0[] = "/tmp/rl-realtime-XXXXXX";
	char cfg_rt[] = "/tmp/rl-config-XXXXXX", cfg_gz[] = "/tmp/rl-config-XXXXXX";
	char cfg_no[] = "/tmp/rl-config-XXXXXX";
	const char *mainline = "#1 SMP PREEMPT_RT Debian 6.12.9-1 (2025-01-14)";
	const char *plain = "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)";
	struct rl_rt_probe p = { 0 };

	if (!rt_file(rt1, "1\n", 0) || !rt_file(rt0, "0\n", 0) ||
	    !rt_file(cfg_rt, "CONFIG_PREEMPT=y\nCONFIG_PREEMPT_RT=y\nCONFIG_HZ=250\n", 0) ||
	    !rt_file(cfg_gz, "CONFIG_SMP=y\nCONFIG_PREEMPT_RT=y\n", 1) ||
	    !rt_file(cfg_no, "CONFIG_PREEMPT_DYNAMIC=y\n# CONFIG_PREEMPT_RT is not set\n", 1))
		goto out;
	CHECK_EQ(rl_preempt_rt(&p), RL_RT_NONE, "nothing to look at");
	p.realtime_path = rt1;
	CHECK_EQ(rl_preempt_rt(&p), RL_RT_REALTIME, "realtime 1: the RT patch set");
	p.realtime_path = rt0;
	CHECK_EQ(rl_preempt_rt(&p), RL_RT_NONE, "realtime 0");
	p.realtime_path = "/nonexistent/realtime";
	p.version = plain;
	CHECK_EQ(rl_preempt_rt(&p), RL_RT_NONE, "PREEMPT_DYNAMIC is not RT");
	p.version = mainline;
	CHECK_EQ(rl_preempt_rt(&p), RL_RT_VERSION, "mainline: uname -v, no realtime file");
	p.version = "#1 SMP PREEMPT_RTX";
	CHECK_EQ(rl_preempt_rt(&p), RL_RT_NONE, "a word, not a prefix");
	p.version = "PREEMPT_RT";
	CHECK_EQ(rl_preempt_rt(&p), RL_RT_VERSION, "the whole of it");
	p.version = plain;
	p.config_paths[0] = cfg_rt;
	CHECK_EQ(rl_preempt_rt(&p), RL_RT_CONFIG, "a plain config");
	p.config_paths[0] = cfg_gz;
	CHECK_EQ(rl_preempt_rt(&p), RL_RT_CONFIG, "a gzipped one (/proc/config.gz)");
	p.config_paths[0] = cfg_no;
	p.config_paths[1] = cfg_rt;
	CHECK_EQ(rl_preempt_rt(&p), RL_RT_NONE, "not set: the first config read decides");
	p.config_paths[0] = "/nonexistent/config.gz";
	CHECK_EQ(rl_preempt_rt(&p), RL_RT_CONFIG, "none there: /boot's");
	p.config_paths[1] = "/nonexistent/config";
	CHECK_EQ(rl_preempt_rt(&p), RL_RT_NONE, "no config to read");
	/* this machine's places */
	{
		char buf[64];

		rl_rt_probe_init(&p, plain, "6.1.0-28-amd64", buf, sizeof(buf));
		CHECK(!strcmp(p.realtime_path, "/sys/kernel/realtime") &&
		      !strcmp(p.config_paths[0], "/proc/config.gz") &&
		      !strcmp(p.config_paths[1], "/boot/config-6.1.0-28-amd64"),
		      "this kernel's places");
		rl_rt_probe_init(&p, plain, "a-release-longer-than-the-buffer-of-the-caller-here-by-far",
				 buf, 16);
		CHECK(p.config_paths[1] == NULL, "a path cut short is not looked at");
	}
out:
	unlink(rt1);
	unlink(rt0);
	unlink(cfg_rt);
	unlink(cfg_gz);
	unlink(cfg_no);
}
