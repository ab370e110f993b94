/*
 * Scatter plots as SVG (writer-plot.h): the range of each axis widened to
 * round ticks (1, 2 or 5 times a power of ten), points drawn in the plot
 * area, text escaped for XML.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "writers/writer-plot.h"
#include "writers/markup.h"

#define WIDTH  900
#define HEIGHT 540
#define LEFT   90
#define RIGHT  30
#define TOP    50
#define BOTTOM 70

struct axis {
	double lo, hi, step;
	double scale;	  /* the values are divided by this for labels */
	const char *unit; /* of the labels, "" for none */
};

/* A round step for about 6 ticks over [lo, hi]. */
static double nice_step(double span)
{
	double raw = span / 6, p = pow(10, floor(log10(raw))), m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static struct axis axis_of(const struct plot_point *p, size_t n, int x, int ns)
{
	struct axis a = {0, 1, 0, 1, ""};
	double lo = INFINITY, hi = -INFINITY;

	for (size_t i = 0; i < n; i++) {
		double v = x ? p[i].x : p[i].y;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	if (!n)
		lo = 0, hi = 1;
	if (lo > 0 && lo < hi / 3)
		lo = 0; /* start at zero when it costs little room */
	if (hi == lo)
		hi = lo + (lo ? fabs(lo) / 2 : 1);
	if (ns) {
		static const struct {
			double scale;
			const char *unit;
		} units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
		for (size_t i = 0; i < 4; i++)
			if (hi >= units[i].scale || i == 3) {
				a.scale = units[i].scale;
				a.unit = units[i].unit;
				break;
			}
	}
	a.step = nice_step(hi - lo);
	a.lo = floor(lo / a.step) * a.step;
	a.hi = ceil(hi / a.step) * a.step;
	if (a.hi == a.lo)
		a.hi = a.lo + a.step;
	return a;
}

static double px(const struct axis *a, double v, double from, double to)
{
	return from + (v - a->lo) / (a->hi - a->lo) * (to - from);
}

static void label(FILE *out, const struct axis *a, double v)
{
	double s = v / a->scale;
	if (fabs(s) >= 1e6 || (fabs(s) < 1e-3 && s != 0))
		fprintf(out, "%.3g", s);
	else
		fprintf(out, "%.10g", round(s * 1e6) / 1e6);
}

int plot_write_svg(FILE *out, const struct plot *pl)
{
	struct axis ax = axis_of(pl->p, pl->n, 1, pl->x_ns),
		    ay = axis_of(pl->p, pl->n, 0, pl->y_ns);
	double x0 = LEFT, x1 = WIDTH - RIGHT, y0 = HEIGHT - BOTTOM, y1 = TOP;

	fprintf(
	    out,
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	    "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
	    "<style>.point{fill:#1f77b4;fill-opacity:.6}.point:hover{fill:#d62728;fill-opacity:1}"
	    ".grid{stroke:#ddd}.axis{stroke:#333}</style>\n"
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
	    WIDTH, HEIGHT, WIDTH, HEIGHT);
	fprintf(out,
		"<text class=\"title\" x=\"%d\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">",
		WIDTH / 2);
	markup_escape(out, pl->title ? pl->title : "");
	fputs("</text>\n", out);
	/* Grid lines and tick labels. */
	for (double v = ax.lo; v <= ax.hi + ax.step / 2; v += ax.step) {
		double x = px(&ax, v, x0, x1);
		fprintf(out,
			"<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x,
			y0, x, y1);
		fprintf(out, "<text class=\"xtick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
			x, y0 + 18);
		label(out, &ax, v);
		fputs("</text>\n", out);
	}
	for (double v = ay.lo; v <= ay.hi + ay.step / 2; v += ay.step) {
		double y = px(&ay, v, y0, y1);
		fprintf(out,
			"<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
			x0, y, x1, y);
		fprintf(out, "<text class=\"ytick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
			x0 - 8, y + 4);
		label(out, &ay, v);
		fputs("</text>\n", out);
	}
	fprintf(out,
		"<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
		"<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		x0, y0, x1, y0, x0, y0, x0, y1);
	fprintf(out, "<text class=\"xlabel\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
		(x0 + x1) / 2, HEIGHT - 20);
	markup_escape(out, pl->xlabel);
	if (*ax.unit)
		fprintf(out, " (%s)", ax.unit);
	fprintf(out,
		"</text>\n<text class=\"ylabel\" x=\"20\" y=\"%.1f\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 20 %.1f)\">",
		(y0 + y1) / 2, (y0 + y1) / 2);
	markup_escape(out, pl->ylabel);
	if (*ay.unit)
		fprintf(out, " (%s)", ay.unit);
	fputs("</text>\n<g class=\"points\">\n", out);
	for (size_t i = 0; i < pl->n; i++) {
		fprintf(
		    out,
		    "<circle class=\"point\" cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" data-x=\"%.17g\" "
		    "data-y=\"%.17g\"><title>",
		    px(&ax, pl->p[i].x, x0, x1), px(&ay, pl->p[i].y, y0, y1), pl->p[i].x,
		    pl->p[i].y);
		markup_escape(out, pl->xlabel);
		fputs(" ", out);
		label(out, &ax, pl->p[i].x);
		fprintf(out, "%s%s, ", *ax.unit ? " " : "", ax.unit);
		markup_escape(out, pl->ylabel);
		fputs(" ", out);
		label(out, &ay, pl->p[i].y);
		fprintf(out, "%s%s</title></circle>\n", *ay.unit ? " " : "", ay.unit);
	}
	fputs("</g>\n</svg>\n", out);
	return ferror(out) ? -EIO : 0;
}
