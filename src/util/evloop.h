/*
 * The one event loop: the descriptors engines wait on (perf rings, the
 * stop signalfd, pidfds of targets, a terminal, sockets) waited on
 * together with poll(2), with a callback per descriptor; timers on
 * CLOCK_MONOTONIC, once or periodic; and checks, run after every wake
 * (an engine reads its rings there whatever woke the loop).
 *
 * The caller owns the loop, as with redis's ae or libuv: a composer
 * (record, the continuous agent, capture) makes one, engines attach
 * their sources to it (sampler_attach, tracer_attach), and it runs
 * evloop_run() until someone calls evloop_stop(). An engine that stops
 * removes what it added with evloop_remove_arg(); the others go on.
 *
 * One round of evloop_run(): the timers that are due run (each once),
 * then poll(2) waits until a source is ready or the next timer is due,
 * the ready sources' callbacks run, then every check.
 *
 * A source added with EVLOOP_ONCE is dropped after its first callback
 * (a pidfd: a process exits once); one added with EVLOOP_CLOSE is closed
 * by the loop when dropped or released; EVLOOP_WRITE watches for room to
 * write instead of input.
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
	EVLOOP_WRITE = 4, /* wake when the descriptor can be written, not read */
};

/* Called when fd is ready; revents as poll(2) gives them. */
typedef void (*evloop_fn)(void *arg, int fd, short revents);

struct evloop_source {
	int fd;
	int flags;
	short events; /* what poll(2) watches for: POLLIN, POLLOUT or both */
	evloop_fn fn; /* NULL: the source only wakes the loop */
	void *arg;
};

/* Called when a timer is due; due_ns is when it was due (CLOCK_MONOTONIC). */
typedef void (*evloop_timer_fn)(void *arg, int64_t due_ns);

struct evloop_timer {
	int id; /* 0: removed */
	int64_t due_ns, period_ns;
	evloop_timer_fn fn; /* NULL: the timer only wakes the loop */
	void *arg;
};

/* Called after every wake of evloop_run(). */
typedef void (*evloop_check_fn)(void *arg);

struct evloop_check {
	evloop_check_fn fn; /* NULL: removed */
	void *arg;
};

struct evloop {
	struct evloop_source *src;
	struct pollfd *pfd;
	size_t n, cap, pfd_cap;
	struct evloop_timer *timers;
	size_t ntimers, timers_cap;
	int next_id;
	struct evloop_check *checks;
	size_t nchecks, checks_cap;
	int stopped, ret;
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

/* What the source of fd waits for from now: POLLIN, POLLOUT or both (a
 * socket read always and written while output waits). Returns 0, or
 * -ENOENT when fd is not watched. */
int evloop_watch(struct evloop *l, int fd, short events);

/*
 * Calls fn(arg, due) at CLOCK_MONOTONIC time when_ns, then every
 * period_ns after it (0: once). A periodic timer that is late runs once
 * per round until it has caught up, skipping no period; one without fn
 * (it only wakes the loop) skips to its next period after now instead,
 * as waking a loop again at once does nothing more. Returns the timer's
 * id (> 0) or -ENOMEM.
 */
int evloop_timer_add(struct evloop *l, int64_t when_ns, int64_t period_ns, evloop_timer_fn fn,
		     void *arg);

/* Removes a timer; an id that is gone (a one-shot timer that ran) is
 * ignored. Callbacks may call it. */
void evloop_timer_remove(struct evloop *l, int id);

/* Runs fn(arg) after every wake of evloop_run(), in the order added.
 * Returns 0 or -ENOMEM. */
int evloop_check_add(struct evloop *l, evloop_check_fn fn, void *arg);

/* Drops every source, timer and check added with arg (an engine leaving
 * the loop), closing the descriptors the loop owns. Callbacks may call it. */
void evloop_remove_arg(struct evloop *l, const void *arg);

/*
 * An engine's seat in a loop its caller runs: the loop, while the engine
 * is in it, and whom to tell, once, when the engine leaves by itself (its
 * work is over). Every engine attached to a caller's loop keeps one.
 */
struct evloop_seat {
	struct evloop *loop; /* NULL once left */
	void (*done)(void *arg);
	void *done_arg;
};

/* Takes a seat in loop, telling done(arg) when the engine leaves. */
void evloop_seat_take(struct evloop_seat *seat, struct evloop *loop, void (*done)(void *arg),
		      void *arg);

/* Leaves: drops every source, timer and check added with owner; then,
 * with tell, calls done once. Nothing when the seat was left already.
 * Callbacks may call it. */
void evloop_leave(struct evloop_seat *seat, const void *owner, int tell);

/* Whether the engine is still in its loop. */
static inline int evloop_seated(const struct evloop_seat *seat)
{
	return seat->loop != NULL;
}

/*
 * Runs rounds until evloop_stop() is called, and returns the value given
 * to it; or a negative errno when poll(2) fails for another reason than
 * a signal. A loop with nothing to wait on waits forever.
 */
int evloop_run(struct evloop *l);

/* Ends evloop_run() after the current round, which returns ret. The first
 * call decides the value. */
void evloop_stop(struct evloop *l, int ret);

/* evloop_stop(loop, 0), as an engine's done callback (its argument the
 * loop): for the caller that runs nothing else. */
void evloop_stop_done(void *loop);

/* Whether evloop_stop() was called. */
int evloop_stopped(const struct evloop *l);

/* How many sources are watched. */
size_t evloop_count(const struct evloop *l);

/*
 * Waits until a source is ready, the CLOCK_MONOTONIC time deadline_ns
 * passes (INT64_MAX: none) or max_ms milliseconds elapse (-1: no cap),
 * then runs the callbacks of the ready sources (not the timers nor the
 * checks: those are evloop_run()'s). Returns how many were
 * ready, 0 at the timeout, -EINTR when a signal handler ran, or another
 * negative errno.
 */
int evloop_wait(struct evloop *l, int64_t deadline_ns, int max_ms);

/* Waits for one descriptor, for events (POLLIN, POLLOUT), until the
 * CLOCK_MONOTONIC time deadline_ns (INT64_MAX: none; 0: only a look).
 * Returns its revents, 0 at the deadline, -EINTR when a signal handler
 * ran, or another negative errno. For a blocking read or write with a
 * time limit, where a loop would be too much. */
int evloop_wait_fd(int fd, short events, int64_t deadline_ns);

/* Which of the n descriptors are readable now, without waiting (pidfds
 * of processes that exited, say): ready[i] is 1 or 0. Returns how many
 * are, or a negative errno (then none is marked). */
int evloop_ready_now(const int *fds, size_t n, unsigned char *ready);

#endif
