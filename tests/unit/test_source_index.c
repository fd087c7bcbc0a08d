// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The index of `sources` (include/source_index.h) as an attacker and the
 * cache see it: a bucket's way words are the one line a lookup reads, and
 * the seed is what keeps anyone from aiming sources at one bucket.
 */
#include <stddef.h>
#include "source_index.h"
#include "harness.h"

/* The array lays buckets end to end (its values rounded to 8 bytes), from
 * a page: unless a bucket is whole lines, most buckets' 16 words straddle
 * two lines, and a CPU taking `placing` writes the line the next bucket's
 * lookups read. */
TEST(index_bucket_whole_lines)
{
	CHECK_EQ(offsetof(struct rl_index_bucket, way), 0, "the words first");
	CHECK_EQ(sizeof(struct rl_index_bucket) % 64, 0,
		 "a bucket is whole 64-byte lines: every bucket's words in one line");
}

/* Two keys that hash alike under every seed share their buckets, tag and
 * home wherever the index puts them: nobody may find such pairs without
 * the seed. Here: the top bit of the first half flipped, and the bits
 * the first mix moves it to in the second. */
TEST(index_hash_no_seed_free_collisions)
{
	static const __u64 seeds[] = { 1, 0x5eed5eed5eed5eedULL, 0x0123456789abcdefULL };
	__u64 k[2] = { 0x20010db800000001ULL, 0x0000000000000042ULL };
	__u64 c[2] = { k[0] ^ (1ULL << 63), k[1] ^ (1ULL << 63 | 1ULL << 34) };
	int same = 0;

	for (unsigned int i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		same += rl_index_hash(k, seeds[i]) == rl_index_hash(c, seeds[i]);
	CHECK_EQ(same, 0, "seeds under which the two keys hash alike");
}
