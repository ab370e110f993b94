/*
 * A trace's calls summed by function (see trace-report.h): a stack of open
 * calls per thread; a return closes its call and those left open above it
 * (their returns never came), and gives its time to the call under it, or,
 * with none, to the thread's "before the trace" call that a later orphan
 * return closes.
 */
#include "trace/trace-report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/strpool.h"
#include "util/u64map.h"

struct frame {
	size_t fn;	/* its row */
	int nested;	/* the same function is open under it */
	uint64_t child; /* time of the traced calls that returned under it */
};

struct thread {
	struct frame *v;
	size_t n, cap;
	uint64_t before; /* time returned under calls made before the trace */
};

struct trace_report {
	struct strpool names;
	struct u64map row_of;	 /* interned name -> row + 1 */
	struct u64map thread_of; /* pid << 32 | tid -> thread + 1 */
	struct trace_report_row *rows, *sorted;
	size_t nrows, cap;
	struct thread *threads;
	size_t nthreads, tcap;
	uint64_t returns;
};

struct trace_report *trace_report_new(void)
{
	struct trace_report *rep = calloc(1, sizeof(*rep));

	if (!rep)
		return NULL;
	strpool_init(&rep->names);
	u64map_init(&rep->row_of);
	u64map_init(&rep->thread_of);
	return rep;
}

void trace_report_free(struct trace_report *rep)
{
	if (!rep)
		return;
	for (size_t i = 0; i < rep->nthreads; i++)
		free(rep->threads[i].v);
	free(rep->threads);
	free(rep->rows);
	free(rep->sorted);
	u64map_release(&rep->row_of);
	u64map_release(&rep->thread_of);
	strpool_release(&rep->names);
	free(rep);
}

/* The row of a function, made on its first call; -1 when out of memory. */
static long row_of(struct trace_report *rep, const char *function)
{
	const char *name = strpool_intern(&rep->names, function);
	uint64_t v;

	if (!name)
		return -1;
	if (u64map_get(&rep->row_of, (uintptr_t)name, &v))
		return (long)v - 1;
	struct trace_report_row *rows =
	    array_reserve(rep->rows, &rep->cap, rep->nrows + 1, sizeof(*rows));
	if (!rows || u64map_put(&rep->row_of, (uintptr_t)name, rep->nrows + 1) < 0)
		return -1;
	rep->rows = rows;
	memset(&rows[rep->nrows], 0, sizeof(*rows));
	rows[rep->nrows].function = name;
	return (long)rep->nrows++;
}

static struct thread *thread_of(struct trace_report *rep, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid, v;

	if (u64map_get(&rep->thread_of, key, &v))
		return &rep->threads[v - 1];
	struct thread *t =
	    array_reserve(rep->threads, &rep->tcap, rep->nthreads + 1, sizeof(*rep->threads));
	if (!t || u64map_put(&rep->thread_of, key, rep->nthreads + 1) < 0)
		return NULL;
	rep->threads = t;
	memset(&t[rep->nthreads], 0, sizeof(*t));
	return &t[rep->nthreads++];
}

/* A call of row fn that lasted d closed, child of it returned under it. */
static void close_call(struct trace_report *rep, struct thread *t, size_t fn, int nested,
		       uint64_t child, uint64_t d)
{
	struct trace_report_row *row = &rep->rows[fn];

	row->calls++;
	row->self_ns += d > child ? d - child : 0;
	if (!nested)
		row->total_ns += d;
	if (d > row->max_ns)
		row->max_ns = d;
	if (t->n)
		t->v[t->n - 1].child += d;
	else
		t->before += d;
	rep->returns++;
}

int trace_report_add(struct trace_report *rep, const struct trace_record *r)
{
	struct thread *t = thread_of(rep, r->pid, r->tid);
	long fn = t ? row_of(rep, r->function) : -1;

	if (fn < 0)
		return -ENOMEM;
	if (r->kind == TRACE_CALL) {
		struct frame *v = array_reserve(t->v, &t->cap, t->n + 1, sizeof(*t->v));
		if (!v)
			return -ENOMEM;
		t->v = v;
		int nested = 0;
		for (size_t i = 0; i < t->n && !nested; i++)
			nested = t->v[i].fn == (size_t)fn;
		t->v[t->n++] = (struct frame){(size_t)fn, nested, 0};
		return 0;
	}
	/* Its call, the nearest open one of the function; those above it
	 * never returned, and are left out. */
	size_t at = t->n;
	while (at > 0 && t->v[at - 1].fn != (size_t)fn)
		at--;
	if (at == 0) {
		/* Called before the trace began: what returned under it so
		 * far was its. */
		uint64_t child = t->before;
		t->before = 0;
		t->n = 0;
		close_call(rep, t, (size_t)fn, 0, child, r->duration_ns);
		return 0;
	}
	struct frame f = t->v[at - 1];
	t->n = at - 1;
	close_call(rep, t, f.fn, f.nested, f.child, r->duration_ns);
	return 0;
}

static int by_total(const void *a, const void *b)
{
	const struct trace_report_row *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->function, y->function);
}

const struct trace_report_row *trace_report_rows(struct trace_report *rep, size_t *n)
{
	free(rep->sorted);
	rep->sorted = malloc((rep->nrows ? rep->nrows : 1) * sizeof(*rep->sorted));
	if (!rep->sorted)
		return NULL;
	/* Functions whose every call is still open have no time to show. */
	*n = 0;
	for (size_t i = 0; i < rep->nrows; i++)
		if (rep->rows[i].calls)
			rep->sorted[(*n)++] = rep->rows[i];
	qsort(rep->sorted, *n, sizeof(*rep->sorted), by_total);
	return rep->sorted;
}

uint64_t trace_report_open(const struct trace_report *rep)
{
	uint64_t open = 0;

	for (size_t i = 0; i < rep->nthreads; i++)
		open += rep->threads[i].n;
	return open;
}

uint64_t trace_report_returns(const struct trace_report *rep)
{
	return rep->returns;
}
