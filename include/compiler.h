/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The macros every plain-C header shared by the program and the host
 * tests uses: inlining, and the loads, stores and compare-and-swap another
 * CPU may see.
 */
#ifndef RL_COMPILER_H
#define RL_COMPILER_H

#define RL_INLINE static inline __attribute__((always_inline))

/* Loads and stores another CPU may see: neither torn nor reordered by the
 * compiler. */
#define RL_READ(x)	(*(volatile __typeof__(x) *)&(x))
#define RL_WRITE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))

/* Compare-and-swap of a __u64 (BPF_CMPXCHG with -mcpu=v3; fully ordered):
 * returns what *p held. The host tests may hook it. */
#ifndef RL_CAS
#define RL_CAS(p, old, new)	__sync_val_compare_and_swap((p), (old), (new))
#endif

#endif /* RL_COMPILER_H */
