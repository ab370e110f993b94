/*
 * `--plot X:Y` of recce trace and recce replay: one point a traced call,
 * X and Y each an argument's name, arg0..arg5, ret, duration or time
 * (since the first point), drawn by writers/writer-plot. A plot that
 * needs ret or duration takes returns; one that does not takes calls.
 */
#ifndef RECCE_CLI_TRACE_PLOT_H
#define RECCE_CLI_TRACE_PLOT_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace-event.h"
#include "writers/writer-plot.h"

struct trace_plot {
	char x[32], y[32];
	int on_return; /* points come from returns */
	struct plot_point *p;
	size_t n, cap;
	uint64_t t0;		 /* time of the first point */
	uint64_t skipped;	 /* records without one of the values */
	char first_function[96]; /* of the first point, for the title */
};

/* Parses "X:Y" for subcommand cmd; a bad spec is a usage error. */
void trace_plot_parse(const char *cmd, const char *spec, struct trace_plot *p);

/* Adds r's point, if r is the right kind and has both values. */
void trace_plot_add(struct trace_plot *p, const struct trace_record *r);

/* Writes the SVG to path (whole or not at all); says what it wrote or
 * why not. Returns 0 or -1. Frees the points. */
int trace_plot_write(struct trace_plot *p, const char *path);

#endif
