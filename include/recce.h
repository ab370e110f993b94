/*
 * librecce: events from inside a program, for recce to read from outside.
 *
 * A program calls recce_event("cache_miss"), recce_span_begin("handle") or
 * recce_counter("queue_depth", n) where something happens; librecce writes
 * each call into a ring of the calling thread, in a shared-memory file
 * that `recce events -p PID` reads while the program runs, and
 * `recce events --postmortem PID` after it crashed. Nothing needs an
 * explicit init: the first event of the process creates the file, the
 * first event of a thread claims its ring.
 *
 * What the library promises the program it lives in:
 * - An event call never blocks, never takes a lock, never makes a system
 *   call and never allocates once its thread has written one event. It
 *   tests a flag, reads the CPU's clock and writes 32 bytes to its own
 *   ring. A reader never slows it: a full ring overwrites its oldest
 *   events, and the reader reports exactly how many it lost.
 * - It never exits, aborts, prints or raises a signal. Whatever fails (no
 *   /dev/shm, a full disk, every ring taken) turns events into no-ops and
 *   is reported by recce_status(), never to the program's output.
 * - After fork() the child writes to a file of its own; after exec() the
 *   new program starts a new file if it uses librecce too.
 *
 * Names: a name is read at the call and interned by its bytes (a thread
 * remembers its names by address and checks the bytes), so a name built
 * at run time in a reused buffer is fine; at most 255 bytes are kept.
 *
 * Errors are negative errno values (-ENOENT, -ENOSPC, ...), as in libuv;
 * recce_strerror() and recce_err_name() describe them. The library owns
 * all its memory; nothing it returns is to be freed by the caller.
 *
 * Thread safety: every function may be called from any thread. Event
 * calls are not async-signal-safe: a signal handler that writes events
 * may overwrite one event of the thread it interrupted.
 *
 * Link with `pkg-config --cflags --libs recce` (librecce.so), or
 * `--static` for librecce.a. Not declared here means not API.
 */
#ifndef RECCE_H
#define RECCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RECCE_API __attribute__((visibility("default")))

#define RECCE_VERSION_MAJOR 0
#define RECCE_VERSION_MINOR 1

/* --- Events: the hot path ------------------------------------------------ */

/* Something happened: one point in time, named. */
RECCE_API void recce_event(const char *name);

/* The same with a number that belongs to it (a size, an id, a status). */
RECCE_API void recce_event_value(const char *name, int64_t value);

/*
 * A span of work on this thread, from begin to end of the same name.
 * Spans nest; the reader pairs each end with the latest open begin of its
 * name on the thread and shows the time between.
 */
RECCE_API void recce_span_begin(const char *name);
RECCE_API void recce_span_end(const char *name);

/* A counter's value now (a queue depth, bytes in use). */
RECCE_API void recce_counter(const char *name, int64_t value);

/* --- Tasks of an event loop ------------------------------------------------- */

/*
 * For event loops (libuv, libevent, epoll, coroutines): say when a task
 * (a callback, a coroutine, a request's handler) is made, each time it
 * runs, and when it is done; `recce tasks -p PID` shows, per task type,
 * how many were made and run, their execution time (total and longest
 * run), wall time from creation to finish, time spent ready but not
 * running, and their children's execution time. ids are the program's
 * own (a pointer will do), unique among live tasks; parent is 0 for
 * none. type is a name as for events (a constant string). Start and stop
 * come in pairs on the thread that runs the task; tasks may run on
 * several threads.
 */
RECCE_API void recce_task_create(uint64_t id, const char *type, uint64_t parent);
RECCE_API void recce_task_start(uint64_t id);
RECCE_API void recce_task_stop(uint64_t id);
RECCE_API void recce_task_finish(uint64_t id);

/* --- Sequence tokens: one request across threads, processes, machines ------ */

/*
 * Erlang's seq_trace: a token carries a trace id and a serial along with
 * the messages of one request; `recce seq` merges what every process
 * wrote into a sequence diagram, ordered by serials, not by clocks. The
 * token belongs to the calling thread. See docs/librecce.md.
 */

/* The room a header takes, its NUL included, at most. */
#define RECCE_SEQ_HEADER_MAX 176

/*
 * Starts a token on this thread: a new trace id, serials at 0, and a
 * label that names the request in the diagram (a constant string, as for
 * event names). Returns 0, or -EINVAL for a NULL label.
 */
RECCE_API int recce_seq_begin(const char *label);

/*
 * Puts the token in an outgoing message: raises the thread's serial and
 * writes the header ("00-TRACEID-SPANID-01;recce=LAST.CURRENT.LABEL", NUL-
 * terminated; its first 55 characters are a W3C traceparent) into buf of
 * len bytes, and a send event. Returns the header's length, or 0 when the
 * thread has no token or buf is too small (nothing is written then).
 */
RECCE_API size_t recce_seq_inject(char *buf, size_t len);

/*
 * Takes the token from an incoming message's header (one that
 * recce_seq_inject wrote, or a bare W3C traceparent) and writes a receive
 * event: the thread now carries the token, and its next send follows
 * this message. Returns 0, or -EINVAL for a header it cannot read (the
 * thread's token is then unchanged).
 */
RECCE_API int recce_seq_extract(const char *header);

/* Drops the thread's token (an end event); sends then carry none. */
RECCE_API void recce_seq_end(void);

/* Whether the thread carries a token. */
RECCE_API int recce_seq_active(void);

/*
 * The switch (recce_enable): each event call above is also a macro that
 * tests it before calling, so that a switched-off event costs a load and
 * a branch where it is written, not a call. (recce_event)(name), a
 * pointer to the function, or RECCE_NO_MACROS defined before the include
 * call the function directly; it tests the switch too. Read-only: set it
 * with recce_enable().
 */
RECCE_API extern int recce__on;

#ifndef RECCE_NO_MACROS
#define RECCE__ON()		       __builtin_expect(__atomic_load_n(&recce__on, __ATOMIC_RELAXED), 1)
#define recce_event(name)	       (RECCE__ON() ? recce_event(name) : (void)0)
#define recce_event_value(name, value) (RECCE__ON() ? recce_event_value(name, value) : (void)0)
#define recce_span_begin(name)	       (RECCE__ON() ? recce_span_begin(name) : (void)0)
#define recce_span_end(name)	       (RECCE__ON() ? recce_span_end(name) : (void)0)
#define recce_counter(name, value)     (RECCE__ON() ? recce_counter(name, value) : (void)0)
#endif

/* --- Control (never on the hot path) -------------------------------------- */

struct recce_config {
	/* Threads with a ring at once; 0: $RECCE_THREADS, else 64. */
	unsigned threads;
	/* Events each ring holds, rounded up to a power of two; 0:
	 * $RECCE_RING_EVENTS, else 8192 (256 KiB a thread). */
	unsigned ring_events;
	/* Where the file goes; NULL: $RECCE_EVENTS_DIR, else /dev/shm. The
	 * string is copied. */
	const char *dir;
};

/*
 * Creates the event file now, with these settings, instead of at the
 * first event with the defaults. Returns 0, -EALREADY when the file
 * already exists (the first event came first), or the -errno that
 * stopped it (events are then no-ops). cfg may be NULL. With
 * $RECCE_EVENTS=off it makes no file, switches events off and returns 0.
 */
RECCE_API int recce_init(const struct recce_config *cfg);

/*
 * Switches events on (the default, unless $RECCE_EVENTS is "off") or off.
 * Off, an event call costs a load and a branch.
 */
RECCE_API void recce_enable(int on);
RECCE_API int recce_enabled(void);

/*
 * 0 while events reach the file; else why they do not: -EAGAIN before the
 * first event, or the -errno at which creating the file failed.
 */
RECCE_API int recce_status(void);

/* The path of this process's event file, or NULL before it exists. */
RECCE_API const char *recce_file_path(void);

/* A sentence for a negative errno value, and its name ("ENOSPC"). */
RECCE_API const char *recce_strerror(int err);
RECCE_API const char *recce_err_name(int err);

#ifdef __cplusplus
}
#endif

#endif
