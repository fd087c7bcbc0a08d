// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Aligned tables (table.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "cli/table.h"
#include "cli/text.h"

#define COL_GAP	"  "
#define COL_GAP_LEN	2
/* A wrapped last column that cannot sit beside its row goes under it,
 * this far in. */
#define UNDER_INDENT	4
/* Counts up to this print whole in a narrow cell: five digits. */
#define EXACT_MAX	99999

/* Cell (row, col); row 0 is the heading. A cell may hold a name with
 * control characters (an interface's): shown escaped, never raw. */
static const char *text_of(const struct rl_table_col *cols, size_t row,
			   int col, rl_table_cell_fn cell, const void *ctx,
			   char *buf)
{
	char raw[RL_TABLE_CELL_LEN];

	if (row == 0)
		return cols[col].head;
	raw[0] = '\0';
	cell(ctx, row - 1, col, raw, sizeof(raw));
	/* escaped piece by piece: the cell's own RL_TABLE_NBSP stays one */
	buf[0] = '\0';
	for (char *piece = raw, *end; piece; piece = end ? end + 1 : NULL) {
		size_t at = strlen(buf);

		end = strchr(piece, RL_TABLE_NBSP);
		if (end)
			*end = '\0';
		rl_text_shown(piece, buf + at, RL_TABLE_CELL_LEN - at);
		at = strlen(buf);
		if (end && at + 1 < RL_TABLE_CELL_LEN) {
			buf[at] = RL_TABLE_NBSP;
			buf[at + 1] = '\0';
		}
	}
	return buf;
}

/* The longest piece of text a wrap keeps whole. */
static int longest_piece(const char *text)
{
	int best = 0;

	while (*text) {
		int n = (int)strcspn(text, " ");

		if (n > best)
			best = n;
		text += n;
		text += strspn(text, " ");
	}
	return best;
}

/* The width of a line of the shown columns. */
static size_t table_width(const size_t *w, const bool *shown, int ncols)
{
	size_t total = 0;
	int k = 0;

	for (int c = 0; c < ncols; c++)
		if (shown[c])
			total += (k++ ? COL_GAP_LEN : 0) + w[c];
	return total;
}

/* The column that leaves next: the highest drop, the rightmost of equals;
 * -1 when none may. */
static int next_to_leave(const struct rl_table_col *cols, int ncols,
			 const bool *shown)
{
	int best = -1;

	for (int c = 0; c < ncols; c++)
		if (shown[c] && cols[c].drop &&
		    (best < 0 || cols[c].drop >= cols[best].drop))
			best = c;
	return best;
}

void rl_table_print_fit(FILE *f, const struct rl_table_col *cols, int ncols,
			size_t nrows, rl_table_cell_fn cell, const void *ctx,
			int width)
{
	char buf[RL_TABLE_MAX_COLS][RL_TABLE_CELL_LEN];
	size_t w[RL_TABLE_MAX_COLS] = { 0 };
	bool shown[RL_TABLE_MAX_COLS];
	int idx[RL_TABLE_MAX_COLS], n = 0, left[RL_TABLE_MAX_COLS], nleft = 0;

	if (ncols > RL_TABLE_MAX_COLS)
		ncols = RL_TABLE_MAX_COLS;
	for (int c = 0; c < ncols; c++)
		shown[c] = cols[c].head != NULL;
	for (size_t r = 0; r <= nrows; r++) {
		for (int c = 0; c < ncols; c++) {
			size_t len;

			if (!shown[c])
				continue;
			len = strlen(text_of(cols, r, c, cell, ctx, buf[c]));

			if (len > w[c])
				w[c] = len;
		}
	}
	/* columns leave in their order until the table fits; then those that
	 * left come back, the last to leave first, while it still fits: a
	 * narrow column need not go with a wide one */
	while (width > 0 && table_width(w, shown, ncols) > (size_t)width) {
		int leave = next_to_leave(cols, ncols, shown);

		if (leave < 0)
			break;
		shown[leave] = false;
		left[nleft++] = leave;
	}
	while (nleft--) {
		shown[left[nleft]] = true;
		if (table_width(w, shown, ncols) > (size_t)width)
			shown[left[nleft]] = false;
	}
	for (int c = 0; c < ncols; c++)
		if (shown[c])
			idx[n++] = c;
	for (size_t r = 0; r <= nrows; r++) {
		const char *text[RL_TABLE_MAX_COLS];
		int last = -1;

		for (int k = 0; k < n; k++) {
			text[k] = text_of(cols, r, idx[k], cell, ctx, buf[k]);
			if (*text[k])
				last = k;
		}
		/* up to the last cell with text, unpadded on the right (a
		 * left cell's padding waits for the next cell: none when the
		 * last column goes under the row); the last column's text
		 * wrapped when it is too long for the width */
		for (int k = 0, at = 0, padding = 0; k <= last; k++) {
			const struct rl_table_col *col = &cols[idx[k]];
			int gap = padding + (k ? COL_GAP_LEN : 0);

			if (k)
				at += COL_GAP_LEN;
			if (col->left && k == n - 1 && width > 0) {
				if (at + longest_piece(text[k]) > width && k) {
					fprintf(f, "\n%*s", UNDER_INDENT, "");
					at = UNDER_INDENT;
				} else {
					fprintf(f, "%*s", gap, "");
				}
				rl_print_wrapped(f, text[k], width, at);
				break;
			}
			padding = 0;
			if (col->left) {
				fprintf(f, "%*s%s", gap, "", text[k]);
				padding = (int)w[idx[k]] - (int)strlen(text[k]);
			} else {
				fprintf(f, "%*s%*s", gap, "", (int)w[idx[k]], text[k]);
			}
			at += (int)w[idx[k]];
			if (k == last)
				fputc('\n', f);
		}
		if (last < 0)
			fputc('\n', f);
	}
}

void rl_table_print(FILE *f, const struct rl_table_col *cols, int ncols,
		    size_t nrows, rl_table_cell_fn cell, const void *ctx)
{
	rl_table_print_fit(f, cols, ncols, nrows, cell, ctx, 0);
}

int rl_view_width(bool wide)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	long width = 0;
	char *end;

	if (wide)
		return 0;
	if (env && *env) {
		width = strtol(env, &end, 10);
		if (*end || width <= 0)
			width = 0;
	}
	if (!width && isatty(STDOUT_FILENO) &&
	    !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws))
		width = ws.ws_col;
	if (width < RL_VIEW_MIN_WIDTH)
		width = RL_VIEW_MIN_WIDTH;
	return width > 100000 ? 100000 : (int)width;
}

void rl_table_count(char *buf, size_t len, __u64 v, bool exact)
{
	static const char suffix[] = "kMGTPE";
	double d = (double)v;
	int i = -1;

	if (exact || v <= EXACT_MAX) {
		snprintf(buf, len, "%" PRIu64, (uint64_t)v);
		return;
	}
	while (d >= 999.5 && i < 5) {
		d /= 1000;
		i++;
	}
	snprintf(buf, len, "%.*f%c", d < 9.995 ? 2 : d < 99.95 ? 1 : 0, d,
		 suffix[i]);
}

void rl_table_bytes(__u64 bytes, const char *sep, char *buf, size_t len)
{
	if (bytes >= 1000000000ULL)
		snprintf(buf, len, "%.2f%sGB", (double)bytes / 1e9, sep);
	else if (bytes >= 1000000ULL)
		snprintf(buf, len, "%.1f%sMB", (double)bytes / 1e6, sep);
	else
		snprintf(buf, len, "%.1f%skB", (double)bytes / 1e3, sep);
}

int rl_note_indent(const char *text, int width, int col)
{
	return width > 0 && col + longest_piece(text) > width ? UNDER_INDENT : col;
}

void rl_print_wrapped(FILE *f, const char *text, int width, int indent)
{
	rl_print_wrapped_at(f, text, width, indent, indent);
}

void rl_print_wrapped_at(FILE *f, const char *text, int width, int col, int indent)
{
	bool line_start = true;

	text += strspn(text, " ");
	while (*text) {
		int word = (int)strcspn(text, " ");

		if (!line_start && width > 0 && col + 1 + word > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
			line_start = true;
		}
		if (!line_start) {
			fputc(' ', f);
			col++;
		}
		for (int i = 0; i < word; i++)
			fputc(text[i] == RL_TABLE_NBSP ? ' ' : text[i], f);
		col += word;
		line_start = false;
		text += word;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

void rl_table_keep_options(char *text)
{
	for (char *c = text; (c = strchr(c, ' ')); c++)
		if (c[1] != '-')
			*c = RL_TABLE_NBSP;
}

void rl_print_row(FILE *f, const char *const *fields, const int *pads, int n,
		  int width)
{
	int col = 0, pad = 0;

	for (int i = 0; i < n; i++) {
		int w = (int)strlen(fields[i]);

		/* never a second break before a field on a line of its own */
		if (i && width > 0 && col + pad + COL_GAP_LEN + w > width &&
		    col > UNDER_INDENT) {
			fprintf(f, "\n%*s", UNDER_INDENT, "");
			col = UNDER_INDENT;
		} else if (i) {
			fprintf(f, "%*s", pad + COL_GAP_LEN, "");
			col += pad + COL_GAP_LEN;
		}
		fputs(fields[i], f);
		col += w;
		pad = pads && w < pads[i] ? pads[i] - w : 0;
	}
	fputc('\n', f);
}
