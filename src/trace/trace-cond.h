/*
 * Conditions of `recce trace --if` and `recce replay --if`: the match specs
 * of native code. The language is small on purpose:
 *
 *   expr    := expr "||" expr | expr "&&" expr | "!" expr | "(" expr ")"
 *            | operand [op operand]
 *   op      := "==" | "!=" | "<" | "<=" | ">" | ">="
 *   operand := NAME | INTEGER | "STRING"
 *
 * NAME is an argument name (from DWARF) or arg0..arg5; INTEGER is decimal
 * or 0x hex, optionally negative; STRING has \" and \\ escapes. "&&" binds
 * tighter than "||". A lone operand is true when it is a non-zero integer
 * or a non-empty string. Comparing an integer with a string, or a name the
 * event does not have, is false, never an error: one condition serves
 * functions with different parameters.
 *
 * Ownership: trace_cond_parse() returns a heap object freed by
 * trace_cond_free(); it holds its own copies of names and strings.
 */
#ifndef RECCE_TRACE_COND_H
#define RECCE_TRACE_COND_H

#include <stdint.h>

#define TRACE_COND_MAX_NODES 128
#define TRACE_COND_MAX_TEXT  4096 /* characters */

struct trace_cond;

struct trace_value {
	int is_str;
	int64_t i;
	const char *s; /* when is_str: NUL-terminated */
};

struct trace_cond_error {
	int column;	     /* 1-based column of the offending character */
	const char *message; /* static text */
};

/* Parses text. Returns 0 and *out, -EINVAL with *err filled for a syntax
 * error (or more than TRACE_COND_MAX_NODES nodes), -ENOMEM. */
int trace_cond_parse(const char *text, struct trace_cond **out, struct trace_cond_error *err);
void trace_cond_free(struct trace_cond *c);

/* The value of a name for one event: returns 0 and *v, or -ENOENT. */
typedef int (*trace_cond_lookup_fn)(const char *name, struct trace_value *v, void *ctx);

/* Evaluates c for one event; returns 1 (match) or 0. */
int trace_cond_eval(const struct trace_cond *c, trace_cond_lookup_fn lookup, void *ctx);

/* Calls fn for each name the condition uses; returns the first non-zero
 * return of fn, else 0. */
int trace_cond_foreach_name(const struct trace_cond *c, int (*fn)(const char *name, void *ctx),
			    void *ctx);

#endif
