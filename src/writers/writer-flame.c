/*
 * The flamegraph writer (see writer-flame.h). Two steps: merge the stacks
 * into a call tree whose nodes are already placed and in the order they are
 * drawn, then write them after the page's script.
 *
 * The merge is flame-tree.c's; frames too narrow to draw never become
 * nodes, so 10,000 stacks of 100 frames take about 20 ms. The script is
 * src/writers/flame-viewer.js, plain JavaScript: it is the program the user runs when opening the
 * file, so it is written to be read.
 */
#include "writers/writer-flame.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "writers/flame-tree.h"
#include "writers/markup.h"

/* Geometry, as flamegraph.pl's defaults; the script gets the same numbers. */
#define IMAGE_WIDTH  1200
#define XPAD	     10
#define FRAME_WIDTH  (IMAGE_WIDTH - 2 * XPAD)
#define FRAME_HEIGHT 16
#define FONT_SIZE    12
#define FONT_WIDTH   0.59	     /* average glyph width, in font sizes */
#define TOP_PAD	     (FONT_SIZE * 3) /* title */
#define SUBTITLE_PAD (FONT_SIZE * 2)
#define BOTTOM_PAD   (FONT_SIZE * 2 + 10) /* details line */
#define MIN_FRACTION 0.001		  /* narrower frames are elided */

static uint32_t hash_name(const char *s)
{
	return hash_fnv1a32_str(s);
}

/* Numbers are written by hand: a big graph has a hundred thousand frames
 * of five numbers each, and printf is the slowest part of writing them. */
static void put_int(FILE *out, int64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		*--p = '-';
	fwrite(p, 1, (size_t)(buf + sizeof(buf) - p), out);
}

/* v with two decimals; printf's %f would also use the locale's decimal
 * point, which is not always the dot that SVG needs. */
static void put_hundredths(FILE *out, double v)
{
	long long c = llround(v * 100);

	if (c < 0) {
		putc('-', out);
		c = -c;
	}
	put_int(out, c / 100);
	putc('.', out);
	putc('0' + (int)(c % 100 / 10), out);
	putc('0' + (int)(c % 10), out);
}

/*
 * The label drawn inside a frame: the whole name if it fits, else its
 * first characters and "..", or nothing below three characters. The
 * script's fitText() does the same when a zoom changes the width.
 */
static void put_label(FILE *out, const char *name, double width)
{
	double fit = floor((width - 6) / (FONT_SIZE * FONT_WIDTH));
	size_t len = strlen(name), chars = 0, cut = 0;

	if (fit < 3)
		return;
	for (size_t i = 0; i < len; i++) {
		if (((unsigned char)name[i] & 0xc0) == 0x80)
			continue; /* a UTF-8 continuation byte: not a new character */
		if (chars == (size_t)fit - 2)
			cut = i;
		chars++;
	}
	if (chars <= (size_t)fit) {
		markup_escape_n(out, name, len);
	} else {
		markup_escape_n(out, name, cut);
		fputs("..", out);
	}
}

/*
 * A value as people read it: "123 samples" for counts, "1.25 s cpu" for
 * times (pprof's cpu/nanoseconds), "4096 bytes alloc_space" otherwise.
 * Integer arithmetic only, so the decimal point is a dot in every locale.
 */
static void format_value(char *buf, size_t size, const struct stack_set *set, int64_t v)
{
	static const struct {
		const char *unit;
		double ns;
	} times[] = {
	    {"nanoseconds", 1}, {"microseconds", 1e3}, {"milliseconds", 1e6}, {"seconds", 1e9}};
	static const struct {
		double ns;
		const char *symbol;
	} scales[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
	const char *unit = set->unit ? set->unit : "", *type = set->type ? set->type : "";
	const char *space = type[0] ? " " : "";

	if (!unit[0] || strcmp(unit, "count") == 0) {
		snprintf(buf, size, "%" PRId64 " %s", v, type[0] ? type : "samples");
		return;
	}
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		double ns = (double)v * times[i].ns;
		size_t k = 0;

		if (strcmp(unit, times[i].unit) != 0)
			continue;
		while (k + 1 < sizeof(scales) / sizeof(scales[0]) && ns < scales[k].ns)
			k++;
		long long c = llround(ns / scales[k].ns * 100);
		snprintf(buf, size, "%lld.%02lld %s%s%s", c / 100, c % 100, scales[k].symbol, space,
			 type);
		return;
	}
	snprintf(buf, size, "%" PRId64 " %s%s%s", v, unit, space, type);
}

enum frame_kind { FRAME_NATIVE, FRAME_KERNEL, FRAME_JIT, FRAME_UNKNOWN };

static int has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/*
 * Kernel and JIT frames get hues of their own so that the eye finds the
 * boundary between the program and the kernel, or native and generated
 * code. Kernel frames are in the module "[kernel.kallsyms]" (or are named
 * "[kernel]+0x..." when kallsyms is unreadable); JIT frames are named code
 * in anonymous memory, which has no module and no source file (perf-map
 * names). flamegraph.pl's "_[k]" and "_[j]" suffixes are honoured too.
 */
static enum frame_kind frame_kind(const struct flame_node *n)
{
	if (n->depth == 0)
		return FRAME_NATIVE;
	if (has_prefix(n->module, "[kernel") || has_prefix(n->name, "[kernel") ||
	    has_suffix(n->name, "_[k]"))
		return FRAME_KERNEL;
	if (has_prefix(n->name, "0x") || strcmp(n->name, "[unknown]") == 0 ||
	    (!n->file[0] && strstr(n->name, "+0x")))
		return FRAME_UNKNOWN;
	if ((!n->module[0] && !n->file[0]) || has_prefix(n->module, "[anon") ||
	    has_prefix(n->module, "//anon") || has_suffix(n->name, "_[j]"))
		return FRAME_JIT;
	return FRAME_NATIVE;
}

/* A colour from a hash of the name, so a function keeps its colour from
 * one graph to the next. Warm hues for native code, as flamegraph.pl's. */
static void put_fill(FILE *out, const struct flame_node *n)
{
	uint32_t h = hash_name(n->name);
	double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0,
	       v3 = ((h >> 16) & 0xff) / 255.0;
	int r, g, b;

	switch (frame_kind(n)) {
	case FRAME_KERNEL: /* aqua */
		r = 50 + (int)(60 * v1), g = 165 + (int)(55 * v1), b = 165 + (int)(55 * v1);
		break;
	case FRAME_JIT: /* green */
		r = 50 + (int)(60 * v1), g = 200 + (int)(55 * v1), b = 50 + (int)(60 * v2);
		break;
	case FRAME_UNKNOWN: /* grey */
		r = g = b = 170 + (int)(40 * v1);
		break;
	default: /* red, orange, yellow */
		r = 205 + (int)(50 * v3), g = (int)(230 * v1), b = (int)(55 * v2);
		break;
	}
	fputs("rgb(", out);
	put_int(out, r);
	putc(',', out);
	put_int(out, g);
	putc(',', out);
	put_int(out, b);
	putc(')', out);
}

/* The change of a node's share, in percent, from the base profile. */
static double node_delta(const struct flame_node *n, int64_t total, int64_t base_total)
{
	double now = total > 0 ? 100.0 * (double)n->value / (double)total : 0;
	double then = base_total > 0 ? 100.0 * (double)n->base / (double)base_total : 0;

	return now - then;
}

/* Red for a frame whose share grew, blue for one that shrank, white for no
 * change; scale is the largest change of the graph, which gets the
 * deepest colour. */
static void put_diff_fill(FILE *out, double delta, double scale)
{
	double k = scale > 0 ? fabs(delta) / scale : 0;
	int fade = 255 - (int)lround(200 * (k > 1 ? 1 : k));

	fputs("rgb(", out);
	put_int(out, delta > 0 ? 255 : fade);
	putc(',', out);
	put_int(out, fade);
	putc(',', out);
	put_int(out, delta < 0 ? 255 : fade);
	putc(')', out);
}

/* The viewer (src/writers/flame-viewer.js, embedded at build time by
 * scripts/embed-text.sh); put_script() writes its line of settings where
 * the marker stands. */
extern const char flame_viewer_js[];
#define VIEWER_CONFIG_MARK "/* @CONFIG@ */\n"

static void put_header(FILE *out, int height, const struct flame_opts *opts, int64_t total,
		       const struct stack_set *set)
{
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" data-icicle=\"%d\" data-total=\"%" PRId64
		"\" data-type=\"",
		IMAGE_WIDTH, height, IMAGE_WIDTH, height, opts->icicle ? 1 : 0, total);
	markup_escape(out, set->type && set->type[0] ? set->type : "samples");
	fputs("\" data-unit=\"", out);
	markup_escape(out, set->unit && set->unit[0] ? set->unit : "count");
	fputs("\">\n"
	      "<!-- Written by recce. Open it in a web browser: hover, click to zoom, "
	      "Ctrl-F to search. -->\n"
	      "<defs>\n"
	      "<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">\n"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/>\n"
	      "<stop stop-color=\"#eeeeb0\" offset=\"95%\"/>\n"
	      "</linearGradient>\n"
	      "</defs>\n"
	      "<style type=\"text/css\">\n"
	      "text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
	      "#title { text-anchor: middle; font-size: 17px; }\n"
	      "#subtitle { text-anchor: middle; fill: rgb(120,120,120); }\n"
	      "#search, #matched { text-anchor: end; }\n"
	      "#search, #unzoom { cursor: pointer; }\n"
	      ".frame { cursor: pointer; }\n"
	      ".frame:hover rect { stroke: black; stroke-width: 0.5; }\n"
	      ".frame text { pointer-events: none; }\n"
	      ".hide { display: none; }\n"
	      ".parent { opacity: 0.5; }\n"
	      "</style>\n",
	      out);
}

static void put_titles(FILE *out, const char *title, const char *subtitle)
{
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"%d\">", IMAGE_WIDTH / 2, FONT_SIZE * 2);
	markup_escape(out, title);
	fputs("</text>\n", out);
	if (subtitle[0]) {
		fprintf(out, "<text id=\"subtitle\" x=\"%d\" y=\"%d\">", IMAGE_WIDTH / 2,
			FONT_SIZE * 4);
		markup_escape(out, subtitle);
		fputs("</text>\n", out);
	}
}

static void put_script(FILE *out, const struct flame_opts *opts)
{
	const char *mark = strstr(flame_viewer_js, VIEWER_CONFIG_MARK);
	size_t head = mark ? (size_t)(mark - flame_viewer_js) : strlen(flame_viewer_js);

	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fwrite(flame_viewer_js, 1, head, out);
	fprintf(out,
		"const config = { icicle: %s, xpad: %d, frameWidth: %d, fontSize: %d, "
		"fontWidth: ",
		opts->icicle ? "true" : "false", XPAD, FRAME_WIDTH, FONT_SIZE);
	put_hundredths(out, FONT_WIDTH);
	fputs(", matchFill: 'rgb(230,0,230)' };\n", out);
	if (mark)
		fputs(mark + strlen(VIEWER_CONFIG_MARK), out);
	fputs("]]></script>\n", out);
}

/* What a diff adds to a frame: its colour scale and the base total. */
struct diff_view {
	int on;
	int64_t base_total;
	double scale;
};

static void put_frame(FILE *out, const struct flame_node *n, double x, double width, int y,
		      int64_t total, const struct stack_set *set, const struct diff_view *dv)
{
	char value[96];
	double delta = dv->on ? node_delta(n, total, dv->base_total) : 0;

	fputs("<g class=\"frame\" data-name=\"", out);
	markup_escape(out, n->name);
	fputs("\" data-value=\"", out);
	put_int(out, n->value);
	putc('"', out);
	if (n->file[0]) {
		fputs(" data-loc=\"", out);
		markup_escape(out, n->file);
		if (n->line > 0) {
			putc(':', out);
			put_int(out, n->line);
		}
		putc('"', out);
	}
	if (dv->on) {
		fputs(" data-delta=\"", out);
		put_hundredths(out, delta);
		putc('"', out);
	}
	fputs("><title>", out);
	markup_escape(out, n->name);
	format_value(value, sizeof(value), set, n->value);
	fputs(" (", out);
	markup_escape(out, value);
	fputs(", ", out);
	put_hundredths(out, 100.0 * (double)n->value / (double)total);
	if (dv->on) {
		fputs("%, was ", out);
		put_hundredths(
		    out, dv->base_total > 0 ? 100.0 * (double)n->base / (double)dv->base_total : 0);
		fputs("%, ", out);
		if (delta >= 0)
			putc('+', out);
		put_hundredths(out, delta);
	}
	fputs("%)</title><rect x=\"", out);
	put_hundredths(out, x);
	fputs("\" y=\"", out);
	put_int(out, y);
	fputs("\" width=\"", out);
	put_hundredths(out, width);
	fputs("\" height=\"", out);
	put_int(out, FRAME_HEIGHT - 1); /* a pixel of gap between rows */
	fputs("\" rx=\"2\" ry=\"2\" fill=\"", out);
	if (dv->on)
		put_diff_fill(out, delta, dv->scale);
	else
		put_fill(out, n);
	fputs("\"/><text x=\"", out);
	put_hundredths(out, x + 3);
	fputs("\" y=\"", out);
	put_int(out, y + FRAME_HEIGHT - 4);
	fputs("\">", out);
	put_label(out, n->name, width);
	fputs("</text></g>\n", out);
}

/* Writes the frames in the tree's depth-first order, which the script
 * relies on to find callers and callees. */
static void put_frames(FILE *out, const struct flame_tree *t, int height, int top_pad,
		       const struct flame_opts *opts, const struct stack_set *set)
{
	int64_t total = t->nodes[0].value;
	double scale = (double)FRAME_WIDTH / (double)total;
	struct diff_view dv = {opts->diff, opts->base_total, 0};
	int icicle = opts->icicle;

	for (size_t i = 0; dv.on && i < t->n; i++) {
		double d = fabs(node_delta(&t->nodes[i], total, dv.base_total));
		if (d > dv.scale)
			dv.scale = d;
	}

	fputs("<g id=\"frames\">\n", out);
	for (size_t i = 0; i < t->n; i++) {
		const struct flame_node *n = &t->nodes[i];
		int y = icicle ? top_pad + (int)n->depth * FRAME_HEIGHT
			       : height - BOTTOM_PAD - ((int)n->depth + 1) * FRAME_HEIGHT;

		put_frame(out, n, XPAD + (double)n->x * scale, (double)n->value * scale, y, total,
			  set, &dv);
	}
	fputs("</g>\n", out);
}

static int write_empty(FILE *out, const char *title, const char *subtitle,
		       const struct flame_opts *opts, const struct stack_set *set)
{
	int height = TOP_PAD + (subtitle[0] ? SUBTITLE_PAD : 0) + 2 * FRAME_HEIGHT + BOTTOM_PAD;

	put_header(out, height, opts, 0, set);
	fprintf(out,
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#background)\"/>\n",
		IMAGE_WIDTH, height);
	put_titles(out, title, subtitle);
	fprintf(out,
		"<text id=\"nosamples\" x=\"%d\" y=\"%d\" style=\"text-anchor: middle\">"
		"no samples</text>\n</svg>\n",
		IMAGE_WIDTH / 2, height - BOTTOM_PAD - FRAME_HEIGHT / 2);
	return 0;
}

int flame_write_svg(FILE *out, const struct stack_set *set, const struct flame_opts *opts)
{
	static const struct flame_opts defaults = {NULL, NULL, 0, 0, 0};
	char subtitle_buf[128];
	const char *title, *subtitle;
	struct flame_tree t;
	int64_t total;
	int height, top_pad, err;

	if (!out || !set)
		return -EINVAL;
	if (!opts)
		opts = &defaults;
	title = opts->title ? opts->title : opts->icicle ? "Icicle Graph" : "Flame Graph";

	err = flame_tree_build(&t, set, MIN_FRACTION);
	if (err < 0)
		goto out_release;
	total = t.nodes[0].value;

	subtitle = opts->subtitle;
	if (!subtitle) {
		char value[96];

		format_value(value, sizeof(value), set, total);
		snprintf(subtitle_buf, sizeof(subtitle_buf), "Total: %s", value);
		subtitle = subtitle_buf;
	}

	if (total <= 0) {
		write_empty(out, title, subtitle, opts, set);
		goto out_flush;
	}

	top_pad = TOP_PAD + (subtitle[0] ? SUBTITLE_PAD : 0);
	height = top_pad + ((int)t.max_depth + 1) * FRAME_HEIGHT + BOTTOM_PAD;
	put_header(out, height, opts, total, set);
	put_script(out, opts);
	fprintf(out,
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#background)\"/>\n",
		IMAGE_WIDTH, height);
	put_titles(out, title, subtitle);
	fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n",
		XPAD, FONT_SIZE * 2);
	fprintf(out, "<text id=\"search\" x=\"%d\" y=\"%d\">Search</text>\n", IMAGE_WIDTH - XPAD,
		FONT_SIZE * 2);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", XPAD,
		height - BOTTOM_PAD / 2);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n", IMAGE_WIDTH - XPAD,
		height - BOTTOM_PAD / 2);
	put_frames(out, &t, height, top_pad, opts, set);
	fputs("</svg>\n", out);

out_flush:
	if (fflush(out) != 0 || ferror(out))
		err = -EIO;
out_release:
	flame_tree_release(&t);
	return err;
}
