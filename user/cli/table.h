/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The one printer of the human tables (stats, status, quota list): columns
 * as wide as their widest cell, two spaces apart, text left and numbers
 * right, no trailing blanks.
 */
#ifndef RL_TABLE_H
#define RL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define RL_TABLE_MAX_COLS	12
#define RL_TABLE_CELL_LEN	512	/* a status problem fits */

struct rl_table_col {
	const char *head;
	bool left;
};

/* Writes the text of cell (row, col) into buf (RL_TABLE_CELL_LEN). */
typedef void (*rl_table_cell_fn)(const void *ctx, size_t row, int col,
				 char *buf, size_t len);

/* The heading line, then nrows rows from cell(ctx, row, col). */
void rl_table_print(FILE *f, const struct rl_table_col *cols, int ncols,
		    size_t nrows, rl_table_cell_fn cell, const void *ctx);

#endif /* RL_TABLE_H */
