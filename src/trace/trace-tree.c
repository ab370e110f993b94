/*
 * Call trees from trace events (see trace-tree.h). Each thread keeps the
 * calls it is in; a call's line waits for its end, and a call that ends
 * shown first opens the lines of the calls around it that are not open
 * yet. So a tree is printed in the order the thread ran, with each
 * duration known where it is printed:
 *
 *     # DURATION      TID     FUNCTION
 *                [  4711] | tree:request(i=3) {
 *       1.20 us  [  4711] |   tree:parse(i=3) = 4;
 *      60.31 ms  [  4711] |   tree:slow_io(i=3) = 3;
 *      60.40 ms  [  4711] | } = 6;
 *
 * (the closing line ends with the call's name in a C comment).
 *
 * With a slow threshold, the lines of a thread's tree go to a buffer of
 * its own (open_memstream) from its top call's start to its end; then
 * they are shown, kept among the slowest, or dropped.
 */
#include "trace/trace-tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace-hist.h"
#include "util/array.h"
#include "util/htab.h"
#include "util/term-safe.h"

struct tree_frame {
	struct trace_record call;
	int opened; /* its opening line is printed: its closing line follows */
};

/* Lines a slow tree keeps: past them, it is cut, and says how much. */
#define SLOW_TREE_LINES 200000

struct tree_thread {
	uint32_t pid, tid;
	struct tree_frame *frames;
	size_t depth, cap;
	/* Slow mode: the lines of the tree in flight. */
	FILE *buf;
	char *data;
	size_t len;
	uint64_t lines, cut;
};

/* A slow tree kept for the end. */
struct slow_tree {
	uint64_t ns;
	char *data;
	size_t len;
	char title[160]; /* "tree:request lasted 60.12 ms on thread 4711" */
	uint32_t pid, tid;
	uint64_t end_ns; /* CLOCK_REALTIME */
	char function[sizeof(((struct trace_record *)0)->function)];
	char file[sizeof(((struct trace_arg *)0)->str)]; /* "" if the call had none */
	int file_cut;
};

struct trace_tree {
	struct trace_tree_config cfg;
	struct htab index; /* pid << 32 | tid -> index in threads */
	struct tree_thread *threads;
	size_t n, cap;
	int headed;
	struct trace_tree_counts counts;
	FILE *null; /* slow mode: where a tree's lines past SLOW_TREE_LINES go */
	struct slow_tree *kept;
	size_t nkept;
};

int trace_tree_new(const struct trace_tree_config *cfg, struct trace_tree **out)
{
	struct trace_tree *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->cfg = *cfg;
	htab_init(&t->index);
	if (cfg->slow_ns) {
		t->null = fopen("/dev/null", "we");
		t->kept = calloc(cfg->keep ? cfg->keep : 1, sizeof(*t->kept));
		if (!t->null || !t->kept) {
			trace_tree_free(t);
			return -ENOMEM;
		}
	}
	*out = t;
	return 0;
}

void trace_tree_free(struct trace_tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->threads[i].frames);
		if (t->threads[i].buf)
			fclose(t->threads[i].buf);
		free(t->threads[i].data);
	}
	free(t->threads);
	for (size_t i = 0; i < t->nkept; i++)
		free(t->kept[i].data);
	free(t->kept);
	if (t->null)
		fclose(t->null);
	htab_release(&t->index);
	free(t);
}

void trace_tree_counts(const struct trace_tree *t, struct trace_tree_counts *c)
{
	*c = t->counts;
}

static uint64_t thread_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

static struct tree_thread *thread_of(struct trace_tree *t, uint32_t pid, uint32_t tid, int add)
{
	struct htab_slot *s = htab_find(&t->index, thread_key(pid, tid), NULL, NULL);

	if (s)
		return &t->threads[s->val];
	if (!add)
		return NULL;
	void *grown = array_reserve(t->threads, &t->cap, t->n + 1, sizeof(*t->threads));
	if (!grown)
		return NULL;
	t->threads = grown;
	if (!htab_add(&t->index, thread_key(pid, tid), t->n))
		return NULL;
	struct tree_thread *th = &t->threads[t->n++];
	memset(th, 0, sizeof(*th));
	th->pid = pid;
	th->tid = tid;
	return th;
}

/* The column heads, once, before the first line shown. */
static void head(struct trace_tree *t)
{
	if (!t->headed) {
		fputs("# DURATION      TID     FUNCTION\n", t->cfg.out);
		t->headed = 1;
	}
}

/* Where th's next line goes: the output, or in slow mode its tree's
 * buffer (nowhere once the tree is too long to keep). */
static FILE *out_of(struct trace_tree *t, struct tree_thread *th)
{
	if (!th->buf) {
		head(t);
		return t->cfg.out;
	}
	if (th->lines++ < SLOW_TREE_LINES)
		return th->buf;
	th->cut++;
	return t->null;
}

/* The columns before the tree: a call's duration, if this line has one,
 * and its thread; then the indent of depth d (1: none). */
static void line_start(FILE *out, const struct trace_record *ended, uint32_t tid, size_t d)
{
	char dur[32] = "", line[64];
	size_t n = 0;

	/* "%11s  [%6u] | " and the indent, without printf: a line a call. */
	if (ended && !(ended->flags & (TRACE_RECORD_UNWOUND | TRACE_RECORD_LOST)))
		trace_format_duration(dur, sizeof(dur), ended->duration_ns);
	size_t dl = strlen(dur);
	for (; n + dl < 11; n++)
		line[n] = ' ';
	memcpy(line + n, dur, dl);
	n += dl;
	memcpy(line + n, "  [", 3);
	n += 3;
	char id[12];
	size_t il = 0;
	do
		id[il++] = (char)('0' + tid % 10);
	while ((tid /= 10) && il < sizeof(id));
	for (size_t pad = il; pad < 6; pad++)
		line[n++] = ' ';
	while (il)
		line[n++] = id[--il];
	memcpy(line + n, "] | ", 4);
	n += 4;
	fwrite(line, 1, n, out);
	for (size_t i = 1; i < d; i++)
		fputs("  ", out);
}

/* " = VALUE", or what became of the call, after the call or its "}". */
static void print_ending(FILE *out, const struct trace_record *ret)
{
	char val[sizeof(ret->ret_text) + 64];
	const char *end = trace_record_ending(ret, val, sizeof(val));

	if (ret->flags &
	    (TRACE_RECORD_OPEN | TRACE_RECORD_LOST | TRACE_RECORD_UNWOUND | TRACE_RECORD_TAIL)) {
		fputc(' ', out);
		term_fputs(end, out);
	} else if (strcmp(end, "ok") != 0) {
		fputs(" = ", out);
		term_fputs(end, out);
	}
}

static int depth_shown(const struct trace_tree *t, size_t d)
{
	return !t->cfg.max_depth || d <= t->cfg.max_depth;
}

/* Whether call ended by ret, at depth d, is long enough to be shown on
 * its own (in slow mode, a top call always is, in its buffer). */
static int long_enough(const struct trace_tree *t, const struct trace_record *ret, size_t d)
{
	if (!t->cfg.min_ns || (t->cfg.slow_ns && d == 1))
		return 1;
	if (ret->flags & (TRACE_RECORD_UNWOUND | TRACE_RECORD_LOST))
		return 0; /* how long it ran is not known */
	return ret->duration_ns >= t->cfg.min_ns;
}

/* The end of frame i of th (the top one), by ret. */
static void end_frame(struct trace_tree *t, struct tree_thread *th, size_t i,
		      const struct trace_record *ret)
{
	struct tree_frame *f = &th->frames[i];
	FILE *out;

	if (f->opened) {
		out = out_of(t, th);
		line_start(out, ret, th->tid, i + 1);
		fputc('}', out);
		print_ending(out, ret);
		fputs("; /* ", out);
		term_fputs(f->call.function, out);
		fputs(" */\n", out);
		t->counts.shown++;
		return;
	}
	if (!depth_shown(t, i + 1) || !long_enough(t, ret, i + 1)) {
		t->counts.hidden++;
		return;
	}
	for (size_t j = 0; j < i; j++) {
		if (th->frames[j].opened)
			continue;
		out = out_of(t, th);
		line_start(out, NULL, th->tid, j + 1);
		trace_record_print_call(&th->frames[j].call, out);
		fputs(" {\n", out);
		th->frames[j].opened = 1;
	}
	out = out_of(t, th);
	line_start(out, ret, th->tid, i + 1);
	trace_record_print_call(&f->call, out);
	print_ending(out, ret);
	fputs(";\n", out);
	t->counts.shown++;
}

/* Slow mode: a tree begins with the top call of its thread. */
static int begin_tree(struct tree_thread *th)
{
	th->data = NULL;
	th->len = 0;
	th->lines = th->cut = 0;
	th->buf = open_memstream(&th->data, &th->len);
	return th->buf ? 0 : -ENOMEM;
}

/* Shows a slow tree: a line that says which call and how long, then its
 * lines. */
static void show_tree(struct trace_tree *t, const struct slow_tree *s)
{
	head(t);
	fputs("# ", t->cfg.out);
	term_fputs(s->title, t->cfg.out);
	fputc('\n', t->cfg.out);
	fwrite(s->data, 1, s->len, t->cfg.out);
	t->counts.slow_shown++;
	if (t->cfg.shown) {
		struct trace_tree_slow info = {s->pid,	   s->tid,	s->end_ns - s->ns,
					       s->end_ns, s->function, s->file[0] ? s->file : NULL,
					       s->file_cut, s->title};
		t->cfg.shown(t->cfg.shown_arg, &info);
	}
}

/* Keeps slow tree s among the slowest keep, the fastest of them going if
 * there is no room. Takes s's data. */
static void keep_tree(struct trace_tree *t, const struct slow_tree *s)
{
	size_t at = t->nkept;

	if (t->nkept == t->cfg.keep) {
		at = 0;
		for (size_t i = 1; i < t->nkept; i++)
			if (t->kept[i].ns < t->kept[at].ns)
				at = i;
		if (t->kept[at].ns >= s->ns) {
			free(s->data);
			return;
		}
		free(t->kept[at].data);
	} else {
		t->nkept++;
	}
	t->kept[at] = *s;
}

/* Slow mode: the top call of th's tree ended by ret: its tree is shown,
 * kept or dropped. */
static void end_tree(struct trace_tree *t, struct tree_thread *th, const struct trace_record *ret)
{
	if (th->cut)
		fprintf(th->buf, "# ... %llu more lines of this call not kept\n",
			(unsigned long long)th->cut);
	fclose(th->buf);
	th->buf = NULL;
	t->counts.trees++;
	int known = !(ret->flags & (TRACE_RECORD_UNWOUND | TRACE_RECORD_LOST));
	if (!known || ret->duration_ns < t->cfg.slow_ns || !th->data) {
		free(th->data);
		th->data = NULL;
		return;
	}
	t->counts.slow++;
	struct slow_tree s = {.ns = ret->duration_ns,
			      .data = th->data,
			      .len = th->len,
			      .pid = th->pid,
			      .tid = th->tid,
			      .end_ns = ret->time_ns};
	trace_copy_str(s.function, sizeof(s.function), ret->function);
	/* A Python call names its file: its function is known by it. */
	const char *file = trace_record_py_file(&th->frames[0].call, &s.file_cut);
	if (file)
		trace_copy_str(s.file, sizeof(s.file), file);
	char d[32];
	trace_format_duration(d, sizeof(d), ret->duration_ns);
	snprintf(s.title, sizeof(s.title), "%s lasted %s%s on thread %u", ret->function, d,
		 ret->flags & TRACE_RECORD_OPEN ? " so far" : "", (unsigned)th->tid);
	th->data = NULL;
	if (t->cfg.keep) {
		keep_tree(t, &s);
	} else {
		show_tree(t, &s);
		free(s.data);
	}
}

static int slower(const void *a, const void *b)
{
	const struct slow_tree *x = a, *y = b;

	return (x->ns < y->ns) - (x->ns > y->ns);
}

void trace_tree_flush(struct trace_tree *t)
{
	if (!t->nkept)
		return;
	qsort(t->kept, t->nkept, sizeof(*t->kept), slower);
	for (size_t i = 0; i < t->nkept; i++) {
		show_tree(t, &t->kept[i]);
		free(t->kept[i].data);
	}
	t->nkept = 0;
}

/* The frame a return ends: the innermost open call of its function on its
 * thread; or, for a goroutine that moved to another thread, the innermost
 * on another thread of its process, if there it is the last call. */
static struct tree_thread *owner_of(struct trace_tree *t, const struct trace_record *r, size_t *at)
{
	struct tree_thread *th = thread_of(t, r->pid, r->tid, 0);

	for (size_t i = th ? th->depth : 0; i > 0; i--)
		if (strcmp(th->frames[i - 1].call.function, r->function) == 0) {
			*at = i - 1;
			return th;
		}
	for (size_t k = 0; k < t->n; k++) {
		struct tree_thread *o = &t->threads[k];
		if (o->pid == r->pid && o->depth &&
		    strcmp(o->frames[o->depth - 1].call.function, r->function) == 0) {
			*at = o->depth - 1;
			return o;
		}
	}
	return NULL;
}

int trace_tree_add(struct trace_tree *t, const struct trace_record *r)
{
	if (r->kind == TRACE_CALL) {
		struct tree_thread *th = thread_of(t, r->pid, r->tid, 1);
		if (!th)
			return -ENOMEM;
		void *grown =
		    array_reserve(th->frames, &th->cap, th->depth + 1, sizeof(*th->frames));
		if (!grown)
			return -ENOMEM;
		th->frames = grown;
		if (t->cfg.slow_ns && !th->depth && begin_tree(th) < 0)
			return -ENOMEM;
		th->frames[th->depth].call = *r;
		th->frames[th->depth].opened = 0;
		th->depth++;
		return 0;
	}
	size_t at;
	struct tree_thread *th = owner_of(t, r, &at);
	if (!th)
		return 0; /* called before the trace began */
	/* Calls above it whose end never came: only what was seen is shown. */
	while (th->depth > at + 1) {
		struct tree_frame *f = &th->frames[--th->depth];
		if (!f->opened) {
			t->counts.hidden++;
			continue;
		}
		FILE *out = out_of(t, th);
		line_start(out, NULL, th->tid, th->depth + 1);
		fputs("} (its end not seen); /* ", out);
		term_fputs(f->call.function, out);
		fputs(" */\n", out);
		t->counts.shown++;
	}
	end_frame(t, th, at, r);
	th->depth = at;
	if (th->buf && !at)
		end_tree(t, th, r);
	return 0;
}
