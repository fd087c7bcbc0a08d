/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Reference model of one sliding window, for the host unit tests: written
 * from xdp-ratelimit(8) "Window", not from include/window.h, and as naive as
 * possible: a list of the passes, each with the index of the bucket it was
 * counted in, on the global grid bucket(t) = floor(t / width).
 *
 * A packet at t is judged in bucket e = bucket(t); it passes iff the passes
 * with index in [e - B + 1, e], plus this one, fit every budget that is set.
 *
 * Time is a 128-bit continuous clock, so a u64 clock that wraps is the low
 * 64 bits of it (for widths dividing 2^64 the two grids coincide).
 *
 * Clock going backwards (documented in window.h): a packet from behind the
 * newest bucket counts in the newest bucket; the newest bucket never moves
 * back (the history is tagged by bucket index).
 */
#ifndef RL_TEST_MODEL_H
#define RL_TEST_MODEL_H

#include <stdint.h>
#include <stdlib.h>
#include "ratelimit.h"

typedef unsigned __int128 u128;

struct model_pass {
	u128 idx;
	uint64_t len;
};

struct model {
	uint64_t width;
	uint32_t nbuckets;
	uint64_t pkt_budget;	/* RL_UNLIMITED: none */
	uint64_t byte_budget;
	/* passes in arrival order (so by bucket index: see model_judge) */
	struct model_pass *pass;
	size_t cap, first, n;
	uint64_t bytes;
	u128 head;		/* newest bucket, once anchored */
	int anchored;		/* a packet was judged */
};

static inline void model_init(struct model *m, uint64_t width, uint32_t nb,
			      uint64_t pkt_budget, uint64_t byte_budget)
{
	m->width = width;
	m->nbuckets = nb;
	m->pkt_budget = pkt_budget;
	m->byte_budget = byte_budget;
	m->pass = NULL;
	m->cap = m->first = m->n = 0;
	m->bytes = 0;
	m->head = 0;
	m->anchored = 0;
}

static inline void model_free(struct model *m)
{
	free(m->pass);
	m->pass = NULL;
}

static inline struct model_pass *model_at(struct model *m, size_t i)
{
	return &m->pass[(m->first + i) % m->cap];
}

static inline void model_push(struct model *m, u128 idx, uint64_t len)
{
	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		struct model_pass *np = malloc(ncap * sizeof(*np));

		if (!np)
			abort();
		for (size_t i = 0; i < m->n; i++)
			np[i] = *model_at(m, i);
		free(m->pass);
		m->pass = np;
		m->cap = ncap;
		m->first = 0;
	}
	m->pass[(m->first + m->n) % m->cap] = (struct model_pass){ idx, len };
	m->n++;
	m->bytes += len;
}

/* Move to time t: returns the bucket the packet is judged and counted in. */
static inline u128 model_move(struct model *m, u128 t)
{
	u128 e = t / m->width;

	if (m->anchored && e < m->head)
		e = m->head;		/* clock behind: newest bucket */
	m->anchored = 1;
	/* passes whose bucket left the window are gone for good */
	while (m->n && model_at(m, 0)->idx + m->nbuckets <= e) {
		m->bytes -= model_at(m, 0)->len;
		m->first = (m->first + 1) % m->cap;
		m->n--;
	}
	m->head = e;
	return e;
}

/* Would a packet of `len` fit now (after model_move)? */
static inline int model_fits(const struct model *m, uint64_t len)
{
	if (m->pkt_budget != RL_UNLIMITED && m->n + 1 > m->pkt_budget)
		return 0;
	if (m->byte_budget != RL_UNLIMITED &&
	    (m->bytes > m->byte_budget || len > m->byte_budget - m->bytes))
		return 0;
	return 1;
}

/* Judge a packet at t; a passed packet counts, a dropped one does not. */
static inline int model_judge(struct model *m, u128 t, uint64_t len)
{
	u128 e = model_move(m, t);

	if (!model_fits(m, len))
		return 0;
	model_push(m, e, len);
	return 1;
}

/* ---- seeded PRNG (splitmix64) ---------------------------------------- */

static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi] (hi - lo < 2^64 - 1). */
static inline uint64_t rng_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + rng_next(s) % (hi - lo + 1);
}

/* Seed from RL_TEST_SEED if set, else `dflt`: a failure prints the seed,
 * and RL_TEST_SEED=that reproduces it. */
static inline uint64_t rng_seed(uint64_t dflt)
{
	const char *e = getenv("RL_TEST_SEED");

	return e && *e ? strtoull(e, NULL, 0) : dflt;
}

#endif /* RL_TEST_MODEL_H */
