// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What a reload onto new maps carries (reload_carry.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "newcomer.h"
#include "lib/reload_carry.h"
#include "lib/source_index_map.h"
#include "lib/rule.h"
#include "lib/settings.h"
#include "verified.h"

/* The windows of the old and new settings fall on the same buckets. */
static bool same_grid(const struct rl_settings *a, const struct rl_settings *b)
{
	return a->window_ns == b->window_ns && a->nbuckets == b->nbuckets &&
	       a->bucket_ns == b->bucket_ns && a->ncpus == b->ncpus &&
	       !((a->flags ^ b->flags) & RL_F_COARSE_CLOCK);
}

/* Per-source state keeps its meaning: same grid, same IPv6 keys. */
static bool same_sources(const struct rl_settings *a, const struct rl_settings *b)
{
	return same_grid(a, b) && a->v6_prefix == b->v6_prefix;
}

bool rl_carry_key(struct rl_key *k, const struct rl_settings *from,
		  const struct rl_settings *to)
{
	__u32 w[4];

	if (rl_key_is_v4(k) || from->v6_prefix == to->v6_prefix)
		return true;
	if (to->v6_prefix > from->v6_prefix)
		return false;
	memcpy(w, k->addr, sizeof(w));
	for (int i = 0; i < 4; i++)
		w[i] &= to->v6_mask[i];
	memcpy(k->addr, w, sizeof(w));
	return true;
}

static struct rl_rule_change rule_rates(const struct rl_rule *r)
{
	return (struct rl_rule_change){
		.have_pps = true, .pps = r->pps, .have_bps = true, .bps = r->bps,
		.have_agg_pps = true, .agg_pps = r->agg_pps,
		.have_agg_bps = true, .agg_bps = r->agg_bps,
		.have_new_pps = true, .new_pps = r->new_pps,
		.have_new_bps = true, .new_bps = r->new_bps,
	};
}

/* ---- per-source tables, most recent first ---------------------------- */

struct recent {
	struct rl_key key;
	__u64 newest;		/* the newest bucket any CPU of it counted in */
};

static int by_newest(const void *a, const void *b)
{
	const struct recent *x = a, *y = b;

	return x->newest == y->newest ? 0 : x->newest > y->newest ? -1 : 1;
}

/* Room for element n of the array at *arr (elements of `size` bytes,
 * *alloc of them): doubled, from 1024, when full. -ENOMEM leaves *arr as
 * it was, for the caller to free. */
static int grow(void *arr, size_t *alloc, size_t n, size_t size)
{
	void **p = arr, *grown;
	size_t want = *alloc ? 2 * *alloc : 1024;

	if (n < *alloc)
		return 0;
	grown = realloc(*p, want * size);
	if (!grown)
		return -ENOMEM;
	*p = grown;
	*alloc = want;
	return 0;
}

/* A per-CPU table of struct rl_source values: `sources` through its
 * index (x), or an LRU hash keyed by the source (`newcomers`, and
 * `sources` up to layout 13). */
struct table {
	int fd;
	const struct rl_index *x;	/* NULL: a hash */
	__u64 now;			/* the program's clock, to stamp a place */
};

/* `key`'s entry as the table's values were when the walk met it. */
static struct recent owned_entry(const struct rl_key *key, const void *vals,
				 bool *owned)
{
	size_t stride = (sizeof(struct rl_source) + 7) & ~(size_t)7;
	struct recent e = { .key = *key };

	*owned = false;
	for (int cpu = 0; cpu < rl_ncpus(); cpu++) {
		const struct rl_source *v = (const void *)((const char *)vals + cpu * stride);

		if (memcmp(&v->owner, key, sizeof(*key)))
			continue;	/* stale or unused on that CPU */
		*owned = true;
		if (v->st.win.bucket > e.newest)
			e.newest = v->st.win.bucket;
	}
	return e;
}

struct collected {
	struct recent *r;
	size_t n, alloc;
};

static int collect_one(void *ctx, const struct rl_key *key, __u32 slot,
		       const void *vals)
{
	struct collected *c = ctx;
	struct recent e;
	bool owned;

	(void)slot;
	e = owned_entry(key, vals, &owned);
	if (!owned)
		return 0;
	if (grow(&c->r, &c->alloc, c->n, sizeof(*c->r)))
		return -ENOMEM;
	c->r[c->n++] = e;
	return 0;
}

/* Every source of table `t` that some CPU owns, with its newest bucket,
 * most recent first. Count or -errno. */
static long collect_sources(const struct table *t, struct recent **out)
{
	void *vals = rl_percpu_alloc(sizeof(struct rl_source));
	struct rl_key key, next, *prev = NULL;
	struct collected c = {};
	long ret = 0;

	if (!vals)
		return -ENOMEM;
	if (t->x) {
		ret = rl_index_walk(t->x, collect_one, &c);
	} else {
		while (!ret && !bpf_map_get_next_key(t->fd, prev, &next)) {
			key = next;
			prev = &key;
			if (bpf_map_lookup_elem(t->fd, &key, vals))
				continue;	/* evicted since */
			ret = collect_one(&c, &key, 0, vals);
		}
	}
	if (!ret && c.n)	/* c.r is NULL without rows */
		qsort(c.r, c.n, sizeof(*c.r), by_newest);
	free(vals);
	if (ret) {
		free(c.r);
		return ret;
	}
	*out = c.r;
	return (long)c.n;
}

/* Does some CPU's value of `key` in `vals` (a per-CPU `sources` value)
 * hold a verification it read (verified_ns)? */
static bool holds_verified(const void *vals, const struct rl_key *key)
{
	size_t stride = (sizeof(struct rl_source) + 7) & ~(size_t)7;

	for (int cpu = 0; cpu < rl_ncpus(); cpu++) {
		const struct rl_source *v = (const void *)((const char *)vals + cpu * stride);

		if (!memcmp(&v->owner, key, sizeof(*key)) && v->verified_ns)
			return true;
	}
	return false;
}

static int table_lookup(const struct table *t, const struct rl_key *key, void *vals)
{
	if (t->x)
		return rl_index_lookup(t->x, key, vals);
	return bpf_map_lookup_elem(t->fd, key, vals) ? -errno : 0;
}

/* Put `key` into table `t` with `vals`: 0, or -errno (-ENOSPC: its
 * buckets are full, not carried). */
static int table_put(const struct table *t, const struct rl_key *key,
		     const void *vals)
{
	if (t->x)
		return rl_index_place(t->x, key, vals, holds_verified(vals, key),
				      t->now);
	return bpf_map_update_elem(t->fd, key, vals, BPF_ANY) ? -errno : 0;
}

/* The `limit` most recent sources of `src` into `dst`, with their
 * history; into `bloom` (a new `verified_bloom`, or -1) each that holds a
 * verification, whether or not its `verified` entry was carried: a source
 * the filter has never seen is refused before its entry is read
 * (bpf/refuse_first.bpf.h), and must not be one whose entry still says
 * verified. Count or -errno. */
static long carry_sources(const struct table *src, int hist_src,
			  const struct table *dst, int hist_dst,
			  __u64 limit, int bloom)
{
	void *vals = rl_percpu_alloc(sizeof(struct rl_source));
	struct rl_history h;
	struct recent *r = NULL;
	long n = collect_sources(src, &r), done = 0;
	int err;

	if (n < 0 || !vals) {
		free(vals);
		return n < 0 ? n : -ENOMEM;
	}
	for (long i = 0; i < n && (__u64)done < limit; i++) {
		if (table_lookup(src, &r[i].key, vals))
			continue;
		err = table_put(dst, &r[i].key, vals);
		if (err == -ENOSPC || err == -EEXIST)
			continue;	/* its buckets full: the older go */
		/* a scoped window's key is no source's: the filter is read
		 * by sources' keys only */
		if (err || (bloom >= 0 && !rl_key_scoped(&r[i].key) &&
			    holds_verified(vals, &r[i].key) &&
			    bpf_map_update_elem(bloom, NULL, &r[i].key, BPF_ANY))) {
			done = err ? err : -errno;
			break;
		}
		if (!bpf_map_lookup_elem(hist_src, &r[i].key, &h))
			(void)bpf_map_update_elem(hist_dst, &r[i].key, &h, BPF_ANY);
		done++;
	}
	free(r);
	free(vals);
	return done;
}

/* The tracked sources' table of `old`: through its index from layout 14,
 * an LRU hash before. */
static struct table old_sources(const struct rl_iface *old, struct rl_index *x)
{
	rl_index_of(x, &old->m, &old->cfg);
	return (struct table){ .fd = old->m.sources,
			       .x = old->cfg.layout >= 14 ? x : NULL };
}

/* Sources some CPU counted in within the last window of `s`. */
static long active_sources(const struct rl_iface *old)
{
	const struct rl_settings *s = &old->cfg.set;
	__u64 now = rl_prog_now_ns(s) / s->bucket_ns;
	struct recent *r = NULL;
	struct rl_index x;
	struct table t = old_sources(old, &x);
	long n = collect_sources(&t, &r), active = 0;

	for (long i = 0; i < n; i++)
		active += r[i].newest + s->nbuckets > now;
	free(r);
	return n < 0 ? n : active;
}

/* ---- what the new keys and tables would lose ----------------------- */

static int by_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct rl_key));
}

/* The bans in force and the verifications that hold (under the new
 * --verified-ttl: one that lapses there is not kept by carrying it) of
 * `old`, against the new settings `s`: how many are IPv6 keys a longer
 * --ipv6-prefix cannot name, and how many sources the rest make under the
 * new keys. 0 or -errno. */
static int count_losses(const struct rl_iface *old, const struct rl_settings *s,
			struct rl_carry_loss *l)
{
	__u64 now = rl_prog_now_ns(&old->cfg.set);
	/* bounded: an LRU being written to may hand back keys again */
	__u64 steps = 4ULL * RL_BAN_ENTRIES + 16;
	struct rl_key key, next, k, *prev = NULL, *keys = NULL;
	struct rl_verified v;
	struct rl_ban b;
	size_t n = 0, alloc = 0;
	int ret = 0;

	memset(l, 0, sizeof(*l));
	while (steps-- && !bpf_map_get_next_key(old->m.bans, prev, &next)) {
		key = next;
		prev = &key;
		k = key;	/* key stays the iteration's */
		if (!bpf_map_lookup_elem(old->m.bans, &key, &b) && b.until_ns > now &&
		    !rl_carry_key(&k, &old->cfg.set, s))
			l->v6_bans++;
	}
	prev = NULL;
	steps = 4ULL * old->cfg.set.max_sources + 16;
	while (steps-- && !bpf_map_get_next_key(old->m.verified, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(old->m.verified, &key, &v) ||
		    !rl_verified_holds(v.answered_ns, now, s->verified_ttl_ns))
			continue;
		if (grow(&keys, &alloc, n, sizeof(*keys))) {
			ret = -ENOMEM;
			break;
		}
		keys[n] = key;
		if (rl_carry_key(&keys[n], &old->cfg.set, s))
			n++;
		else
			l->v6_verified++;
	}
	if (!ret && n) {	/* sources merged by a shorter prefix are one */
		qsort(keys, n, sizeof(*keys), by_key);
		l->verified = 1;
		for (size_t i = 1; i < n; i++)
			l->verified += !!memcmp(&keys[i], &keys[i - 1], sizeof(*keys));
	}
	free(keys);
	return ret;
}

int rl_carry_loss_check(const struct rl_carry_loss *l, const struct rl_settings *from,
			const struct rl_settings *to, const char *iface,
			char *err, size_t errlen)
{
	char how[RL_ERR_LEN];

	if (l->v6_bans || l->v6_verified) {
		/* a ban can be deleted; a verification only lapses */
		if (l->v6_verified)
			snprintf(how, sizeof(how), "keep the prefix, or");
		else
			snprintf(how, sizeof(how),
				 "delete the IPv6 bans first ('xdp-ratelimit ban list --iface %s', then 'xdp-ratelimit ban del ADDRESS --iface %s'), or",
				 iface, iface);
		snprintf(err, errlen,
			 "a longer --ipv6-prefix (/%u, from /%u) would lose %ld IPv6 bans and %ld verified IPv6 sources (a /%u key cannot be split into /%u ones): %s 'xdp-ratelimit detach %s' and attach with --ipv6-prefix %u to start them afresh (save and restore carry the rules)",
			 (unsigned)to->v6_prefix, (unsigned)from->v6_prefix,
			 l->v6_bans, l->v6_verified, (unsigned)from->v6_prefix,
			 (unsigned)to->v6_prefix, how, iface, (unsigned)to->v6_prefix);
		return -EINVAL;
	}
	if ((__u64)l->verified > to->max_sources) {
		snprintf(err, errlen,
			 "%ld sources are verified, more than --max-sources %llu would keep: give --max-sources %ld or more, or reload when fewer are verified (each lapses --verified-ttl after its last answer)",
			 l->verified, (unsigned long long)to->max_sources, l->verified);
		return -EINVAL;
	}
	return 0;
}

/* ---- check --------------------------------------------------------- */

int rl_carry_check(const struct rl_iface *old, const struct rl_settings *s,
		   char *err, size_t errlen)
{
	char why[RL_ERR_LEN], pfx[RL_PREFIX_STRLEN];
	struct rl_rule r;
	struct rl_prefix p;
	struct rl_scope sc;
	struct rl_rule_change c;
	struct rl_carry_loss loss;
	long active;
	int ret;

	for (__u32 id = 0; id < RL_MAX_RULES; id++) {
		memset(&r, 0, sizeof(r));	/* an older rule is shorter */
		if (bpf_map_lookup_elem(old->m.rules, &id, &r)) {
			snprintf(err, errlen, "cannot read the rules: %s", strerror(errno));
			return -errno;
		}
		if (!(r.flags & RL_RULE_F_USED))
			continue;
		rl_rule_prefix(&r, &p);
		c = rule_rates(&r);
		/* a scoped rule's scope, as the pins hold it */
		memset(&sc, 0, sizeof(sc));
		if (r.scope) {
			__u32 idx = r.scope - 1;

			if (bpf_map_lookup_elem(old->m.scopes, &idx, &sc)) {
				snprintf(err, errlen, "cannot read the scopes: %s",
					 strerror(errno));
				return -errno;
			}
		}
		if (!rl_rule_check(s, &p, r.scope ? &sc : NULL, &c, why, sizeof(why)))
			continue;
		rl_format_prefix(&p, pfx, sizeof(pfx));
		snprintf(err, errlen,
			 "the rule of %s cannot be carried to the new settings: %s (or delete the rule first: 'xdp-ratelimit quota del %s --iface %s')",
			 pfx, why, pfx, old->name);
		return -EINVAL;
	}
	ret = count_losses(old, s, &loss);
	if (ret) {
		snprintf(err, errlen, "cannot read the bans and verified sources: %s",
			 strerror(-ret));
		return ret;
	}
	if (rl_carry_loss_check(&loss, &old->cfg.set, s, old->name, err, errlen))
		return -EINVAL;
	if (!same_sources(&old->cfg.set, s) || s->max_sources >= old->cfg.set.max_sources)
		return 0;
	active = active_sources(old);
	if (active < 0) {
		snprintf(err, errlen, "cannot read the sources: %s", strerror(-active));
		return (int)active;
	}
	if ((__u64)active <= s->max_sources)
		return 0;
	snprintf(err, errlen,
		 "%ld sources were active in the last window, more than --max-sources %llu would keep (each dropped would start a fresh window): give --max-sources %ld or more, or reload when fewer are active",
		 active, (unsigned long long)s->max_sources, active);
	return -EINVAL;
}

/* ---- copies -------------------------------------------------------- */

/* Entries 0..n-1 of an array, as they are (per-CPU: every CPU's). */
static int copy_array(int src, int dst, __u32 n, size_t value_size, bool percpu)
{
	void *v = percpu ? rl_percpu_alloc(value_size) : calloc(1, value_size);
	int ret = 0;

	if (!v)
		return -ENOMEM;
	for (__u32 i = 0; i < n && !ret; i++)
		if (bpf_map_lookup_elem(src, &i, v) ||
		    bpf_map_update_elem(dst, &i, v, BPF_ANY))
			ret = -errno;
	free(v);
	return ret;
}

/* Entry 0 of a per-CPU array whose values grew from `old_size` to
 * `new_size` bytes at their end: every CPU's, the new fields zero. */
static int copy_percpu_grown(int src, int dst, size_t old_size, size_t new_size)
{
	size_t so = (old_size + 7) & ~(size_t)7, sn = (new_size + 7) & ~(size_t)7;
	char *o = rl_percpu_alloc(old_size), *v = rl_percpu_alloc(new_size);
	__u32 zero = 0;
	int ret = 0;

	if (!o || !v)
		ret = -ENOMEM;
	else if (bpf_map_lookup_elem(src, &zero, o))
		ret = -errno;
	for (int c = 0; !ret && c < rl_ncpus(); c++)
		memcpy(v + c * sn, o + c * so, old_size);
	if (!ret && bpf_map_update_elem(dst, &zero, v, BPF_ANY))
		ret = -errno;
	free(o);
	free(v);
	return ret;
}

/* Every entry of a hash or trie (at most `limit`; a full `dst` ends it):
 * count or -errno. */
static long copy_hash(int src, int dst, size_t key_size, size_t value_size,
		      __u64 limit)
{
	char key[64], next[64], *prev = NULL;
	void *v = calloc(1, value_size);
	long n = 0;

	if (!v)
		return -ENOMEM;
	while ((__u64)n < limit && !bpf_map_get_next_key(src, prev, next)) {
		memcpy(key, next, key_size);
		prev = key;
		if (bpf_map_lookup_elem(src, key, v))
			continue;
		if (bpf_map_update_elem(dst, key, v, BPF_ANY)) {
			if (errno != E2BIG)
				n = -errno;
			break;
		}
		n++;
	}
	free(v);
	return n;
}

/* What each rule judged, by slot (rules keep theirs): summed over the
 * old CPUs into the first of the new ones, whatever either count is. */
static int carry_rule_counters(const struct rl_iface *old, const struct rl_maps *nm)
{
	struct rl_rule_counters *v = rl_percpu_alloc(sizeof(*v));
	int ret = 0;

	if (!v)
		return -ENOMEM;
	for (__u32 id = 0; id < RL_MAX_RULES && !ret; id++) {
		ret = rl_rule_counters_sum(&old->m, id, v);
		if (ret || (!v->passed_pkts && !v->dropped_pkts))
			continue;	/* the new array holds zeros already */
		if (bpf_map_update_elem(nm->rule_counters, &id, v, BPF_ANY))
			ret = -errno;
	}
	free(v);
	return ret;
}

static int carry_rules(const struct rl_iface *old, const struct rl_settings *s,
		       const struct rl_maps *nm, struct rl_carried *c)
{
	const struct rl_rule_change none = { 0 };
	static const struct rl_rule empty;
	struct rl_rule r;
	long ret;

	for (__u32 id = 0; id < RL_MAX_RULES; id++) {
		memset(&r, 0, sizeof(r));	/* an older rule: zero-extended */
		if (bpf_map_lookup_elem(old->m.rules, &id, &r))
			return -errno;
		if (!memcmp(&r, &empty, sizeof(r)))
			continue;	/* the new array holds zeros already */
		if (r.flags & RL_RULE_F_USED) {
			rl_rule_apply(&r, &none, s->window_ns);	/* the budgets */
			c->rules++;
		}
		if (bpf_map_update_elem(nm->rules, &id, &r, BPF_ANY))
			return -errno;
	}
	ret = copy_hash(old->m.rules_v4, nm->rules_v4, sizeof(struct rl_lpm_v4),
			sizeof(__u32), RL_MAX_RULES);
	if (ret >= 0)
		ret = copy_hash(old->m.rules_v6, nm->rules_v6, sizeof(struct rl_lpm_v6),
				sizeof(__u32), RL_MAX_RULES);
	if (ret < 0)
		return (int)ret;
	ret = copy_array(old->m.scopes, nm->scopes, RL_MAX_SCOPES,
			 sizeof(struct rl_scope), false);
	if (!ret)
		ret = copy_hash(old->m.scoped_v4, nm->scoped_v4,
				sizeof(struct rl_lpm_scoped_v4), sizeof(__u32), RL_MAX_RULES);
	if (ret >= 0)
		ret = copy_hash(old->m.scoped_v6, nm->scoped_v6,
				sizeof(struct rl_lpm_scoped_v6), sizeof(__u32), RL_MAX_RULES);
	return ret < 0 ? (int)ret : 0;
}

/* Bans, re-keyed: a ban merged with another keeps the later end. Each
 * goes into the new bloom filter too: a banned source was verified once,
 * and one the filter has never seen is refused before its ban is read
 * (bpf/refuse_first.bpf.h: counted as refused, its SYN answered with a
 * cookie) once its `verified` entry is gone (evicted, or not carried).
 * Count, or -ENOSPC when a ban in force made before the call is not in
 * `nm` after it (a key a longer prefix cannot name, made since
 * rl_carry_check, or pushed out of the new table). */
static long carry_bans(const struct rl_iface *old, const struct rl_settings *s,
		       const struct rl_maps *nm)
{
	__u64 start = rl_prog_now_ns(&old->cfg.set);
	struct rl_key key, next, *prev = NULL, k;
	struct rl_ban b, have;
	long n = 0;

	while (!bpf_map_get_next_key(old->m.bans, prev, &next)) {
		key = next;
		prev = &key;
		k = key;
		if (bpf_map_lookup_elem(old->m.bans, &key, &b) ||
		    !rl_carry_key(&k, &old->cfg.set, s))
			continue;
		if (!bpf_map_lookup_elem(nm->bans, &k, &have) && have.until_ns >= b.until_ns)
			continue;
		if (bpf_map_update_elem(nm->bans, &k, &b, BPF_ANY) ||
		    bpf_map_update_elem(nm->verified_bloom, NULL, &k, BPF_ANY))
			return -errno;
		n++;
	}
	for (prev = NULL; !bpf_map_get_next_key(old->m.bans, prev, &next); prev = &key) {
		key = next;
		k = key;
		if (bpf_map_lookup_elem(old->m.bans, &key, &b) || b.banned_ns > start ||
		    b.until_ns <= start)
			continue;	/* made since, or over */
		if (!rl_carry_key(&k, &old->cfg.set, s) ||
		    bpf_map_lookup_elem(nm->bans, &k, &have))
			return -ENOSPC;
	}
	return n;
}

struct verified_row {
	struct rl_key key;
	struct rl_verified v;
	bool holds;		/* under the new --verified-ttl */
};

static int by_answered(const void *a, const void *b)
{
	const struct verified_row *x = a, *y = b;

	return x->v.answered_ns == y->v.answered_ns ? 0 :
	       x->v.answered_ns > y->v.answered_ns ? -1 : 1;
}

/* Verified sources, the most recently answered first, at most the new
 * --max-sources; re-keyed as bans are; each pushed into the new bloom
 * filter (which cannot be read, only rebuilt). A new --window restarts
 * the proven counts, which are per fixed window. Count, or -ENOSPC when
 * one that holds is not in `nm` after it (a key a longer prefix cannot
 * name, more than the new table holds, or pushed out of it). */
static long carry_verified(const struct rl_iface *old, const struct rl_settings *s,
			   const struct rl_maps *nm)
{
	__u64 now = rl_prog_now_ns(&old->cfg.set);
	struct rl_key key, next, *prev = NULL;
	struct verified_row *r = NULL;
	size_t n = 0, alloc = 0;
	struct rl_verified have;
	bool lost = false;
	long done = 0;

	while (!bpf_map_get_next_key(old->m.verified, prev, &next)) {
		key = next;
		prev = &key;
		if (grow(&r, &alloc, n, sizeof(*r))) {
			free(r);
			return -ENOMEM;
		}
		r[n].key = key;
		if (bpf_map_lookup_elem(old->m.verified, &key, &r[n].v))
			continue;
		r[n].holds = rl_verified_holds(r[n].v.answered_ns, now, s->verified_ttl_ns);
		if (!rl_carry_key(&r[n].key, &old->cfg.set, s)) {
			lost |= r[n].holds;
			continue;
		}
		if (s->window_ns != old->cfg.set.window_ns) {
			r[n].v.proven_win = r[n].v.proven_pkts = 0;
			r[n].v.proven_bytes = 0;
		}
		n++;
	}
	if (n)
		qsort(r, n, sizeof(*r), by_answered);
	for (size_t i = 0; i < n && (__u64)done < s->max_sources; i++) {
		if (!bpf_map_lookup_elem(nm->verified, &r[i].key, &have) &&
		    have.answered_ns >= r[i].v.answered_ns)
			continue;
		if (bpf_map_update_elem(nm->verified, &r[i].key, &r[i].v, BPF_ANY) ||
		    bpf_map_update_elem(nm->verified_bloom, NULL, &r[i].key, BPF_ANY)) {
			done = -errno;
			break;
		}
		done++;
	}
	for (size_t i = 0; done >= 0 && i < n && !lost; i++)
		lost = r[i].holds && bpf_map_lookup_elem(nm->verified, &r[i].key, &have);
	free(r);
	return done >= 0 && lost ? -ENOSPC : done;
}

/* The CPUs a refresh reads (include/cpus.h): every one that may hold a
 * window carried, so the old ones'; every possible CPU when the old maps
 * did not keep them (layout 12 and older). */
static int carry_cpus(const struct rl_iface *old, const struct rl_settings *s,
		      const struct rl_maps *nm)
{
	struct rl_cpus all = { 0 };
	__u32 zero = 0;

	if (old->m.cpus >= 0)
		return copy_array(old->m.cpus, nm->cpus, 1, sizeof(struct rl_cpus), false);
	for (__u32 c = 0; c < s->ncpus && c < RL_CPUS_BITS; c++)
		all.seen[c / 64] |= 1ULL << (c % 64);
	all.high = s->ncpus > RL_CPUS_BITS;
	return bpf_map_update_elem(nm->cpus, &zero, &all, BPF_ANY) ? -errno : 0;
}

/* The config: the new settings on the attachment's mode and interface,
 * and the running one's bits (a rules generation moved on, so that every
 * source carried re-resolves its rule). */
static int carry_config(const struct rl_iface *old, const struct rl_maps *nm)
{
	struct rl_config cfg;
	int ret = rl_config_read(nm, &cfg);

	if (ret)
		return ret;
	cfg.set.mode = old->cfg.set.mode;
	cfg.set.ifindex = old->cfg.set.ifindex;
	cfg.rules_gen = (old->cfg.rules_gen | 1) + 1;
	if (cfg.rules_gen < 2)
		cfg.rules_gen = 2;	/* 0 is what a new source holds */
	cfg.bans_used = old->cfg.bans_used;
	cfg.remote_used = old->cfg.remote_used;
	cfg.scopes_used = old->cfg.scopes_used;
	/* layout 14's byte was a pad a CLI kept as it found it while it
	 * changed the scopes: 0, every packet walks them until a quota set
	 * or del works the skip out again */
	cfg.scope_skip = old->cfg.layout >= 15 ? old->cfg.scope_skip : 0;
	return rl_config_write(nm, &cfg);
}

int rl_carry(const struct rl_iface *old, const struct rl_settings *s,
	     const struct rl_maps *nm, struct rl_carried *c, char *err,
	     size_t errlen)
{
	const struct rl_settings *o = &old->cfg.set;
	const char *what = "rules";
	long n;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = carry_rules(old, s, nm, c);
	if (!ret) {
		what = "bans";
		n = carry_bans(old, s, nm);
		ret = n < 0 ? (int)n : 0;
		c->bans = n;
	}
	if (!ret) {
		what = "verified sources";
		n = carry_verified(old, s, nm);
		ret = n < 0 ? (int)n : 0;
		c->verified = n;
	}
	/* an earlier layout's answered connections (before 14, whose shapes
	 * are this one's) are not carried: a ban counts none of them, so
	 * their peers' next connections start afresh */
	if (!ret && old->cfg.layout >= 14) {
		what = "answered connections";
		n = copy_hash(old->m.answered, nm->answered, sizeof(struct rl_flow),
			      sizeof(struct rl_answered), s->max_sources);
		if (n >= 0)
			n = copy_hash(old->m.synacks, nm->synacks, sizeof(struct rl_flow),
				      sizeof(struct rl_synack),
				      rl_synacks_entries(s->max_sources));
		ret = n < 0 ? (int)n : 0;
	}
	if (!ret && o->ncpus == s->ncpus) {
		what = "counters";
		ret = copy_percpu_grown(old->m.counters, nm->counters,
					(size_t)rl_layout_value_size(old->cfg.layout,
								     RL_MAP_IDX_counters),
					sizeof(struct rl_counters));
	}
	if (!ret && old->m.rule_counters >= 0) {	/* none before layout 9 */
		what = "rule counters";
		ret = carry_rule_counters(old, nm);
	}
	if (!ret) {
		what = "sync state";
		ret = copy_array(old->m.sync, nm->sync, 1, sizeof(struct rl_sync_state), false);
	}
	if (!ret && same_grid(o, s)) {
		what = "aggregate windows";
		ret = copy_array(old->m.aggregates, nm->aggregates, RL_AGGREGATE_ENTRIES,
				 sizeof(struct rl_state), true);
		if (!ret)
			ret = copy_array(old->m.agg_history, nm->agg_history,
					 RL_AGGREGATE_ENTRIES, sizeof(struct rl_history), false);
	}
	if (!ret && same_sources(o, s)) {
		c->windows = true;
		what = "sources";
		struct rl_index ox, nx;
		struct table from = old_sources(old, &ox);
		struct table to = { .fd = nm->sources, .x = &nx,
				    .now = rl_prog_now_ns(s) };
		struct table nfrom = { .fd = old->m.newcomers };
		struct table nto = { .fd = nm->newcomers };

		n = rl_index_open(&nx, nm);
		if (!n)
			n = carry_sources(&from, old->m.history, &to,
					  nm->history, s->max_sources,
					  nm->verified_bloom);
		c->sources = n;
		if (n >= 0)
			n = carry_sources(&nfrom, old->m.new_history, &nto,
					  nm->new_history,
					  rl_newcomers_entries(s->max_sources), -1);
		if (n >= 0)
			n = copy_hash(old->m.refused, nm->refused, sizeof(struct rl_key),
				      sizeof(struct rl_refused), RL_REFUSED_ENTRIES);
		if (n >= 0)
			n = copy_hash(old->m.remote, nm->remote, sizeof(struct rl_key),
				      sizeof(struct rl_remote), s->max_sources);
		ret = n < 0 ? (int)n : 0;
	}
	if (!ret) {
		what = "CPUs";
		ret = carry_cpus(old, s, nm);
	}
	if (!ret) {
		what = "config";
		ret = carry_config(old, nm);
	}
	if (ret == -ENOSPC)	/* carry_bans, carry_verified */
		snprintf(err, errlen,
			 "the new maps would lose %s the old ones hold (made while the reload ran, or more than the new table holds): run the same reload again",
			 what);
	else if (ret)
		snprintf(err, errlen, "cannot carry the %s into the new maps: %s",
			 what, strerror(-ret));
	return ret;
}

void rl_carry_late(const struct rl_iface *old, const struct rl_settings *s,
		   const struct rl_maps *nm)
{
	(void)carry_bans(old, s, nm);
	(void)carry_verified(old, s, nm);
}
