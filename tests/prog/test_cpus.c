// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The CPUs a refresh reads (include/cpus.h): the program records each CPU
 * that writes a budget's state, and only those. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "cpus.h"
#include "../harness.h"
#include "fixture.h"


/* The joined CPUs, as the `cpus` pin holds them. */
static bool read_cpus(struct fixture *f, struct rl_cpus *c)
{
	__u32 zero = 0;

	return CHECK(!bpf_map_lookup_elem(f->m.cpus, &zero, c), "read cpus: %s",
		     strerror(errno));
}

/* Exactly the CPUs of `want` (n of them) joined, of every possible one. */
static void check_joined(const struct rl_cpus *c, const int *want, int n,
			 const char *when)
{
	for (__u32 cpu = 0; cpu < RL_CPUS_BITS; cpu++) {
		int w = 0;

		for (int i = 0; i < n; i++)
			w |= want[i] == (int)cpu;
		if (!CHECK(rl_cpus_has(c, cpu) == w, "%s: CPU %u joined %d, want %d",
			   when, cpu, rl_cpus_has(c, cpu), w))
			return;
	}
	CHECK_EQ(c->high, 0, "no CPU past the bits");
}

/*
 * A fresh attachment has no CPU; an unlimited source's packet on a CPU
 * joins it, in the first bucket too (its window counts, and a rule set
 * later judges it), a limited source's too; a second CPU joins when it
 * writes, not before.
 */
TEST(cpus_joined_by_the_cpus_that_write)
{
	struct fixture f;
	struct frame fr, free_fr;
	struct rl_cpus c;
	int cpus[2], n = fixture_cpus(cpus, 2);

	if (!fixture_open(&f, NULL))
		goto out;
	if (!read_cpus(&f, &c))
		goto out;
	check_joined(&c, NULL, 0, "fresh");
	if (!fixture_pps(&f, "198.18.0.0/24", 5))
		goto out;
	frame_udp(&fr, "198.18.0.7", 64, 0);
	frame_udp(&free_fr, "198.18.9.9", 64, 0);	/* no rule covers it */
	/* at 1 ns: the first bucket, which a fresh value needs no roll into */
	CHECK_EQ(fixture_run(&f, free_fr.data, free_fr.len, cpus[n - 1], 1), XDP_PASS,
		 "an unlimited source passes");
	if (read_cpus(&f, &c))
		check_joined(&c, &cpus[n - 1], 1, "after an unlimited source's packet");
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, cpus[n - 1], T0), XDP_PASS,
		 "a limited source passes");
	if (read_cpus(&f, &c))
		check_joined(&c, &cpus[n - 1], 1, "after a limited source's packet");
	if (n < 2) {
		printf("    one CPU to run on: the second CPU's join not checked\n");
		goto out;
	}
	CHECK_EQ(fixture_run(&f, fr.data, fr.len, cpus[0], T0), XDP_PASS,
		 "the source passes on another CPU");
	if (read_cpus(&f, &c))
		check_joined(&c, cpus, 2, "after a packet on a second CPU");
out:
	fixture_close(&f);
}
