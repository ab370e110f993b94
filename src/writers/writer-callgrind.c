/*
 * The callgrind writer (see writer-callgrind.h). Costs are gathered as
 * records, one per leaf frame (self cost) and one per caller-callee pair of
 * every stack (call cost), then sorted by function and line so that equal
 * records are adjacent and each function's block is written in one pass.
 * Sorting the call records by sample too finds the repeats of one call in
 * one sample (recursion), which must count once.
 */
#include "writers/writer-callgrind.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/version.h"

struct cg_record {
	uint32_t fn;	 /* the function the cost is in (the caller, for calls) */
	uint32_t callee; /* for calls; UINT32_MAX for self cost */
	int64_t line;	 /* of the cost, or of the call site */
	int64_t cline;	 /* for calls: the callee's line */
	size_t entry;	 /* the sample */
};

struct cg_writer {
	FILE *out;
	const struct stack_set *set;
	size_t ntypes;
	const struct stack_frame **funcs;
	uint32_t *ids;
	size_t nfuncs;
	unsigned char *file_named, *fn_named; /* compression: name written once */
	uint32_t *file_of;		      /* function -> file number */
	const char **files;
	size_t nfiles;
	int count_type; /* a sample type counted in samples, for calls=; -1: none */
};

static int record_cmp(const void *a, const void *b)
{
	const struct cg_record *x = a, *y = b;

	if (x->fn != y->fn)
		return x->fn < y->fn ? -1 : 1;
	if (x->callee != y->callee)
		return x->callee < y->callee ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return (x->entry > y->entry) - (x->entry < y->entry);
}

static const char *function_file(const struct stack_frame *f)
{
	if (f->file && f->file[0])
		return f->file;
	return f->module && f->module[0] ? f->module : "???";
}

/* Numbers the distinct files of the functions. */
static int files_number(struct cg_writer *w)
{
	w->file_of = calloc(w->nfuncs + 1, sizeof(*w->file_of));
	w->files = calloc(w->nfuncs + 1, sizeof(*w->files));
	if (!w->file_of || !w->files)
		return -ENOMEM;
	for (size_t i = 0; i < w->nfuncs; i++) {
		const char *file = function_file(w->funcs[i]);
		size_t j;

		/* Functions of one file are mostly numbered near each other. */
		for (j = w->nfiles; j-- > 0;)
			if (w->files[j] == file || strcmp(w->files[j], file) == 0)
				break;
		if (j == (size_t)-1) {
			j = w->nfiles++;
			w->files[j] = file;
		}
		w->file_of[i] = (uint32_t)j;
	}
	return 0;
}

static void put_name(FILE *out, const char *key, unsigned char *named, uint32_t id,
		     const char *name)
{
	fprintf(out, "%s=(%" PRIu32 ")", key, id + 1);
	if (!named[id]) {
		fprintf(out, " %s", name && name[0] ? name : "[unknown]");
		named[id] = 1;
	}
	putc('\n', out);
}

static void entry_costs(const struct cg_writer *w, size_t entry, int64_t *costs)
{
	const struct stack_entry *e = &w->set->entries[entry];

	for (size_t t = 0; t < w->ntypes; t++)
		costs[t] = e->sample ? e->sample->values[t] : e->value;
}

static void put_costs(FILE *out, int64_t line, const int64_t *costs, size_t n)
{
	fprintf(out, "%" PRId64, line > 0 ? line : 0);
	for (size_t t = 0; t < n; t++)
		fprintf(out, " %" PRId64, costs[t]);
	putc('\n', out);
}

/* Writes the records of one function, rec[0..n), self costs first. */
static void put_function(struct cg_writer *w, const struct cg_record *rec, size_t n, int64_t *sum,
			 int64_t *one)
{
	uint32_t fn = rec[0].fn;

	put_name(w->out, "fl", w->file_named, w->file_of[fn], function_file(w->funcs[fn]));
	put_name(w->out, "fn", w->fn_named, fn, w->funcs[fn]->name);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		int64_t calls = 0;

		memset(sum, 0, w->ntypes * sizeof(*sum));
		while (j < n && rec[j].callee == rec[i].callee && rec[j].line == rec[i].line) {
			/* A repeat of the same call in the same sample counts once. */
			if (j == i || rec[j].entry != rec[j - 1].entry) {
				entry_costs(w, rec[j].entry, one);
				for (size_t t = 0; t < w->ntypes; t++)
					sum[t] += one[t];
				/* The samples through the call site: a sampler sees
				 * no calls, and says so in the file's header. */
				calls += w->count_type >= 0 ? one[w->count_type] : 1;
			}
			j++;
		}
		if (rec[i].callee != UINT32_MAX) {
			uint32_t c = rec[i].callee;
			put_name(w->out, "cfl", w->file_named, w->file_of[c],
				 function_file(w->funcs[c]));
			put_name(w->out, "cfn", w->fn_named, c, w->funcs[c]->name);
			fprintf(w->out, "calls=%" PRId64 " %" PRId64 "\n", calls,
				rec[i].cline > 0 ? rec[i].cline : 0);
		}
		put_costs(w->out, rec[i].line, sum, w->ntypes);
		i = j;
	}
	putc('\n', w->out);
}

static void put_header(struct cg_writer *w, const struct profile_value_type *types, const char *cmd)
{
	FILE *out = w->out;

	fputs("# callgrind format\nversion: 1\ncreator: recce " RECCE_VERSION "\n", out);
	if (cmd && cmd[0])
		fprintf(out, "cmd: %s\n", cmd);
	fputs("positions: line\nevents:", out);
	for (size_t t = 0; t < w->ntypes; t++) {
		putc(' ', out);
		/* Event names are identifiers. */
		for (const char *c = types[t].type; *c; c++)
			putc((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
				     (*c >= '0' && *c <= '9' && c != types[t].type)
				 ? *c
				 : '_',
			     out);
		if (!types[t].type[0])
			putc('_', out);
	}
	putc('\n', out);
	for (size_t t = 0; t < w->ntypes; t++)
		if (types[t].unit[0] && strcmp(types[t].unit, "count") != 0)
			fprintf(out, "# %s is in %s\n", types[t].type, types[t].unit);
	fputs("# calls= counts the samples taken through each call site: a sampling\n"
	      "# profiler sees no calls\n",
	      out);
}

int callgrind_write(FILE *out, const struct stack_set *set, const struct profile_value_type *types,
		    size_t ntypes, const char *cmd)
{
	struct cg_writer w = {.out = out, .set = set, .ntypes = ntypes, .count_type = -1};
	size_t nframes = stacks_nframes(set), nrec = 0;
	struct cg_record *rec = NULL;
	int64_t *sum = NULL, *one = NULL;
	int ret;

	if (!ntypes)
		return -EINVAL;
	for (size_t t = 0; t < ntypes && w.count_type < 0; t++)
		if (strcmp(types[t].unit, "count") == 0)
			w.count_type = (int)t;
	ret = stacks_function_ids(set, &w.ids, &w.funcs, &w.nfuncs);
	if (ret)
		return ret;
	ret = -ENOMEM;
	rec = malloc((nframes + set->n + 1) * sizeof(*rec));
	sum = calloc(ntypes, sizeof(*sum));
	one = calloc(ntypes, sizeof(*one));
	w.file_named = calloc(w.nfuncs + 1, 1);
	w.fn_named = calloc(w.nfuncs + 1, 1);
	if (!rec || !sum || !one || !w.file_named || !w.fn_named || files_number(&w) < 0)
		goto out;

	for (size_t k = 0; k < set->n; k++) {
		const struct stack_entry *e = &set->entries[k];

		if (!e->nframes)
			continue;
		for (size_t i = 0; i + 1 < e->nframes; i++) {
			const struct stack_frame *f = &e->frames[i], *c = &e->frames[i + 1];
			rec[nrec++] = (struct cg_record){w.ids[stacks_frame_index(set, f)],
							 w.ids[stacks_frame_index(set, c)], f->line,
							 c->line, k};
		}
		const struct stack_frame *leaf = &e->frames[e->nframes - 1];
		rec[nrec++] = (struct cg_record){w.ids[stacks_frame_index(set, leaf)], UINT32_MAX,
						 leaf->line, 0, k};
	}
	qsort(rec, nrec, sizeof(*rec), record_cmp);
	/* Self costs sort after calls (UINT32_MAX); callgrind takes either. */
	put_header(&w, types, cmd);
	int64_t *totals = calloc(ntypes, sizeof(*totals));
	if (!totals)
		goto out;
	for (size_t k = 0; k < set->n; k++) {
		entry_costs(&w, k, one);
		for (size_t t = 0; t < ntypes; t++)
			totals[t] += one[t];
	}
	fputs("summary:", out);
	for (size_t t = 0; t < ntypes; t++)
		fprintf(out, " %" PRId64, totals[t]);
	fputs("\n\n", out);
	free(totals);
	for (size_t i = 0; i < nrec;) {
		size_t j = i;
		while (j < nrec && rec[j].fn == rec[i].fn)
			j++;
		put_function(&w, rec + i, j - i, sum, one);
		i = j;
	}
	ret = fflush(out) != 0 || ferror(out) ? -EIO : 0;
out:
	free(rec);
	free(sum);
	free(one);
	free(w.ids);
	free(w.funcs);
	free(w.file_named);
	free(w.fn_named);
	free(w.file_of);
	free(w.files);
	return ret;
}
