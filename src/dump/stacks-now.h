/*
 * Every thread's stack of a running process, now (`recce dump`): where
 * each thread waits in the kernel (its wait channel and kernel stack, read
 * first, since stopping it would change them), then every thread stopped
 * under ptrace for as long as it takes to copy its registers and the top
 * of its stack (inject/stop-all.h: a thread stopped for a signal gets it
 * back, a job-control stop is kept), released, and each copy unwound with
 * the call frame information of its modules (proc/unwind.h), the frame
 * pointers taking over where that information ends (Go, JIT code). In a
 * CPython, each thread's Python frames are read while it is stopped
 * (proc/py-frames.h), for the caller to show in place of the native
 * frames of the interpreter that ran them.
 *
 * Ownership: the caller owns the struct; stacks_now_take() fills it and
 * stacks_now_release() frees it. Names come from stacks_now_name(), valid
 * until the release.
 */
#ifndef RECCE_DUMP_STACKS_NOW_H
#define RECCE_DUMP_STACKS_NOW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc/frame-name.h"
#include "proc/py-frames.h"

#define STACKS_NOW_FRAMES 128 /* user frames a thread's stack keeps */
#define STACKS_NOW_KERNEL 32  /* kernel frames */

struct now_thread {
	pid_t tid;
	char comm[16];
	char state;			 /* as /proc shows it: R, S, D, T, t... */
	char wchan[64];			 /* where it sleeps in the kernel, "" when running */
	char *kernel[STACKS_NOW_KERNEL]; /* /proc/PID/task/TID/stack (root only) */
	size_t nkernel;
	uint64_t pcs[STACKS_NOW_FRAMES]; /* user frames, leaf first */
	size_t npcs;
	int ended;     /* the walk reached the outermost frame */
	int waits_gil; /* in futex(2) on a CPython's GIL */
	int unread;    /* 1: the thread could not be read (it ended meanwhile) */
};

struct stacks_now {
	pid_t pid;
	struct now_thread *t;
	size_t n;
	uint64_t stopped_ns; /* how long the process was stopped */
	struct symbolizer *sym;
	struct proc_registry *procs;
	struct frame_namer *namer;
	struct unwinder *unwinder;
	/* A CPython: its version ("" when not one), whether its frames
	 * were read (0) or why not (-ENOTSUP: a version recce has no layout
	 * for; -EFAULT: its state could not be read), and its threads. */
	char py_version[32];
	int py_err;
	struct py_thread *py;
	size_t npy;
	struct py_reader *pyr; /* owns the frames' names */
};

/* The Python side of thread tid, or NULL. */
const struct py_thread *stacks_now_python(const struct stacks_now *s, pid_t tid);

/* Whether the native frame named f ran Python frames: CPython's
 * _PyEval_EvalFrameDefault, one group of a thread's frames per call. */
int stacks_now_runs_python(const struct frame_name *f);

/* Takes every thread's stack of pid, named through sym (the caller's,
 * with the symbol cache it chose; it must outlive s). Returns 0; -ESRCH
 * (no such process), -EPERM (ptrace refused), -ETIMEDOUT (a thread would
 * not stop within 3 s: nothing stays stopped), -ENOMEM. */
int stacks_now_take(struct stacks_now *s, pid_t pid, struct symbolizer *sym);

/* Names the frame at pc of s's process (nonleaf: a return address). */
void stacks_now_name(struct stacks_now *s, uint64_t pc, int nonleaf, struct frame_name *out);

void stacks_now_release(struct stacks_now *s);

#endif
