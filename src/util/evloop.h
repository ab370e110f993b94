/*
 * The one event loop: the descriptors an engine waits on (perf rings, the
 * stop signalfd, pidfds of targets, a terminal, and the agent's sockets
 * to come) waited on together with poll(2), up to a deadline, with a
 * callback per descriptor. Each engine keeps its own loop body (read the
 * rings, check the limits) around evloop_wait(); what is shared is how a
 * wait is bounded, which sources are ready, and who closes what.
 *
 * A source added with EVLOOP_ONCE is dropped after its first callback
 * (a pidfd: a process exits once); one added with EVLOOP_CLOSE is closed
 * by the loop when dropped or released.
 *
 * Ownership: the caller owns the struct (evloop_init/evloop_release).
 */
#ifndef RECCE_UTIL_EVLOOP_H
#define RECCE_UTIL_EVLOOP_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

enum {
	EVLOOP_ONCE = 1,  /* drop the source after its first callback */
	EVLOOP_CLOSE = 2, /* the loop closes the descriptor when it drops it */
};

/* Called when fd is ready; revents as poll(2) gives them. */
typedef void (*evloop_fn)(void *arg, int fd, short revents);

struct evloop_source {
	int fd;
	int flags;
	evloop_fn fn; /* NULL: the source only wakes the loop */
	void *arg;
};

struct evloop {
	struct evloop_source *src;
	struct pollfd *pfd;
	size_t n, cap, pfd_cap;
};

void evloop_init(struct evloop *l);

/* Drops every source, closing those added with EVLOOP_CLOSE. */
void evloop_release(struct evloop *l);

/* Watches fd for input. A negative fd is ignored. Returns 0 or -ENOMEM
 * (an EVLOOP_CLOSE descriptor is then closed). */
int evloop_add(struct evloop *l, int fd, int flags, evloop_fn fn, void *arg);

/* Drops the source of fd, closing it if the loop owns it. Callbacks may
 * call it. */
void evloop_remove(struct evloop *l, int fd);

/* How many sources are watched. */
size_t evloop_count(const struct evloop *l);

/*
 * Waits until a source is ready, the CLOCK_MONOTONIC time deadline_ns
 * passes (INT64_MAX: none) or max_ms milliseconds elapse (-1: no cap),
 * then runs the callbacks of the ready sources. Returns how many were
 * ready, 0 at the timeout, -EINTR when a signal handler ran, or another
 * negative errno.
 */
int evloop_wait(struct evloop *l, int64_t deadline_ns, int max_ms);

/* Which of the n descriptors are readable now, without waiting (pidfds
 * of processes that exited, say): ready[i] is 1 or 0. Returns how many
 * are, or a negative errno (then none is marked). */
int evloop_ready_now(const int *fds, size_t n, unsigned char *ready);

#endif
