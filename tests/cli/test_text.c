// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Names and text escaped for JSON, Prometheus and the terminal
 * (user/cli/text.c): an interface name may hold any byte but '/', ':' and
 * whitespace; every output stays valid (UTF-8, no raw control). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/text.h"
#include "harness.h"

typedef void (*writer_fn)(FILE *f, const char *s);

/* What a writer makes of s, in a malloc'd string. */
static char *written(writer_fn w, const char *s)
{
	char *doc = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&doc, &len);

	if (!f)
		return NULL;
	w(f, s);
	fclose(f);
	return doc;
}

static bool valid_utf8(const char *s)
{
	const unsigned char *c = (const unsigned char *)s;

	while (*c) {
		size_t n = rl_utf8_char_len(c);

		if (!n)
			return false;
		c += n;
	}
	return true;
}

struct text_case {
	const char *in, *json, *prom, *shown;
};

static const struct text_case cases[] = {
	{ "eth0", "eth0", "eth0", "eth0" },
	{ "v\xff", "v\\u00ff", "v\xc3\xbf", "v\\xff" },		/* not UTF-8 */
	{ "a\xc3\xa9z", "a\xc3\xa9z", "a\xc3\xa9z", "a\xc3\xa9z" },	/* é: kept */
	{ "\xc3(", "\\u00c3(", "\xc3\x83(", "\\xc3(" },		/* cut short */
	{ "\xe2\x82", "\\u00e2\\u0082", "\xc3\xa2\xc2\x82", "\\xe2\\x82" },
	{ "\xc0\xaf", "\\u00c0\\u00af", "\xc3\x80\xc2\xaf", "\\xc0\\xaf" },	/* overlong */
	{ "\xed\xa0\x80", "\\u00ed\\u00a0\\u0080", "\xc3\xad\xc2\xa0\xc2\x80",
	  "\\xed\\xa0\\x80" },					/* a surrogate */
	{ "\xf4\x90\x80\x80x", "\\u00f4\\u0090\\u0080\\u0080x",
	  "\xc3\xb4\xc2\x90\xc2\x80\xc2\x80x", "\\xf4\\x90\\x80\\x80x" },	/* > U+10FFFF */
	{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80",
	  "\xf0\x9f\x98\x80" },					/* 4 bytes */
	{ "e\x1b[31m", "e\\u001b[31m", "e\x1b[31m", "e\\x1b[31m" },	/* ESC */
	{ "d\x7f", "d\x7f", "d\x7f", "d\\x7f" },			/* DEL */
	{ "c\xc2\x9b", "c\xc2\x9b", "c\xc2\x9b", "c\\xc2\\x9b" },	/* C1 CSI */
	{ "q\"b\\", "q\\\"b\\\\", "q\\\"b\\\\", "q\"b\\\\" },
	{ "n\nl", "n\\u000al", "n\\nl", "n\\x0al" },
};

TEST(text_escaped_for_each_output)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct text_case *c = &cases[i];
		char *json = written(rl_text_json, c->in);
		char *prom = written(rl_text_prometheus, c->in);
		char shown[RL_SHOWN_LEN];

		if (!CHECK(json && prom, "case %zu: out of memory", i))
			break;
		rl_text_shown(c->in, shown, sizeof(shown));
		CHECK(!strcmp(json, c->json), "case %zu: json '%s', want '%s'",
		      i, json, c->json);
		CHECK(!strcmp(prom, c->prom), "case %zu: prometheus '%s', want '%s'",
		      i, prom, c->prom);
		CHECK(!strcmp(shown, c->shown), "case %zu: shown '%s', want '%s'", i,
		      shown, c->shown);
		CHECK(valid_utf8(json) && valid_utf8(prom) &&
		      valid_utf8(shown), "case %zu: an output is not UTF-8", i);
		free(json);
		free(prom);
	}
}

/* Every byte after a letter: the outputs are always UTF-8, and the
 * terminal never gets a control byte. */
TEST(text_every_byte)
{
	for (int b = 1; b < 256; b++) {
		char in[3] = { 'x', (char)b, '\0' }, shown[RL_SHOWN_LEN];
		char *json = written(rl_text_json, in), *prom = written(rl_text_prometheus, in);
		bool raw_control = false;

		rl_text_shown(in, shown, sizeof(shown));
		for (const unsigned char *c = (const unsigned char *)shown; *c; c++)
			raw_control |= *c < 0x20 || *c == 0x7f;
		CHECK(json && valid_utf8(json), "byte 0x%02x: json not UTF-8", b);
		CHECK(prom && valid_utf8(prom), "byte 0x%02x: prometheus not UTF-8", b);
		CHECK(valid_utf8(shown) && !raw_control, "byte 0x%02x: shown '%s'", b, shown);
		free(json);
		free(prom);
	}
}

TEST(text_shown_truncated_whole)
{
	char buf[6];

	/* "a\xff" needs 6 bytes with the NUL: no room, so only "a" */
	CHECK(!strcmp(rl_text_shown("ab\xff", buf, sizeof(buf)), "ab"), "got '%s'", buf);
	CHECK(!strcmp(rl_text_shown("a\xff", buf, sizeof(buf)), "a\\xff"), "got '%s'", buf);
}
