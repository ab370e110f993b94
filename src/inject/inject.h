/*
 * Running a function inside a live process, and loading a shared object
 * into it with the C library's own dlopen: what hot patching and
 * in-process tracing build on.
 *
 * A call borrows one thread. Every thread is stopped; the one chosen is
 * idle in a system call (or running its own code, never inside the C
 * library or the loader, where it could hold a lock the call needs; or,
 * when every thread sleeps with a timeout, one of those, which recce
 * then puts back itself, see inject.c); the
 * call's frame goes on that thread's stack below its red zone, and a
 * stub of recce's goes into the padding after an executable segment.
 * Then every thread goes on. The stub blocks signals, keeps the thread's
 * extended (FPU, vector) state and errno, makes the call, writes its
 * result, and returns to where the thread was with rt_sigreturn, the
 * kernel's own way back from a signal handler: registers, flags, signal
 * mask, alternate signal stack and extended state all at once, and a
 * system call that was interrupted is made again. Before that it waits
 * for recce to read the result (the frame is stack the thread uses again),
 * a second at most: if recce dies mid-call, the target finishes the call
 * and puts the thread back by itself.
 *
 * A thread under a seccomp filter that would kill it for a system call
 * the stub or dlopen makes is never borrowed (seccomp-check).
 *
 * Ownership: the caller owns struct injector (injector_open/_close); it
 * borrows the symbolizer.
 */
#ifndef RECCE_INJECT_INJECT_H
#define RECCE_INJECT_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct symbolizer;

/* Why injector_open() or a call refused, for the user. */
enum inject_refusal {
	INJECT_OK,
	INJECT_GO,	       /* a Go program: goroutine stacks, no C library to call */
	INJECT_NO_LIBC,	       /* no C library with dlopen mapped */
	INJECT_NO_ROOM,	       /* no padding after any executable segment for the stub */
	INJECT_NO_THREAD,      /* every thread stayed busy in the C library or the loader */
	INJECT_SECCOMP,	       /* a seccomp filter would kill it for a call injection makes */
	INJECT_SECCOMP_UNREAD, /* it has seccomp filters, which only root may read */
};

struct injector {
	pid_t pid;
	uint64_t dlopen_fn, dlerror_fn, errno_fn; /* in the target's C library */
	uint64_t mmap_fn, prctl_fn;
	uint64_t cave, cave_len; /* padding after an executable segment: the stub's place */
	int stub_written;	 /* the stub is there; put the zeros back at close */
	int stub_found;		 /* it was there before: another recce's threads may be in it */
	uint64_t xmask;		 /* extended state components the stub saves */
	uint32_t xsize;		 /* their size in the XSAVE layout */
	int timeout_ms;		 /* for a call to return (default 10 s) */
	int pending;		 /* a call that timed out may still be running */
	enum inject_refusal refusal;
	const char *refused_call; /* INJECT_SECCOMP: the system call's name */
	/* the last call */
	pid_t thread;	     /* the thread it borrowed */
	uint64_t stopped_ns; /* how long the process was stopped to set it up */
	uint64_t call_ns;    /* from going on to the result */
};

/* Looks the process over: its C library's functions and the stub's
 * place. Returns 0; -EPROTONOSUPPORT with refusal set; -ESRCH; or -errno. */
int injector_open(struct injector *inj, pid_t pid, struct symbolizer *sym);

/*
 * Calls fn(args[0..5]) in the target and returns its result in *ret. With
 * data (len bytes), a copy is put beside the frame and args[data_arg]
 * replaced by its address. Returns 0; -EPERM (ptrace refused); -ESRCH
 * (the process is gone, or died during the call); -EBUSY (stopped by job
 * control); -EAGAIN with refusal INJECT_NO_THREAD; -EPERM with refusal
 * INJECT_SECCOMP or INJECT_SECCOMP_UNREAD; -ETIME when its threads
 * would not all stop (those that did run on at once; one that did not
 * stays seized until recce exits, so exit soon); -ETIMEDOUT when
 * the call has not returned in time (the target still finishes it
 * alone).
 */
int injector_call(struct injector *inj, uint64_t fn, const uint64_t args[6], const void *data,
		  size_t len, int data_arg, uint64_t *ret);

/* dlopen(path, RTLD_NOW) in the target: 0 and the handle; -ENOEXEC with
 * dlerror()'s text in err when the loader refused; or injector_call()'s
 * errors. path should be absolute, as the target sees files. */
int injector_dlopen(struct injector *inj, const char *path, uint64_t *handle, char *err,
		    size_t errlen);

/* Where vaddr of the object f lies in pid now, after a dlopen: 0, or
 * -ENOENT when f is not mapped there. */
struct sym_file;
int injector_where(struct symbolizer *sym, pid_t pid, struct sym_file *f, uint64_t vaddr,
		   uint64_t *addr);

/* Puts back the padding the stub used, when no thread is in it. */
void injector_close(struct injector *inj);

#endif
