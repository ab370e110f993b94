/*
 * The engine of `recce tasks`: a program's tasks per type, from one
 * source — librecce's event rings of a live process or a saved event
 * file (events/ring-read.h), or probes on a libuv program's callbacks
 * (trace/uv-tasks.h) — fed into a table (events/tasks.h) that the
 * caller's show() gets every interval, and that a Prometheus scraper
 * reads at /metrics of a listening socket.
 *
 * It runs in an event loop its caller owns (tasks_session_attach) or in
 * one of its own (tasks_session_run): the source's descriptors, the stop
 * descriptor, a terminal's keys ('q' quits, 's' sorts by the next
 * column), the process's pidfd, the socket, and a timer. It ends when
 * the process exits, the file is read, the duration or the number of
 * views is reached, the libuv probes' breaker trips, a key or a signal
 * says so, or reading fails.
 *
 * Ownership: tasks_session_new() returns a heap object freed by
 * tasks_session_free(); the caller opens the source and keeps it, and
 * every descriptor of the config, until then.
 */
#ifndef RECCE_TASKS_SESSION_H
#define RECCE_TASKS_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "events/tasks-print.h"

struct evloop;
struct ring_reader;
struct uv_tasks;

struct tasks_session_config {
	struct ring_reader *rings; /* the source: librecce's rings or a file... */
	int file;		   /* ...a saved file, read once... */
	struct uv_tasks *uv;	   /* ...or --libuv's probes */
	pid_t pid;		   /* the process; 0 for a file */
	const char *comm;
	double duration; /* seconds; 0: until stopped */
	double every;	 /* seconds between views */
	long long views; /* stop after this many; 0: no limit */
	int listen_fd;	 /* Prometheus at /metrics, and no views; -1: none */
	size_t top_k;	 /* types a process exports to Prometheus */
	int stop_fd;	 /* stop when readable (a signalfd); -1: none */
	int key_fd;	 /* a terminal's keys; -1: none */
	enum task_sort sort;
	const char *filter;
	/* Each view, and the last when it ends by itself. */
	void (*show)(void *arg, const struct tasks_view *v);
	void *arg;
};

enum tasks_stop {
	TASKS_RUNNING,
	TASKS_ENDED,   /* the process exited, the file was read, duration or views reached */
	TASKS_SIGNAL,  /* the stop descriptor */
	TASKS_QUIT,    /* the key q */
	TASKS_TRIPPED, /* --libuv's circuit breaker removed the probes */
	TASKS_FAILED,  /* reading the source failed: tasks_session_error() says how */
};

struct tasks_session;

int tasks_session_new(const struct tasks_session_config *cfg, struct tasks_session **out);

/* Attaches the session to a loop its caller runs; done(arg) is called
 * once, when it ends. Returns 0 or -ENOMEM. */
int tasks_session_attach(struct tasks_session *s, struct evloop *loop, void (*done)(void *arg),
			 void *arg);

/* The whole session in a loop of its own. Returns 0, or -errno when the
 * loop itself failed. */
int tasks_session_run(struct tasks_session *s);

/* Why it ended, and for TASKS_FAILED the -errno of the read. */
enum tasks_stop tasks_session_stop(const struct tasks_session *s);
int tasks_session_error(const struct tasks_session *s);

/* The table as it is now. */
const struct tasks_view *tasks_session_view(const struct tasks_session *s);

void tasks_session_free(struct tasks_session *s);

#endif
