/*
 * The layout of a fast-trace file: the contract between recce and the
 * library it injects into a process for `recce trace --fast`
 * (lib/fast/fast.c, librecce-fast.so).
 *
 * recce creates the file (in /dev/shm, owned by the target's user, mode
 * 0600), asks the injected library to map it, and removes its name: the
 * two processes then share it alone.
 *
 *   [ header: RECCE_FAST_HEADER_SIZE bytes, the sites' table inside  ]
 *   [ slot 0: struct recce_fast_slot, then ring_records records       ]
 *   [ slot 1 ...                                                      ]
 *
 * A site is one patched function: its entry now jumps to a trampoline
 * that calls the library's recorder with the site's index and the
 * registers, then runs the instructions the jump replaced (relocated, at
 * `resume`) and jumps back. recce fills a site before it writes the jump,
 * so that the library's watchdog always knows what to put back.
 *
 * A child the process forks while traced is traced too: it keeps the jumps
 * and the file, takes an entry of the children's table, and starts a
 * watchdog of its own, which puts the child's bytes back when recce says
 * the trace is over (detach) or dies. Its threads claim slots as the
 * process's do; each record names its process (as it sees its pid).
 *
 * A slot's owner (and an entry's) is one word, its thread's (process's)
 * id and its state, changed by compare-and-swap: a thread that finds no
 * free slot takes over one whose thread is gone (tgkill says so: it ended
 * without a word, or its process exited), which the word proves nobody
 * else took first.
 *
 * Each thread that records claims a slot and is its ring's only writer;
 * recce is its only reader. The writer never overwrites: a record that
 * finds the ring full (head - tail == ring_records) is counted in `lost`.
 * Writer: fill record head % ring_records, store head + 1 (release).
 * Reader: load head (acquire), read up to it, store tail (release).
 *
 * Allocations (mode RECCE_FAST_MODE_ALLOC, `recce record -e alloc
 * --fast`): the trampolines call recce_fast_alloc instead, on the entry
 * and the exits of the allocator's functions, and the library samples in
 * the process: a countdown of bytes per thread, restarted from recce's
 * draws, picks the calls to sample, as the allocation program does in the
 * kernel (perf/alloc-format.h). Only what recce needs is written: a
 * sampled call (with the caller's registers and a copy of the top of its
 * stack, to unwind), its result, and the free of a sampled address, which
 * the library knows by a table of the sampled addresses in use. A record
 * of an allocation event has args[0] = enum alloc_event, and:
 *
 *   ALLOC_EV_SAMPLE  args[1] size, [2] the return address, [3] stack
 *                    bytes copied, [4] the stack pointer at the call (the
 *                    return address's place); followed by
 *                    recce_fast_alloc_extra(args[3]) records holding the
 *                    callee-saved registers (RECCE_FAST_ALLOC_REGS words:
 *                    rbx rbp r12 r13 r14 r15) then the stack's bytes from
 *                    args[4] up
 *   ALLOC_EV_RETURN  args[1] the address, 0 if the call failed; [2] flags
 *                    (RECCE_FAST_ALLOC_UNKNOWN: the call left by a jump,
 *                    its result unseen; RECCE_FAST_ALLOC_UNTRACKED: the
 *                    table was full, its free will not be seen)
 *   ALLOC_EV_FREE    args[1] the address
 */
#ifndef RECCE_INJECT_FAST_FORMAT_H
#define RECCE_INJECT_FAST_FORMAT_H

#include <stdint.h>

#define RECCE_FAST_MAGIC       "RECCEFST"
#define RECCE_FAST_VERSION     4
#define RECCE_FAST_HEADER_SIZE (1024u * 1024u)
#define RECCE_FAST_SITES       16384u
#define RECCE_FAST_CODE	       16u
#define RECCE_FAST_CHILDREN    256u

/* What the trampolines record (the header's mode). */
enum recce_fast_mode {
	RECCE_FAST_MODE_CALLS = 0, /* recce_fast_hit: every call */
	RECCE_FAST_MODE_ALLOC = 1, /* recce_fast_alloc: sampled allocations */
};

#define RECCE_FAST_ALLOC_HOOKS 4096u /* hooks an allocation recorder knows */
#define RECCE_FAST_ALLOC_DRAWS 1024u /* countdowns to draw from (a power of two) */
#define RECCE_FAST_ALLOC_STACK 8192u /* stack bytes a sample copies at most */
#define RECCE_FAST_ALLOC_REGS  6u    /* rbx rbp r12 r13 r14 r15 */

/* A hook's byte in alloc_kind: the function's enum alloc_fn_kind
 * (perf/alloc-format.h) in the low bits, and where the hook is. */
#define RECCE_FAST_ALLOC_KIND  0x07
#define RECCE_FAST_ALLOC_RET   0x08 /* at a ret */
#define RECCE_FAST_ALLOC_JUMP  0x10 /* at a jump out of the function */
#define RECCE_FAST_ALLOC_GLIBC 0x20 /* glibc's: some calls are left to malloc (ALLOC_FN_GLIBC) */

/* ALLOC_EV_RETURN's flags. */
#define RECCE_FAST_ALLOC_UNKNOWN   1
#define RECCE_FAST_ALLOC_UNTRACKED 2

enum recce_fast_site_state {
	RECCE_FAST_SITE_FREE = 0,
	RECCE_FAST_SITE_USED = 1, /* its jump is written, or about to be */
};

struct recce_fast_site {
	uint64_t addr;		       /* the function's entry */
	uint64_t resume;	       /* the relocated instructions in the trampoline */
	uint32_t len;		       /* bytes the jump replaced */
	uint32_t state;		       /* enum recce_fast_site_state */
	uint8_t orig[RECCE_FAST_CODE]; /* the bytes before */
	uint8_t code[RECCE_FAST_CODE]; /* the jump */
};

/* The name of the library's watchdog thread (its comm). */
#define RECCE_FAST_WATCHDOG "recce-watchdog"

/* What the library's watchdog did. */
enum recce_fast_watch {
	RECCE_FAST_WATCHING = 1, /* it watches recce */
	RECCE_FAST_RESTORED = 2, /* recce died: it put every site's bytes back */
	RECCE_FAST_LEFT = 3,	 /* recce said the trace is over */
};

/* An owner word: an id (a tid or a pid) and a state. */
#define RECCE_FAST_OWNER(id, state) ((uint64_t)(uint32_t)(id) | (uint64_t)(state) << 32)
#define RECCE_FAST_OWNER_ID(w)	    ((int32_t)(uint32_t)(w))
#define RECCE_FAST_OWNER_STATE(w)   ((uint32_t)((w) >> 32))

/* An entry of the children's table: taken (FREE, or a child's that is
 * gone) and TRACED by the child as it forks, before it runs any code of
 * its own; DONE by its watchdog once its bytes are back (or by recce,
 * which put them back itself). */
enum recce_fast_child_state {
	RECCE_FAST_CHILD_FREE = 0,
	RECCE_FAST_CHILD_TRACED = 1, /* its watchdog runs */
	RECCE_FAST_CHILD_DONE = 2,   /* its bytes are back */
};

struct recce_fast_child {
	uint64_t owner; /* RECCE_FAST_OWNER(pid as the child sees it, state), atomic */
};

struct recce_fast_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;  /* RECCE_FAST_HEADER_SIZE */
	uint32_t slots;	       /* thread slots */
	uint32_t ring_records; /* records per slot, a power of two */
	uint32_t record_size;  /* sizeof(struct recce_fast_record) */
	uint32_t nsites;       /* sites in use are below this */
	uint64_t slot_size;    /* bytes from one slot to the next */
	uint64_t file_size;
	int32_t recce_pid; /* the recce to watch */
	int32_t target_pid;

	/* Written by recce. */
	uint32_t enabled; /* 1: record; 0: the trampolines only pass through */
	uint32_t detach;  /* 1: the trace is over, the sites are restored */

	/* Written by the library. */
	uint32_t claimed;  /* slots taken (atomic) */
	uint32_t watch;	   /* enum recce_fast_watch */
	uint64_t no_slot;  /* records of threads that found no free slot */
	uint64_t restored; /* sites the watchdog put back */
	uint64_t forks;	   /* children forked during the trace and not traced (atomic) */
	uint64_t pad[7];

	struct recce_fast_site sites[RECCE_FAST_SITES];
	struct recce_fast_child children[RECCE_FAST_CHILDREN];

	/* RECCE_FAST_MODE_ALLOC. Written by recce before any jump. */
	uint32_t mode;	      /* enum recce_fast_mode */
	uint32_t alloc_stack; /* stack bytes a sample copies, RECCE_FAST_ALLOC_STACK at most */
	int64_t alloc_draws[RECCE_FAST_ALLOC_DRAWS];
	uint8_t alloc_kind[RECCE_FAST_ALLOC_HOOKS]; /* per hook; 0: none */
	/* Written by the library (atomic). */
	uint64_t alloc_no_stack;  /* samples taken off their thread's stack: no stack copied */
	uint64_t alloc_untracked; /* sampled addresses the table had no room for */
};

struct recce_fast_slot {
	uint64_t head; /* the writer: records written */
	uint64_t pad0[7];
	uint64_t tail; /* the reader: records read */
	uint64_t pad1[7];
	uint64_t lost; /* the writer: records dropped, the ring full */
	/* RECCE_FAST_OWNER(tid, state): TAKEN by a thread; GONE when that
	 * thread exits; TAKEN again by a new thread when no fresh slot is
	 * left (or over from a thread gone without a word), whose records
	 * follow the old one's in the same ring (each record names its
	 * thread and process). Atomic. */
	uint64_t owner;
	int32_t pid; /* the owner's process, as it sees it; written while CLAIMING */
	uint32_t pad2;
	uint64_t pad3[5];
};

enum recce_fast_slot_state {
	RECCE_FAST_SLOT_TAKEN = 0,
	RECCE_FAST_SLOT_GONE = 1,
	RECCE_FAST_SLOT_CLAIMING = 2, /* being taken: its pid not yet written */
};

struct recce_fast_record {
	uint64_t tsc;	  /* rdtsc at the call */
	uint32_t site;	  /* index in the sites' table */
	int32_t tid;	  /* the calling thread */
	uint64_t args[6]; /* rdi rsi rdx rcx r8 r9 */
	uint64_t rax;
	uint64_t sp; /* at the call: the address of the return address */
	uint64_t ra; /* the return address */
	int32_t pid; /* the calling process, as it sees its pid */
	uint32_t pad;
};

_Static_assert(sizeof(struct recce_fast_header) <= RECCE_FAST_HEADER_SIZE, "fast header");
_Static_assert(sizeof(struct recce_fast_slot) == 192, "fast slot");
_Static_assert(sizeof(struct recce_fast_record) == 96, "fast record");

/* The records after an ALLOC_EV_SAMPLE's that hold its registers and
 * stack bytes of its stack copy. */
static inline uint64_t recce_fast_alloc_extra(uint64_t stack_bytes)
{
	uint64_t bytes = RECCE_FAST_ALLOC_REGS * 8 + stack_bytes;

	return (bytes + sizeof(struct recce_fast_record) - 1) / sizeof(struct recce_fast_record);
}

#endif
