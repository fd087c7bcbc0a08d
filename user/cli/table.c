// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Aligned tables (table.h). */
#include <string.h>
#include "cli/table.h"
#include "cli/text.h"

#define COL_GAP	"  "

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
	return rl_text_shown(raw, buf, RL_TABLE_CELL_LEN);
}

void rl_table_print(FILE *f, const struct rl_table_col *cols, int ncols,
		    size_t nrows, rl_table_cell_fn cell, const void *ctx)
{
	char buf[RL_TABLE_MAX_COLS][RL_TABLE_CELL_LEN];
	size_t width[RL_TABLE_MAX_COLS] = { 0 };

	if (ncols > RL_TABLE_MAX_COLS)
		ncols = RL_TABLE_MAX_COLS;
	for (size_t r = 0; r <= nrows; r++) {
		for (int c = 0; c < ncols; c++) {
			size_t n = strlen(text_of(cols, r, c, cell, ctx, buf[c]));

			if (n > width[c])
				width[c] = n;
		}
	}
	for (size_t r = 0; r <= nrows; r++) {
		const char *text[RL_TABLE_MAX_COLS];
		int last = -1;

		for (int c = 0; c < ncols; c++) {
			text[c] = text_of(cols, r, c, cell, ctx, buf[c]);
			if (*text[c])
				last = c;
		}
		/* up to the last cell with text, unpadded on the right */
		for (int c = 0; c <= last; c++) {
			int w = cols[c].left && c == last ? 0 : (int)width[c];

			fprintf(f, cols[c].left ? "%s%-*s" : "%s%*s",
				c ? COL_GAP : "", w, text[c]);
		}
		fputc('\n', f);
	}
}
