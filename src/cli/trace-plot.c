/*
 * Collecting the points of `--plot X:Y` from trace records, and writing
 * the plot (trace-plot.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/trace-plot.h"
#include "cli/usage.h"
#include "util/array.h"
#include "util/outfile.h"

void trace_plot_parse(const char *cmd, const char *spec, struct trace_plot *p)
{
	const char *colon = strchr(spec, ':');

	memset(p, 0, sizeof(*p));
	if (!colon || colon == spec || !colon[1] || (size_t)(colon - spec) >= sizeof(p->x) ||
	    strlen(colon + 1) >= sizeof(p->y) || strchr(colon + 1, ':'))
		usage_die(cmd, "--plot wants X:Y, as n:duration or time:duration, not '%s'", spec);
	memcpy(p->x, spec, (size_t)(colon - spec));
	memcpy(p->y, colon + 1, strlen(colon + 1) + 1);
	for (int i = 0; i < 2; i++) {
		const char *v = i ? p->y : p->x;
		if (!strcmp(v, "duration") || !strcmp(v, "ret"))
			p->on_return = 1;
	}
}

/* The value of name in r, or -1 when r has none. */
static int value(const struct trace_plot *p, const char *name, const struct trace_record *r,
		 double *v)
{
	struct trace_value tv;

	if (!strcmp(name, "duration")) {
		*v = (double)r->duration_ns;
		return 0;
	}
	if (!strcmp(name, "time")) {
		*v = (double)(r->time_ns - p->t0);
		return 0;
	}
	if (trace_record_lookup(name, &tv, (void *)r) != 0 || tv.is_str)
		return -1;
	*v = (double)tv.i;
	return 0;
}

void trace_plot_add(struct trace_plot *p, const struct trace_record *r)
{
	double x, y;

	if (r->kind != (p->on_return ? TRACE_RETURN : TRACE_CALL) || r->flags)
		return;
	if (!p->n)
		p->t0 = r->time_ns;
	if (value(p, p->x, r, &x) != 0 || value(p, p->y, r, &y) != 0) {
		p->skipped++;
		return;
	}
	struct plot_point *grown = array_reserve(p->p, &p->cap, p->n + 1, sizeof(*p->p));
	if (!grown) {
		p->skipped++;
		return;
	}
	p->p = grown;
	if (!p->n)
		snprintf(p->first_function, sizeof(p->first_function), "%s", r->function);
	p->p[p->n++] = (struct plot_point){x, y};
}

static int write_svg(FILE *fp, const void *arg)
{
	const struct trace_plot *p = arg;
	char title[200];
	const char *fn = strchr(p->first_function, ':');

	snprintf(title, sizeof(title), "%s: %s against %s", fn ? fn + 1 : p->first_function, p->y,
		 p->x);
	struct plot pl = {title,
			  p->x,
			  p->y,
			  !strcmp(p->x, "duration") || !strcmp(p->x, "time"),
			  !strcmp(p->y, "duration") || !strcmp(p->y, "time"),
			  p->p,
			  p->n};
	return plot_write_svg(fp, &pl);
}

int trace_plot_write(struct trace_plot *p, const char *path)
{
	int rc = 0;

	if (p->skipped)
		warning("%llu %s had no value for %s or %s: left out of the plot",
			(unsigned long long)p->skipped, p->on_return ? "returns" : "calls", p->x,
			p->y);
	if (!p->n)
		warning("no %s to plot: '%s' shows empty axes", p->on_return ? "returns" : "calls",
			path);
	int err = outfile_write(path, write_svg, p);
	if (err) {
		error("cannot write '%s': %s", path, output_strerror(err));
		rc = -1;
	} else
		note("plotted %zu points of %s against %s in '%s'", p->n, p->y, p->x, path);
	free(p->p);
	p->p = NULL;
	return rc;
}
