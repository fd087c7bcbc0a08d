// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The table printer of the human views (user/cli/table.c): columns leave
 * in their order and come back when they fit, counts abbreviated, the
 * last column wrapped, the width of the view. */
#include <stdlib.h>
#include <string.h>
#include "cli/table.h"
#include "cli/stats_view.h"
#include "lib/ban_map.h"
#include "../harness.h"

/* A table of one row: the cells of `row`, as given. */
static void cell(const void *ctx, size_t row, int col, char *buf, size_t len)
{
	(void)row;
	snprintf(buf, len, "%s", ((const char *const *)ctx)[col]);
}

/* What the table prints at `width`, in a static buffer. */
static const char *printed(const struct rl_table_col *cols, int n,
			   const char *const *row, int width)
{
	static char out[4096];
	FILE *f = fmemopen(out, sizeof(out), "w");

	if (!f)
		return "";
	rl_table_print_fit(f, cols, n, 1, cell, row, width);
	fclose(f);
	return out;
}

/* The table at `width` prints `want`, checked. */
static void check_printed(const struct rl_table_col *cols, int n, const char *const *row,
			  int width, const char *want, const char *what)
{
	const char *got = printed(cols, n, row, width);

	CHECK(!strcmp(got, want), "%s: %s", what, got);
}

TEST(table_columns_leave_and_come_back)
{
	static const struct rl_table_col cols[] = {
		{ "ADDRESS", true, 0 }, { "DROPPED", false, 0 },
		{ "WIDE", true, 2 },	/* leaves first */
		{ "NARROW", true, 1 },	/* leaves next, comes back */
	};
	const char *row[] = { "198.18.0.7", "12", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "no" };

	check_printed(cols, 4, row, 0,
		      "ADDRESS     DROPPED  WIDE                            NARROW\n"
		      "198.18.0.7       12  xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx  no\n",
		      "every column without a width");
	check_printed(cols, 4, row, 40,
		      "ADDRESS     DROPPED  NARROW\n"
		      "198.18.0.7       12  no\n",
		      "within 40");
	check_printed(cols, 4, row, 10,
		      "ADDRESS     DROPPED\n"
		      "198.18.0.7       12\n",
		      "too narrow for any: those that may not leave stay");
}

TEST(table_hidden_columns_and_wrapped_last)
{
	static const struct rl_table_col cols[] = {
		{ "PREFIX", true, 0 }, { NULL, false, 0 }, { "LIMITS", true, 0 },
	};
	const char *row[] = { "198.18.0.0/15", "hidden", "--pps\x1f" "100 --ban\x1f" "1m --burst\x1f" "5" };

	check_printed(cols, 3, row, 30,
		      "PREFIX         LIMITS\n"
		      "198.18.0.0/15  --pps 100\n"
		      "               --ban 1m\n"
		      "               --burst 5\n",
		      "wrapped between pieces");
	check_printed(cols, 3, row, 22,
		      "PREFIX         LIMITS\n"
		      "198.18.0.0/15\n"
		      "    --pps 100 --ban 1m\n"
		      "    --burst 5\n",
		      "under the row when no piece fits beside it");
}

/* A left column's padding is not printed when the last column goes under
 * the row: no line ends in blanks. */
TEST(table_wrapped_under_no_trailing_blanks)
{
	static const struct rl_table_col cols[] = {
		{ "PREFIX", true, 0 }, { "SCOPE", true, 0 }, { "LIMITS", true, 0 },
	};
	const char *row[] = { "198.18.0.0/15", "-", "--pps\x1f" "100 --ban\x1f" "1m" };

	check_printed(cols, 3, row, 28,
		      "PREFIX         SCOPE  LIMITS\n"
		      "198.18.0.0/15  -\n"
		      "    --pps 100 --ban 1m\n",
		      "the scope unpadded");
}

TEST(table_counts)
{
	static const struct {
		unsigned long long n;
		bool exact;
		const char *want, *what;
	} counts[] = {
		{ 99999, false, "99999", "99999" },
		{ 100000, false, "100k", "100000" },
		{ 1234567, false, "1.23M", "1234567" },
		{ 999999, false, "1.00M", "999999" },
		{ 12345678901ULL, false, "12.3G", "12345678901" },
		{ ~0ULL, false, "18.4E", "2^64-1" },
		{ ~0ULL, true, "18446744073709551615", "exact" },
	};
	char b[32];

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		rl_table_count(b, sizeof(b), counts[i].n, counts[i].exact);
		CHECK(!strcmp(b, counts[i].want), "%s: %s", counts[i].what, b);
	}
}

TEST(view_width)
{
	char *old = getenv("COLUMNS") ? strdup(getenv("COLUMNS")) : NULL;

	setenv("COLUMNS", "132", 1);
	CHECK_EQ(rl_view_width(false), 132, "COLUMNS=132");
	CHECK_EQ(rl_view_width(true), 0, "--wide: no limit");
	setenv("COLUMNS", "40", 1);
	CHECK_EQ(rl_view_width(false), RL_VIEW_MIN_WIDTH, "COLUMNS=40: at least 80");
	setenv("COLUMNS", "wide", 1);
	CHECK_GE(rl_view_width(false), RL_VIEW_MIN_WIDTH, "COLUMNS not a number");
	if (old)
		setenv("COLUMNS", old, 1);
	else
		unsetenv("COLUMNS");
	free(old);
}

TEST(table_bytes)
{
	char b[32];

	rl_table_bytes(1251127936ULL, " ", b, sizeof(b));
	CHECK(!strcmp(b, "1.25 GB"), "got '%s'", b);
	rl_table_bytes(50200000ULL, "", b, sizeof(b));
	CHECK(!strcmp(b, "50.2MB"), "got '%s'", b);
	rl_table_bytes(120, " ", b, sizeof(b));
	CHECK(!strcmp(b, "0.1 kB"), "got '%s'", b);
}

/* The widest line of `text`. */
static size_t widest_line(const char *text)
{
	size_t w = 0;

	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");

		w = n > w ? n : w;
		p += n + (p[n] == '\n');
	}
	return w;
}

/* A banned IPv6 source tracked per /128 under a /128 rule, banned for the
 * longest --ban. */
static void ban_row_v6(struct rl_ban_row *row)
{
	memset(row, 0, sizeof(*row));
	memset(row->key.addr, 0xff, sizeof(row->key.addr));
	row->key.addr[0] = 0x20, row->key.addr[1] = 0x01;
	row->key.addr[2] = 0x0d, row->key.addr[3] = 0xb8;
	row->ns_left = 86400ULL * 1000000000ULL;
	snprintf(row->rule, sizeof(row->rule), "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff/128");
}

/* The bans table of `row` within `width`, into out. */
static bool ban_table(const struct rl_ban_row *row, int width, char *out, size_t len)
{
	FILE *f = fmemopen(out, len, "w");

	if (!CHECK(f, "fmemopen"))
		return false;
	rl_bans_print_table(f, row, 1, 128, width);
	fclose(f);
	return true;
}

/* The table of bans (in 'ban list' and 'stats') is a default view, which
 * fits 80 columns like every other one: the rule, last, wraps under its
 * row, whole. */
TEST(ban_table_fits_80_columns)
{
	static char out[4096];
	struct rl_ban_row row;

	ban_row_v6(&row);
	if (!ban_table(&row, RL_VIEW_MIN_WIDTH, out, sizeof(out)))
		return;
	CHECK(widest_line(out) <= RL_VIEW_MIN_WIDTH, "%zu columns:\n%s", widest_line(out), out);
	CHECK(!strcmp(out, "ADDRESS                                 TIME_LEFT  RULE\n"
		      "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff   86400.0s\n"
		      "    2001:db8:ffff:ffff:ffff:ffff:ffff:ffff/128\n"), "got:\n%s", out);
}

/* --wide: every column on the row's line, nothing wrapped. */
TEST(ban_table_wide_keeps_rows_whole)
{
	static char out[4096];
	struct rl_ban_row row;

	ban_row_v6(&row);
	if (!ban_table(&row, 0, out, sizeof(out)))
		return;
	CHECK(!strcmp(out, "ADDRESS                                 TIME_LEFT  RULE\n"
		      "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff   86400.0s  "
		      "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff/128\n"), "got:\n%s", out);
}
