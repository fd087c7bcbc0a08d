// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Streaming JSON (json_writer.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "cli/json_writer.h"
#include "cli/text.h"

void rl_json_begin(struct rl_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
	j->named = false;
}

int rl_json_end(struct rl_json *j)
{
	fputc('\n', j->f);
	return ferror(j->f) ? -EIO : 0;
}

/* What comes before a value or a name: ", " after a sibling. */
static void sep(struct rl_json *j)
{
	if (j->named) {
		j->named = false;
		return;
	}
	if (!j->first[j->depth])
		fputs(", ", j->f);
	j->first[j->depth] = false;
}

void rl_json_name(struct rl_json *j, const char *name)
{
	rl_json_string(j, name);
	fputs(": ", j->f);
	j->named = true;
}

static void open_(struct rl_json *j, char c)
{
	sep(j);
	fputc(c, j->f);
	if (j->depth + 1 >= RL_JSON_MAX_DEPTH)
		abort();	/* deeper than any document of ours */
	j->first[++j->depth] = true;
}

static void close_(struct rl_json *j, char c)
{
	j->depth--;
	fputc(c, j->f);
}

void rl_json_object_start(struct rl_json *j)
{
	open_(j, '{');
}

void rl_json_object_end(struct rl_json *j)
{
	close_(j, '}');
}

void rl_json_array_start(struct rl_json *j)
{
	open_(j, '[');
}

void rl_json_array_end(struct rl_json *j)
{
	close_(j, ']');
}

void rl_json_string(struct rl_json *j, const char *s)
{
	sep(j);
	fputc('"', j->f);
	rl_text_json(j->f, s);	/* valid UTF-8 whatever the bytes of s */
	fputc('"', j->f);
}

void rl_json_uint(struct rl_json *j, __u64 v)
{
	sep(j);
	fprintf(j->f, "%" PRIu64, (uint64_t)v);
}

void rl_json_bool(struct rl_json *j, bool v)
{
	sep(j);
	fputs(v ? "true" : "false", j->f);
}

void rl_json_null(struct rl_json *j)
{
	sep(j);
	fputs("null", j->f);
}

void rl_json_string_field(struct rl_json *j, const char *name, const char *s)
{
	rl_json_name(j, name);
	rl_json_string(j, s);
}

void rl_json_uint_field(struct rl_json *j, const char *name, __u64 v)
{
	rl_json_name(j, name);
	rl_json_uint(j, v);
}

void rl_json_bool_field(struct rl_json *j, const char *name, bool v)
{
	rl_json_name(j, name);
	rl_json_bool(j, v);
}

void rl_json_null_field(struct rl_json *j, const char *name)
{
	rl_json_name(j, name);
	rl_json_null(j);
}

void rl_json_uint_or_null_field(struct rl_json *j, const char *name,
				bool present, __u64 v)
{
	if (present)
		rl_json_uint_field(j, name, v);
	else
		rl_json_null_field(j, name);
}
