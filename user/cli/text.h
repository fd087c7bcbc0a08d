/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Names and text as each output needs them. Linux allows any byte but '/',
 * ':' and whitespace in an interface name, so a name may hold control
 * characters and bytes that are not UTF-8. One rule for every output: a
 * byte that is not part of valid UTF-8 stands for the character of the same
 * number, U+0080 to U+00FF (as Latin-1 reads it), so JSON ("\u00ff") and
 * Prometheus (the character in UTF-8) give the same text; the terminal
 * shows it as \xff, with control characters and '\' escaped too.
 */
#ifndef RL_TEXT_H
#define RL_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* The length of the valid UTF-8 character that starts at s (1 to 4), or 0
 * when the byte at s does not start one (nor is the terminating NUL). */
size_t rl_utf8_char_len(const unsigned char *s);

/* s as a JSON string's contents (without the quotes). */
void rl_text_json(FILE *f, const char *s);

/* s as a Prometheus label value's contents: \\, \" and \n escaped. */
void rl_text_prometheus(FILE *f, const char *s);

/* s as a terminal may show it: control characters (C0, DEL, C1), bytes
 * that are not UTF-8 and '\' as \xNN (\\ for '\'); into buf, truncated
 * to len. Returns buf. RL_SHOWN_LEN fits any interface name. */
#define RL_SHOWN_LEN	64	/* IF_NAMESIZE * 4 */
const char *rl_text_shown(const char *s, char *buf, size_t len);

#endif /* RL_TEXT_H */
