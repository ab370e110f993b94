/*
 * Every thread's stack of a running process, now (see stacks-now.h).
 */
#include "dump/stacks-now.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "inject/stop-all.h"
#include "inject/target-mem.h"
#include "proc/proc-maps.h"
#include "proc/procstat.h"
#include "proc/py-names.h"
#include "proc/unwind.h"
#include "symbols/gopclntab.h"
#include "symbols/symbolize.h"

#define STACK_COPY (64u << 10) /* bytes of stack copied from the stack pointer */
#define STOP_MS	   3000

/* A file of /proc/PID/task/TID, whole (small), into buf; its length or -1. */
static ssize_t task_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t cap)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = 0;
	return (ssize_t)n;
}

/* What /proc says of the thread while it runs on: its state, its name,
 * where it waits, its kernel stack ("[<0>] futex_wait_queue+0x60/0x90"
 * lines, root only). */
static void read_kernel_side(struct stacks_now *s, struct procstat_reader *r, struct now_thread *t)
{
	struct procstat_task task;
	char buf[4096];

	if (procstat_read_task(r, s->pid, t->tid, &task) == 0) {
		snprintf(t->comm, sizeof(t->comm), "%s", task.comm);
		t->state = task.state;
	}
	if (task_file(s->pid, t->tid, "wchan", buf, sizeof(buf)) > 0 && strcmp(buf, "0") != 0)
		snprintf(t->wchan, sizeof(t->wchan), "%.63s", buf);
	if (task_file(s->pid, t->tid, "stack", buf, sizeof(buf)) <= 0)
		return;
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line && t->nkernel < STACKS_NOW_KERNEL;
	     line = strtok_r(NULL, "\n", &save)) {
		char *fn = strstr(line, "] ");
		if (!fn)
			continue;
		fn += 2;
		char *plus = strchr(fn, '+');
		if (plus)
			*plus = 0;
		if ((t->kernel[t->nkernel] = strdup(fn)))
			t->nkernel++;
	}
}

/* The registers in the order of PERF_EVENTS_REGS_MASK (proc/unwind.h):
 * AX BX CX DX SI DI BP SP IP, then R8..R15. */
static void perf_regs(const struct user_regs_struct *r, uint64_t out[17])
{
	const uint64_t v[17] = {r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi,
				r->rbp, r->rsp, r->rip, r->r8,	r->r9,	r->r10,
				r->r11, r->r12, r->r13, r->r14, r->r15};
	memcpy(out, v, sizeof(v));
}

/* A copy of the stack from sp: as much of STACK_COPY as is mapped. */
struct stack_copy {
	uint64_t sp, regs[17], bp;
	uint8_t *bytes;
	size_t len;
};

static void copy_stack(pid_t pid, const struct stopped_thread *st, struct stack_copy *c)
{
	perf_regs(&st->regs, c->regs);
	c->sp = st->regs.rsp;
	c->bp = st->regs.rbp;
	c->len = 0;
	c->bytes = malloc(STACK_COPY);
	if (!c->bytes)
		return;
	/* Page by page, to the end of the mapping. */
	uint64_t at = c->sp;
	while (c->len < STACK_COPY) {
		size_t chunk = 4096 - (size_t)(at & 4095);
		if (chunk > STACK_COPY - c->len)
			chunk = STACK_COPY - c->len;
		if (tmem_read(pid, at, c->bytes + c->len, chunk) < 0)
			break;
		c->len += chunk;
		at += chunk;
	}
}

/* Frame pointers from where the call frame information ended: each frame
 * above the last, in the copy, its saved rbp then its return address. */
static void fp_walk(struct now_thread *t, const struct stack_copy *c)
{
	/* Only from the leaf: where CFI stopped midway, the rbp of that
	 * frame is not known. */
	if (t->npcs != 1)
		return;
	t->npcs += unwind_copy_fp(c->bp, c->sp, c->bytes, c->len, t->pcs + t->npcs,
				  STACKS_NOW_FRAMES - t->npcs, &t->ended);
}

/* A Go thread's stack whose walk did not end ends where Go's own
 * traceback ends it: at the first function a goroutine or thread starts
 * in, or that switched to the thread's own stack (mcall, morestack), past
 * which no frame is the goroutine's; its walk then is whole. (A walk that
 * ended is not named twice: dump's budget is for many threads.) */
static void end_at_go_top(struct stacks_now *s, struct now_thread *t)
{
	for (size_t k = 0; k < t->npcs; k++) {
		struct frame_name f;
		stacks_now_name(s, t->pcs[k], k > 0, &f);
		if (f.kind == FRAME_SYMBOL && f.nframes > 0 &&
		    gopclntab_stack_top(f.frames[f.nframes - 1].function)) {
			t->npcs = k + 1;
			t->ended = 1;
			return;
		}
	}
}

int stacks_now_take(struct stacks_now *s, pid_t pid, struct symbolizer *sym)
{
	struct procstat_reader r;
	struct stop_all sa;
	const pid_t *ids;
	int err;

	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->sym = sym;
	s->procs = s->sym ? procs_new(s->sym) : NULL;
	s->namer = s->procs ? frame_namer_new(s->sym, s->procs) : NULL;
	s->unwinder = s->procs ? unwinder_new(s->procs, 0) : NULL;
	if (!s->unwinder)
		return -ENOMEM;
	if ((err = procs_scan(s->procs, pid)) < 0)
		return err;
	struct py_reader *py = NULL;
	err = py_reader_open(s->procs, s->sym, pid, &py);
	if (err == -ENOMEM)
		return err;
	if (py)
		snprintf(s->py_version, sizeof(s->py_version), "%s", py_reader_version(py));
	if ((err = procstat_reader_init(&r, NULL)) < 0) {
		py_reader_free(py);
		return err;
	}
	ssize_t n = procstat_list_tasks(&r, pid, &ids);
	if (n <= 0) {
		procstat_reader_release(&r);
		py_reader_free(py);
		return -ESRCH;
	}
	s->t = calloc((size_t)n, sizeof(*s->t));
	if (!s->t) {
		procstat_reader_release(&r);
		py_reader_free(py);
		return -ENOMEM;
	}
	/* Where each waits, before the stop changes it. */
	s->n = (size_t)n;
	for (size_t i = 0; i < s->n; i++) {
		s->t[i].tid = ids[i];
		s->t[i].unread = 1;
		read_kernel_side(s, &r, &s->t[i]);
	}
	procstat_reader_release(&r);
	if ((err = stop_all(&sa, pid, STOP_MS, STOP_ALL_TAKE_STOPPED)) < 0) {
		py_reader_free(py);
		return err;
	}
	/* The copies while stopped, and the Python frames, which the
	 * threads would change; the unwinding after the release. */
	struct stack_copy *copies = calloc(sa.n ? sa.n : 1, sizeof(*copies));
	for (size_t i = 0; copies && i < sa.n; i++)
		copy_stack(pid, &sa.t[i], &copies[i]);
	s->py_err = py ? py_reader_threads(py, s->n + 8, &s->py, &s->npy) : 0;
	/* A thread in futex(2) has the word's address in its first
	 * argument's register still. */
	for (size_t i = 0; !s->py_err && i < sa.n; i++)
		for (size_t k = 0; k < s->n; k++)
			if (s->t[k].tid == sa.t[i].tid && sa.t[i].regs.orig_rax == SYS_futex)
				s->t[k].waits_gil = py_reader_gil_futex(py, sa.t[i].regs.rdi);
	size_t stopped = sa.n;
	pid_t *tids = malloc((stopped ? stopped : 1) * sizeof(*tids));
	for (size_t i = 0; tids && i < stopped; i++)
		tids[i] = sa.t[i].tid;
	s->stopped_ns = stop_all_release(&sa);
	/* The names stay with the frames: the reader goes with the struct. */
	s->pyr = py;
	if (!copies || !tids) {
		for (size_t i = 0; copies && i < stopped; i++)
			free(copies[i].bytes);
		free(copies);
		free(tids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < stopped; i++) {
		struct stack_copy *c = &copies[i];
		struct now_thread *t = NULL;
		for (size_t k = 0; k < s->n && !t; k++)
			if (s->t[k].tid == tids[i])
				t = &s->t[k];
		if (t && c->bytes) {
			int ended = 0;
			int got = unwinder_unwind(s->unwinder, pid, t->tid, c->regs, c->bytes,
						  c->len, t->pcs, STACKS_NOW_FRAMES, &ended);
			t->npcs = got > 0 ? (size_t)got : 0;
			t->ended = ended;
			if (!ended) {
				fp_walk(t, c);
				end_at_go_top(s, t);
			}
			t->unread = 0;
		}
		free(c->bytes);
	}
	free(copies);
	free(tids);
	return 0;
}

void stacks_now_name(struct stacks_now *s, uint64_t pc, int nonleaf, struct frame_name *out)
{
	frame_namer_user(s->namer, s->pid, pc, nonleaf, out);
}

const struct py_thread *stacks_now_python(const struct stacks_now *s, pid_t tid)
{
	for (size_t i = 0; i < s->npy; i++)
		if (s->py[i].tid == tid)
			return &s->py[i];
	return NULL;
}

int stacks_now_runs_python(const struct frame_name *f)
{
	return f->kind == FRAME_SYMBOL && f->nframes > 0 &&
	       py_eval_function(f->frames[f->nframes - 1].function);
}

void stacks_now_release(struct stacks_now *s)
{
	for (size_t i = 0; i < s->n; i++)
		for (size_t k = 0; k < s->t[i].nkernel; k++)
			free(s->t[i].kernel[k]);
	free(s->t);
	free(s->py);
	py_reader_free(s->pyr);
	unwinder_free(s->unwinder);
	frame_namer_free(s->namer);
	procs_free(s->procs);
	memset(s, 0, sizeof(*s));
}
