// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The windows of scoped rules that are gone (scoped_windows.h). */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "scope.h"
#include "lib/maps.h"
#include "lib/scope_windows.h"
#include "lib/source_index_map.h"

/* The scoped windows of dead slots in map fd, listed first (a key
 * deleted under get_next_key would restart the walk), then deleted. */
static long drop_in(int fd, const bool *live)
{
	struct rl_key key, next, src, *doomed = NULL;
	size_t n = 0, cap = 0;
	long ret = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		__u32 slot;

		key = next;
		prev = &key;
		if (!rl_key_scoped(&key))
			continue;
		slot = rl_scoped_source(&key, &src);
		if (slot < RL_MAX_RULES && live[slot])
			continue;
		if (n == cap) {
			struct rl_key *more = realloc(doomed, (cap = cap ? 2 * cap : 64) *
						      sizeof(*doomed));

			if (!more) {
				free(doomed);
				return -ENOMEM;
			}
			doomed = more;
		}
		doomed[n++] = key;
	}
	if (errno != ENOENT)
		ret = -errno;
	for (size_t i = 0; i < n && !ret; i++)
		if (bpf_map_delete_elem(fd, &doomed[i]) && errno != ENOENT)
			ret = -errno;
	free(doomed);
	return ret ? ret : (long)n;
}

/* Every scoped window of `sources` whose slot is dead, listed as the walk
 * meets it. */
struct doomed {
	const bool *live;
	struct rl_key *keys;
	size_t n, cap;
};

static int doom(void *ctx, const struct rl_key *key, __u32 at, const void *vals)
{
	struct doomed *d = ctx;
	struct rl_key src;
	__u32 slot;

	(void)at;
	(void)vals;
	if (!rl_key_scoped(key))
		return 0;
	slot = rl_scoped_source(key, &src);
	if (slot < RL_MAX_RULES && d->live[slot])
		return 0;
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 64;
		struct rl_key *more = realloc(d->keys, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		d->keys = more;
		d->cap = cap;
	}
	d->keys[d->n++] = *key;
	return 0;
}

/* The scoped windows of dead slots in `sources` (its index), emptied. */
static long drop_indexed(const struct rl_maps *m, const bool *live)
{
	struct doomed d = { .live = live };
	struct rl_index x;
	long ret = rl_index_open(&x, m);

	if (!ret)
		ret = rl_index_walk(&x, doom, &d);
	for (size_t i = 0; i < d.n && !ret; i++) {
		int err = rl_index_remove(&x, &d.keys[i]);

		if (err && err != -ENOENT)
			ret = err;
	}
	free(d.keys);
	return ret ? ret : (long)d.n;
}

long rl_scoped_windows_drop(const struct rl_maps *m, const bool *live)
{
	long a = drop_indexed(m, live), b = 0;

	if (a >= 0 && m->newcomers >= 0)
		b = drop_in(m->newcomers, live);
	return a < 0 ? a : b < 0 ? b : a + b;
}
