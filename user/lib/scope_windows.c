// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The windows of scoped rules that are gone (scoped_windows.h). */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "ratelimit.h"
#include "scope.h"
#include "lib/scope_windows.h"

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

long rl_scoped_windows_drop(const struct rl_maps *m, const bool *live)
{
	long a = drop_in(m->sources, live), b = 0;

	if (a >= 0 && m->newcomers >= 0)
		b = drop_in(m->newcomers, live);
	return a < 0 ? a : b < 0 ? b : a + b;
}
