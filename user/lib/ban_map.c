// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The `bans` map, read and lifted (bans.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "lib/ban_map.h"
#include "ban.h"

static void rule_text(const struct rl_ban *b, char *buf, size_t len)
{
	rl_format_rule_prefix(b->rule_flags & RL_RULE_F_V6, b->rule_prefixlen,
			      b->rule_addr, buf, len);
}

static int sooner(const void *a, const void *b)
{
	const struct rl_ban_row *x = a, *y = b;

	if (x->ns_left != y->ns_left)
		return x->ns_left < y->ns_left ? -1 : 1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

int rl_bans_read(const struct rl_maps *m, __u64 now, struct rl_ban_row **rows,
		 size_t *n)
{
	struct rl_key key, next, *prev = NULL;
	size_t alloc = 0;
	int err = 0;

	*rows = NULL;
	*n = 0;
	/* bounded: an LRU of RL_BAN_ENTRIES changing under us */
	for (size_t seen = 0; seen < 2 * RL_BAN_ENTRIES; seen++) {
		struct rl_ban b;

		if (bpf_map_get_next_key(m->bans, prev, &next)) {
			if (errno != ENOENT)
				err = -errno;
			break;
		}
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(m->bans, &key, &b) || !rl_ban_holds(&b, now))
			continue;	/* lifted meanwhile, or over */
		if (*n == alloc) {
			struct rl_ban_row *r;

			alloc = alloc ? 2 * alloc : 64;
			r = realloc(*rows, alloc * sizeof(**rows));
			if (!r) {
				err = -ENOMEM;
				break;
			}
			*rows = r;
		}
		(*rows)[*n].key = key;
		(*rows)[*n].ban = b;
		(*rows)[*n].ns_left = b.until_ns - now;
		rule_text(&b, (*rows)[*n].rule, sizeof((*rows)[*n].rule));
		(*n)++;
	}
	if (err) {
		free(*rows);
		*rows = NULL;
		*n = 0;
		return err;
	}
	if (*n)		/* qsort of NULL is undefined, even of 0 items */
		qsort(*rows, *n, sizeof(**rows), sooner);
	return 0;
}

int rl_bans_count(const struct rl_maps *m, __u64 now)
{
	struct rl_ban_row *rows;
	size_t n;
	int err = rl_bans_read(m, now, &rows, &n);

	free(rows);
	return err ? err : (int)n;
}

int rl_ban_key(const char *address, __u32 v6_prefix, struct rl_key *key,
	       char *err, size_t errlen)
{
	struct rl_prefix p;
	char e[RL_ERR_LEN];

	memset(key, 0, sizeof(*key));
	if (rl_parse_prefix(address, &p, e, sizeof(e))) {
		snprintf(err, errlen, "%s", e);
		return -EINVAL;
	}
	if (p.is_default || (!p.v6 && p.len != 32) || (p.v6 && p.len < v6_prefix)) {
		snprintf(err, errlen,
			 "'%s' is not one source (an IPv4 address, or an IPv6 address or prefix of at least /%u, the length IPv6 sources are tracked by)",
			 address, v6_prefix);
		return -EINVAL;
	}
	if (!p.v6) {
		key->addr[10] = key->addr[11] = 0xff;
		memcpy(key->addr + 12, p.addr, 4);
		return 0;
	}
	for (__u32 i = 0; i < 16; i++) {
		__u32 keep = v6_prefix >= (i + 1) * 8 ? 8 :
			     v6_prefix > i * 8 ? v6_prefix - i * 8 : 0;

		key->addr[i] = p.addr[i] & (keep ? (__u8)(0xff << (8 - keep)) : 0);
	}
	return 0;
}

int rl_ban_del(const struct rl_maps *m, const struct rl_key *key, __u64 now)
{
	struct rl_ban b;

	if (bpf_map_lookup_elem(m->bans, key, &b))
		return errno == ENOENT ? -ENOENT : -errno;
	if (bpf_map_delete_elem(m->bans, key) && errno != ENOENT)
		return -errno;
	return rl_ban_holds(&b, now) ? 0 : -ENOENT;
}

int rl_bans_clear(const struct rl_maps *m, __u64 now)
{
	struct rl_key key;
	int lifted = 0;

	/* always the first key: each one found is deleted */
	for (size_t i = 0; i < 2 * RL_BAN_ENTRIES; i++) {
		struct rl_ban b;

		if (bpf_map_get_next_key(m->bans, NULL, &key))
			return errno == ENOENT ? lifted : -errno;
		if (!bpf_map_lookup_elem(m->bans, &key, &b) && rl_ban_holds(&b, now))
			lifted++;
		if (bpf_map_delete_elem(m->bans, &key) && errno != ENOENT)
			return -errno;
	}
	return lifted;
}
