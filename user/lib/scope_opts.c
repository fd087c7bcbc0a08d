// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Rule scopes on the command line (rule_scope.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "lib/scope_opts.h"
#include "lib/values.h"

#define ALLOWED_PROTOS	"tcp, udp, icmp, icmpv6 or a protocol number 0 to 255"
#define ALLOWED_PORTS	"PORT or PORT-PORT, ports 1 to 65535, the first no higher than the second"

/* rl_rule.scope of a userspace rule with a scope: this bit, the flags
 * above the protocol; the port range in .pad. Never an index + 1, which
 * is at most RL_MAX_SCOPES. */
#define PACKED_SCOPE	(1U << 31)

static const struct {
	const char *name;
	__u8 proto;
} protos[] = {
	{ "tcp", RL_PROTO_TCP }, { "udp", RL_PROTO_UDP },
	{ "icmp", RL_PROTO_ICMP }, { "icmpv6", RL_PROTO_ICMPV6 },
};

const char *rl_proto_name(__u8 proto)
{
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].proto == proto)
			return protos[i].name;
	return NULL;
}

int rl_scope_parse_proto(const char *s, __u8 *proto, char *err, size_t len)
{
	char why[RL_ERR_LEN];
	__u64 v;

	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		if (!strcmp(s, protos[i].name)) {
			*proto = protos[i].proto;
			return 0;
		}
	}
	if (rl_parse_uint(s, "a protocol", 0, 255, &v, why, sizeof(why))) {
		snprintf(err, len, "'%s' is not a protocol: allowed: " ALLOWED_PROTOS, s);
		return -EINVAL;
	}
	*proto = (__u8)v;
	return 0;
}

static int parse_port(const char *s, __u16 *port)
{
	char why[RL_ERR_LEN];
	__u64 v;

	if (rl_parse_uint(s, "a port", 1, 65535, &v, why, sizeof(why)))
		return -EINVAL;
	*port = (__u16)v;
	return 0;
}

int rl_scope_parse_dport(const char *s, __u16 *lo, __u16 *hi, char *err,
			 size_t len)
{
	char first[8];
	const char *dash = strchr(s, '-');
	__u16 a, b;

	if (!dash) {
		if (parse_port(s, &a))
			goto bad;
		*lo = *hi = a;
		return 0;
	}
	if ((size_t)(dash - s) >= sizeof(first))
		goto bad;
	memcpy(first, s, dash - s);
	first[dash - s] = '\0';
	if (parse_port(first, &a) || parse_port(dash + 1, &b) || a > b)
		goto bad;
	*lo = a;
	*hi = b;
	return 0;
bad:
	snprintf(err, len, "'%s' is not a port or port range: allowed: " ALLOWED_PORTS, s);
	return -EINVAL;
}

struct rl_scope rl_scope_of(__u8 proto, __u8 flags, __u16 dport_lo,
			    __u16 dport_hi)
{
	struct rl_scope s = { .proto = proto, .flags = flags };

	if (flags & RL_SCOPE_F_DPORT) {
		s.dport_lo = dport_lo;
		s.dport_hi = dport_hi;
	}
	s.rank = rl_scope_rank(&s);
	return s;
}

int rl_scope_check(const struct rl_scope_opts *o, struct rl_scope *out,
		   char *err, size_t len)
{
	memset(out, 0, sizeof(*out));
	if (o->dport_set && (!o->proto_set ||
			     (o->proto != RL_PROTO_TCP && o->proto != RL_PROTO_UDP))) {
		snprintf(err, len, "--dport needs --proto tcp or --proto udp (ports are TCP's and UDP's)");
		return -EINVAL;
	}
	if (o->syn && (!o->proto_set || o->proto != RL_PROTO_TCP)) {
		snprintf(err, len, "--syn needs --proto tcp (SYN is a TCP flag)");
		return -EINVAL;
	}
	if (o->proto_set)
		*out = rl_scope_of(o->proto, (o->dport_set ? RL_SCOPE_F_DPORT : 0) |
				   (o->syn ? RL_SCOPE_F_SYN : 0),
				   o->dport_lo, o->dport_hi);
	return 0;
}

bool rl_scope_same(const struct rl_scope *a, const struct rl_scope *b)
{
	if (!rl_scope_any(a) || !rl_scope_any(b))
		return rl_scope_any(a) == rl_scope_any(b);
	return a->proto == b->proto && a->flags == b->flags &&
	       (!(a->flags & RL_SCOPE_F_DPORT) ||
		(a->dport_lo == b->dport_lo && a->dport_hi == b->dport_hi));
}

void rl_scope_dport_text(const struct rl_scope *s, char *buf, size_t len)
{
	if (s->dport_lo == s->dport_hi)
		snprintf(buf, len, "%u", s->dport_lo);
	else
		snprintf(buf, len, "%u-%u", s->dport_lo, s->dport_hi);
}

/* The words of a scope, options (--proto tcp) or text (tcp). */
static void scope_words(const struct rl_scope *s, bool opts, char *buf,
			size_t len)
{
	const char *name = rl_proto_name(s->proto);
	char proto[16], ports[16] = "";

	buf[0] = '\0';
	if (!rl_scope_any(s))
		return;
	if (name)
		snprintf(proto, sizeof(proto), "%s", name);
	else
		snprintf(proto, sizeof(proto), "%s%u", opts ? "" : "proto ", s->proto);
	if (s->flags & RL_SCOPE_F_DPORT)
		rl_scope_dport_text(s, ports, sizeof(ports));
	snprintf(buf, len, "%s%s%s%s%s", opts ? " --proto " : "", proto,
		 ports[0] ? (opts ? " --dport " : " dport ") : "", ports,
		 s->flags & RL_SCOPE_F_SYN ? (opts ? " --syn" : " syn") : "");
}

void rl_scope_text(const struct rl_scope *s, char *buf, size_t len)
{
	scope_words(s, false, buf, len);
}

void rl_scope_opts_text(const struct rl_scope *s, char *buf, size_t len)
{
	scope_words(s, true, buf, len);
}

void rl_rule_scope_get(const struct rl_rule *r, struct rl_scope *s)
{
	memset(s, 0, sizeof(*s));
	if (!(r->scope & PACKED_SCOPE))
		return;
	s->proto = (__u8)r->scope;
	s->flags = (__u8)(r->scope >> 8);
	s->dport_lo = (__u16)r->pad;
	s->dport_hi = (__u16)(r->pad >> 16);
	s->rank = rl_scope_rank(s);
}

void rl_rule_scope_put(struct rl_rule *r, const struct rl_scope *s)
{
	r->scope = 0;
	r->pad = 0;
	if (!rl_scope_any(s))
		return;
	r->scope = PACKED_SCOPE | (__u32)s->flags << 8 | s->proto;
	if (s->flags & RL_SCOPE_F_DPORT)
		r->pad = (__u32)s->dport_hi << 16 | s->dport_lo;
}

int rl_scope_pick(const struct rl_scope *table, const bool *used,
		  const struct rl_scope *want)
{
	int free_idx = -ENOSPC;

	for (int i = 0; i < RL_MAX_SCOPES; i++)
		if (rl_scope_any(&table[i]) && rl_scope_same(&table[i], want))
			return i;
	for (int i = RL_MAX_SCOPES - 1; i >= 0; i--)
		if (!used[i])
			free_idx = i;
	return free_idx;
}

__u32 rl_scopes_used(const bool *used)
{
	for (int i = RL_MAX_SCOPES - 1; i >= 0; i--)
		if (used[i])
			return (__u32)i + 1;
	return 0;
}

__u8 rl_scope_skip(const struct rl_scope *table, const bool *used)
{
	__u8 skip = RL_SCOPE_SKIP_ALL;

	for (int i = 0; i < RL_MAX_SCOPES; i++)
		if (used ? used[i] : rl_scope_any(&table[i]))
			skip &= (__u8)~rl_scope_skip_bit(table[i].proto);
	return skip;
}
