/*
 * The flamegraph writer: draws a stack_set as one self-contained,
 * interactive SVG in the manner of Brendan Gregg's flamegraph.pl. Stacks are
 * merged into a call tree (children merged by frame name), each frame is a
 * box whose width is proportional to its value, children sorted by name and
 * placed side by side on top of their parent (below it for an icicle graph).
 * Frames narrower than 0.1% of the whole are left out, but their value still
 * counts in their parent's width.
 *
 * The file needs no network: an inline script gives hover details (name,
 * file:line, value and percent of the total), click to zoom ("Reset Zoom"
 * undoes it), and a regex "Search" (also Ctrl-F, or ?s=REGEX in the URL) that
 * highlights matching frames and shows the share they cover.
 *
 * Every frame is written as
 *
 *   <g class="frame" data-name="NAME" data-value="N" [data-loc="FILE:LINE"]>
 *     <title>NAME (VALUE, P%)</title><rect x=.. y=.. width=.. .../><text ...>
 *   </g>
 *
 * in depth-first order, root ("all") first, so tests and tools can read it.
 * N is the raw value; VALUE is it for people: "N samples" for counts (the
 * type's name if it is not "samples"), "1.25 s cpu" for times, "N UNIT TYPE"
 * otherwise. P is the percentage of the total, two decimals. Names are
 * escaped for XML; bytes that are not valid UTF-8 or not allowed in XML
 * become U+FFFD.
 */
#ifndef RECCE_WRITER_FLAME_H
#define RECCE_WRITER_FLAME_H

#include <stdio.h>

#include "profile/stacks.h"

struct flame_opts {
	const char *title;    /* NULL: "Flame Graph", or "Icicle Graph" */
	const char *subtitle; /* NULL: "Total: VALUE"; "": none */
	int icicle;	      /* root at the top, callees below */
	/* A differential graph: widths are the entries' values (the new
	 * profile), colours the change of each frame's share from the
	 * entries' base values (the old one, whose total is base_total): red
	 * grew, blue shrank, white unchanged, deeper for larger changes.
	 * Each frame also gets data-delta="D", the change in percent. */
	int diff;
	int64_t base_total;
};

/*
 * Writes set as an SVG to out. opts may be NULL (defaults). An empty set
 * gives a valid SVG that says "no samples". Entries with a value <= 0 are
 * ignored. The set is only read; nothing is kept after the call.
 * Returns 0, -EINVAL for a NULL out or set, -ENOMEM, or -EIO when writing
 * to out failed (out's error indicator is set).
 */
int flame_write_svg(FILE *out, const struct stack_set *set, const struct flame_opts *opts);

#endif
