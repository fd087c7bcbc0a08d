// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Names and text escaped for JSON, Prometheus and the terminal (text.h). */
#include <stdbool.h>
#include <string.h>
#include "cli/text.h"

static bool continuation(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t rl_utf8_char_len(const unsigned char *s)
{
	unsigned char c = s[0];

	if (c < 0x80)
		return 1;
	/* the ranges of RFC 3629: no overlong forms, no surrogates, nothing
	 * above U+10FFFF */
	if (c >= 0xc2 && c <= 0xdf)
		return continuation(s[1]) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return s[1] >= lo && s[1] <= hi && continuation(s[2]) ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return s[1] >= lo && s[1] <= hi && continuation(s[2]) &&
		       continuation(s[3]) ? 4 : 0;
	}
	return 0;
}

/* JSON and Prometheus: the same characters, each format's escapes. */
static void escaped(FILE *f, const char *s, bool json)
{
	const unsigned char *c = (const unsigned char *)s;

	while (*c) {
		size_t n = rl_utf8_char_len(c);

		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (json && (*c < 0x20 || !n))	/* a control, or not UTF-8 */
			fprintf(f, "\\u%04x", *c);
		else if (*c == '\n')
			fputs("\\n", f);
		else if (!n)	/* U+00XX in UTF-8, as JSON's \u00XX reads */
			fprintf(f, "%c%c", 0xc0 | (*c >> 6), 0x80 | (*c & 0x3f));
		else
			fwrite(c, 1, n, f);
		c += n ? n : 1;
	}
}

void rl_text_json(FILE *f, const char *s)
{
	escaped(f, s, true);
}

void rl_text_prometheus(FILE *f, const char *s)
{
	escaped(f, s, false);
}

const char *rl_text_shown(const char *s, char *buf, size_t len)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t at = 0;

	if (!len)
		return buf;
	while (*c) {
		size_t n = rl_utf8_char_len(c);
		bool c1 = n == 2 && c[0] == 0xc2 && c[1] < 0xa0;
		char esc[9];
		size_t k = 0;

		if (*c == '\\') {
			memcpy(esc, "\\\\", 2);
			k = 2;
		} else if (*c < 0x20 || *c == 0x7f || !n || c1) {
			/* every byte of it: a C1 control is two */
			for (size_t b = 0; b < (c1 ? 2u : 1u); b++)
				k += (size_t)snprintf(esc + k, sizeof(esc) - k,
						      "\\x%02x", c[b]);
			n = c1 ? 2 : 1;
		} else {
			memcpy(esc, c, n);
			k = n;
		}
		if (at + k >= len)
			break;	/* truncated at a whole character */
		memcpy(buf + at, esc, k);
		at += k;
		c += n ? n : 1;
	}
	buf[at] = '\0';
	return buf;
}
