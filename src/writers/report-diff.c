/*
 * Profile comparison (see report-diff.h). Both profiles are ranked by
 * report_rank() and their rows joined on (function, object) by sorting both
 * lists of rows together.
 */
#include "writers/report-diff.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "writers/report-text.h"

struct diff_row {
	const struct report_row *row;				   /* for the name and location */
	double self_before, self_after, total_before, total_after; /* percent */
};

struct tagged_row {
	const struct report_row *row;
	int after;
};

static int tagged_cmp(const void *a, const void *b)
{
	const struct report_row *x = ((const struct tagged_row *)a)->row;
	const struct report_row *y = ((const struct tagged_row *)b)->row;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->module ? x->module : "", y->module ? y->module : "");
}

static int diff_cmp(const void *a, const void *b)
{
	const struct diff_row *x = a, *y = b;
	double dx = fabs(x->self_after - x->self_before), dy = fabs(y->self_after - y->self_before);

	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->row->name, y->row->name);
}

static double share(int64_t v, int64_t total)
{
	return total > 0 ? 100.0 * (double)v / (double)total : 0;
}

int report_diff_write(FILE *out, const struct stack_set *before, const struct stack_set *after,
		      size_t top, const char *before_name, const char *after_name)
{
	struct report_row *rb = NULL, *ra = NULL;
	struct tagged_row *all = NULL;
	struct diff_row *rows = NULL;
	size_t nb, na, n = 0;
	int ret = report_rank(before, 0, &rb, &nb);

	if (!ret)
		ret = report_rank(after, 0, &ra, &na);
	if (ret)
		goto out;
	ret = -ENOMEM;
	all = malloc((nb + na + 1) * sizeof(*all));
	rows = calloc(nb + na + 1, sizeof(*rows));
	if (!all || !rows)
		goto out;
	for (size_t i = 0; i < nb; i++)
		all[i] = (struct tagged_row){&rb[i], 0};
	for (size_t i = 0; i < na; i++)
		all[nb + i] = (struct tagged_row){&ra[i], 1};
	qsort(all, nb + na, sizeof(*all), tagged_cmp);
	for (size_t i = 0; i < nb + na;) {
		struct diff_row *d = &rows[n++];
		size_t j = i;

		d->row = all[i].row;
		for (; j < nb + na && tagged_cmp(&all[i], &all[j]) == 0; j++) {
			const struct report_row *r = all[j].row;
			if (all[j].after) {
				d->row = r; /* the location of the new profile */
				d->self_after = share(r->self, after->total);
				d->total_after = share(r->total, after->total);
			} else {
				d->self_before = share(r->self, before->total);
				d->total_before = share(r->total, before->total);
			}
		}
		i = j;
	}
	qsort(rows, n, sizeof(*rows), diff_cmp);

	char tb[64], ta[64], loc[512];
	fprintf(out, "before: %s (%s %s)\n", before_name,
		report_value_format(tb, sizeof(tb), before->total, before->unit), before->type);
	fprintf(out, "after: %s (%s %s)\n", after_name,
		report_value_format(ta, sizeof(ta), after->total, after->unit), after->type);
	size_t shown = top && top < n ? top : n;
	fprintf(out, "the %zu largest changes of self share, of %zu functions%s\n\n", shown, n,
		shown < n ? " (-n 0 shows all)" : "");
	fprintf(out, "%8s %8s %9s %9s  %-30s %s\n", "before", "after", "self", "total", "function",
		"location");
	for (size_t i = 0; i < shown; i++) {
		const struct diff_row *d = &rows[i];
		fprintf(out, "%7.2f%% %7.2f%% %+8.2f%% %+8.2f%%  %-30s %s\n", d->self_before,
			d->self_after, d->self_after - d->self_before,
			d->total_after - d->total_before, d->row->name,
			report_row_location(d->row, loc, sizeof(loc)));
	}
	ret = fflush(out) != 0 || ferror(out) ? -EIO : 0;
out:
	free(rb);
	free(ra);
	free(all);
	free(rows);
	return ret;
}
