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
 *      60.31 ms  [  4711] |   tree:slow_io(i=3);
 *      60.40 ms  [  4711] | } = 6;
 *
 * (the closing line ends with the call's name in a C comment).
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

struct tree_thread {
	uint32_t pid, tid;
	struct tree_frame *frames;
	size_t depth, cap;
};

struct trace_tree {
	struct trace_tree_config cfg;
	struct htab index; /* pid << 32 | tid -> index in threads */
	struct tree_thread *threads;
	size_t n, cap;
	int headed;
	uint64_t shown, hidden;
};

int trace_tree_new(const struct trace_tree_config *cfg, struct trace_tree **out)
{
	struct trace_tree *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->cfg = *cfg;
	htab_init(&t->index);
	*out = t;
	return 0;
}

void trace_tree_free(struct trace_tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->threads[i].frames);
	free(t->threads);
	htab_release(&t->index);
	free(t);
}

void trace_tree_counts(const struct trace_tree *t, uint64_t *shown, uint64_t *hidden)
{
	*shown = t->shown;
	*hidden = t->hidden;
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

/* The columns before the tree: a call's duration, if this line has one,
 * and its thread; then the indent of depth d (1: none). */
static void line_start(struct trace_tree *t, const struct trace_record *ended, uint32_t tid,
		       size_t d)
{
	FILE *out = t->cfg.out;
	char dur[32] = "";

	if (!t->headed) {
		fputs("# DURATION      TID     FUNCTION\n", out);
		t->headed = 1;
	}
	if (ended && !(ended->flags & (TRACE_RECORD_UNWOUND | TRACE_RECORD_LOST)))
		trace_format_duration(dur, sizeof(dur), ended->duration_ns);
	fprintf(out, "%11s  [%6u] | %*s", dur, (unsigned)tid, (int)(2 * (d - 1)), "");
}

/* " = VALUE", or what became of the call, after the call or its "}". */
static void print_ending(struct trace_tree *t, const struct trace_record *ret)
{
	char val[sizeof(ret->ret_text) + 64];
	const char *end = trace_record_ending(ret, val, sizeof(val));

	if (ret->flags &
	    (TRACE_RECORD_OPEN | TRACE_RECORD_LOST | TRACE_RECORD_UNWOUND | TRACE_RECORD_TAIL)) {
		fputc(' ', t->cfg.out);
		term_fputs(end, t->cfg.out);
	} else if (strcmp(end, "ok") != 0) {
		fputs(" = ", t->cfg.out);
		term_fputs(end, t->cfg.out);
	}
}

static int depth_shown(const struct trace_tree *t, size_t d)
{
	return !t->cfg.max_depth || d <= t->cfg.max_depth;
}

/* Whether call ended by ret is long enough to be shown on its own. */
static int long_enough(const struct trace_tree *t, const struct trace_record *ret)
{
	if (!t->cfg.min_ns)
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
	FILE *out = t->cfg.out;

	if (f->opened) {
		line_start(t, ret, th->tid, i + 1);
		fputc('}', out);
		print_ending(t, ret);
		fputs("; /* ", out);
		term_fputs(f->call.function, out);
		fputs(" */\n", out);
		t->shown++;
		return;
	}
	if (!depth_shown(t, i + 1) || !long_enough(t, ret)) {
		t->hidden++;
		return;
	}
	for (size_t j = 0; j < i; j++) {
		if (th->frames[j].opened)
			continue;
		line_start(t, NULL, th->tid, j + 1);
		trace_record_print_call(&th->frames[j].call, out);
		fputs(" {\n", out);
		th->frames[j].opened = 1;
	}
	line_start(t, ret, th->tid, i + 1);
	trace_record_print_call(&f->call, out);
	print_ending(t, ret);
	fputs(";\n", out);
	t->shown++;
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
			t->hidden++;
			continue;
		}
		line_start(t, NULL, th->tid, th->depth + 1);
		fputs("} (its end not seen); /* ", t->cfg.out);
		term_fputs(f->call.function, t->cfg.out);
		fputs(" */\n", t->cfg.out);
		t->shown++;
	}
	end_frame(t, th, at, r);
	th->depth = at;
	return 0;
}
