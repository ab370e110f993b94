/*
 * The profile page of `recce agent --continuous` and `recce view`: the
 * page itself (src/writers/page.html, embedded: no network, no CDN), and
 * what its requests read: a profile's stacks as folded lines (its
 * flamegraph), its top table with file:line, and the CPU of each command
 * over time as JSON (its chart).
 */
#ifndef RECCE_WRITERS_PAGE_H
#define RECCE_WRITERS_PAGE_H

#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

/* The page, with title (HTML-escaped) in its heading. */
void page_write_html(FILE *fp, const char *title);

/* p's default sample type as folded stacks ("flame") or as the table of
 * `recce report` ("top"). Returns 0, -EINVAL for another what, or -errno. */
int page_write_profile(FILE *fp, const struct profile *p, const char *what);

/* The chart's data: {"windows": [[start_ns, end_ns], ...], "series":
 * [{"comm": ..., "cpu_ns": [per window]}, ...]}, written a point at a time;
 * a series of each host ({"host": ...}) where page_series_by() says so. */
struct page_series;
struct page_series *page_series_new(void);
void page_series_free(struct page_series *s);
/* The window [start, end), with or without CPU time: windows given so,
 * in time order, are the chart's, and the time none covers is a gap.
 * Without them, the windows are those of the points. 0 or -ENOMEM. */
int page_series_window(struct page_series *s, int64_t start, int64_t end);
/* CPU time of comm in the window [start, end). Returns 0 or -ENOMEM. */
int page_series_add(struct page_series *s, int64_t start, int64_t end, const char *comm,
		    int64_t cpu_ns);
/* What each series is of, "host" (a static string); "comm" by default. */
void page_series_by(struct page_series *s, const char *by);
void page_series_write(FILE *fp, const struct page_series *s);

#endif
