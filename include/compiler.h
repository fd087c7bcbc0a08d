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

/* Hide what the compiler knows of a value's range, so that it keeps a mask
 * it could prove redundant but the verifier cannot (6.1's does not learn
 * a register's range from a comparison of a copy of it). */
#define RL_OPAQUE(x)	__asm__ volatile("" : "+r"(x))

/* Compare-and-swap of a __u64 (BPF_CMPXCHG with -mcpu=v3; fully ordered):
 * returns what *p held. The host tests may hook it. */
#ifndef RL_CAS
#define RL_CAS(p, old, new)	__sync_val_compare_and_swap((p), (old), (new))
#endif

#endif /* RL_COMPILER_H */
