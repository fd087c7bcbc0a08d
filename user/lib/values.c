// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The CLI's value syntax: RATE, DURATION, PREFIX (xdp-ratelimit(8)). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "ratelimit.h"
#include "lib/values.h"

#define RL_PREFIX_INPUT_MAX 64	/* longer than any address/len text */

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * Leading decimal digits of s into *v; returns the count of digits (0 when
 * none) or -ERANGE on overflow. No sign, no spaces: strtoull would take both.
 */
static int parse_digits(const char *s, __u64 *v)
{
	int n = 0;

	*v = 0;
	for (; isdigit((unsigned char)s[n]); n++) {
		__u64 d = (__u64)(s[n] - '0');

		if (*v > (RL_UNLIMITED - d) / 10)
			return -ERANGE;
		*v = *v * 10 + d;
	}
	return n;
}

int rl_parse_rate(const char *s, bool allow_unlimited, __u64 *out,
		  char *err, size_t errlen)
{
	static const char hint[] =
		"a rate is a whole number with an optional k, M or G suffix, e.g. 1000, 10k, 2M";
	__u64 v, mult = 1;
	int n;

	if (allow_unlimited && !strcmp(s, "unlimited")) {
		*out = RL_UNLIMITED;
		return 0;
	}
	n = parse_digits(s, &v);
	if (n < 0)
		return fail(err, errlen, "rate '%s' is too large", s);
	if (n == 0)
		return fail(err, errlen, "bad rate '%s': %s%s", s, hint,
			    allow_unlimited ? ", or 'unlimited'" : "");
	switch (s[n]) {
	case '\0':
		break;
	case 'k':
		mult = 1000ULL;
		break;
	case 'M':
		mult = 1000000ULL;
		break;
	case 'G':
		mult = 1000000000ULL;
		break;
	default:
		return fail(err, errlen, "bad rate '%s': %s", s, hint);
	}
	if (mult != 1 && s[n + 1] != '\0')
		return fail(err, errlen, "bad rate '%s': %s", s, hint);
	if (v > (RL_UNLIMITED - 1) / mult)
		return fail(err, errlen, "rate '%s' is too large", s);
	*out = v * mult;
	return 0;
}

int rl_parse_duration(const char *s, __u64 *ns, char *err, size_t errlen)
{
	static const char hint[] =
		"a duration is a whole number with ms, s, m or h, e.g. 500ms, 1s, 1m, 2h";
	__u64 v, unit;
	int n;

	n = parse_digits(s, &v);
	if (n < 0)
		return fail(err, errlen, "duration '%s' is too large", s);
	if (n == 0)
		return fail(err, errlen, "bad duration '%s': %s", s, hint);
	if (!strcmp(s + n, "ms"))
		unit = RL_NSEC_PER_MSEC;
	else if (!strcmp(s + n, "s"))
		unit = RL_NSEC_PER_SEC;
	else if (!strcmp(s + n, "m"))
		unit = 60 * RL_NSEC_PER_SEC;
	else if (!strcmp(s + n, "h"))
		unit = 3600 * RL_NSEC_PER_SEC;
	else
		return fail(err, errlen, "bad duration '%s': %s", s, hint);
	if (v > RL_UNLIMITED / unit)
		return fail(err, errlen, "duration '%s' is too large", s);
	*ns = v * unit;
	return 0;
}

/* Zero the bits of addr below len; true if any was set. */
static bool clear_host_bits(__u8 *addr, __u32 bytes, __u32 len)
{
	bool had = false;
	__u32 i;

	for (i = 0; i < bytes; i++) {
		__u32 keep = len >= (i + 1) * 8 ? 8 : len > i * 8 ? len - i * 8 : 0;
		__u8 mask = keep ? (__u8)(0xff << (8 - keep)) : 0;

		if (addr[i] & ~mask)
			had = true;
		addr[i] &= mask;
	}
	return had;
}

/* ::ffff:0:0/96: IPv4 addresses as IPv6 sockets show them. IPv4 traffic
 * is matched by IPv4 rules only, so a rule here would never apply to it. */
static bool is_v4_mapped(const struct rl_prefix *p)
{
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };

	return p->v6 && p->len >= 96 && !memcmp(p->addr, mapped, sizeof(mapped));
}

int rl_parse_prefix(const char *s, struct rl_prefix *out, char *err,
		    size_t errlen)
{
	static const char hint[] =
		"use an address or CIDR prefix such as 198.18.0.7, 198.18.0.0/15, 2001:db8::/32, or 'default'";
	char buf[RL_PREFIX_INPUT_MAX], *slash;
	struct rl_prefix pr = { 0 }, *p = &pr, net;
	char want[RL_PREFIX_STRLEN];
	__u32 maxlen;

	/* *out is written only on success */
	if (!strcmp(s, "default")) {
		p->is_default = true;
		*out = pr;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return fail(err, errlen, "bad prefix '%.*s...': %s",
			    RL_PREFIX_INPUT_MAX, s, hint);
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	p->v6 = strchr(buf, ':') != NULL;
	maxlen = p->v6 ? 128 : 32;
	if (inet_pton(p->v6 ? AF_INET6 : AF_INET, buf, p->addr) != 1)
		return fail(err, errlen, "bad address '%s' in '%s': %s", buf, s,
			    hint);
	p->len = maxlen;
	if (slash) {
		__u64 len;
		int n = parse_digits(slash, &len);

		if (n <= 0 || slash[n] != '\0' || (n > 1 && slash[0] == '0'))
			return fail(err, errlen,
				    "bad prefix length '/%s' in '%s': use /0 to /%u",
				    slash, s, maxlen);
		if (len > maxlen)
			return fail(err, errlen,
				    "prefix length /%llu in '%s' is too long: %s allows /0 to /%u",
				    (unsigned long long)len, s,
				    p->v6 ? "IPv6" : "IPv4", maxlen);
		p->len = (__u32)len;
	}
	net = *p;
	if (clear_host_bits(net.addr, maxlen / 8, net.len)) {
		rl_format_prefix(&net, want, sizeof(want));
		return fail(err, errlen, "'%s' has host bits set: did you mean %s?",
			    s, want);
	}
	if (is_v4_mapped(p)) {
		net.v6 = false;
		memmove(net.addr, p->addr + 12, 4);
		memset(net.addr + 4, 0, 12);
		net.len = p->len - 96;
		rl_format_prefix(&net, want, sizeof(want));
		return fail(err, errlen,
			    "'%s' is an IPv4-mapped IPv6 prefix, which IPv4 traffic never matches: use %s",
			    s, want);
	}
	*out = pr;
	return 0;
}

int rl_parse_uint(const char *s, const char *what, __u64 min, __u64 max,
		  __u64 *out, char *err, size_t errlen)
{
	__u64 v;
	int n = parse_digits(s, &v);

	if (n <= 0 || s[n] != '\0' || v < min || v > max)
		return fail(err, errlen,
			    "bad %s '%s': use a whole number from %llu to %llu",
			    what, s, (unsigned long long)min,
			    (unsigned long long)max);
	*out = v;
	return 0;
}

void rl_format_prefix(const struct rl_prefix *p, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (p->is_default) {
		snprintf(buf, len, "default");
		return;
	}
	if (!inet_ntop(p->v6 ? AF_INET6 : AF_INET, p->addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, len, "%s/%u", a, p->len);
}

void rl_format_rule_prefix(bool v6, __u32 prefixlen, const __u8 *addr,
			   char *buf, size_t len)
{
	struct rl_prefix p = { .v6 = v6, .len = prefixlen };

	memcpy(p.addr, addr, sizeof(p.addr));
	rl_format_prefix(&p, buf, len);
}

void rl_format_duration(__u64 ns, char *buf, size_t len)
{
	if (ns && ns % (3600 * RL_NSEC_PER_SEC) == 0)
		snprintf(buf, len, "%lluh", (unsigned long long)(ns / (3600 * RL_NSEC_PER_SEC)));
	else if (ns && ns % (60 * RL_NSEC_PER_SEC) == 0)
		snprintf(buf, len, "%llum", (unsigned long long)(ns / (60 * RL_NSEC_PER_SEC)));
	else if (ns && ns % RL_NSEC_PER_SEC == 0)
		snprintf(buf, len, "%llus", (unsigned long long)(ns / RL_NSEC_PER_SEC));
	else if (ns % RL_NSEC_PER_MSEC == 0)
		snprintf(buf, len, "%llums", (unsigned long long)(ns / RL_NSEC_PER_MSEC));
	else
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
}

void rl_escape(const char *s, size_t n, char *out, size_t outlen)
{
	size_t o = 0;

	if (!outlen)
		return;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[5];
		size_t el;

		if (c == '\\')
			el = (size_t)snprintf(e, sizeof(e), "\\\\");
		else if (c < ' ' || c > '~')
			el = (size_t)snprintf(e, sizeof(e), "\\x%02x", c);
		else
			el = (size_t)snprintf(e, sizeof(e), "%c", c);
		if (o + el >= outlen)
			break;	/* whole escapes only */
		memcpy(out + o, e, el);
		o += el;
	}
	out[o] = '\0';
}
