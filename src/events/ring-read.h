/*
 * The reader of librecce event files (ring-format.h): a live process's
 * file, the one a crashed process left, or one `recce events -o` saved.
 *
 * The file is read with pread(), never mapped: a process can write
 * anything into its file, or cut it short, and neither must crash the
 * reader. Every offset, size and name id is checked before use; what
 * fails a check is counted, never trusted.
 *
 * Each drain returns the events that arrived since the one before (the
 * first: everything the rings still hold), in time order, and counts per
 * thread what the writer overwrote before it could be read: exactly, from
 * the ring's head before and after the copy.
 */
#ifndef RECCE_EVENTS_RING_READ_H
#define RECCE_EVENTS_RING_READ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "events/ring-format.h"
#include "util/strpool.h"
#include "util/u64map.h"

struct ring_event {
	uint64_t time_ns; /* CLOCK_MONOTONIC of the writer's machine */
	int32_t tid;
	uint16_t kind;	  /* enum recce_kind */
	uint16_t flags;	  /* RECCE_FLAG_*: the thread's state after it */
	uint32_t thread;  /* index into ring_reader.threads */
	const char *name; /* the reader's copy; "?" when the id was bad */
	int64_t value;
	uint64_t extra;
	uint64_t id_hi, id_lo; /* SEQ_*: the trace id of the SEQ_ID after it */
	uint64_t order;	       /* the order read */
};

/* One thread seen in the file: a slot in one generation. */
struct ring_thread {
	int32_t tid;
	char name[16];
	unsigned slot;
	uint32_t state; /* enum recce_slot_state when last read */
	uint64_t generation;
	uint64_t first; /* its first record in the slot's ring */
	uint64_t next;	/* the next record to read */
	uint64_t read;	/* events delivered */
	uint64_t lost;	/* overwritten before they could be read */
};

struct ring_reader {
	int fd;
	struct recce_file_header hdr; /* as at the last read, checked */
	uint64_t file_size;
	struct ring_thread *threads; /* every thread seen, slots' current first */
	size_t nthreads, cap_threads;
	size_t *slot_thread; /* per slot: its current thread's index + 1, or 0 */
	struct recce_record *buf;
	struct strpool names;
	struct u64map name_ids; /* id -> interned string */
	uint64_t bad_records;	/* records with a bad name id or kind */
	/* Events of threads this reader followed, in slots new threads took
	 * over since: shown or counted as those threads' losses, and so left
	 * out of the file's dropped_reused (which counts every one). */
	uint64_t reused_seen;
	double ns_per_tick;
	uint64_t order;
};

/*
 * Opens the event file of live process pid, found in its mappings
 * (/proc/PID/maps): -ESRCH when there is no such process, -ENOENT when it
 * maps no event file (it does not use librecce, or has written no event
 * yet). path (size len) receives the file's name.
 */
int ring_reader_open_pid(struct ring_reader *r, pid_t pid, char *path, size_t len);

/*
 * Opens an event file by name: one a process left (recce-PID.events) or
 * one recce saved. -EBADMSG when it is not an event file or fails a
 * check, -EPROTONOSUPPORT when it needs a newer reader.
 */
int ring_reader_open_path(struct ring_reader *r, const char *path);

/* The same for an open descriptor, which the reader then owns. */
int ring_reader_open_fd(struct ring_reader *r, int fd);

void ring_reader_release(struct ring_reader *r);

/*
 * Appends to *events (an array of *cap, holding *n) what arrived since
 * the last drain, in time order. Returns 0 or -ENOMEM; a file that became
 * unreadable or malformed gives -EBADMSG, the events before it kept.
 */
int ring_reader_drain(struct ring_reader *r, struct ring_event **events, size_t *n, size_t *cap);

/* Events lost by every thread. */
uint64_t ring_reader_lost(const struct ring_reader *r);

/* Wall-clock nanoseconds of a ring_event time. */
uint64_t ring_reader_realtime(const struct ring_reader *r, uint64_t time_ns);

#endif
