/*
 * The callbacks of a running libuv program as tasks, with no change to it
 * and no restart: `recce tasks --libuv`.
 *
 * libuv calls each callback its user gave it (a timer's, a stream's read,
 * a connection's, a close's, a work request's) from an indirect call in
 * its own code. A probe sits on each such call of the libuv the process
 * maps (symbols/indirect-calls.h), or of the functions named uv_* in a
 * program that carries libuv in itself (Node.js), and reads the function
 * it is about to
 * call (the register, or the pointer at register plus displacement, read
 * by the BPF program as the call happens); another sits on the
 * instruction after it, where the callback returns, told from other
 * returns there by the stack pointer. A call into libuv itself, libc or
 * the loader is libuv's own plumbing and is left out; a call elsewhere is
 * a callback, and becomes one task of the type named by that function:
 * created and started as it is called, stopped and finished as it
 * returns, the child of a callback still running on the same thread. The
 * records come out as librecce's task records do (events/tasks.h), so
 * every view of `recce tasks` shows them.
 *
 * The probes cost the program tens of microseconds a callback, so a
 * circuit breaker removes them all when callbacks come faster than asked.
 *
 * Needs uprobe_multi BPF links (Linux 6.6+), which read the pointer as the
 * call happens: on a kernel without them it is refused.
 *
 * Ownership: uv_tasks_open() returns a heap object, uv_tasks_free()
 * removes every probe and frees it.
 */
#ifndef RECCE_TRACE_UV_TASKS_H
#define RECCE_TRACE_UV_TASKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "events/ring-read.h"

struct uv_tasks;

struct uv_tasks_stats {
	size_t sites;	    /* indirect calls probed in libuv */
	uint64_t callbacks; /* callbacks seen called */
	uint64_t lost;	    /* probe hits the kernel dropped: callbacks missed */
};

/* Finds the libuv of pid and probes its indirect calls, under a circuit
 * breaker: more than rate_n callbacks within one window of rate_ms
 * milliseconds removes every probe (rate_n 0: none). no_links probes
 * through BPF on perf uprobe events even where links work (for the
 * tests). Returns 0 and *out, or -errno with a sentence in why[len]:
 * -ENOENT (no libuv), -ESRCH (no such process), -EACCES, -ENOTSUP (no
 * BPF program at the probes: a kernel before 5.15). */
int uv_tasks_open(pid_t pid, uint64_t rate_n, uint64_t rate_ms, int no_links, struct uv_tasks **out,
		  char *why, size_t len);

/* Whether the circuit breaker tripped: the probes are gone, the counts
 * stop there. */
int uv_tasks_tripped(const struct uv_tasks *u);

/* The records of the callbacks called since the last call, appended to
 * *ev (grown as array_reserve does; *n of them, capacity *cap). Returns 0
 * or -errno. */
int uv_tasks_drain(struct uv_tasks *u, struct ring_event **ev, size_t *n, size_t *cap);

/* Descriptors to poll(2) for POLLIN: readable when hits wait to be
 * drained. Returns the count (at most max). */
size_t uv_tasks_pollfds(const struct uv_tasks *u, int *fds, size_t max);

/* The command name (comm) of the process, as read when it was opened. */
const char *uv_tasks_comm(const struct uv_tasks *u);

/* The path of the libuv probed. */
const char *uv_tasks_library(const struct uv_tasks *u);
void uv_tasks_stats(const struct uv_tasks *u, struct uv_tasks_stats *st);
void uv_tasks_free(struct uv_tasks *u);

#endif
