/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Parsing and printing of the CLI's value syntax (xdp-ratelimit(8)):
 * RATE, DURATION, PREFIX and addresses. Parsers never exit: they return
 * 0, or -EINVAL with a message in `err` that names the bad value and the fix,
 * ready to follow "xdp-ratelimit: ", leaving their output untouched.
 */
#ifndef RL_VALUES_H
#define RL_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* What went wrong and what to do, with paths: room for both. */
#define RL_ERR_LEN 512

/* An address or CIDR prefix; IPv4 keeps its 4 bytes first in addr. */
struct rl_prefix {
	bool v6;
	__u8 addr[16];
	__u32 len;		/* 0..32 or 0..128 */
	bool is_default;	/* "default": both 0.0.0.0/0 and ::/0 */
};

/*
 * RATE: a whole number with an optional k, M or G suffix (powers of 1000),
 * e.g. "0", "1500", "10k", "2M", "1G". When `allow_unlimited`, the word
 * "unlimited" gives RL_UNLIMITED. Rejects signs, spaces, fractions, other
 * suffixes, overflow and values >= RL_UNLIMITED.
 */
int rl_parse_rate(const char *s, bool allow_unlimited, __u64 *out,
		  char *err, size_t errlen);

/* DURATION: a whole number with suffix ms, s, m or h ("500ms", "1s", "1m", "2h");
 * result in ns. No range check beyond overflow (see rl_settings_check). */
int rl_parse_duration(const char *s, __u64 *ns, char *err, size_t errlen);

/*
 * PREFIX: "198.18.0.7" (a /32), "198.18.0.0/15", "2001:db8::/32",
 * "2001:db8::1" (a /128), or "default". Host bits below the prefix length
 * must be zero ("198.18.0.1/15" is refused, naming 198.18.0.0/15). An
 * IPv4-mapped IPv6 prefix ("::ffff:198.18.0.7") is refused, naming the IPv4
 * one: IPv4 traffic is matched by IPv4 rules only.
 */
int rl_parse_prefix(const char *s, struct rl_prefix *p, char *err,
		    size_t errlen);

/* Unsigned decimal in [min, max], for counts such as --buckets or --top. */
int rl_parse_uint(const char *s, const char *what, __u64 min, __u64 max,
		  __u64 *out, char *err, size_t errlen);

/* "198.18.0.0/15", "2001:db8::/32"; a full-length prefix prints with its
 * length too. buf needs RL_PREFIX_STRLEN. */
#define RL_PREFIX_STRLEN 64
void rl_format_prefix(const struct rl_prefix *p, char *buf, size_t len);

/* A rule's prefix as a ban or an event keeps it (family, length, the
 * address's 16 bytes, IPv4 first), as rl_format_prefix prints it. */
void rl_format_rule_prefix(bool v6, __u32 prefixlen, const __u8 *addr,
			   char *buf, size_t len);

/* Duration in ns as the shortest exact form: "1s", "500ms", "1m". */
void rl_format_duration(__u64 ns, char *buf, size_t len);

/* n bytes of s, which another party chose (a server's error), for a
 * terminal: printable ASCII as is, a backslash as \\, any other byte as
 * \xNN; cut at a whole escape to fit outlen. */
void rl_escape(const char *s, size_t n, char *out, size_t outlen);

#endif /* RL_VALUES_H */
