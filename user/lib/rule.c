// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The rule model (rule.h): a rule's limits as quota set changes them, its
 * prefix, its text, its order. No map is touched here. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/rule.h"
#include "lib/settings.h"

static const __u8 v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

bool rl_key_is_v4(const struct rl_key *key)
{
	return !memcmp(key->addr, v4_mapped, sizeof(v4_mapped));
}

void rl_rule_prefix(const struct rl_rule *r, struct rl_prefix *p)
{
	memset(p, 0, sizeof(*p));
	p->v6 = r->flags & RL_RULE_F_V6;
	p->len = r->prefixlen;
	memcpy(p->addr, r->addr, sizeof(p->addr));
}

void rl_rule_text(const struct rl_rule *r, char *buf, size_t len)
{
	char pfx[RL_PREFIX_STRLEN], scope[RL_SCOPE_STRLEN];
	struct rl_prefix p;
	struct rl_scope s;

	rl_rule_prefix(r, &p);
	rl_format_prefix(&p, pfx, sizeof(pfx));
	rl_rule_scope_get(r, &s);
	rl_scope_text(&s, scope, sizeof(scope));
	snprintf(buf, len, "%s%s%s", pfx, scope[0] ? " " : "", scope);
}

bool rl_rule_change_any(const struct rl_rule_change *c)
{
	for (const struct rl_rule_opt *o = rl_rule_opts; o->name; o++)
		if (*(const bool *)((const char *)c + o->have_offset))
			return true;
	return false;
}

bool rl_rule_change_default(struct rl_rule_change *c, __u64 pps, __u64 bps)
{
	*c = (struct rl_rule_change){
		.have_pps = pps != RL_UNLIMITED, .pps = pps,
		.have_bps = bps != RL_UNLIMITED, .bps = bps,
	};
	return rl_rule_change_any(c);
}

/* Where a field lives in struct rl_rule, by kind: a switch in flags. */
#define RULE_HOLDER_RATE(field)		field
#define RULE_HOLDER_DURATION(field)	field
#define RULE_HOLDER_COUNT(field)	field
#define RULE_HOLDER_SWITCH(field)	flags

#define RULE_OPT(id, opt, field, kind, bit, json, column, help) \
	{ opt, offsetof(struct rl_rule, RULE_HOLDER_##kind(field)), \
	  offsetof(struct rl_rule_change, field), \
	  offsetof(struct rl_rule_change, have_##id), RL_RULE_OPT_##kind, \
	  bit, json, column, help },

const struct rl_rule_opt rl_rule_opts[] = {
	RL_RULE_FIELDS(RULE_OPT)
	{ NULL }
};
#undef RULE_OPT

/* The scope is part of what names a rule, not a limit: save writes it as
 * rl_scope_opts_text() gives it. */
const char *const rl_rule_scope_opts[] = { "proto", "dport", "syn", NULL };

static __u64 *opt_field(struct rl_rule *r, const struct rl_rule_opt *o)
{
	return (__u64 *)((char *)r + o->offset);
}

__u64 rl_rule_opt_value(const struct rl_rule *r, const struct rl_rule_opt *o)
{
	if (o->kind == RL_RULE_OPT_SWITCH)
		return !!(r->flags & o->bit);
	return *opt_field((struct rl_rule *)r, o);
}

static __u64 opt_unset(const struct rl_rule_opt *o)
{
	return o->kind == RL_RULE_OPT_RATE ? RL_UNLIMITED : 0;	/* COUNT too */
}

bool rl_rule_opt_set(const struct rl_rule *r, const struct rl_rule_opt *o)
{
	return rl_rule_opt_value(r, o) != opt_unset(o);
}

void rl_rule_opt_text(const struct rl_rule *r, const struct rl_rule_opt *o,
		      char *buf, size_t len)
{
	__u64 v = rl_rule_opt_value(r, o);

	if (o->kind == RL_RULE_OPT_SWITCH)
		snprintf(buf, len, "%s", v ? "on" : "off");
	else if (!rl_rule_opt_set(r, o))
		snprintf(buf, len, "-");
	else if (o->kind == RL_RULE_OPT_DURATION)
		rl_format_duration(v, buf, len);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

void rl_rule_init(struct rl_rule *r, const struct rl_prefix *p)
{
	memset(r, 0, sizeof(*r));
	for (const struct rl_rule_opt *o = rl_rule_opts; o->name; o++)
		if (o->kind != RL_RULE_OPT_SWITCH)
			*opt_field(r, o) = opt_unset(o);
	r->flags = RL_RULE_F_USED | (p->v6 ? RL_RULE_F_V6 : 0);
	r->prefixlen = p->len;
	memcpy(r->addr, p->addr, p->v6 ? 16 : 4);
}

void rl_rule_apply(struct rl_rule *r, const struct rl_rule_change *c,
		   __u64 window_ns)
{
	for (const struct rl_rule_opt *o = rl_rule_opts; o->name; o++) {
		__u64 v = *(const __u64 *)((const char *)c + o->change_offset);

		if (!*(const bool *)((const char *)c + o->have_offset))
			continue;
		if (o->kind == RL_RULE_OPT_SWITCH)
			r->flags = v ? r->flags | o->bit : r->flags & ~o->bit;
		else
			*opt_field(r, o) = v;
	}
	r->new_pkt_budget = rl_budget(r->new_pps, window_ns);
	r->new_byte_budget = rl_budget(r->new_bps, window_ns);
	r->pkt_budget = rl_budget(r->pps, window_ns);
	/* a burst caps a window budget (quota.h rl_usage_burst): --burst
	 * alone gets the largest */
	if (r->burst && r->pkt_budget == RL_UNLIMITED)
		r->pkt_budget = RL_MAX_BUDGET;
	r->byte_budget = rl_budget(r->bps, window_ns);
	r->agg_pkt_budget = rl_budget(r->agg_pps, window_ns);
	r->agg_byte_budget = rl_budget(r->agg_bps, window_ns);
}

int rl_prefix_expand(const struct rl_prefix *p, struct rl_prefix out[2])
{
	if (!p->is_default) {
		out[0] = *p;
		return 1;
	}
	memset(out, 0, 2 * sizeof(*out));
	out[1].v6 = true;
	return 2;
}

int rl_rule_check(const struct rl_settings *s, const struct rl_prefix *p,
		  const struct rl_scope *scope, const struct rl_rule_change *c,
		  char *err, size_t errlen)
{
	char buf[RL_PREFIX_STRLEN];
	int ret;

	ret = rl_budgets_fit(c, s->window_ns, "", err, errlen);
	if (ret)
		return ret;
	/* a scoped window's key holds 96 bits of an IPv6 source
	 * (include/scope.h rl_scoped_key) */
	if (scope && rl_scope_any(scope) && (p->v6 || p->is_default) &&
	    s->v6_prefix > RL_SCOPED_MAX_V6_PREFIX) {
		rl_format_prefix(p, buf, sizeof(buf));
		snprintf(err, errlen,
			 "a scoped rule for %s covers IPv6 sources, which this interface tracks by /%u: scoped rules need --ipv6-prefix %u or shorter (detach and attach again with it), or scope an IPv4 prefix only",
			 buf, s->v6_prefix, RL_SCOPED_MAX_V6_PREFIX);
		return -EINVAL;
	}
	if (!p->v6 || p->len <= s->v6_prefix)
		return 0;
	rl_format_prefix(p, buf, sizeof(buf));
	snprintf(err, errlen,
		 "%s is longer than the /%u that IPv6 sources are tracked by on this interface: use a /%u or shorter prefix, or attach with --ipv6-prefix %u",
		 buf, s->v6_prefix, s->v6_prefix, p->len);
	return -EINVAL;
}

bool rl_rule_same_prefix(const struct rl_rule *a, const struct rl_rule *b)
{
	return !((a->flags ^ b->flags) & RL_RULE_F_V6) &&
	       a->prefixlen == b->prefixlen &&
	       !memcmp(a->addr, b->addr, sizeof(a->addr));
}

bool rl_rule_same_key(const struct rl_rule *a, const struct rl_rule *b)
{
	return rl_rule_same_prefix(a, b) && a->scope == b->scope &&
	       a->pad == b->pad;
}

int rl_rule_cmp(const void *a, const void *b)
{
	const struct rl_rule *x = a, *y = b;
	int xv6 = !!(x->flags & RL_RULE_F_V6), yv6 = !!(y->flags & RL_RULE_F_V6);
	int c;

	if (xv6 != yv6)
		return xv6 - yv6;
	if (x->prefixlen != y->prefixlen)
		return x->prefixlen < y->prefixlen ? -1 : 1;
	c = memcmp(x->addr, y->addr, sizeof(x->addr));
	if (c)
		return c;
	/* unscoped first, then by scope (packed: rule_scope.h) */
	if (x->scope != y->scope)
		return x->scope < y->scope ? -1 : 1;
	return x->pad < y->pad ? -1 : x->pad > y->pad;
}

int rl_budgets_fit(const struct rl_rule_change *c, __u64 window_ns,
		   const char *opt_prefix, char *err, size_t errlen)
{
	char w[32];

	for (const struct rl_rule_opt *o = rl_rule_opts; o->name; o++) {
		__u64 rate = *(const __u64 *)((const char *)c + o->change_offset);
		__u64 b = rl_budget(rate, window_ns);

		if (o->kind != RL_RULE_OPT_RATE ||
		    !*(const bool *)((const char *)c + o->have_offset) ||
		    b == RL_UNLIMITED || b <= RL_MAX_BUDGET)
			continue;
		rl_format_duration(window_ns, w, sizeof(w));
		snprintf(err, errlen,
			 "--%s%s %llu makes %llu %s per window of %s: the window counts at most %llu exactly; use --%s%s %llu or less, a shorter --window, or 'unlimited'",
			 opt_prefix, o->name, (unsigned long long)rate,
			 (unsigned long long)b, strstr(o->name, "bps") ? "bytes" : "packets",
			 w, (unsigned long long)RL_MAX_BUDGET, opt_prefix, o->name,
			 (unsigned long long)((unsigned __int128)RL_MAX_BUDGET *
					      RL_NSEC_PER_SEC / window_ns));
		return -ERANGE;
	}
	return 0;
}
