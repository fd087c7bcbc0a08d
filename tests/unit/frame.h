/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Crafted frames for the host tests of the parsers (include/parse.h,
 * include/scope.h).
 */
#ifndef RL_TEST_FRAME_H
#define RL_TEST_FRAME_H

#include <string.h>
#include <linux/types.h>

/* A zeroed 512-byte frame of Ethernet type `type`: the offset after it. */
static inline size_t eth(__u8 *b, __u16 type)
{
	memset(b, 0, 512);
	b[12] = type >> 8;
	b[13] = type & 0xff;
	return 14;
}

/* A frame buffer whose IP header (after 14 bytes of Ethernet) is 4-byte
 * aligned, as NET_IP_ALIGN leaves it in the kernel. */
#define FRAME_BUF(name) \
	__u8 name##_raw[520] __attribute__((aligned(8))); \
	__u8 *name = name##_raw + 2

#endif /* RL_TEST_FRAME_H */
