/*
 * Printing task metrics: table, JSON, Prometheus (tasks-print.h).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "events/tasks-print.h"
#include "util/json-out.h"
#include "util/term-safe.h"

/* The rows to show, in order; the caller frees. */
static size_t *rows(const struct tasks_view *v, size_t *n)
{
	size_t *order = malloc((v->t->ntypes + 1) * sizeof(*order)), k = 0;
	if (!order) {
		*n = 0;
		return NULL;
	}
	tasks_sorted(v->t, v->sort, order);
	for (size_t i = 0; i < v->t->ntypes; i++)
		if (!v->filter || strstr(v->t->types[order[i]].name, v->filter))
			order[k++] = order[i];
	*n = v->limit && k > v->limit ? v->limit : k;
	return order;
}

void tasks_print_table(FILE *out, const struct tasks_view *v)
{
	size_t n;
	size_t *order = rows(v, &n);
	char buf[256];

	fprintf(out, "pid %d (%s): %zu task types, %.1f s%s", v->pid, term_safe(v->comm, buf, 64),
		v->t->ntypes, v->elapsed_s, v->lost ? "" : "\n");
	if (v->lost)
		fprintf(out, ", %" PRIu64 " events lost: counts are short\n", v->lost);
	/* The type column as wide as the longest name shown (C++ callbacks
	 * have long ones), from 24 to 64 characters. */
	int w = 24;
	for (size_t i = 0; i < n; i++) {
		int len = (int)strlen(term_safe(v->t->types[order[i]].name, buf, sizeof(buf)));
		if (len > w)
			w = len < 64 ? len : 64;
	}
	fprintf(out, "%-*s %8s %9s %9s %9s %9s %9s %9s %11s\n", w, "TYPE", "CREATED", "RUNS",
		"EXEC(s)", "MAX(ms)", "AVG(us)", "WALL(s)", "WAIT(s)", "CHILDREN(s)");
	for (size_t i = 0; i < n; i++) {
		const struct task_type *ty = &v->t->types[order[i]];
		fprintf(out,
			"%-*.*s %8" PRIu64 " %9" PRIu64 " %9.3f %9.3f %9.1f %9.3f %9.3f %11.3f\n",
			w, w, term_safe(ty->name, buf, sizeof(buf)), ty->created, ty->runs,
			ty->exec_ns / 1e9, ty->exec_max_ns / 1e6,
			ty->runs ? ty->exec_ns / 1e3 / ty->runs : 0.0, ty->wall_ns / 1e9,
			ty->wait_ns / 1e9, ty->children_ns / 1e9);
	}
	free(order);
}

void tasks_print_json(FILE *out, const struct tasks_view *v)
{
	size_t n;
	size_t *order = rows(v, &n);

	fprintf(out, "{\"pid\":%d,\"comm\":", v->pid);
	json_put_string(out, v->comm);
	fprintf(out, ",\"elapsed_s\":%.3f,\"lost\":%" PRIu64 ",\"unknown\":%" PRIu64 ",\"types\":[",
		v->elapsed_s, v->lost, v->t->unknown);
	for (size_t i = 0; i < n; i++) {
		const struct task_type *ty = &v->t->types[order[i]];
		fputs(i ? ",{\"type\":" : "{\"type\":", out);
		json_put_string(out, ty->name);
		fprintf(out,
			",\"created\":%" PRIu64 ",\"finished\":%" PRIu64 ",\"runs\":%" PRIu64
			",\"exec_ns\":%" PRIu64 ",\"exec_max_ns\":%" PRIu64 ",\"wall_ns\":%" PRIu64
			",\"wait_ns\":%" PRIu64 ",\"children_ns\":%" PRIu64 "}",
			ty->created, ty->finished, ty->runs, ty->exec_ns, ty->exec_max_ns,
			ty->wall_ns, ty->wait_ns, ty->children_ns);
	}
	fputs("]}\n", out);
	free(order);
}

/* A label value as Prometheus wants it: backslash, quote, newline escaped. */
static void label(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', out);
		if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void labels(FILE *out, const struct tasks_view *v, const char *type)
{
	fprintf(out, "{pid=\"%d\",comm=\"", v->pid);
	label(out, v->comm);
	fputs("\",type=\"", out);
	label(out, type);
	fputc('"', out);
}

struct metric {
	const char *name, *type, *help;
	int seconds; /* the value is nanoseconds, written as seconds */
	size_t field;
};

#define F(x) offsetof(struct task_type, x)
static const struct metric metrics[] = {
    {"recce_task_created_total", "counter", "Tasks created, by type.", 0, F(created)},
    {"recce_task_finished_total", "counter", "Tasks finished, by type.", 0, F(finished)},
    {"recce_task_runs_total", "counter", "Runs of tasks of a type.", 0, F(runs)},
    {"recce_task_execution_seconds_total", "counter", "Time tasks of a type ran.", 1, F(exec_ns)},
    {"recce_task_wall_seconds_total", "counter",
     "Time from creation to finish of the finished tasks of a type.", 1, F(wall_ns)},
    {"recce_task_wait_seconds_total", "counter", "Time tasks of a type were ready but not running.",
     1, F(wait_ns)},
    {"recce_task_children_execution_seconds_total", "counter",
     "Time the children of tasks of a type ran.", 1, F(children_ns)},
    {"recce_task_run_max_seconds", "gauge", "The longest run of a task of a type.", 1,
     F(exec_max_ns)},
};
#undef F

void tasks_print_prometheus(FILE *out, const struct tasks_view *v, size_t top_k)
{
	struct tasks_view byexec = *v;
	size_t n;

	byexec.sort = TASK_SORT_EXEC;
	byexec.limit = top_k;
	size_t *order = rows(&byexec, &n);
	for (size_t m = 0; m < sizeof(metrics) / sizeof(metrics[0]); m++) {
		fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", metrics[m].name, metrics[m].help,
			metrics[m].name, metrics[m].type);
		for (size_t i = 0; i < n; i++) {
			const struct task_type *ty = &v->t->types[order[i]];
			uint64_t val = *(const uint64_t *)((const char *)ty + metrics[m].field);
			fputs(metrics[m].name, out);
			labels(out, v, ty->name);
			if (metrics[m].seconds)
				fprintf(out, "} %.9f\n", val / 1e9);
			else
				fprintf(out, "} %" PRIu64 "\n", val);
		}
	}
	fputs("# HELP recce_task_run_seconds Runs of tasks of a type, by how long they ran.\n"
	      "# TYPE recce_task_run_seconds histogram\n",
	      out);
	for (size_t i = 0; i < n; i++) {
		const struct task_type *ty = &v->t->types[order[i]];
		uint64_t sum = 0;
		for (int b = 0; b <= TASK_BUCKETS; b++) {
			sum += ty->bucket[b];
			fputs("recce_task_run_seconds_bucket", out);
			labels(out, v, ty->name);
			if (b < TASK_BUCKETS)
				fprintf(out, ",le=\"%g\"} %" PRIu64 "\n", task_bucket_ns[b] / 1e9,
					sum);
			else
				fprintf(out, ",le=\"+Inf\"} %" PRIu64 "\n", sum);
		}
		fputs("recce_task_run_seconds_sum", out);
		labels(out, v, ty->name);
		fprintf(out, "} %.9f\nrecce_task_run_seconds_count", ty->exec_ns / 1e9);
		labels(out, v, ty->name);
		fprintf(out, "} %" PRIu64 "\n", ty->runs);
	}
	fprintf(out,
		"# HELP recce_task_lost_events_total Events the rings overwrote before recce read "
		"them.\n# TYPE recce_task_lost_events_total counter\n"
		"recce_task_lost_events_total{pid=\"%d\",comm=\"",
		v->pid);
	label(out, v->comm);
	fprintf(out, "\"} %" PRIu64 "\n", v->lost);
	free(order);
}
