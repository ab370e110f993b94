/*
 * What the files of the fast probe set share (fast-set.c: the library,
 * the shared file, the trampolines and the jumps; fast-set-read.c: the
 * rings read back): the set itself and the few functions one calls in
 * the other. Not for other layers.
 */
#ifndef RECCE_INJECT_FAST_SET_INTERNAL_H
#define RECCE_INJECT_FAST_SET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "inject/fast-format.h"
#include "inject/inject.h"
#include "inject/trampoline.h"
#include "proc/family.h"
#include "inject/fast-set.h"

#define JUMP_LEN TRAMP_JUMP_LEN
_Static_assert(TRAMP_CODE_MAX == RECCE_FAST_CODE, "a site holds what a region replaces");
#define TRAMP_SIZE    256 /* bytes of a trampoline, one after another in a page */
#define TRAMP_PAGES   (16u << 10)
#define TRAMP_NAME    "recce-trace"
#define CODE_READ_MAX (256u << 10)
#define SLOTS	      64u  /* rings at most */
#define SLOTS_SPARE   4u   /* rings beyond the threads (and children) at the start */
#define LOCK_WAIT_MS  3000 /* for another recce to be done with the process */
#define RING_RECORDS  (64u << 10)
#define CAL_POINTS    64u /* readings of the two clocks kept */
#define LIB_NAME      "librecce-fast.so"
#define CHILD_WAIT_MS 3000 /* for the children's watchdogs to put their bytes back */

/* A hook: what a trampoline reports, by the index it passes. */
struct fast_hook {
	int probe;   /* the caller's probe number */
	uint64_t ip; /* the instruction it stands for: an entry or an exit */
};

/* Bytes replaced by a jump to a trampoline: a function's entry, or the
 * last instructions before one of its exits. */
struct fast_site {
	uint64_t addr, tramp;
	uint32_t len; /* bytes the jump replaces */
	uint8_t orig[RECCE_FAST_CODE], jump[RECCE_FAST_CODE];
	uint8_t code[TRAMP_SIZE]; /* the trampoline */
	size_t code_len;
};

/* A process that wrote records, by the pid it gave, as recce found it. */
enum proc_verdict {
	PROC_FOUND,   /* it maps the file: the traced process's child (pidfd held) */
	PROC_EXITED,  /* no such process, a zombie, or one without memory */
	PROC_UNFOUND, /* a process that does not map the file (it exec'd, or another one) */
};

struct fast_proc {
	pid_t pid;
	int pidfd; /* PROC_FOUND: the process's; else -1 */
	enum proc_verdict verdict;
};

struct fast_set {
	pid_t pid;
	int alloc; /* RECCE_FAST_MODE_ALLOC, by alloc_cfg */
	struct fast_alloc_config alloc_cfg;
	struct injector inj;
	int inj_open;
	int lock_fd;	 /* the lock on the process's code, held to the end */
	uint64_t hit_fn; /* recce_fast_hit in the process */
	struct recce_fast_header *h;
	size_t map_len;
	uint32_t slots; /* rings in the file */
	/* Our own copy of the geometry: the process can write the header. */
	uint64_t slot_size;
	struct fast_site *sites;
	size_t nsites, cap;
	struct fast_hook *hooks;
	size_t nhooks, hooks_cap;
	struct tramp_hooks hooks_fn; /* numbers the hooks into hooks[] */
	uint64_t page, page_used;    /* the trampoline page being filled */
	int attached;
	int stopped;   /* a call for a trampoline page found the process stopped */
	uint64_t lost; /* records lost, as of the last read */
	/* The CPU's clock against CLOCK_MONOTONIC: a reading of both at the
	 * start and at every read, the last CAL_POINTS kept (cal[ncal %
	 * CAL_POINTS] is the next). A record's time is interpolated between
	 * the two readings around it, so it never depends on when the record
	 * was read: a thread's times only go up. */
	struct cal_point {
		uint64_t tsc, mono;
	} cal[CAL_POINTS];
	uint64_t ncal;
	/* Per ring, the time of the last record read from it: a thread that
	 * moves to a CPU whose clock is a little behind (virtual CPUs need
	 * not agree) must not see its later calls placed before its earlier
	 * ones; such a record takes the time of the one before it. */
	uint64_t ring_time[SLOTS];
	/* Per ring, its losses read before its head at the last read that
	 * took every record: a record still to read was written after them,
	 * so they are a lower bound of the losses before it. */
	uint64_t ring_lost[SLOTS];
	uint64_t ring_tsc[SLOTS]; /* allocations: the CPU clock of each ring's last record */
	/* Children: the file's identity, to tell them by; the processes
	 * records came from, as found (a read's records mostly come from a
	 * few: the one found last is tried first); calls of processes not
	 * found, shown with memory unread; children whose bytes recce could
	 * not see put back at the end. */
	struct proc_file_id file;
	pid_t ns_pid; /* the process's pid as it sees it */
	int same_ns;  /* the process is in recce's PID namespace */
	struct fast_proc *procs;
	size_t nprocs, procs_cap, last_proc;
	uint64_t unfound_calls;
	size_t children_left;
	/* Allocations: a read's events, put in time order across the rings,
	 * and their stack copies. */
	struct fast_alloc_event *evs;
	size_t nevs, evs_cap;
	uint8_t *stacks;
	size_t stacks_len, stacks_cap;
};

/* The CPU's clock. */
static inline uint64_t fast_rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* fast-set-read.c: takes a reading of both clocks and returns the CPU
 * clock's; what the process with pid is to the set (pidfd: its
 * descriptor when PROC_FOUND). */
uint64_t fast_set_cal_add(struct fast_set *s);
enum proc_verdict fast_set_find_process(const struct fast_set *s, pid_t pid, int *pidfd);
/* CLOCK_MONOTONIC of a CPU clock reading: on the line between the two
 * readings around it (the newest two past the newest, the oldest two
 * before the oldest kept), whenever it is asked. */
uint64_t fast_set_tsc_to_mono(const struct fast_set *s, uint64_t tsc);

#endif
