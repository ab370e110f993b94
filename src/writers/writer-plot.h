/*
 * A scatter plot of one value against another as a self-contained SVG,
 * like the seed's VegaLite timing chart: for `recce trace --plot X:Y`
 * (an argument against the duration, or time against duration). Axes
 * with round ticks; durations and times in nanoseconds are labelled in
 * the unit that suits their range. Each point is a <circle class="point">
 * with its exact values in data-x and data-y and a tooltip.
 */
#ifndef RECCE_WRITERS_WRITER_PLOT_H
#define RECCE_WRITERS_WRITER_PLOT_H

#include <stddef.h>
#include <stdio.h>

struct plot_point {
	double x, y;
};

struct plot {
	const char *title;
	const char *xlabel, *ylabel;
	int x_ns, y_ns; /* the axis holds nanoseconds: label it as time */
	const struct plot_point *p;
	size_t n;
};

/* Writes the SVG. Returns 0, or -EIO when the stream failed. */
int plot_write_svg(FILE *out, const struct plot *pl);

#endif
