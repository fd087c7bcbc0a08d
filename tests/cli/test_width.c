// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What the CLI prints fits 80 columns (xdp-ratelimit(8), OUTPUT WIDTH):
 * every command's --help, and the rows of events with the longest names
 * and addresses. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/table.h"
#include "../harness.h"

/* The widest line of text, and the first that wide in `line`. */
static size_t widest(const char *text, const char **line)
{
	size_t w = 0;

	*line = text;
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");

		if (n > w) {
			w = n;
			*line = p;
		}
		p += n + (p[n] == '\n');
	}
	return w;
}

/* What `xdp-ratelimit NAME --help` prints on stdout, in a static buffer. */
static const char *help_of(const char *name)
{
	static const struct rl_cmd top = { .name = "", .subcmds = rl_commands };
	static char out[16384];
	char *argv[] = { "xdp-ratelimit", (char *)name, "--help", NULL };
	FILE *f = tmpfile();
	int saved = dup(STDOUT_FILENO);
	size_t n = 0;

	out[0] = '\0';
	if (!f || saved < 0)
		return out;
	fflush(stdout);
	dup2(fileno(f), STDOUT_FILENO);
	rl_cmd_main(&top, NULL, "", 3, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	fclose(f);
	return out;
}

TEST(help_fits_80_columns)
{
	for (int i = 0; rl_commands[i]; i++) {
		const char *text = help_of(rl_commands[i]->name), *line;
		size_t w = widest(text, &line);

		CHECK(strlen(text) > 100, "%s --help printed: %s", rl_commands[i]->name, text);
		CHECK(w <= RL_VIEW_MIN_WIDTH, "%s --help: a line of %zu columns: %.*s",
		      rl_commands[i]->name, w, (int)w, line);
	}
}

/* An event row, as events prints it, at `width`, in a static buffer. */
static const char *row_at(const char *const *fields, int width)
{
	static const int pads[] = { 0, 0, 8, 15, 0 };
	static char out[1024];
	FILE *f = fmemopen(out, sizeof(out), "w");

	if (!f)
		return "";
	rl_print_row(f, fields, pads, 5, width);
	fclose(f);
	return out;
}

/* A row that fits stays one line, padded to its columns; one that does
 * not goes on under it, indented four, each field whole, no trailing
 * blanks. */
TEST(event_row_fits_80_columns)
{
	const char *v4[] = { "2026-11-23 22:35:23.107", "eth0", "banned", "198.18.9.9",
			     "198.18.0.0/16 for 5s" };
	const char *v6[] = { "2026-11-23 22:35:23.107", "ifname-15-chars", "released",
			     "2001:db8:1234:5678:9abc:def0:1234:5678",
			     "2001:db8:1234:5678:9abc:def0:1234:5678/128" };
	const char *scoped[] = { "2026-11-23 22:35:23.107", "ifname-15-chars", "banned",
				 "2001:db8:1234:5678:9abc:def0::/96",
				 "2001:db8:1234:5678:9abc:def0::/96 tcp dport 10000-65535 syn for 23h59m" };
	const char *got, *line;

	got = row_at(v4, RL_VIEW_MIN_WIDTH);
	CHECK(!strcmp(got, "2026-11-23 22:35:23.107  eth0  banned    198.18.9.9       "
		      "198.18.0.0/16 for 5s\n"), "got:\n%s", got);
	got = row_at(v6, RL_VIEW_MIN_WIDTH);
	CHECK(!strcmp(got, "2026-11-23 22:35:23.107  ifname-15-chars  released\n"
		      "    2001:db8:1234:5678:9abc:def0:1234:5678\n"
		      "    2001:db8:1234:5678:9abc:def0:1234:5678/128\n"), "got:\n%s", got);
	got = row_at(scoped, RL_VIEW_MIN_WIDTH);
	CHECK(widest(got, &line) <= RL_VIEW_MIN_WIDTH, "got:\n%s", got);
	CHECK(!strcmp(got, "2026-11-23 22:35:23.107  ifname-15-chars  banned\n"
		      "    2001:db8:1234:5678:9abc:def0::/96\n"
		      "    2001:db8:1234:5678:9abc:def0::/96 tcp dport 10000-65535 syn for 23h59m\n"),
	      "got:\n%s", got);
	/* wider: on one line; no width: never wrapped */
	got = row_at(v6, 160);
	CHECK(!strchr(got, '\n') || strchr(got, '\n')[1] == '\0', "at 160:\n%s", got);
	got = row_at(scoped, 0);
	CHECK(!strchr(got, '\n') || strchr(got, '\n')[1] == '\0', "unlimited:\n%s", got);
}

/* A status note ("IFACE sync: ok, fleet NAME ...") goes on under its
 * start, unless a word of it would pass the width there (a fleet of 64
 * characters after a name of 15): then indented four. */
TEST(note_indent_fits_80_columns)
{
	char fleet[80];

	memset(fleet, 'f', 64);
	snprintf(fleet + 64, sizeof(fleet) - 64, " (last");
	CHECK_EQ(rl_note_indent("ok, fleet web (last exchange 3 ms ago)", RL_VIEW_MIN_WIDTH, 22),
		 22, "short words: under the start");
	CHECK_EQ(rl_note_indent(fleet, RL_VIEW_MIN_WIDTH, 22), 4, "a fleet of 64");
	CHECK_EQ(rl_note_indent(fleet, 0, 22), 22, "no width");
}
