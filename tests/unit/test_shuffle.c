// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* trafficgen --shuffle (tests/gen/frames.h): tg_shuffle is a permutation
 * of [0, 2^bits), so that the generator's walk visits each of N sources
 * exactly once a pass, and its order is not the addresses' order. */
#include <stdlib.h>
#include "gen/frames.h"
#include "harness.h"

/* One pass as trafficgen.bpf.c walks it: the counter over the domain,
 * values >= n skipped; every source seen once, within TG_SHUFFLE_TRIES
 * steps of the one before. Returns how many of the n steps kept the
 * order of the addresses (source i followed by i + 1). */
static __u32 one_pass(__u32 n, __u32 key)
{
	__u32 bits = tg_shuffle_bits(n), prev = ~0u, in_order = 0, run = 0;
	__u8 *seen = calloc(n, 1);
	__u64 hits = 0;

	if (!CHECK(seen, "out of memory"))
		return 0;
	for (__u64 c = 0; c < (1ULL << bits); c++) {
		__u32 i = tg_shuffle((__u32)c, bits, key);

		run++;
		if (i >= n)
			continue;
		if (!CHECK(!seen[i], "n %u key %u: source %u twice", n, key, i) ||
		    !CHECK(run <= TG_SHUFFLE_TRIES, "n %u: %u steps to a source", n, run))
			break;
		seen[i] = 1;
		hits++;
		in_order += i == prev + 1;
		prev = i;
		run = 0;
	}
	CHECK(hits == n, "n %u key %u: %llu sources in a pass", n, key,
	      (unsigned long long)hits);
	free(seen);
	return in_order;
}

TEST(shuffle_visits_each_source_once)
{
	static const __u32 ns[] = { 2, 3, 1000, 1024, 1025, 65536, 1000000 };

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		for (__u32 key = 0; key < 3; key++) {
			__u32 in_order = one_pass(ns[i], key * 0x12345u);

			/* a shuffled order: hardly any step follows the
			 * addresses (the cycle's order has all of them) */
			if (ns[i] >= 1000)
				CHECK(in_order < ns[i] / 100, "n %u: %u steps in address order",
				      ns[i], in_order);
		}
}

TEST(shuffle_bits)
{
	CHECK_EQ(tg_shuffle_bits(1), 0u, "bits of 1");
	CHECK_EQ(tg_shuffle_bits(2), 1u, "bits of 2");
	CHECK_EQ(tg_shuffle_bits(1024), 10u, "bits of 1024");
	CHECK_EQ(tg_shuffle_bits(1025), 11u, "bits of 1025");
	CHECK_EQ(tg_shuffle_bits(1ULL << 32), 32u, "bits of 2^32");
}
