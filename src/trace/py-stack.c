/*
 * Python callers in traced calls' stacks (see py-stack.h): a reader per
 * CPython process, its layout given to the probes' program, and each
 * hit's frames named and put among its native ones.
 */
#include "trace/py-stack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "perf/py-format.h"
#include "perf/uprobe.h"
#include "proc/proc-maps.h"
#include "proc/py-frames.h"
#include "proc/py-names.h"
#include "profile/py-samples.h"
#include "util/u64map.h"

#define NOT_PYTHON 1 /* a process looked at: no reader */

struct py_stack {
	struct proc_registry *procs;
	struct u64map readers; /* pid -> struct py_reader *, or NOT_PYTHON */
	struct u64map given;   /* pids whose layout the program has */
	uint64_t unread;
	int off;
};

struct py_stack *py_stack_new(struct proc_registry *procs)
{
	struct py_stack *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->procs = procs;
	u64map_init(&s->readers);
	u64map_init(&s->given);
	return s;
}

static void free_reader(void *ctx, uint64_t key, uint64_t val)
{
	(void)ctx;
	(void)key;
	if (val != NOT_PYTHON)
		py_reader_free((struct py_reader *)(uintptr_t)val);
}

void py_stack_free(struct py_stack *s)
{
	if (!s)
		return;
	u64map_each(&s->readers, free_reader, NULL);
	u64map_release(&s->readers);
	u64map_release(&s->given);
	free(s);
}

/* Whether process pid was looked at, and then its reader in *r (NULL
 * when it is no CPython recce has a layout for). */
static int looked_at(const struct py_stack *s, pid_t pid, struct py_reader **r)
{
	uint64_t v;

	if (!u64map_get(&s->readers, (uint64_t)pid, &v))
		return 0;
	*r = v == NOT_PYTHON ? NULL : (struct py_reader *)(uintptr_t)v;
	return 1;
}

/* The reader of process pid, opened the first time it is asked for. */
static struct py_reader *open_reader(struct py_stack *s, pid_t pid)
{
	struct py_reader *r = NULL;
	struct py_chain c;

	if (looked_at(s, pid, &r))
		return r;
	if (procs_scan(s->procs, pid) == 0 &&
	    py_reader_open(s->procs, procs_symbolizer(s->procs), pid, &r) == 0 &&
	    py_reader_chain(r, &c) == 0 &&
	    u64map_put(&s->readers, (uint64_t)pid, (uint64_t)(uintptr_t)r) == 0)
		return r;
	py_reader_free(r);
	u64map_put(&s->readers, (uint64_t)pid, NOT_PYTHON);
	return NULL;
}

int py_stack_is_python(struct py_stack *s, pid_t pid)
{
	return open_reader(s, pid) != NULL;
}

void py_stack_watch(struct py_stack *s, struct uprobe_set *u, pid_t pid)
{
	struct py_chain c;
	struct py_bpf_layout L;

	if (u64map_get(&s->given, (uint64_t)pid, NULL))
		return;
	u64map_put(&s->given, (uint64_t)pid, 1);
	struct py_reader *r = open_reader(s, pid);
	if (!r || py_reader_chain(r, &c) != 0)
		return;
	py_samples_layout(&c, &L);
	s->off |= uprobe_set_py_process(u, pid, &L) == -EOPNOTSUPP;
}

/* The reader of process pid if it was opened; never opens one (a hit
 * carries frames only of processes py_stack_watch gave the program). */
static struct py_reader *reader_of(const struct py_stack *s, pid_t pid)
{
	struct py_reader *r = NULL;

	looked_at(s, pid, &r);
	return r;
}

/* Frame i of hit h as a caller: 0 and *f, or 1 when it is not shown (a
 * Python call's own, frame 0 with own, or a frame set up that has run
 * nothing). */
static int name_frame(struct py_stack *s, struct py_reader *r, const struct uprobe_hit *h, size_t i,
		      int own, struct tracer_frame *f)
{
	struct py_frame pf;

	if (i == 0 && own)
		return 1;
	int rc = py_samples_frame(r, h->py[i], &pf);
	if (rc > 0)
		return 1;
	s->unread += rc < 0;
	snprintf(f->name, sizeof(f->name), "%s", rc < 0 ? "[unknown Python code]" : pf.name);
	f->file = rc < 0 ? NULL : pf.file;
	f->line = rc < 0 ? 0 : pf.line;
	return 0;
}

/* The frames of h from *g on into out (k of max taken), up to the first
 * that is the outermost of its C call, or with all, every one left. */
static size_t put_group(struct py_stack *s, struct py_reader *r, const struct uprobe_hit *h,
			int own, size_t *g, int all, struct tracer_frame *out, size_t k, size_t max)
{
	while (*g < h->npy) {
		size_t i = (*g)++;
		if (k < max && name_frame(s, r, h, i, own, &out[k]) == 0)
			k++;
		if ((h->py[i][0] & PY_FRAME_ENTRY) && !all)
			break;
	}
	return k;
}

size_t py_stack_callers(struct py_stack *s, const struct uprobe_hit *h, int own,
			const uint64_t *native, size_t n, py_stack_name_fn name, void *arg,
			struct tracer_frame *out, size_t max)
{
	struct py_reader *r = h->py_read && h->npy ? reader_of(s, (pid_t)h->pid) : NULL;
	size_t k = 0, g = 0;

	for (size_t i = 0; i < n && k < max; i++) {
		name(arg, native[i], &out[k]);
		if (r && g < h->npy && py_eval_function(out[k].name)) {
			k = put_group(s, r, h, own, &g, 0, out, k, max);
			continue;
		}
		if (i > 0) /* the probed instruction's frame is not a caller */
			k++;
	}
	return r ? put_group(s, r, h, own, &g, 1, out, k, max) : k;
}

int py_stack_caller(struct py_stack *s, const struct uprobe_hit *h, char *buf, size_t len)
{
	struct py_reader *r = h->py_read ? reader_of(s, (pid_t)h->pid) : NULL;
	struct tracer_frame f;

	for (size_t i = 0; r && i < h->npy; i++)
		if (name_frame(s, r, h, i, 1, &f) == 0) {
			snprintf(buf, len, "%s", f.name);
			return 1;
		}
	return 0;
}

int py_stack_own(struct py_stack *s, const struct uprobe_hit *h, char *buf, size_t len)
{
	struct py_reader *r = h->py_read && h->npy ? reader_of(s, (pid_t)h->pid) : NULL;
	struct py_frame pf;

	if (!r || py_samples_frame(r, h->py[0], &pf) != 0)
		return 0;
	snprintf(buf, len, "%s", pf.name);
	return 1;
}

void py_stack_get_stats(const struct py_stack *s, uint64_t *unread, int *off)
{
	*unread = s->unread;
	*off = s->off;
}
