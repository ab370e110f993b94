/*
 * System-wide cpu-clock sampling for `recce top` (see top-sample.h): the
 * per-CPU rings of perf-events.c with one pid -1 event per CPU, samples
 * kept by pid (in the kernel with -p, by pick-bpf.h's program or the
 * Python frame program, else here), and a per-process cache from
 * addresses to function names so that a steady program costs one symbol
 * lookup per distinct address, not one per sample.
 */
#include "top/top-sample.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf/perf-events.h"
#include "perf/pick-bpf.h"
#include "perf/stack-copy.h"
#include "proc/frame-name.h"
#include "proc/proc-maps.h"
#include "proc/py-names.h"
#include "proc/unwind.h"
#include "profile/py-samples.h"
#include "symbols/kallsyms.h"
#include "symbols/symbolize.h"
#include "top/top-model.h"
#include "util/clock.h"
#include "util/strpool.h"
#include "util/u64map.h"

#define KERNEL_START  0xffff800000000000ULL
#define CONTEXT_FLOOR ((uint64_t)-4095) /* PERF_CONTEXT_* markers are above */
#define MAX_INLINE    FRAME_MAX_INLINE
#define MAX_NAMES     (1u << 16) /* cached addresses per process before the cache restarts */
#define MAX_KERNEL    128	 /* kernel frames kept of an unwound sample */
#define MAX_USER      512	 /* user frames unwound: a bad stack cannot loop us */

/* What recce knows of one sampled process. */
struct top_proc {
	pid_t pid;
	int scanned;	     /* its maps were read from /proc */
	struct u64map names; /* address (| 1 for a return address) -> name */
};

struct top_sampler {
	struct top_sampler_config cfg;
	struct perf_events *pe;
	struct symbolizer *sym;
	struct proc_registry *procs;
	struct frame_namer *namer;
	struct unwinder *unwinder; /* with --call-graph auto or dwarf */
	struct stack_copy copy;	   /* the copy its events ask for */
	uint64_t frames[MAX_KERNEL + 1 + MAX_USER];
	struct kallsyms *kallsyms;
	int kallsyms_tried;
	struct u64map kernel_names;
	struct u64map watched; /* pid -> 1; empty when every process is */
	struct u64map by_pid;  /* pid -> struct top_proc * */
	struct strpool names;
	struct top_model *model; /* during top_sampler_read() */
	struct py_samples *py;	 /* Python frames in the samples of CPythons, when loaded */
	struct pick_bpf pick;	 /* -p: the watched processes' samples kept in the kernel */
	struct top_sampler_stats stats;
};

static struct top_proc *proc_of(struct top_sampler *s, pid_t pid);

/* A process read into the registry for the frame reader. */
static void scanned_python(void *arg, pid_t pid)
{
	struct top_proc *p = proc_of(arg, pid);

	if (p)
		p->scanned = 1;
}

/* The CPythons among the watched processes, named to the frame reader
 * before the events open, so that their first samples have their Python
 * frames (without -p, another is looked at its first sample). Returns
 * whether the frame reader is wanted: every process is watched, or one
 * watched is a CPython. */
static int watch_pythons(struct top_sampler *s)
{
	int python = 0;

	if (!s->cfg.npids) {
		py_samples_watch_named(s->py, scanned_python, s);
		return 1;
	}
	for (size_t i = 0; i < s->cfg.npids; i++) {
		struct top_proc *p = proc_of(s, s->cfg.pids[i]);
		if (p && procs_scan(s->procs, p->pid) == 0) {
			p->scanned = 1;
			py_samples_watch(s->py, p->pid);
			python |= py_samples_is_python(s->py, p->pid);
		}
	}
	return python;
}

int top_sampler_new(const struct top_sampler_config *cfg, struct top_sampler **out)
{
	struct perf_events_config pc = {0};
	int err = -ENOMEM;

	struct top_sampler *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	u64map_init(&s->kernel_names);
	u64map_init(&s->watched);
	u64map_init(&s->by_pid);
	strpool_init(&s->names);
	s->pick.family_fd = s->pick.fork_fd = s->pick.prog_fd = -1;
	for (size_t i = 0; i < cfg->npids; i++)
		if (u64map_put(&s->watched, (uint64_t)cfg->pids[i], 1) < 0)
			goto out_free;
	s->sym = symbolizer_new();
	s->procs = s->sym ? procs_new(s->sym) : NULL;
	s->namer = s->procs ? frame_namer_new(s->sym, s->procs) : NULL;
	if (!s->namer)
		goto out_free;
	pc.freq = cfg->freq;
	pc.dwarf = cfg->dwarf;
	pc.fp_chain = cfg->dwarf && cfg->fp_after;
	pc.stack_bytes = cfg->stack_bytes;
	stack_copy_init(&s->copy, cfg->stack_bytes, cfg->dwarf && cfg->copy_grows);
	if (cfg->dwarf && !(s->unwinder = unwinder_new(s->procs, 0)))
		goto out_free;
	/* Watched processes: a program on each CPU's event keeps their
	 * samples (and their children's) only, so that the others' stacks
	 * are neither copied into the rings nor read (a busy machine's
	 * would crowd the watched ones' out). Without BPF, recce drops
	 * them as it reads. */
	if (cfg->npids && pick_bpf_new(&s->pick, NULL, 0) == 0)
		for (size_t i = 0; i < cfg->npids; i++)
			if (pick_bpf_add(&s->pick, cfg->pids[i]) < 0) {
				pick_bpf_release(&s->pick);
				break;
			}
	if (py_samples_new(s->procs, 1000000000ull / (cfg->freq ? cfg->freq : 1), s->pick.family_fd,
			   &s->py, NULL, 0) == 0 &&
	    watch_pythons(s))
		pc.bpf_prog_fd = py_samples_prog_fd(s->py);
	else {
		py_samples_free(s->py); /* no watched process is a CPython */
		s->py = NULL;
		pc.bpf_prog_fd = s->pick.prog_fd >= 0 ? s->pick.prog_fd : 0;
	}
	err = perf_events_new(&pc, &s->pe);
	if (err)
		goto out_free;
	/* A "task" of pid -1 is one event per CPU for every process. */
	int task = perf_events_open_task(s->pe, -1);
	if (task < 0) {
		err = task;
		goto out_free;
	}
	if (s->py && perf_events_bpf_refused(s->pe)) {
		py_samples_free(s->py);
		s->py = NULL;
	}
	s->cfg.pids = NULL; /* the caller's, read until here */
	*out = s;
	return 0;
out_free:
	top_sampler_free(s);
	return err;
}

static void proc_free(struct top_proc *p)
{
	if (!p)
		return;
	u64map_release(&p->names);
	free(p);
}

static void free_proc_entry(struct top_sampler *s, pid_t pid)
{
	uint64_t v;

	if (!u64map_get(&s->by_pid, (uint64_t)pid, &v) || !v)
		return;
	proc_free((struct top_proc *)(uintptr_t)v);
	frame_namer_forget(s->namer, pid);
	if (s->unwinder)
		unwinder_forget(s->unwinder, pid);
	/* u64map cannot delete: a zero value marks the entry as gone. */
	u64map_put(&s->by_pid, (uint64_t)pid, 0);
}

static void free_proc_value(void *ctx, uint64_t pid, uint64_t v)
{
	(void)ctx;
	(void)pid;
	if (v)
		proc_free((struct top_proc *)(uintptr_t)v);
}

void top_sampler_free(struct top_sampler *s)
{
	if (!s)
		return;
	perf_events_free(s->pe);
	py_samples_free(s->py);
	pick_bpf_release(&s->pick);
	u64map_each(&s->by_pid, free_proc_value, NULL);
	u64map_release(&s->by_pid);
	u64map_release(&s->watched);
	u64map_release(&s->kernel_names);
	kallsyms_free(s->kallsyms);
	unwinder_free(s->unwinder);
	frame_namer_free(s->namer);
	procs_free(s->procs);
	symbolizer_free(s->sym);
	strpool_release(&s->names);
	free(s);
}

size_t top_sampler_pollfds(const struct top_sampler *s, int *fds, size_t max)
{
	return perf_events_pollfds(s->pe, fds, max);
}

void top_sampler_get_stats(const struct top_sampler *s, struct top_sampler_stats *st)
{
	*st = s->stats;
	st->user_only = perf_events_user_only(s->pe);
	st->copy_bytes = s->cfg.dwarf ? s->copy.now : 0;
}

static int watching(const struct top_sampler *s, pid_t pid)
{
	uint64_t v;

	if (pid <= 0)
		return 0;
	return !s->cfg.npids || (u64map_get(&s->watched, (uint64_t)pid, &v) && v);
}

void top_sampler_forget(struct top_sampler *s, pid_t pid)
{
	if (s->cfg.npids)
		u64map_put(&s->watched, (uint64_t)pid, 0);
	free_proc_entry(s, pid);
}

/* The entry of pid, made (and its maps read) on first use; NULL when
 * out of memory. */
static struct top_proc *proc_of(struct top_sampler *s, pid_t pid)
{
	uint64_t v;

	if (u64map_get(&s->by_pid, (uint64_t)pid, &v) && v)
		return (struct top_proc *)(uintptr_t)v;
	struct top_proc *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	u64map_init(&p->names);
	if (u64map_put(&s->by_pid, (uint64_t)pid, (uint64_t)(uintptr_t)p) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

static void proc_scan(struct top_sampler *s, struct top_proc *p)
{
	if (p->scanned)
		return;
	p->scanned = 1;
	procs_scan(s->procs, p->pid);
}

static const char *intern(struct top_sampler *s, const char *name)
{
	const char *n = strpool_intern(&s->names, name);

	return n ? n : "[out of memory]";
}

static const char *kernel_name(struct top_sampler *s, uint64_t addr, int nonleaf)
{
	uint64_t v, start;
	const char *module;

	if (u64map_get(&s->kernel_names, addr, &v))
		return (const char *)(uintptr_t)v;
	if (!s->kallsyms_tried) {
		s->kallsyms_tried = 1;
		s->kallsyms = kallsyms_load(NULL);
	}
	const char *name =
	    s->kallsyms ? kallsyms_lookup(s->kallsyms, nonleaf ? addr - 1 : addr, &module, &start)
			: NULL;
	name = intern(s, name ? name : "[kernel]");
	if (u64map_count(&s->kernel_names) < MAX_NAMES)
		u64map_put(&s->kernel_names, addr, (uint64_t)(uintptr_t)name);
	return name;
}

/*
 * Names a user address of p: fills frames (innermost first, at least one)
 * and returns how many. Unknown code is named by its module and offset,
 * or "[unknown]", never left out.
 */
static int user_frames(struct top_sampler *s, struct top_proc *p, uint64_t addr, int nonleaf,
		       struct top_frame *out, int max)
{
	struct frame_name fn;
	char buf[256];

	memset(out, 0, sizeof(*out));
	frame_namer_user(s->namer, p->pid, addr, nonleaf, &fn);
	if (fn.kind != FRAME_SYMBOL) {
		frame_name_format(&fn, buf, sizeof(buf));
		out->function = intern(s, buf);
		return 1;
	}
	int k = 0;
	for (int i = 0; i < fn.nframes && k < max; i++, k++) {
		out[k].function = intern(s, fn.frames[i].function);
		out[k].file = fn.frames[i].file;
		out[k].line = fn.frames[i].line;
		out[k].kernel = 0;
	}
	return k;
}

/* The cached innermost function name of a user address of p. */
static const char *user_name(struct top_sampler *s, struct top_proc *p, uint64_t addr, int nonleaf)
{
	struct top_frame f[MAX_INLINE];
	uint64_t key = addr << 1 | (uint64_t)(nonleaf != 0), v;

	if (u64map_get(&p->names, key, &v))
		return (const char *)(uintptr_t)v;
	proc_scan(s, p);
	user_frames(s, p, addr, nonleaf, f, MAX_INLINE);
	/* A cache that outgrew its bound starts over (a JIT keeps making
	 * code): names stay valid, they live in the pool. */
	if (u64map_count(&p->names) >= MAX_NAMES) {
		u64map_release(&p->names);
		u64map_init(&p->names);
	}
	u64map_put(&p->names, key, (uint64_t)(uintptr_t)f[0].function);
	return f[0].function;
}

/* The innermost Python frame's function of a stack with Python frames
 * (after PY_STACK_MARK), or NULL. */
static const char *python_leaf(struct top_sampler *s, const uint64_t *ips, uint64_t nr)
{
	struct py_names *names = procs_py_names(s->procs);
	const char *name = NULL, *file;
	int line;

	for (uint64_t i = 0; names && i + 1 < nr; i++)
		if (ips[i] == PY_STACK_MARK) {
			py_names_get(names, ips[i + 1] & PY_STACK_ID, &name, &file, &line);
			return name ? intern(s, name) : NULL;
		}
	return NULL;
}

/* How many frames up from a leaf in the interpreter its loop is looked
 * for (PyNumber_InPlaceXor, binary_iop1, long_xor, long_bitwise: four). */
#define HELPER_DEPTH 8

/* Whether the user frames of ips from i up to the interpreter's loop all
 * lie in the loop's own module: the interpreter's helpers (the number
 * protocol, the methods of its objects), called by it for the Python
 * function that runs, which py-spy --native leaves out too. A C
 * extension's, or libc's, code is not. */
static int interpreter_helper(struct top_sampler *s, struct top_proc *p, const uint64_t *ips,
			      uint64_t i, uint64_t nr)
{
	const struct proc_map *leaf = procs_find(s->procs, p->pid, ips[i]);

	if (!leaf || !leaf->file)
		return 0;
	for (uint64_t j = i + 1; j < nr && j <= i + HELPER_DEPTH; j++) {
		const struct proc_map *m =
		    ips[j] >= CONTEXT_FLOOR ? NULL : procs_find(s->procs, p->pid, ips[j]);
		if (!m || m->file != leaf->file)
			return 0;
		if (py_eval_function(user_name(s, p, ips[j], 1)))
			return 1;
	}
	return 0;
}

/* The function of a sample: its first user frame, else its kernel leaf;
 * where that frame is the interpreter running Python code, or one of its
 * helpers, the Python function it runs. */
static const char *sample_function(struct top_sampler *s, struct top_proc *p, const uint64_t *ips,
				   uint64_t nr)
{
	int context = -1; /* 1 kernel, 0 user, 2 other */
	uint64_t kernel_leaf = 0;
	int have_kernel = 0;

	for (uint64_t i = 0; i < nr; i++) {
		uint64_t a = ips[i];
		if (a >= CONTEXT_FLOOR) {
			context = a == (uint64_t)PERF_CONTEXT_KERNEL ? 1
				  : a == (uint64_t)PERF_CONTEXT_USER ? 0
								     : 2;
			continue;
		}
		int kernel = context >= 0 ? context == 1 : a >= KERNEL_START;
		if (context == 2)
			continue;
		if (!kernel) {
			const char *name = user_name(s, p, a, 0), *py = python_leaf(s, ips, nr);
			if (py && (py_eval_function(name) || interpreter_helper(s, p, ips, i, nr)))
				return py;
			return name;
		}
		if (!have_kernel) {
			kernel_leaf = a;
			have_kernel = 1;
		}
	}
	return have_kernel ? kernel_name(s, kernel_leaf, 0) : NULL;
}

/*
 * The Python frames of a stack (py, npy of them, innermost first; see
 * proc/py-names.h) in place of the native frames that ran them, in out
 * (n native frames, room for max): each group up to a frame marked
 * PY_STACK_ENTRY replaces the next C call of the interpreter; groups the
 * native walk did not reach go at the root end. Returns the count.
 */
static size_t splice_python(struct top_sampler *s, const uint64_t *py, size_t npy,
			    struct top_frame *out, size_t n, size_t max)
{
	struct top_frame *native = malloc(n * sizeof(*native) + 1);
	struct py_names *names = procs_py_names(s->procs);
	size_t k = 0, g = 0;

	if (!native || !names) {
		free(native);
		return n;
	}
	memcpy(native, out, n * sizeof(*native));
	for (size_t i = 0; i <= n && k < max; i++) {
		int at_root = i == n;
		if (g < npy &&
		    (at_root || (!native[i].kernel && py_eval_function(native[i].function)))) {
			/* One group, or at the root all that is left. */
			while (g < npy && k < max) {
				uint64_t v = py[g++];
				const char *name = "[unknown Python code]", *file = "";
				int line = 0;
				py_names_get(names, v & PY_STACK_ID, &name, &file, &line);
				out[k++] = (struct top_frame){name, file[0] ? file : NULL, line, 0};
				if ((v & PY_STACK_ENTRY) && !at_root)
					break;
			}
			continue;
		}
		if (!at_root)
			out[k++] = native[i];
	}
	free(native);
	return k;
}

size_t top_sampler_name_stack(struct top_sampler *s, pid_t pid, const uint64_t *frames,
			      size_t nframes, struct top_frame *out, size_t max)
{
	struct top_proc *p = proc_of(s, pid);
	int context = -1, first = 1;
	size_t n = 0;

	size_t python = 0;
	for (size_t i = 0; i < nframes && n < max; i++) {
		uint64_t a = frames[i];
		if (a == PY_STACK_MARK) {
			python = i + 1; /* the rest are Python frames */
			break;
		}
		if (unwind_is_mark(a)) { /* where and why the walk ended */
			out[n++] = (struct top_frame){unwind_mark_name(a), NULL, 0, 0};
			continue;
		}
		if (a >= CONTEXT_FLOOR) {
			context = a == (uint64_t)PERF_CONTEXT_KERNEL ? 1
				  : a == (uint64_t)PERF_CONTEXT_USER ? 0
								     : 2;
			first = 1;
			continue;
		}
		if (context == 2)
			continue;
		int kernel = context >= 0 ? context == 1 : a >= KERNEL_START;
		if (kernel) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].function = kernel_name(s, a, !first);
			out[n++].kernel = 1;
		} else if (p) {
			proc_scan(s, p);
			n += (size_t)user_frames(s, p, a, !first, out + n, (int)(max - n));
		}
		first = 0;
	}
	return python ? splice_python(s, frames + python, nframes - python, out, n, max) : n;
}

static int on_record(const struct perf_record *rec, void *arg)
{
	struct top_sampler *s = arg;
	pid_t pid = (pid_t)rec->pid;
	uint64_t v;

	switch (rec->type) {
	case PERF_RECORD_SAMPLE: {
		if (!watching(s, pid)) {
			s->stats.others += pid > 0;
			return 0;
		}
		struct top_proc *p = proc_of(s, pid);
		if (!p)
			return 0;
		s->stats.samples++;
		const uint64_t *ips = rec->sample.ips;
		size_t n = (size_t)rec->sample.nr;
		if (s->unwinder) {
			/* The unwinder reads the modules of the registry. */
			proc_scan(s, p);
			struct unwind_sample smp = {
			    .pid = pid,
			    .tid = (pid_t)rec->tid,
			    .ip = rec->sample.ip,
			    .ips = rec->sample.ips,
			    .nips = rec->sample.nr,
			    .regs = rec->sample.abi ? rec->sample.regs : NULL,
			    .stack = rec->sample.stack,
			    .stack_len = rec->sample.stack_size,
			    .mark_end = 1,
			    .stack_asked = rec->sample.stack_asked,
			};
			n = unwinder_sample(s->unwinder, &smp, s->cfg.fp_after, MAX_KERNEL,
					    MAX_USER, s->frames,
					    sizeof(s->frames) / sizeof(s->frames[0]));
			stack_copy_seen(&s->copy, rec->sample.stack_asked,
					unwind_cut_at_copy(s->frames, n));
			ips = s->frames;
		}
		if (s->py) {
			proc_scan(s, p); /* the frame reader looks at its maps */
			ips = py_samples_stack(s->py, pid, (pid_t)rec->tid, rec->time, ips, n, &n);
		}
		const char *fn = sample_function(s, p, ips, n);
		top_model_add_sample(s->model, pid, (pid_t)rec->tid, rec->time, fn, ips, n);
		return 0;
	}
	case PERF_RECORD_MMAP2:
		/* Only processes already read from /proc follow their mmaps;
		 * the others read theirs whole at their first sample. */
		if (u64map_get(&s->by_pid, (uint64_t)pid, &v) && v &&
		    ((struct top_proc *)(uintptr_t)v)->scanned) {
			procs_mmap(s->procs, pid, rec->mmap.addr, rec->mmap.len, rec->mmap.pgoff,
				   rec->mmap.filename, (int)rec->mmap.prot, rec->mmap.build_id);
			if (s->unwinder)
				unwinder_maps_changed(s->unwinder, pid);
		}
		return 0;
	case PERF_RECORD_COMM:
		if (rec->comm.exec && u64map_get(&s->by_pid, (uint64_t)pid, &v) && v) {
			/* New code at old addresses: forget the names, read
			 * the maps again at the next sample. */
			procs_exec(s->procs, pid);
			free_proc_entry(s, pid);
			if (s->py)
				py_samples_exec(s->py, pid);
		}
		return 0;
	case PERF_RECORD_EXIT:
		if (s->py)
			py_samples_thread_exit(s->py, (pid_t)rec->tid);
		if (rec->pid == rec->tid && !s->cfg.npids)
			free_proc_entry(s, pid);
		return 0;
	case PERF_RECORD_LOST:
		s->stats.lost += rec->lost.lost;
		return 0;
	case PERF_RECORD_THROTTLE:
		s->stats.throttled++;
		return 0;
	default:
		return 0;
	}
}

int top_sampler_read(struct top_sampler *s, struct top_model *m)
{
	s->model = m;
	if (s->py)
		py_samples_read(s->py);
	/* On what the last reads unwound: what the rings hold now was taken
	 * with the copy as it was, and is read as such. */
	stack_copy_check(&s->copy, s->pe, unwinder_copy_wanted(s->unwinder), -1);
	int n = perf_events_read(s->pe, time_now_ns(CLOCK_MONOTONIC), on_record, s);
	s->model = NULL;
	return n;
}

const char *top_sampler_thread_name(struct top_sampler *s, pid_t pid, pid_t tid)
{
	int found;

	if (!s || !s->py || !py_samples_is_python(s->py, pid))
		return NULL;
	return py_samples_thread_name(s->py, pid, tid, time_now_ns(CLOCK_MONOTONIC), &found);
}
