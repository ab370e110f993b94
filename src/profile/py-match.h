/*
 * Which of a thread's queued Python frame records is a sample's own
 * (profile/py-samples.h). The BPF program writes a thread's record in
 * the same interrupt as perf writes its sample, both in order, so the
 * two sequences pair off; a record whose sample perf lost is an orphan,
 * a sample whose record the ring had no room for has none. A record
 * carries the times the program started and ended; perf takes the
 * sample's time on one side of that run, the side the kernel fixes (the
 * program runs after perf takes it since Linux 6.3, before on older
 * kernels), microseconds from it, unless the CPU stalls in between, as
 * a virtual machine's can for milliseconds.
 *
 * Until the side is known, a sample's record is the first whose run is
 * within window_ns of it, the ones before being orphans. Once
 * PY_MATCH_LEARN such matches in a row agree on the side, it is the
 * first record whose run starts at or after the sample (after) or the
 * last whose run ends at or before it (before), the ones before it
 * being orphans, however far: a stall loses no match. Beyond the window,
 * a record is taken only within PY_MATCH_STALL_NS and when the caller
 * says no record was dropped (one further on may be a later sample's
 * then).
 */
#ifndef RECCE_PROFILE_PY_MATCH_H
#define RECCE_PROFILE_PY_MATCH_H

#include <stddef.h>
#include <stdint.h>

#define PY_MATCH_LEARN	  16
#define PY_MATCH_STALL_NS 100000000ull

enum py_match_side { PY_SIDE_UNKNOWN, PY_SIDE_AFTER, PY_SIDE_BEFORE };

struct py_match {
	uint64_t window_ns;
	enum py_match_side side;
	enum py_match_side leaning; /* of the last matches */
	unsigned agreed;	    /* how many in a row */
};

/* The program's run for one record: its start and end times. */
struct py_match_run {
	uint64_t start, end;
};

void py_match_init(struct py_match *m, uint64_t window_ns);

/* Whether the record at the head of a thread's queue (next: the one
 * after it, or NULL) is an orphan for the sample taken at time, to be
 * dropped. */
int py_match_orphan(const struct py_match *m, const struct py_match_run *head,
		    const struct py_match_run *next, uint64_t time);

enum py_match_take { PY_TAKE_NO, PY_TAKE_YES, PY_TAKE_IF_NO_DROPS };

/* Whether the head, once no orphan, is that sample's record: yes, no,
 * or only if the program's ring dropped no record. */
enum py_match_take py_match_take(struct py_match *m, const struct py_match_run *head,
				 uint64_t time);

#endif
