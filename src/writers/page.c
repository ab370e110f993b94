/*
 * The profile page (see page.h): the embedded page with its title, a
 * profile through the folded and text writers, and the chart's series.
 */
#include "writers/page.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/view.h"
#include "util/array.h"
#include "util/json-out.h"
#include "writers/markup.h"
#include "writers/render.h"

extern const char page_html[];

#define TITLE_MARK "@TITLE@"

void page_write_html(FILE *fp, const char *title)
{
	const char *at = page_html, *mark;

	while ((mark = strstr(at, TITLE_MARK)) != NULL) {
		fwrite(at, 1, (size_t)(mark - at), fp);
		markup_escape(fp, title);
		at = mark + strlen(TITLE_MARK);
	}
	fputs(at, fp);
}

/* A frame name as the folded format needs it: no ';' and no line break. */
static void folded_name(FILE *fp, const char *name)
{
	for (const char *c = name; *c; c++)
		fputc(*c == ';' || *c == '\n' || *c == '\r' ? '_' : *c, fp);
}

/* Folded lines whose first frame is the process's command name (the
 * "comm" label, when the profile has one), so that the page's flamegraph
 * has a tower per program, as perf's folded stacks do. */
static void write_folded(FILE *fp, const struct stack_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct stack_entry *e = &set->entries[i];
		const struct profile_label *comm =
		    e->sample ? profile_sample_label(e->sample, "comm") : NULL;
		int first = 1;
		if (comm && comm->str && comm->str[0]) {
			fputc('[', fp);
			folded_name(fp, comm->str);
			fputc(']', fp);
			first = 0;
		}
		for (size_t f = 0; f < e->nframes; f++) {
			if (!first)
				fputc(';', fp);
			folded_name(fp, e->frames[f].name);
			first = 0;
		}
		if (first)
			fputs("[unknown]", fp);
		fprintf(fp, " %lld\n", (long long)e->value);
	}
}

int page_write_profile(FILE *fp, const struct profile *p, const char *what)
{
	struct profile_view pv = {0};
	enum render_format fmt;

	if (strcmp(what, "flame") == 0)
		fmt = RENDER_FOLDED;
	else if (strcmp(what, "top") == 0)
		fmt = RENDER_TEXT;
	else
		return -EINVAL;
	int err = profile_view_build(p, NULL, NULL, 0, &pv);
	if (!err && fmt == RENDER_FOLDED) {
		write_folded(fp, &pv.set);
	} else if (!err) {
		struct render_view v = {.format = fmt, .p = p, .set = &pv.set, .top = 30};
		err = render_write(fp, &v);
	}
	profile_view_release(&pv);
	return err;
}

struct point {
	int64_t start, end;
	size_t comm; /* index in comms */
	int64_t cpu_ns;
};

struct span {
	int64_t start, end;
};

struct page_series {
	struct point *points;
	size_t n, cap;
	char **comms;
	size_t ncomms, comms_cap;
	struct span *wins; /* every window, those without a sample too */
	size_t nwins, wins_cap;
	const char *by; /* what a series is of: "comm" (NULL), or "host" */
};

struct page_series *page_series_new(void)
{
	return calloc(1, sizeof(struct page_series));
}

void page_series_free(struct page_series *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ncomms; i++)
		free(s->comms[i]);
	free(s->comms);
	free(s->points);
	free(s->wins);
	free(s);
}

int page_series_window(struct page_series *s, int64_t start, int64_t end)
{
	struct span *w = array_reserve(s->wins, &s->wins_cap, s->nwins + 1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	s->wins = w;
	s->wins[s->nwins++] = (struct span){start, end};
	return 0;
}

/* The window of the time-ordered wins that starts at start, or n. */
static size_t window_at(const struct span *wins, size_t n, int64_t start)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (wins[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && wins[lo].start == start ? lo : n;
}

int page_series_add(struct page_series *s, int64_t start, int64_t end, const char *comm,
		    int64_t cpu_ns)
{
	long c = array_add_string(&s->comms, &s->ncomms, &s->comms_cap, comm);
	if (c < 0)
		return (int)c;
	struct point *pts = array_reserve(s->points, &s->cap, s->n + 1, sizeof(*pts));
	if (!pts)
		return -ENOMEM;
	s->points = pts;
	s->points[s->n++] = (struct point){start, end, (size_t)c, cpu_ns};
	return 0;
}

void page_series_by(struct page_series *s, const char *by)
{
	s->by = by;
}

/* Points arrive in time order: without the windows given, a window is a
 * run of equal starts. */
void page_series_write(FILE *fp, const struct page_series *s)
{
	size_t nwin = s->nwins;
	struct span *win = malloc((s->n + nwin + 1) * sizeof(*win));
	size_t *index = malloc((s->n ? s->n : 1) * sizeof(*index));
	int64_t *cpu = malloc((s->n + nwin + 1) * sizeof(*cpu));

	if (!win || !index || !cpu) {
		fputs("{\"windows\": [], \"series\": []}\n", fp);
		free(win);
		free(index);
		free(cpu);
		return;
	}
	if (nwin)
		memcpy(win, s->wins, nwin * sizeof(*win));
	for (size_t i = 0; !s->nwins && i < s->n; i++)
		if (!nwin || win[nwin - 1].start != s->points[i].start)
			win[nwin++] = (struct span){s->points[i].start, s->points[i].end};
	for (size_t i = 0; i < s->n; i++)
		index[i] = window_at(win, nwin, s->points[i].start);
	struct json_out j;
	json_out_init(&j, fp);
	json_object(&j);
	json_key(&j, "windows");
	json_array(&j);
	for (size_t w = 0; w < nwin; w++) {
		json_array(&j);
		json_int(&j, win[w].start);
		json_int(&j, win[w].end);
		json_end(&j);
	}
	json_end(&j);
	json_newline(&j, "");
	json_key(&j, "series");
	json_array(&j);
	for (size_t c = 0; c < s->ncomms; c++) {
		memset(cpu, 0, (nwin + 1) * sizeof(*cpu));
		for (size_t i = 0; i < s->n; i++)
			if (s->points[i].comm == c && index[i] < nwin)
				cpu[index[i]] += s->points[i].cpu_ns;
		json_newline(&j, "  ");
		json_object(&j);
		json_key(&j, s->by ? s->by : "comm");
		json_string(&j, s->comms[c]);
		json_key(&j, "cpu_ns");
		json_array(&j);
		for (size_t w = 0; w < nwin; w++)
			json_int(&j, cpu[w]);
		json_end(&j);
		json_end(&j);
	}
	json_end(&j);
	json_end(&j);
	putc('\n', fp);
	free(cpu);
	free(win);
	free(index);
}
