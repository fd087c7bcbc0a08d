// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Typed options (cli.h): a value of each kind parsed, checked and stored
 * at its field's offset, so that a command's option is one row of its
 * table. The value syntax is values.h's; what the kinds add is the range,
 * the field's size and a message that names the option.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "lib/pin.h"
#include "lib/values.h"
#include "ratelimit.h"

const struct rl_opt_word rl_opt_on_off[] = {
	{ "on", 1 }, { "off", 0 }, { NULL, 0 },
};

static int bad(char *err, size_t errlen, const struct rl_opt *o,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* "--NAME: " + what is wrong + " (note)" */
static int bad(char *err, size_t errlen, const struct rl_opt *o,
	       const char *fmt, ...)
{
	int n = snprintf(err, errlen, "--%s: ", o->name);
	va_list ap;

	if (n < 0 || (size_t)n >= errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	if (o->note) {
		n = (int)strlen(err);
		snprintf(err + n, errlen - (size_t)n, " (%s)", o->note);
	}
	return -EINVAL;
}

/* An unsigned value into a field of o->size bytes (1, 2, 4 or 8). */
static void put_uint(void *field, size_t size, __u64 v)
{
	switch (size) {
	case 1:
		*(__u8 *)field = (__u8)v;
		break;
	case 2:
		*(__u16 *)field = (__u16)v;
		break;
	case 4:
		*(__u32 *)field = (__u32)v;
		break;
	default:
		*(__u64 *)field = v;
	}
}

static __u64 get_uint(const void *field, size_t size)
{
	return size == 1 ? *(const __u8 *)field : size == 2 ? *(const __u16 *)field :
	       size == 4 ? *(const __u32 *)field : *(const __u64 *)field;
}

/* "auto, native or generic" */
static void words_text(const struct rl_opt_word *w, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; w[i].word && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", !i ? "" :
				      w[i + 1].word ? ", " : " or ", w[i].word);
}

static int parse_enum(const struct rl_opt *o, const char *arg, __u64 *v,
		      char *err, size_t errlen)
{
	const struct rl_opt_word *w = o->words;
	char all[128];

	for (int i = 0; w[i].word; i++)
		if (!strcmp(arg, w[i].word)) {
			*v = (__u64)(__s64)w[i].value;
			return 0;
		}
	words_text(w, all, sizeof(all));
	if (w[0].word && w[1].word && !w[2].word)
		return bad(err, errlen, o, "'%s' is neither %s nor %s: use %s",
			   arg, w[0].word, w[1].word, all);
	return bad(err, errlen, o, "bad value '%s': use %s", arg, all);
}

/* "1ms to 24h, or 0 for none", "1ms or more" */
static void duration_range(const struct rl_opt *o, char *buf, size_t len)
{
	char lo[32], hi[32];

	rl_format_duration(o->min, lo, sizeof(lo));
	rl_format_duration(o->max, hi, sizeof(hi));
	if (o->max)
		snprintf(buf, len, "%s to %s%s", lo, hi, o->zero ? ", or 0 for none" : "");
	else
		snprintf(buf, len, "%s or more%s", lo, o->zero ? ", or 0 for none" : "");
}

static int parse_duration(const struct rl_opt *o, const char *arg, __u64 *v,
			  char *err, size_t errlen)
{
	char why[RL_ERR_LEN], range[96];
	bool ranged = o->min || o->max;

	duration_range(o, range, sizeof(range));
	if (o->zero && !strcmp(arg, "0")) {
		*v = 0;
		return 0;
	}
	if (rl_parse_duration(arg, v, why, sizeof(why)))
		return ranged ? bad(err, errlen, o, "%s; use %s", why, range) :
				bad(err, errlen, o, "%s", why);
	if ((*v || !o->zero) && (*v < o->min || (o->max && *v > o->max)))
		return bad(err, errlen, o, "'%s' is out of range: use %s", arg, range);
	return 0;
}

static int parse_count(const struct rl_opt *o, const char *arg, __u64 *v,
		       char *err, size_t errlen)
{
	char why[RL_ERR_LEN];
	__u64 max = o->max;

	if (o->unlimited && !strcmp(arg, "unlimited")) {
		*v = 0;
		return 0;
	}
	/* what the field holds at most, when the row says no more */
	if (o->size < 8 && max > (1ULL << (8 * o->size)) - 1)
		max = (1ULL << (8 * o->size)) - 1;
	if (rl_parse_uint(arg, "value", o->min, max, v, why, sizeof(why)))
		return bad(err, errlen, o, "%s%s", why,
			   o->unlimited ? ", or unlimited" : "");
	return 0;
}

static int parse_rate(const struct rl_opt *o, const char *arg, __u64 *v,
		      char *err, size_t errlen)
{
	char why[RL_ERR_LEN];

	if (!rl_parse_rate(arg, o->unlimited, v, why, sizeof(why)))
		return 0;
	return bad(err, errlen, o, "%s (allowed: 0 to %llu per second%s)", why,
		   (unsigned long long)(RL_UNLIMITED - 1),
		   o->unlimited ? ", or unlimited" : "");
}

/* The kinds whose value is a number, by the parser that gives it. */
static int (*const number_kinds[])(const struct rl_opt *o, const char *arg,
				   __u64 *v, char *err, size_t errlen) = {
	[RL_OPT_ENUM] = parse_enum,
	[RL_OPT_RATE] = parse_rate,
	[RL_OPT_DURATION] = parse_duration,
	[RL_OPT_COUNT] = parse_count,
};

int rl_opt_store(const struct rl_opt *o, void *cfg, const char *arg,
		 char *err, size_t errlen)
{
	void *field = (char *)cfg + o->offset;
	char why[RL_ERR_LEN];
	__u64 v;

	switch (o->kind) {
	case RL_OPT_SWITCH:
		if (o->bits)
			put_uint(field, o->size, get_uint(field, o->size) | o->bits);
		else
			*(bool *)field = true;
		break;
	case RL_OPT_STRING:
		*(const char **)field = arg;
		break;
	case RL_OPT_IFACE:
		if (rl_iface_name_check(arg, why, sizeof(why)))
			return bad(err, errlen, o, "%s", why);
		*(const char **)field = arg;
		break;
	case RL_OPT_PARSE:
		if (o->parse(arg, field, why, sizeof(why)))
			return bad(err, errlen, o, "%s", why);
		break;
	case RL_OPT_CALL:
		return bad(err, errlen, o, "taken by its command, not by a kind");
	default:	/* a number */
		if (number_kinds[o->kind](o, arg, &v, err, errlen))
			return -EINVAL;
		put_uint(field, o->size, v);
	}
	if (o->have)
		*(bool *)((char *)cfg + o->have - 1) = true;
	return 0;
}
