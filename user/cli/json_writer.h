/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The one JSON writer of every --json (after bpftool's json_writer.h): it
 * streams to a FILE, owns the commas and nesting and escapes strings, so
 * output of any size costs no memory. One line per document, in the style
 * of xdp-ratelimit(8): {"interfaces": [{"ifname": "eth0", ...}]}.
 */
#ifndef RL_JSON_WRITER_H
#define RL_JSON_WRITER_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#define RL_JSON_MAX_DEPTH	8

struct rl_json {
	FILE *f;
	int depth;
	bool first[RL_JSON_MAX_DEPTH];	/* no member yet at this depth */
	bool named;			/* a name waits for its value */
};

void rl_json_begin(struct rl_json *j, FILE *f);
/* The newline that ends the document; 0, or -EIO when writing failed. */
int rl_json_end(struct rl_json *j);

/* Values: in an array, or after rl_json_name(). */
void rl_json_name(struct rl_json *j, const char *name);
void rl_json_object_start(struct rl_json *j);
void rl_json_object_end(struct rl_json *j);
void rl_json_array_start(struct rl_json *j);
void rl_json_array_end(struct rl_json *j);
void rl_json_string(struct rl_json *j, const char *s);
void rl_json_uint(struct rl_json *j, __u64 v);
void rl_json_bool(struct rl_json *j, bool v);
void rl_json_null(struct rl_json *j);

/* A member: name and value. */
void rl_json_string_field(struct rl_json *j, const char *name, const char *s);
void rl_json_uint_field(struct rl_json *j, const char *name, __u64 v);
void rl_json_bool_field(struct rl_json *j, const char *name, bool v);
void rl_json_null_field(struct rl_json *j, const char *name);
/* `v` when `present`, else null: a limit or time that may be unset. */
void rl_json_uint_or_null_field(struct rl_json *j, const char *name,
				bool present, __u64 v);

#endif /* RL_JSON_WRITER_H */
