/*
 * recce dump: every thread's stack of a running process, now, as pstack
 * and py-spy dump print them: the engine (dump/stacks-now.h) takes them,
 * this file prints them as text or JSON, a CPython thread's Python frames
 * in place of the interpreter's native frame that ran them.
 * docs/recce-dump.md is its --help.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/builtin.h"
#include "cli/dirs.h"
#include "cli/inject-messages.h"
#include "cli/options.h"
#include "cli/usage.h"
#include "dump/stacks-now.h"
#include "proc/proc-maps.h"
#include "symbols/symbolize.h"
#include "util/json-out.h"
#include "util/term-safe.h"

struct dump_args {
	pid_t *pids;
	size_t npids;
	int json;
};

static void set_pid(void *ctx, const char *arg, const struct opt *o)
{
	struct dump_args *a = ctx;

	(void)o;
	parse_pid_list("dump", "-p", arg, &a->pids, &a->npids);
}

static const struct opt dump_options[] = {
    OPT_CALL_('p', "pid", "PID", set_pid, 0, "the process whose threads to show"),
    OPT_FLAG_(0, "json", struct dump_args, json, "one JSON object instead of text"),
    OPT_END_(),
};

/* The object a frame is in, by its base name, or "?". */
static const char *object_of(const struct frame_name *f)
{
	const char *p = f->map && f->map->path ? f->map->path : "?";
	const char *slash = strrchr(p, '/');

	return slash ? slash + 1 : p;
}

static void print_frame(const struct frame_name *f, uint64_t pc, int *no)
{
	char buf[512];

	if (f->kind != FRAME_SYMBOL) {
		frame_name_format(f, buf, sizeof(buf));
		printf("    #%-3d 0x%016" PRIx64 " ", (*no)++, pc);
		term_fputs(buf, stdout);
		putchar('\n');
		return;
	}
	for (int i = 0; i < f->nframes; i++) {
		const struct sym_frame *s = &f->frames[i];
		if (i == 0)
			printf("    #%-3d 0x%016" PRIx64 " ", (*no)++, pc);
		else
			printf("    #%-3d %18s ", (*no)++, "(inlined)");
		term_fputs(s->function, stdout);
		if (s->file) {
			fputs(" (", stdout);
			term_fputs(s->file, stdout);
			printf(":%d)", s->line);
		} else {
			fputs(" (", stdout);
			term_fputs(object_of(f), stdout);
			putchar(')');
		}
		putchar('\n');
	}
}

/* A thread's Python frames, taken in groups as its native frames are
 * named: the frames one C call of the interpreter ran, innermost first. */
struct py_cursor {
	const struct py_thread *py;
	size_t next;
};

/* The next group's end (one past its entry frame), or next when none. */
static size_t py_group_end(const struct py_cursor *c)
{
	size_t k = c->next;

	if (!c->py)
		return k;
	while (k < c->py->n && !c->py->frames[k].entry)
		k++;
	return k < c->py->n ? k + 1 : k;
}

static void print_py_frame(const struct py_frame *f, int *no)
{
	printf("    #%-3d %18s ", (*no)++, "(python)");
	term_fputs(f->name, stdout);
	fputs(" (", stdout);
	term_fputs(f->file, stdout);
	if (f->line > 0)
		printf(":%d", f->line);
	fputs(")\n", stdout);
}

/* Prints the next group of c's frames; returns whether there was one. */
static int print_py_group(struct py_cursor *c, int *no)
{
	size_t end = py_group_end(c);

	if (end == c->next)
		return 0;
	for (; c->next < end; c->next++)
		print_py_frame(&c->py->frames[c->next], no);
	return 1;
}

/* The first line: the process, and what was read of its Python. */
static void say_python(const struct stacks_now *s)
{
	if (!s->py_version[0] && !s->py)
		return;
	if (s->py_err == -ENOTSUP)
		printf("CPython %s: recce reads the Python frames of 3.11 to 3.13 only; native "
		       "frames shown\n",
		       s->py_version[0] ? s->py_version : "of an unknown version");
	else if (s->py_err)
		printf("CPython %s: its threads could not be read (not started, or ending); "
		       "native frames shown\n",
		       s->py_version);
	else
		printf("CPython %s: %zu Python thread%s, their frames in place of the "
		       "interpreter's\n",
		       s->py_version, s->npy, s->npy == 1 ? "" : "s");
}

static const char *state_words(char state)
{
	switch (state) {
	case 'R':
		return "running";
	case 'S':
		return "sleeping";
	case 'D':
		return "in uninterruptible wait";
	case 'T':
		return "stopped";
	case 't':
		return "stopped by a debugger";
	case 'Z':
		return "a zombie";
	default:
		return "in state ?";
	}
}

static void print_text(struct stacks_now *s)
{
	printf("process %d: %zu thread%s, stopped %.2f ms to read them\n", (int)s->pid, s->n,
	       s->n == 1 ? "" : "s", (double)s->stopped_ns / 1e6);
	say_python(s);
	for (size_t i = 0; i < s->n; i++) {
		struct now_thread *t = &s->t[i];
		struct py_cursor py = {stacks_now_python(s, t->tid), 0};
		char name[64];
		printf("\nthread %d (%s", (int)t->tid, term_safe(t->comm, name, sizeof(name)));
		if (py.py && py.py->name[0])
			printf(", Python thread \"%s\"", term_safe(py.py->name, name, sizeof(name)));
		printf("), %s", state_words(t->state));
		if (t->wchan[0]) {
			fputs(" in ", stdout);
			term_fputs(t->wchan, stdout);
		}
		if (py.py && py.py->holds_gil)
			fputs(", holding the GIL", stdout);
		else if (t->waits_gil)
			fputs(", waiting for the GIL", stdout);
		fputs(":\n", stdout);
		for (size_t k = 0; k < t->nkernel; k++) {
			fputs("    [kernel] ", stdout);
			term_fputs(t->kernel[k], stdout);
			putchar('\n');
		}
		if (t->unread) {
			printf("    [its stack could not be read: it ended, or would not stop]\n");
			continue;
		}
		int no = 0;
		for (size_t k = 0; k < t->npcs; k++) {
			struct frame_name f;
			stacks_now_name(s, t->pcs[k], k > 0, &f);
			if (!stacks_now_runs_python(&f) || !print_py_group(&py, &no))
				print_frame(&f, t->pcs[k], &no);
		}
		if (!t->ended)
			printf("    [the walk ended here: no unwind information or frame pointer "
			       "further]\n");
		if (py.py && py.next < py.py->n) {
			printf("    [Python frames the native walk did not reach:]\n");
			while (print_py_group(&py, &no))
				;
		}
		if (py.py && py.py->cut)
			printf("    [the Python frames end here: the next could not be read, or "
			       "repeats one above]\n");
	}
}

static void json_py_group(struct json_out *j, struct py_cursor *c)
{
	for (size_t end = py_group_end(c); c->next < end; c->next++) {
		const struct py_frame *f = &c->py->frames[c->next];
		json_object(j);
		json_member_string(j, "function", f->name);
		json_member_string(j, "file", f->file);
		if (f->line > 0)
			json_member_uint(j, "line", (uint64_t)f->line);
		else
			json_member_raw(j, "line", "null");
		json_member_raw(j, "python", "true");
		json_end(j);
	}
}

static void json_frames(struct json_out *j, struct stacks_now *s, const struct now_thread *t)
{
	char buf[512], addr[32];
	struct py_cursor py = {stacks_now_python(s, t->tid), 0};

	json_key(j, "frames");
	json_array(j);
	for (size_t k = 0; k < t->npcs; k++) {
		struct frame_name f;
		stacks_now_name(s, t->pcs[k], k > 0, &f);
		if (stacks_now_runs_python(&f) && py_group_end(&py) > py.next) {
			json_py_group(j, &py);
			continue;
		}
		snprintf(addr, sizeof(addr), "0x%" PRIx64, t->pcs[k]);
		int n = f.kind == FRAME_SYMBOL ? f.nframes : 1;
		for (int i = 0; i < n; i++) {
			json_object(j);
			json_member_string(j, "address", addr);
			if (f.kind == FRAME_SYMBOL) {
				json_member_string(j, "function", f.frames[i].function);
				if (f.frames[i].file) {
					json_member_string(j, "file", f.frames[i].file);
					json_member_uint(j, "line", (uint64_t)f.frames[i].line);
				}
				json_member_raw(j, "inlined", i > 0 ? "true" : "false");
			} else {
				frame_name_format(&f, buf, sizeof(buf));
				json_member_string(j, "function", buf);
			}
			json_member_string(j, "object", object_of(&f));
			json_end(j);
		}
	}
	while (py.py && py.next < py.py->n)
		json_py_group(j, &py);
	json_end(j);
	if (py.py) {
		if (py.py->name[0])
			json_member_string(j, "python_thread", py.py->name);
		json_member_raw(j, "holds_gil", py.py->holds_gil ? "true" : "false");
		json_member_raw(j, "waits_gil", t->waits_gil ? "true" : "false");
		json_member_raw(j, "python_complete", py.py->cut ? "false" : "true");
	}
}

static void print_json(struct stacks_now *s)
{
	struct json_out j;
	char st[2] = "";

	json_out_init(&j, stdout);
	json_object(&j);
	json_member_uint(&j, "pid", (uint64_t)s->pid);
	json_member_fixed(&j, "stopped_ms", (double)s->stopped_ns / 1e6, 3);
	if (s->py_version[0] || s->py) {
		json_key(&j, "python");
		json_object(&j);
		json_member_string(&j, "version", s->py_version);
		json_member_raw(&j, "frames_read", s->py_err ? "false" : "true");
		json_end(&j);
	}
	json_key(&j, "threads");
	json_array(&j);
	for (size_t i = 0; i < s->n; i++) {
		const struct now_thread *t = &s->t[i];
		json_object(&j);
		json_member_uint(&j, "tid", (uint64_t)t->tid);
		json_member_string(&j, "name", t->comm);
		st[0] = t->state;
		json_member_string(&j, "state", st);
		if (t->wchan[0])
			json_member_string(&j, "wchan", t->wchan);
		json_key(&j, "kernel");
		json_array(&j);
		for (size_t k = 0; k < t->nkernel; k++)
			json_string(&j, t->kernel[k]);
		json_end(&j);
		if (t->unread) {
			json_member_raw(&j, "frames", "null");
		} else {
			json_frames(&j, s, t);
			json_member_raw(&j, "complete", t->ended ? "true" : "false");
		}
		json_end(&j);
	}
	json_end(&j);
	json_end(&j);
	putchar('\n');
}

int cmd_dump(int argc, char **argv)
{
	struct dump_args a = {0};
	struct stacks_now s;

	int at = options_parse("dump", dump_options, 0, argc, argv, &a, NULL);
	if (at < argc)
		usage_die("dump", "unexpected argument '%s': give the process with -p PID",
			  argv[at]);
	if (a.npids != 1)
		usage_die("dump", "give one process: recce dump -p PID");
	check_pids_exist(a.pids, a.npids);
	/* Names from the tables kept per build-id: a binary's compressed
	 * DWARF is not read again at each dump. */
	struct symbolizer *sym = symbolizer_new();
	if (!sym || dirs_use_cache(sym, TABLE_BUILD_MAX) < 0)
		die("out of memory");
	int err = stacks_now_take(&s, a.pids[0], sym);
	if (err == -ENOMEM)
		die("out of memory");
	if (err)
		inject_die_errno(a.pids[0], err);
	if (a.json)
		print_json(&s);
	else
		print_text(&s);
	stacks_now_release(&s);
	symbolizer_free(sym);
	free(a.pids);
	return 0;
}
