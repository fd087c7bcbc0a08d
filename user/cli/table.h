/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The one printer of the human tables (stats, status, quota list): columns
 * as wide as their widest cell, two spaces apart, text left and numbers
 * right, no trailing blanks. A view fits a width (rl_view_width): columns
 * that may leave do, in their order, until every line fits.
 */
#ifndef RL_TABLE_H
#define RL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#define RL_TABLE_MAX_COLS	16
#define RL_TABLE_CELL_LEN	512	/* a status problem fits */

/* The narrowest width a view fits, whatever $COLUMNS or the terminal say. */
#define RL_VIEW_MIN_WIDTH	80

struct rl_table_col {
	const char *head;	/* NULL: not in this view */
	bool left;
	/* in a view of limited width, columns with the highest `drop`
	 * leave first (the rightmost of equals first) until the table
	 * fits; 0: always shown */
	int drop;
};

/* In a cell's text, a space the wrapping of the last column never breaks
 * at ("--pps 100" stays one piece); printed as a space. */
#define RL_TABLE_NBSP	'\x1f'

/* Writes the text of cell (row, col) into buf (RL_TABLE_CELL_LEN). */
typedef void (*rl_table_cell_fn)(const void *ctx, size_t row, int col,
				 char *buf, size_t len);

/* The heading line, then nrows rows from cell(ctx, row, col). */
void rl_table_print(FILE *f, const struct rl_table_col *cols, int ncols,
		    size_t nrows, rl_table_cell_fn cell, const void *ctx);
/* The same within `width` columns (0: no limit, every column): leaves out
 * columns by their `drop` until each line fits, or none may leave; the
 * text of a last column aligned left then wraps at spaces, onto lines of
 * its own under the row when its pieces do not fit beside it. */
void rl_table_print_fit(FILE *f, const struct rl_table_col *cols, int ncols,
			size_t nrows, rl_table_cell_fn cell, const void *ctx,
			int width);

/*
 * The width the human views fit (xdp-ratelimit(8), OUTPUT WIDTH): 0 under
 * --wide (every column); else $COLUMNS when it is a number, else the
 * terminal's width when stdout is one, never less than RL_VIEW_MIN_WIDTH.
 */
int rl_view_width(bool wide);

/* A count in a cell: exact when `exact`, else exact up to 99999 and then
 * three significant digits with k, M, G, T, P or E (powers of 1000):
 * "123k", "1.23M". */
void rl_table_count(char *buf, size_t len, __u64 v, bool exact);
/* A size in bytes: "50.2 MB", or "50.2MB" with sep "" (powers of 1000). */
void rl_table_bytes(__u64 bytes, const char *sep, char *buf, size_t len);

/* `text` and a newline, printed from column `indent` (where the cursor
 * is), wrapped at spaces (not RL_TABLE_NBSP) to `width` (0: unwrapped)
 * onto lines indented as far. */
void rl_print_wrapped(FILE *f, const char *text, int width, int indent);
/* The same from column `col`, onto lines indented by `indent`. */
void rl_print_wrapped_at(FILE *f, const char *text, int width, int col, int indent);
/* How far the lines of a note wrapped from column `col` are indented:
 * under its start, or as a table's wrapped text when a piece of it would
 * not fit there (a fleet's name, a server's). */
int rl_note_indent(const char *text, int width, int col);

/* `text` (limits, "--pps 100 --ban 1m") made to wrap between options
 * only: each space not before an option becomes RL_TABLE_NBSP. */
void rl_table_keep_options(char *text);

/* A row of `n` fields that is not a table's (an event), two spaces apart,
 * field i padded to pads[i] (NULL: none) when another follows it on its
 * line: a field that would pass `width` (0: no limit) starts a line of its
 * own under the row, indented as the tables' wrapped text is. */
void rl_print_row(FILE *f, const char *const *fields, const int *pads, int n,
		  int width);

#endif /* RL_TABLE_H */
