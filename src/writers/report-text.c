/*
 * The text report (see report-text.h). Rows live in an open-addressing
 * hash table keyed by the content of name and file (generated names of two
 * locations may be equal strings at different addresses). Each row
 * remembers the last sample that added to its total, which is how
 * recursion is counted once per sample without a per-sample set.
 */
#include "writers/report-text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/term-safe.h"
#include "util/hash.h"
#include "util/htab.h"
#include "util/sat.h"

/* Columns wider than this are not padded further: long C++ names would
 * otherwise push every row off the screen. */
#define NAME_WIDTH_MAX 60

struct rank_row {
	struct report_row r;
	size_t seen;	    /* 1 + index of the last entry counted in total */
	int64_t best_self;  /* functions: the self and total of the line */
	int64_t best_total; /* chosen as hottest so far */
};

struct rank_table {
	struct rank_row *rows;
	size_t n, cap;
	struct htab index; /* frame hash -> index in rows */
	int lines;	   /* the line is part of the key */
};

/* A line row is (function, file, line); a function row is (function,
 * object): one function is one row even when its samples span source
 * files (inlined headers, a function defined in a macro). */
static uint64_t frame_hash(const struct stack_frame *f, int lines)
{
	uint64_t h = hash_fnv1a_str(HASH_FNV1A_INIT, f->name);

	if (!lines)
		return hash_fnv1a_str(hash_fnv1a_value(h, 0xff), f->module ? f->module : "");
	h = hash_fnv1a_str(hash_fnv1a_value(h, 0xff), f->file);
	return hash_fnv1a_value(h, (uint64_t)f->line);
}

static int same_text(const char *a, const char *b)
{
	a = a ? a : "";
	b = b ? b : "";
	return a == b || strcmp(a, b) == 0;
}

struct wanted_row {
	const struct rank_table *t;
	const struct stack_frame *f;
};

static int row_is(const void *ctx, uint64_t index)
{
	const struct wanted_row *w = ctx;
	const struct report_row *r = &w->t->rows[index].r;
	const struct stack_frame *f = w->f;

	if (!same_text(r->name, f->name))
		return 0;
	if (!w->t->lines)
		return same_text(r->module, f->module);
	return same_text(r->file, f->file) && r->line == f->line;
}

/* The row of frame f, added if new; NULL on allocation failure. */
static struct rank_row *rank_table_find(struct rank_table *t, const struct stack_frame *f)
{
	uint64_t h = frame_hash(f, t->lines);
	struct wanted_row w = {t, f};
	struct htab_slot *hit = htab_find(&t->index, h, row_is, &w);

	if (hit)
		return &t->rows[hit->val];
	struct rank_row *rows = array_reserve(t->rows, &t->cap, t->n + 1, sizeof(*rows));
	if (!rows)
		return NULL;
	t->rows = rows;
	if (!htab_add(&t->index, h, t->n))
		return NULL;
	struct rank_row *row = &t->rows[t->n++];
	memset(row, 0, sizeof(*row));
	row->r.name = f->name;
	row->r.file = f->file;
	row->r.line = t->lines ? f->line : 0;
	row->r.module = f->module;
	row->best_self = INT64_MIN;
	return row;
}

static int rank_table_fill(struct rank_table *t, const struct stack_set *set)
{
	for (size_t k = 0; k < set->n; k++) {
		const struct stack_entry *e = &set->entries[k];
		struct rank_row *row = NULL;

		for (size_t i = 0; i < e->nframes; i++) {
			row = rank_table_find(t, &e->frames[i]);
			if (!row)
				return -ENOMEM;
			if (row->seen != k + 1) {
				row->seen = k + 1;
				row->r.total = sat_add(row->r.total, e->value);
			}
		}
		if (row)
			row->r.self = sat_add(row->r.self, e->value); /* row is the leaf's */
	}
	return 0;
}

static void rank_table_release(struct rank_table *t)
{
	free(t->rows);
	htab_release(&t->index);
}

/* Gives every function row of funcs the hottest of its lines in lines. */
static int rank_hottest_lines(struct rank_table *funcs, const struct rank_table *lines)
{
	for (size_t i = 0; i < lines->n; i++) {
		const struct report_row *lr = &lines->rows[i].r;
		struct stack_frame f = {lr->name, lr->file, lr->line, lr->module};

		if (!lr->line)
			continue;
		struct rank_row *fr = rank_table_find(funcs, &f);
		if (!fr)
			return -ENOMEM;
		int hotter = lr->self != fr->best_self	   ? lr->self > fr->best_self
			     : lr->total != fr->best_total ? lr->total > fr->best_total
							   : lr->line < fr->r.line;
		if (hotter) {
			fr->best_self = lr->self;
			fr->best_total = lr->total;
			fr->r.file = lr->file;
			fr->r.line = lr->line;
		}
	}
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
	int c;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	if ((c = strcmp(x->file, y->file)) != 0)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

int report_rank(const struct stack_set *set, int lines, struct report_row **rows, size_t *nrows)
{
	struct rank_table by_line = {.lines = 1}, by_func = {.lines = 0};
	struct rank_table *result = lines ? &by_line : &by_func;
	int ret = rank_table_fill(&by_line, set);

	if (!ret && !lines)
		ret = rank_table_fill(&by_func, set);
	if (!ret && !lines)
		ret = rank_hottest_lines(&by_func, &by_line);
	struct report_row *out = NULL;
	if (!ret && !(out = malloc((result->n ? result->n : 1) * sizeof(*out))))
		ret = -ENOMEM;
	if (!ret) {
		for (size_t i = 0; i < result->n; i++)
			out[i] = result->rows[i].r;
		qsort(out, result->n, sizeof(*out), row_cmp);
		*rows = out;
		*nrows = result->n;
	}
	rank_table_release(&by_line);
	rank_table_release(&by_func);
	return ret;
}

const char *report_value_format(char *buf, size_t size, int64_t value, const char *unit)
{
	double v = (double)value;
	double a = v < 0 ? -v : v;

	if (strcmp(unit, "nanoseconds") == 0 && a >= 1e9)
		snprintf(buf, size, "%.2fs", v / 1e9);
	else if (strcmp(unit, "nanoseconds") == 0 && a >= 1e6)
		snprintf(buf, size, "%.2fms", v / 1e6);
	else if (strcmp(unit, "nanoseconds") == 0 && a >= 1e3)
		snprintf(buf, size, "%.2fus", v / 1e3);
	else if (strcmp(unit, "nanoseconds") == 0)
		snprintf(buf, size, "%" PRId64 "ns", value);
	else
		snprintf(buf, size, "%" PRId64, value);
	return buf;
}

/* "file:line", "file", the module, or "" when nothing is known. */
const char *report_row_location(const struct report_row *r, char *buf, size_t size)
{
	if (*r->file && r->line)
		snprintf(buf, size, "%s:%" PRId64, r->file, r->line);
	else
		snprintf(buf, size, "%s", *r->file ? r->file : r->module);
	return buf;
}

static double percent(int64_t v, int64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0;
}

static void header_write(FILE *out, const struct stack_set *set,
			 const struct report_text_opts *opts)
{
	char v[64], d[64];

	for (size_t i = 0; i < opts->ncomments; i++) {
		term_fputs(opts->comments[i], out);
		fputc('\n', out);
	}
	fprintf(out, "total: %s %s\n", report_value_format(v, sizeof(v), set->total, set->unit),
		set->type);
	if (set->dropped)
		fprintf(out, "filters left out %s %s (%.2f%% of %s)\n",
			report_value_format(d, sizeof(d), set->dropped, set->unit), set->type,
			percent(set->dropped, set->total + set->dropped),
			report_value_format(v, sizeof(v), set->total + set->dropped, set->unit));
}

static void table_write(FILE *out, const struct stack_set *set, const struct report_row *rows,
			size_t n, int lines)
{
	char v[64], loc[4096];
	int vw = (int)strlen(set->type),
	    kw = lines ? (int)strlen("location") : (int)strlen("function");

	/* The key column (function, or location for lines) is padded so the
	 * last column lines up; the value column fits the widest value. */
	for (size_t i = 0; i < n; i++) {
		int w = (int)strlen(report_value_format(v, sizeof(v), rows[i].self, set->unit));
		int k = (int)strlen(lines ? report_row_location(&rows[i], loc, sizeof(loc))
					  : rows[i].name);
		vw = w > vw ? w : vw;
		kw = k > kw ? k : kw;
	}
	kw = kw > NAME_WIDTH_MAX ? NAME_WIDTH_MAX : kw;
	fprintf(out, "\n  self%%  total%%  %*s  %-*s  %s\n", vw, set->type, kw,
		lines ? "location" : "function", lines ? "function" : "location");
	for (size_t i = 0; i < n; i++) {
		const struct report_row *r = &rows[i];
		char name[1024], where[4096];

		/* Names and files come from the target: escaped for the terminal. */
		report_row_location(r, loc, sizeof(loc));
		const char *nm = term_safe(r->name, name, sizeof(name));
		const char *at = term_safe(loc, where, sizeof(where));
		fprintf(out, "%6.2f%% %6.2f%%  %*s  %-*s  %s\n", percent(r->self, set->total),
			percent(r->total, set->total), vw,
			report_value_format(v, sizeof(v), r->self, set->unit), kw, lines ? at : nm,
			lines ? nm : at);
	}
}

int report_text_write(FILE *out, const struct stack_set *set, const struct report_text_opts *opts)
{
	struct report_row *rows;
	size_t n;
	const char *what = opts->lines ? "lines" : "functions";

	header_write(out, set, opts);
	if (!set->n) {
		fprintf(out, "no samples%s\n", set->dropped ? " left after the filters" : "");
		return ferror(out) ? -EIO : 0;
	}
	int ret = report_rank(set, opts->lines, &rows, &n);
	if (ret)
		return ret;
	size_t shown = opts->top && opts->top < n ? opts->top : n;
	if (shown < n)
		fprintf(out, "showing the top %zu of %zu %s (-n 0 shows all)\n", shown, n, what);
	table_write(out, set, rows, shown, opts->lines);
	free(rows);
	return ferror(out) ? -EIO : 0;
}
