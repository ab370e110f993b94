/*
 * Uprobes and uretprobes on the processes recce traces, with no tracefs
 * state: a probe exists exactly as long as recce's file descriptors and
 * vanishes when they close, even if recce is killed with SIGKILL. The
 * kernel installs a breakpoint only in the address spaces of the traced
 * processes, so another process running the same library is untouched.
 *
 * Two mechanisms, the first the kernel offers:
 *
 * - Link mode (Linux 6.6+, uprobe-bpf.h): a small BPF program attached by
 *   uprobe_multi links, one per file, direction and traced process, which
 *   cover every thread of the process, present and future. Removing them
 *   takes a constant time, whatever the threads and CPUs.
 * - Event mode: the perf_event_open(2) uprobe PMU. On Linux 5.15 and
 *   later the same BPF program runs at each hit, attached to one event
 *   per probe and thread (pid = TID, cpu = -1) with its probe's cookie:
 *   the hits and what they carry (strings and objects copied at the hit)
 *   are link mode's. Else one event per probe, thread and online CPU
 *   (pid = TID, cpu = N), its samples the hits. Probe events are not
 *   inherited (the kernel cannot copy one into a new thread: the target's
 *   clone() would fail), so recce opens the probes on each new thread when
 *   it reads the report of its creation; calls a new thread makes in its
 *   first moments are not seen. Removing them takes a kernel grace period
 *   per event.
 *
 * In both, an inherited dummy event on each target thread reports the
 * threads and processes the targets create (new processes get links or
 * probes of their own), and hits land in one ring per CPU (perf-ring.c).
 * A hit carries the thread, a CLOCK_MONOTONIC time, every general-purpose
 * register with rip and rflags (arguments, returns, the stack pointer that
 * pairs a call with its return, and what an exit jump reads: see the
 * tracer), and, when asked, the user call chain. uprobe_set_read()
 * bounds-checks every record.
 *
 * The config's no_bpf forces event mode (for the tests of both
 * mechanisms, and kernels whose BPF misbehaves).
 *
 * Ownership: uprobe_set_new() returns a heap object; uprobe_set_free()
 * closes every probe and unmaps the rings.
 */
#ifndef RECCE_UPROBE_H
#define RECCE_UPROBE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/x86-regs.h"

#define UPROBE_MAX_CHAIN 64    /* call chain entries kept per hit */
#define UPROBE_MAX_STACK 24576 /* bytes of user stack a hit can carry (UBPF_MAX_STACK) */

struct uprobe_set_config {
	int callchain; /* record the user call chain of every hit */
	/* With callchain: copy this many bytes of user stack at each hit (a
	 * multiple of 8, at most UPROBE_MAX_STACK; 0: none), for an unwind
	 * from the call frame information of code without frame pointers. */
	uint32_t stack_bytes;
	size_t ring_pages; /* data pages per CPU ring (a power of two); 0 = default */
	/* Wake the reader every this many hits on a CPU (0 or 1: every
	 * hit); it is also woken when a ring is half full. Each wakeup costs
	 * the target's thread far more than the probe itself, so a caller
	 * that polls with a timeout anyway should make this large. */
	unsigned wakeup_hits;
	int no_bpf;   /* event mode, without BPF, even where links work */
	int no_links; /* event mode, with BPF where it works, even where links work */
	/* Event mode: the most probe events open at once (0: no limit). Each
	 * is a kernel consumer removed after a grace period, one at a time,
	 * with the target slowed until the last is gone: an attach that
	 * needs more fails with -E2BIG, and new threads past it are left
	 * untraced (counted as unfollowed). */
	size_t max_events;
	/* With callchain and BPF: hits of probes marked by
	 * uprobe_set_py_walk() carry the Python frames of their thread, in
	 * the processes uprobe_set_py_process() names (a kernel without a
	 * BPF loop, 5.17, gets hits without them). */
	int py_frames;
};

/* One probe hit, valid only during the callback. */
struct uprobe_hit {
	int probe;    /* index returned by uprobe_set_add() */
	int retprobe; /* a function return (uretprobe) */
	uint32_t pid, tid;
	uint64_t time;		/* CLOCK_MONOTONIC ns */
	uint64_t gpr[X86_NGPR]; /* by enum x86_gpr */
	uint64_t ip, flags;	/* rip (the probed instruction), rflags */
	/* Link mode: uprobe_set_drops() when the hit was written (0 in event
	 * mode, where only the kernel's late report of losses exists). A
	 * --fast hit: its thread's ring's losses, at most those before it was
	 * written (drops_before) and at least (drops). */
	uint64_t drops, drops_before;
	/* Copies of gpr, named: */
	uint64_t args[6]; /* rdi rsi rdx rcx r8 r9 */
	uint64_t ret;	  /* rax */
	uint64_t sp;	  /* rsp: at a call, the address of its return address */
	int has_regs;
	size_t nchain; /* user addresses, innermost first, markers removed */
	const uint64_t *chain;
	/* With stack_bytes: the copy of the user stack from sp up, stack_len
	 * bytes (fewer where the stack ends sooner; 0 when unreadable). */
	const uint8_t *stack;
	size_t stack_len;
	uint32_t stack_holes; /* pages of it not read, zeros (hit-format.h) */
	uint32_t stack_asked; /* the bytes the copy was asked for (uprobe_set_stack_copy()) */
	/* A probe with a capture (uprobe_set_capture()), in link mode: the
	 * object at rax, NULL when not captured or unreadable, and its
	 * string's first bytes (min(string_len, 64) of them), NULL when not
	 * asked for or unreadable; with uprobe_set_capture_strings(), the
	 * two C strings, NUL-terminated, their lengths without it. */
	const uint8_t *object;
	size_t object_len;
	const uint8_t *string;
	uint64_t string_len; /* the object's length word */
	/* A --fast hit of a child the traced process forked, which ended
	 * before recce could tell it maps the trace's file: maps_pid names
	 * its addresses (the process it was forked from, whose code it
	 * copied), and its memory is not read (no_memory). 0 otherwise. */
	uint32_t maps_pid;
	int no_memory;
	/* A hit of a probe marked by uprobe_set_py_walk(), with py_frames:
	 * py_read set, and the Python frames of its thread then, npy of them,
	 * innermost first, as a py_bpf_record's (py-format.h), and the
	 * PY_REC_* flags (PY_REC_NO_THREAD: none read, or the process has no
	 * layout). */
	int py_read;
	const uint64_t (*py)[4];
	size_t npy;
	uint32_t py_flags;
};

struct uprobe_stats {
	uint64_t hits;
	uint64_t lost;	     /* samples the kernel dropped because a ring was full */
	uint64_t malformed;  /* records that failed a bounds check */
	uint64_t unfollowed; /* probes that could not be opened on a new thread */
	/* Following forks: new processes traced from their first
	 * instruction, and those traced only from when recce read of them. */
	uint64_t followed, followed_late;
	/* Event mode: when the last thread given its probes only after it
	 * ran (a goroutine's return on it, before then, went unseen) was
	 * given them or found gone (CLOCK_MONOTONIC ns; 0: none yet). */
	uint64_t late_until_ns;
};

struct uprobe_set;

/* Chooses the mechanism and opens the per-CPU rings. Returns 0 and *out,
 * or -errno (-EACCES when perf_event_open is refused, -ENOENT with neither
 * links nor a uprobe PMU). */
int uprobe_set_new(const struct uprobe_set_config *cfg, struct uprobe_set **out);
void uprobe_set_free(struct uprobe_set *u);

/*
 * Declares a probe at byte offset `offset` of the file `path` (the
 * function's file offset, not its address), a uretprobe if retprobe is
 * set; nothing fires until uprobe_set_attach(). Returns the probe's index
 * (>= 0, the `probe` of its hits) or -ENOMEM. Probes are put in place in
 * the reverse of the order they were declared: declare a function's entry
 * before its exits, so that no call is seen entering with its exits not
 * yet there.
 */
int uprobe_set_add(struct uprobe_set *u, const char *path, uint64_t offset, int retprobe);

/* Makes probe a USDT probe's with a semaphore at file offset
 * ref_ctr_offset of its file: the kernel raises the counter while the
 * probe is in the process, and lowers it when it comes out, however
 * recce ends. */
void uprobe_set_semaphore(struct uprobe_set *u, int probe, uint64_t ref_ctr_offset);

/* In link mode, makes the hits of probe copy the first size bytes (at most
 * 64) of the object whose address is in rax, and with string, up to 64
 * bytes at the pointer in its first word, as many as its second word says
 * (libstdc++'s std::string). Event mode captures nothing. */
void uprobe_set_capture(struct uprobe_set *u, int probe, size_t size, int string);
/* The same for the object at register reg (enum x86_gpr) plus disp
 * (-32768..32767): at an indirect call through memory, the function
 * pointer it is about to take. */
void uprobe_set_capture_at(struct uprobe_set *u, int probe, int reg, int disp, size_t size,
			   int string);

/* In link mode, makes the hits of probe copy the C strings (up to 63
 * bytes each) at the addresses in registers reg and reg2 (enum x86_gpr):
 * the first as the hit's object, the second as its string, each with
 * its length and NUL-terminated, NULL when unreadable. Event mode
 * captures nothing. */
void uprobe_set_capture_strings(struct uprobe_set *u, int probe, int reg, int reg2);

/* In link mode, makes the hits of probe copy the bytes at the address in
 * register reg, as many as register len_reg holds (up to 64): the hit's
 * object, object_len the count copied (a string result that is a
 * pointer and a length). Event mode captures nothing. */
void uprobe_set_capture_counted(struct uprobe_set *u, int probe, int reg, int len_reg);

/* With py_frames, makes the hits of probe read their thread's Python
 * frames (a Python call's entry probe); with few, only the first few (the
 * call's own and its caller's: UBPF_PY_FEW). */
void uprobe_set_py_walk(struct uprobe_set *u, int probe, int few);

/* With py_frames, where CPython process pid keeps its threads' frames
 * (py-format.h). Returns 0, or
 * -EOPNOTSUPP when the hits carry no Python frames (no py_frames, or a
 * kernel without a BPF loop), or -errno. */
struct py_bpf_layout;
int uprobe_set_py_process(struct uprobe_set *u, pid_t pid, const struct py_bpf_layout *L);

/*
 * Attaches every probe declared so far to process pid, whose threads are
 * tids (those that exited meanwhile are skipped), and to the threads and
 * processes it creates while traced. Returns 0 or -errno: -ESRCH when the
 * process is gone, -EMFILE, -EACCES, -EINVAL (the kernel refused an
 * offset); then uprobe_set_error_path() names the file whose probes failed
 * and nothing of this call stays attached.
 */
int uprobe_set_attach(struct uprobe_set *u, pid_t pid, const pid_t *tids, size_t ntids);
const char *uprobe_set_error_path(const struct uprobe_set *u);

/*
 * Link mode, before the first uprobe_set_attach(): every process a traced
 * process creates is traced from its first instruction, as are their own
 * children. The links then hold a breakpoint in every process that maps
 * a probed file, now or later, and the BPF program returns at once for
 * those outside the family, whose ids a fork tracepoint keeps: call it only when no other process
 * maps those files. Returns 0, -EOPNOTSUPP in event mode or after an
 * attach, or -errno (no BTF, no raw tracepoints).
 */
int uprobe_set_follow_forks(struct uprobe_set *u);

/* Whether link mode is in use (see above). */
int uprobe_set_uses_links(const struct uprobe_set *u);

/* Whether the hits are written by the BPF program: in link mode, or in
 * event mode with the program on each event. */
int uprobe_set_uses_bpf(const struct uprobe_set *u);

/* With the program (uprobe_set_uses_bpf()) and a stack copy: the hits
 * from now on copy bytes of stack (a multiple of 8, at most
 * UPROBE_MAX_STACK), as the copy grows; each hit says what it asked
 * for. Returns 0, -EOPNOTSUPP without the program, or -errno. */
int uprobe_set_stack_copy(struct uprobe_set *u, uint32_t bytes);

/* Event mode: the probe events the last uprobe_set_attach() needed in all
 * (probes x threads x CPUs, with those open before), and the CPUs (0 with
 * the BPF program, whose events are one per probe and process). */
size_t uprobe_set_events_wanted(const struct uprobe_set *u, size_t *ncpus);

/* Removes every probe at once (closes their descriptors); the rings stay,
 * so hits already recorded can still be read. */
void uprobe_set_remove_all(struct uprobe_set *u);

/* Descriptors to poll(2) for POLLIN, one per ring; returns the count. */
size_t uprobe_set_pollfds(const struct uprobe_set *u, int *fds, size_t max);

/* Reads every hit now in the rings, in time order, and opens the probes on
 * the threads the targets created (until uprobe_set_remove_all()). A
 * non-zero return from fn stops early. Returns the number of hits read or
 * -errno. */
int uprobe_set_read(struct uprobe_set *u, int (*fn)(const struct uprobe_hit *hit, void *arg),
		    void *arg);

/* Link mode: the hits dropped so far (their ring full), counted the moment
 * each was dropped: a hit written after hit h may be lost when this is
 * above h's drops. 0 in event mode. */
uint64_t uprobe_set_drops(const struct uprobe_set *u);

const struct uprobe_stats *uprobe_set_stats(const struct uprobe_set *u);

#endif
