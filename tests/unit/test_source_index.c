// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The index of `sources` (include/source_index.h) as the cache sees it: a
 * bucket's way words are the first line a lookup reads, its slots the
 * second.
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
	CHECK_EQ(offsetof(struct rl_index_bucket, slot), 64,
		 "the slots in the line after the words");
	CHECK_EQ(offsetof(struct rl_index_bucket, placing) % 64, 0,
		 "`placing` in a line of its own");
	CHECK_EQ(sizeof(struct rl_index_bucket) % 64, 0,
		 "a bucket is whole 64-byte lines: every bucket's words in one line");
	CHECK_EQ(sizeof(struct rl_source_pool), 64, "the pool's count a line of its own");
}
