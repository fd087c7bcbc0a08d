// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "scope.h"
#include "lib/source_index_map.h"
#include "lib/source_table.h"

/* One batch of per-CPU values stays around this size whatever the CPU
 * count: 1M sources on 2 CPUs are read in ~100 syscalls of 4 MiB. */
#define BATCH_BYTES		(4U << 20)
#define BATCH_MIN		64U
#define BATCH_MAX		8192U
/* Rows preallocated for a bounded top; more only when sources are seen. */
#define TOP_PREALLOC		4096U

#define VALUE_STRIDE	((sizeof(struct rl_source) + 7) & ~(size_t)7)

/* Negative when a is busier: its ranks descending, then its address. */
static int busier(const struct rl_source_row *a, const struct rl_source_row *b)
{
	for (int i = 0; i < 2; i++)
		if (a->rank[i] != b->rank[i])
			return a->rank[i] > b->rank[i] ? -1 : 1;
	return memcmp(a->sum.key.addr, b->sum.key.addr, sizeof(a->sum.key.addr));
}

static int busier_qsort(const void *a, const void *b)
{
	return busier(a, b);
}

/*
 * The rows kept so far. Bounded: a min-heap on "busier" of at most
 * `limit` rows whose root is the least busy, replaced when a busier source
 * comes along. Unbounded (limit 0): every row.
 */
struct selector {
	struct rl_source_row *rows;
	size_t n, alloc, limit;
	const struct rl_source_order *order;	/* NULL: by drops */
};

static int sel_grow(struct selector *sel)
{
	size_t alloc = sel->alloc ? sel->alloc * 2 : TOP_PREALLOC;
	struct rl_source_row *rows;

	if (sel->limit && alloc > sel->limit)
		alloc = sel->limit;
	rows = realloc(sel->rows, alloc * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	sel->rows = rows;
	sel->alloc = alloc;
	return 0;
}

/* heap order: a parent is never busier than its children */
static bool heap_above(const struct rl_source_row *a,
		       const struct rl_source_row *b)
{
	return busier(a, b) > 0;
}

static void heap_swap(struct rl_source_row *rows, size_t i, size_t j)
{
	struct rl_source_row t = rows[i];

	rows[i] = rows[j];
	rows[j] = t;
}

static void sift_up(struct rl_source_row *rows, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!heap_above(&rows[i], &rows[parent]))
			break;
		heap_swap(rows, i, parent);
		i = parent;
	}
}

static void sift_down(struct rl_source_row *rows, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, top = i;

		if (l < n && heap_above(&rows[l], &rows[top]))
			top = l;
		if (r < n && heap_above(&rows[r], &rows[top]))
			top = r;
		if (top == i)
			return;
		heap_swap(rows, i, top);
		i = top;
	}
}

static int sel_offer(struct selector *sel, struct rl_source_row *row)
{
	int err;

	if (!sel->order) {
		row->rank[0] = row->sum.dropped_pkts;
		row->rank[1] = row->sum.passed_pkts;
	} else {
		err = sel->order->rank(sel->order->ctx, row);
		if (err)
			return err;
	}
	if (sel->limit && sel->n == sel->limit) {
		if (busier(row, &sel->rows[0]) >= 0)
			return 0;
		sel->rows[0] = *row;
		sift_down(sel->rows, sel->n, 0);
		return 0;
	}
	if (sel->n == sel->alloc) {
		err = sel_grow(sel);
		if (err)
			return err;
	}
	sel->rows[sel->n++] = *row;
	if (sel->limit)
		sift_up(sel->rows, sel->n - 1);
	return 0;
}

/* Drops of a source refused before it was tracked, as read. */
struct refused_row {
	struct rl_key key;
	struct rl_refused val;
	bool merged;		/* added to the source's tracked row */
};

struct refused_set {
	struct refused_row *rows;	/* sorted by key */
	size_t n, alloc;
};

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct rl_key));
}

/*
 * Every entry of the hash `fd`, one key at a time, into `val` and then
 * `each` (which stops the walk with a non-zero return). A key deleted or
 * evicted under us restarts the walk: `bound` caps the steps (twice the
 * map's size), and a key may be met twice.
 */
static int walk_keys(int fd, __u64 bound, void *val,
		     int (*each)(void *ctx, const struct rl_key *key, const void *val),
		     void *ctx)
{
	struct rl_key key, next;
	const struct rl_key *prev = NULL;
	__u64 steps = 0;
	int err = 0;

	while (steps++ < bound) {
		if (bpf_map_get_next_key(fd, prev, &next)) {
			if (errno != ENOENT)
				err = -errno;
			break;
		}
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, val)) {
			if (errno == ENOENT)	/* evicted meanwhile */
				continue;
			err = -errno;
			break;
		}
		err = each(ctx, &key, val);
		if (err)
			break;
	}
	return err;
}

static int refused_append(void *ctx, const struct rl_key *key, const void *val)
{
	struct refused_set *set = ctx;
	struct refused_row *r;

	if (set->n == set->alloc) {
		size_t alloc = set->alloc ? 2 * set->alloc : 256;

		r = realloc(set->rows, alloc * sizeof(*r));
		if (!r)
			return -ENOMEM;
		set->rows = r;
		set->alloc = alloc;
	}
	r = &set->rows[set->n++];
	memset(r, 0, sizeof(*r));
	r->key = *key;
	memcpy(&r->val, val, sizeof(r->val));
	return 0;
}

/* The whole `refused` table: small (RL_REFUSED_ENTRIES), read key by key. */
static int refused_read(int fd, struct refused_set *set)
{
	struct rl_refused val;
	int err;

	memset(set, 0, sizeof(*set));
	err = walk_keys(fd, 2ULL * RL_REFUSED_ENTRIES + 1, &val, refused_append, set);
	if (set->n) {
		/* a restarted walk may have met a key twice: keep one */
		size_t out = 1;

		qsort(set->rows, set->n, sizeof(*set->rows), key_cmp);
		for (size_t i = 1; i < set->n; i++)
			if (key_cmp(&set->rows[i].key, &set->rows[out - 1].key))
				set->rows[out++] = set->rows[i];
		set->n = out;
	}
	return err;
}

/* The rows of `newcomers`, read before `sources`: a source verified
 * while it had an entry there gets one in `sources` too, and the one in
 * `newcomers` stays until the LRU evicts it. One row per address: its
 * totals go into its `sources` row. */
struct newcomer_row {
	struct rl_source_row row;
	bool merged;		/* added to the source's `sources` row */
};

struct newcomer_set {
	struct newcomer_row *rows;	/* sorted by key once read */
	size_t n, alloc;
};

struct scan {
	const struct rl_maps *m;
	const struct rl_settings *s;
	__u32 rules_gen;
	__u64 now;
	int ncpus;
	struct selector *sel;
	struct refused_set refused;
	struct newcomer_set newc;
	bool reading_newcomers;		/* into newc, not the selector */
	__u64 seen, scoped;
};

static void refused_add(struct rl_source_row *row, const struct refused_row *r)
{
	row->sum.dropped_pkts += r->val.dropped_pkts;
	row->sum.dropped_bytes += r->val.dropped_bytes;
}

static int newcomer_append(struct newcomer_set *set, const struct rl_source_row *row)
{
	if (set->n == set->alloc) {
		size_t alloc = set->alloc ? 2 * set->alloc : 256;
		struct newcomer_row *r = realloc(set->rows, alloc * sizeof(*r));

		if (!r)
			return -ENOMEM;
		set->rows = r;
		set->alloc = alloc;
	}
	set->rows[set->n].row = *row;
	set->rows[set->n++].merged = false;
	return 0;
}

/* keys first: a newcomer_row starts with its key (row.sum.key) */
_Static_assert(offsetof(struct newcomer_row, row.sum.key) == 0, "key first");

/* A row into the selector, with its refused drops (once), counted. */
static int offer(struct scan *sc, struct rl_source_row *row)
{
	struct refused_row *r;

	r = sc->refused.n ? bsearch(&row->sum.key, sc->refused.rows, sc->refused.n,
				    sizeof(*r), key_cmp) : NULL;
	if (r && !r->merged) {
		refused_add(row, r);
		r->merged = true;
	}
	sc->seen++;
	sc->scoped += rl_key_scoped(&row->sum.key);
	return sel_offer(sc->sel, row);
}

static int take(struct scan *sc, const struct rl_key *key, const void *vals)
{
	struct rl_source_row row;
	struct newcomer_row *n;

	memset(&row, 0, sizeof(row));
	rl_source_sum_cpus(key, vals, sc->ncpus, sc->m->history, sc->s,
			   sc->rules_gen, sc->now, &row.sum, &row.rule_cached,
			   &row.rule_id);
	row.tracked = true;
	if (sc->reading_newcomers)
		return newcomer_append(&sc->newc, &row);
	/* its old entry in `newcomers`: its totals, not its window (the
	 * program judges the source by this one) */
	n = sc->newc.n ? bsearch(key, sc->newc.rows, sc->newc.n, sizeof(*n),
				 key_cmp) : NULL;
	if (n && !n->merged) {
		row.sum.passed_pkts += n->row.sum.passed_pkts;
		row.sum.passed_bytes += n->row.sum.passed_bytes;
		row.sum.dropped_pkts += n->row.sum.dropped_pkts;
		row.sum.dropped_bytes += n->row.sum.dropped_bytes;
		n->merged = true;
	}
	return offer(sc, &row);
}

/* The newcomers read into sc->newc, sorted, one row per key. */
static void newcomers_sort(struct newcomer_set *set)
{
	size_t out = 1;

	if (!set->n)
		return;
	qsort(set->rows, set->n, sizeof(*set->rows), key_cmp);
	/* a restarted walk may have met a key twice: keep one */
	for (size_t i = 1; i < set->n; i++)
		if (key_cmp(&set->rows[i].row.sum.key, &set->rows[out - 1].row.sum.key))
			set->rows[out++] = set->rows[i];
	set->n = out;
}

/* The newcomers that have no `sources` entry: rows of their own. */
static int take_newcomers(struct scan *sc)
{
	int err = 0;

	for (size_t i = 0; i < sc->newc.n && !err; i++)
		if (!sc->newc.rows[i].merged)
			err = offer(sc, &sc->newc.rows[i].row);
	return err;
}

/* Refused sources that have no window: rows of their own. */
static int take_refused_only(struct scan *sc, __u64 *count)
{
	*count = 0;
	for (size_t i = 0; i < sc->refused.n; i++) {
		const struct refused_row *r = &sc->refused.rows[i];
		struct rl_source_row row;
		int err;

		if (r->merged)
			continue;
		memset(&row, 0, sizeof(row));
		row.rule_id = RL_NO_RULE;
		row.sum.key = r->key;
		refused_add(&row, r);
		(*count)++;
		err = sel_offer(sc->sel, &row);
		if (err)
			return err;
	}
	return 0;
}

static bool batch_unsupported(int err)
{
	/* ENOTSUPP (524) is what kernels without the map op return */
	return err == -EINVAL || err == -EOPNOTSUPP || err == -524 ||
	       err == -ENOSYS;
}

/*
 * BPF_MAP_LOOKUP_BATCH over the hash: -EOPNOTSUPP when the kernel cannot
 * (before anything was taken), 0 when done, or another negative errno.
 */
static int scan_batched(struct scan *sc, int fd)
{
	size_t stride = sc->ncpus * VALUE_STRIDE;
	__u32 batch = BATCH_BYTES / stride, count;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	/* the hash's resume token is a bucket index; key-sized is ample */
	struct rl_key token;
	struct rl_key *keys = NULL;
	char *vals = NULL;
	bool first = true;
	int err = 0, ret;

	if (batch < BATCH_MIN)
		batch = BATCH_MIN;
	if (batch > BATCH_MAX)
		batch = BATCH_MAX;
	for (;;) {
		if (!keys) {
			keys = calloc(batch, sizeof(*keys));
			vals = calloc(batch, stride);
			if (!keys || !vals) {
				err = -ENOMEM;
				goto out;
			}
		}
		count = batch;
		ret = bpf_map_lookup_batch(fd, first ? NULL : &token,
					   &token, keys, vals, &count, &opts);
		if (ret && ret != -ENOENT) {
			if (ret == -ENOSPC && batch < RL_MAX_MAX_SOURCES) {
				/* one hash bucket holds more than a batch */
				free(keys);
				free(vals);
				keys = NULL;
				vals = NULL;
				batch *= 2;
				continue;
			}
			err = first && batch_unsupported(ret) ? -EOPNOTSUPP : ret;
			goto out;
		}
		first = false;
		for (__u32 i = 0; i < count; i++) {
			err = take(sc, &keys[i], vals + i * stride);
			if (err)
				goto out;
		}
		if (ret == -ENOENT)	/* that was the last batch */
			break;
	}
out:
	free(keys);
	free(vals);
	return err;
}

static int take_walked(void *ctx, const struct rl_key *key, const void *vals)
{
	return take(ctx, key, vals);
}

static int take_slot(void *ctx, const struct rl_key *key, __u32 slot,
		     const void *vals)
{
	(void)slot;
	return take(ctx, key, vals);
}

/* One key at a time, for kernels without batch lookups of this map. */
static int scan_by_key(struct scan *sc, int fd)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	void *vals;
	int err;

	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		return -errno;
	vals = rl_percpu_alloc(sizeof(struct rl_source));
	if (!vals)
		return -ENOMEM;
	err = walk_keys(fd, 2ULL * info.max_entries + 1, vals,
			take_walked, sc);
	free(vals);
	return err;
}

/* A table, in batches where the kernel can (it says so before anything is
 * read), else key by key. */
static int scan_table(struct scan *sc, int fd)
{
	int err = scan_batched(sc, fd);

	return err == -EOPNOTSUPP ? scan_by_key(sc, fd) : err;
}

int rl_source_top_read(const struct rl_maps *m, const struct rl_settings *s,
		       __u32 rules_gen, __u64 now, size_t limit,
		       struct rl_source_top *top)
{
	return rl_source_top_read_by(m, s, rules_gen, now, limit, NULL, top);
}

int rl_source_top_read_by(const struct rl_maps *m, const struct rl_settings *s,
			  __u32 rules_gen, __u64 now, size_t limit,
			  const struct rl_source_order *order,
			  struct rl_source_top *top)
{
	struct selector sel = { .limit = limit, .order = order };
	struct scan sc = {
		.m = m, .s = s, .rules_gen = rules_gen, .now = now,
		.ncpus = rl_ncpus(), .sel = &sel,
	};
	int err;

	memset(top, 0, sizeof(*top));
	if (sc.ncpus <= 0)
		return sc.ncpus ? sc.ncpus : -EINVAL;
	err = refused_read(m->refused, &sc.refused);
	/* the newcomers a newcomer budget admitted, set aside; then verified
	 * sources (and all under rules without a newcomer budget), with the
	 * totals of their old newcomer entry; then the other newcomers */
	sc.reading_newcomers = true;
	if (!err && m->newcomers >= 0)
		err = scan_table(&sc, m->newcomers);
	sc.reading_newcomers = false;
	newcomers_sort(&sc.newc);
	if (!err) {
		struct rl_index x;

		err = rl_index_open(&x, m);
		if (!err)
			err = rl_index_walk(&x, take_slot, &sc);
	}
	if (!err)
		err = take_newcomers(&sc);
	if (!err)
		err = take_refused_only(&sc, &top->refused_only);
	free(sc.refused.rows);
	free(sc.newc.rows);
	if (sel.n)	/* rows is NULL when no source was seen */
		qsort(sel.rows, sel.n, sizeof(*sel.rows), busier_qsort);
	top->rows = sel.rows;
	top->n = sel.n;
	top->tracked = sc.seen;
	top->scoped_windows = sc.scoped;
	top->refused = sc.refused.n;
	return err;
}

void rl_source_top_free(struct rl_source_top *top)
{
	free(top->rows);
	memset(top, 0, sizeof(*top));
}
