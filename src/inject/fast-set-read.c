/*
 * The rings of fast probes read back (see fast-set.h's fast_set_read()):
 * the CPU clock of each record put on CLOCK_MONOTONIC, the process each
 * record came from found (the traced one, a child, or one recce cannot
 * tell), and the records handed on as uprobe hits; with the counts of
 * what was lost or left.
 */
#include "inject/fast-set.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject/fast-format.h"
#include "perf/alloc-format.h"
#include "proc/family.h"
#include "proc/procstat.h"
#include "proc/self.h"
#include "inject/fast-set-internal.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/evloop.h"

/* Takes a reading of both clocks; returns the CPU clock's. */
uint64_t fast_set_cal_add(struct fast_set *s)
{
	struct cal_point p = {fast_rdtsc(), time_now_ns(CLOCK_MONOTONIC)};
	const struct cal_point *last = s->ncal ? &s->cal[(s->ncal - 1) % CAL_POINTS] : NULL;

	if (last && (p.tsc <= last->tsc || p.mono <= last->mono))
		return last->tsc;
	s->cal[s->ncal++ % CAL_POINTS] = p;
	return p.tsc;
}

uint64_t fast_set_tsc_to_mono(const struct fast_set *s, uint64_t tsc)
{
	uint64_t n = s->ncal < CAL_POINTS ? s->ncal : CAL_POINTS;
	const struct cal_point *a, *b;

	if (n == 0)
		return 0;
	b = &s->cal[(s->ncal - 1) % CAL_POINTS];
	if (n == 1)
		return b->mono;
	/* The segment around tsc, newest first (most records are there); a
	 * record older than the oldest reading kept, one that took that long
	 * to be published, is placed on the oldest segment's line. */
	for (uint64_t k = 1; k < n; k++) {
		a = &s->cal[(s->ncal - 1 - k) % CAL_POINTS];
		if (a->tsc <= tsc || k == n - 1)
			break;
		b = a;
	}
	__int128 d = (__int128)((int64_t)(tsc - a->tsc)) * (int64_t)(b->mono - a->mono);
	return a->mono + (uint64_t)(int64_t)(d / (int64_t)(b->tsc - a->tsc));
}

static struct recce_fast_slot *slot_at(const struct fast_set *s, uint32_t i)
{
	return (struct recce_fast_slot *)((char *)s->h + RECCE_FAST_HEADER_SIZE +
					  (uint64_t)i * s->slot_size);
}

/* The records lost so far, read from every ring. */
static uint64_t count_lost(const struct fast_set *s)
{
	uint64_t lost = __atomic_load_n(&s->h->no_slot, __ATOMIC_RELAXED);
	uint32_t claimed = __atomic_load_n(&s->h->claimed, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < claimed && i < s->slots; i++)
		lost += __atomic_load_n(&slot_at(s, i)->lost, __ATOMIC_RELAXED);
	return lost;
}

/* Whether pid has exited, its parent yet to wait for it. */
static int is_zombie(pid_t pid)
{
	char st = procstat_task_state(pid, pid);

	return st == 'Z' || st == 'X';
}

/* How recce finds the process of pid, a pid a record gives: with a
 * pidfd taken first, so that the pid cannot come to name another process
 * before the file is found in its maps. */
enum proc_verdict fast_set_find_process(const struct fast_set *s, pid_t pid, int *pidfd)
{
	size_t which;
	int fd = pid > 0 ? proc_pidfd_open(pid) : -1;
	int maps = fd >= 0 ? proc_maps_files(pid, &s->file, 1, 0, &which) : -ESRCH;

	*pidfd = -1;
	if (maps == 1) {
		*pidfd = fd;
		return PROC_FOUND;
	}
	/* A process on its way out has given its memory back before it is
	 * a zombie (-ESRCH); maps even root may not read say nothing. */
	int exited = pid > 0 && (fd < 0 ? errno == ESRCH
					: maps == -ESRCH || maps == -ENOENT || is_zombie(pid));
	if (fd >= 0)
		close(fd);
	return exited ? PROC_EXITED : PROC_UNFOUND;
}

/* Before a read: forgets the processes found exited or not found, and
 * those found whose pidfd says they exited since, to be found again if
 * a record gives their pid (a new process may have it). */
static void forget_procs(struct fast_set *s)
{
	if (!s->nprocs)
		return; /* the traced process alone: nothing to ask */
	int *fds = calloc(s->nprocs, sizeof(*fds));
	unsigned char *gone = calloc(s->nprocs, 1);
	size_t kept = 0;

	for (size_t i = 0; fds && i < s->nprocs; i++)
		fds[i] = s->procs[i].pidfd;
	if (fds && gone)
		evloop_ready_now(fds, s->nprocs, gone);
	for (size_t i = 0; i < s->nprocs; i++) {
		struct fast_proc *f = &s->procs[i];
		/* Out of memory: every process is found again. */
		if (f->verdict == PROC_FOUND && fds && gone && !gone[i]) {
			s->procs[kept++] = *f;
			continue;
		}
		if (f->pidfd >= 0)
			close(f->pidfd);
	}
	free(fds);
	free(gone);
	s->nprocs = kept;
	s->last_proc = 0;
}

/* The process a record gives, as found; NULL when out of memory. */
static const struct fast_proc *record_proc(struct fast_set *s, pid_t pid)
{
	if (s->last_proc < s->nprocs && s->procs[s->last_proc].pid == pid)
		return &s->procs[s->last_proc];
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[s->last_proc = i];
	struct fast_proc *v = array_reserve(s->procs, &s->procs_cap, s->nprocs + 1, sizeof(*v));
	if (!v)
		return NULL;
	s->procs = v;
	struct fast_proc *f = &s->procs[s->nprocs];
	f->pid = pid;
	f->verdict = s->same_ns ? fast_set_find_process(s, pid, &f->pidfd) : PROC_UNFOUND;
	if (!s->same_ns)
		f->pidfd = -1;
	return &s->procs[s->last_proc = s->nprocs++];
}

/* Who made record r, for the hit: the traced process, a child of it
 * found, or one not found, shown as it gave its pid, named by the code
 * its parent had (a child copies it at fork), nothing read from a memory
 * recce cannot tell is its (when it exited, there is none to read). */
static void record_process(struct fast_set *s, const struct recce_fast_record *r,
			   struct uprobe_hit *h)
{
	h->pid = (uint32_t)s->pid;
	if (r->pid == s->ns_pid || r->pid <= 0)
		return;
	const struct fast_proc *f = record_proc(s, r->pid);
	h->pid = (uint32_t)r->pid;
	if (f && f->verdict == PROC_FOUND)
		return;
	h->maps_pid = (uint32_t)s->pid;
	h->no_memory = 1;
	s->unfound_calls += !f || f->verdict == PROC_UNFOUND;
}

/* The CPU clock's ticks in 10 ms, from the first and the last reading
 * kept (0 before two). */
static uint64_t ticks_10ms(const struct fast_set *s)
{
	uint64_t n = s->ncal < CAL_POINTS ? s->ncal : CAL_POINTS;

	if (n < 2)
		return 0;
	const struct cal_point *a = &s->cal[(s->ncal - n) % CAL_POINTS];
	const struct cal_point *b = &s->cal[(s->ncal - 1) % CAL_POINTS];
	if (b->mono <= a->mono)
		return 0;
	return (uint64_t)((__int128)(b->tsc - a->tsc) * 10000000 / (b->mono - a->mono));
}

/* Whether a record stamped tsc waits for the next read: while the jumps
 * are in, one written after the reading until, so that a later reading
 * places it in time; but not one stamped more than skew ticks past the
 * clock as it is read (0: the clock's rate is not known yet), which comes
 * from a CPU whose clock disagrees with recce's (a virtual machine's may)
 * and would hold its ring's records back to the end. Measured from until
 * instead, a read that takes longer than skew (a busy machine) would take
 * a thread's newest records before another thread's older ones: a block's
 * reuse before its free. */
static int read_later(const struct fast_set *s, uint64_t tsc, uint64_t until, uint64_t skew)
{
	return s->attached && tsc >= until && (!skew || tsc < fast_rdtsc() + skew);
}

int fast_set_read(struct fast_set *s, int (*cb)(const struct uprobe_hit *, void *), void *arg)
{
	uint32_t claimed = __atomic_load_n(&s->h->claimed, __ATOMIC_ACQUIRE);
	uint64_t chain[2];
	int rc = 0;

	if (claimed > s->slots)
		claimed = s->slots;
	forget_procs(s);
	/* Once the jumps are out, the rest is read at once (read_later()). */
	uint64_t until = fast_set_cal_add(s), skew = ticks_10ms(s);
	/* Once a read: a record lost from here on counts at the next. */
	s->lost = count_lost(s);
	for (uint32_t i = 0; i < claimed && !rc; i++) {
		struct recce_fast_slot *sl = slot_at(s, i);
		const struct recce_fast_record *recs = (const void *)(sl + 1);
		/* The ring's losses: those before its head's read are before
		 * any record still to come; those after it count every loss
		 * before the records read now (the writer drops a record
		 * without moving the head, x86 shows stores in order). */
		uint64_t lost_from = __atomic_load_n(&sl->lost, __ATOMIC_ACQUIRE);
		uint64_t head = __atomic_load_n(&sl->head, __ATOMIC_ACQUIRE);
		uint64_t lost_upto = __atomic_load_n(&sl->lost, __ATOMIC_ACQUIRE);
		uint64_t tail = sl->tail;
		if (head - tail > RING_RECORDS)
			tail = head - RING_RECORDS; /* never: the writer does not overwrite */
		for (; tail < head && !rc; tail++) {
			const struct recce_fast_record *r = &recs[tail & (RING_RECORDS - 1)];
			if (read_later(s, r->tsc, until, skew))
				break;
			if (r->site >= s->nhooks)
				continue;
			const struct fast_hook *f = &s->hooks[r->site];
			struct uprobe_hit h;
			memset(&h, 0, sizeof(h));
			record_process(s, r, &h);
			h.probe = f->probe;
			h.tid = (uint32_t)r->tid;
			h.time = fast_set_tsc_to_mono(s, r->tsc);
			if (h.time < s->ring_time[i])
				h.time = s->ring_time[i];
			s->ring_time[i] = h.time;
			h.gpr[X86_RDI] = h.args[0] = r->args[0];
			h.gpr[X86_RSI] = h.args[1] = r->args[1];
			h.gpr[X86_RDX] = h.args[2] = r->args[2];
			h.gpr[X86_RCX] = h.args[3] = r->args[3];
			h.gpr[X86_R8] = h.args[4] = r->args[4];
			h.gpr[X86_R9] = h.args[5] = r->args[5];
			h.gpr[X86_RAX] = h.ret = r->rax;
			h.gpr[X86_RSP] = h.sp = r->sp;
			h.ip = f->ip;
			h.has_regs = 1;
			h.drops_before = s->ring_lost[i];
			h.drops = lost_upto;
			chain[0] = f->ip;
			chain[1] = r->ra;
			h.chain = chain;
			h.nchain = 2;
			rc = cb(&h, arg);
		}
		__atomic_store_n(&sl->tail, tail, __ATOMIC_RELEASE);
		if (tail == head)
			s->ring_lost[i] = lost_from;
	}
	return rc;
}

int fast_set_stopped(const struct fast_set *s)
{
	return s && s->stopped;
}

uint64_t fast_set_forks(const struct fast_set *s)
{
	return s && s->h ? __atomic_load_n(&s->h->forks, __ATOMIC_RELAXED) : 0;
}

uint64_t fast_set_unfound_calls(const struct fast_set *s)
{
	return s ? s->unfound_calls : 0;
}

size_t fast_set_children_left(const struct fast_set *s)
{
	return s ? s->children_left : 0;
}

uint64_t fast_set_lost(const struct fast_set *s)
{
	return s->attached ? s->lost : count_lost(s);
}

int fast_set_thread_lost(const struct fast_set *s, int32_t tid, uint64_t *lost)
{
	uint32_t claimed = __atomic_load_n(&s->h->claimed, __ATOMIC_ACQUIRE);
	int found = 0;

	for (uint32_t i = 0; i < claimed && i < s->slots; i++) {
		const struct recce_fast_slot *sl = slot_at(s, i);
		uint64_t w = __atomic_load_n(&sl->owner, __ATOMIC_ACQUIRE);
		if (RECCE_FAST_OWNER_ID(w) != tid)
			continue;
		uint64_t n = __atomic_load_n(&sl->lost, __ATOMIC_ACQUIRE);
		if (!found || n > *lost)
			*lost = n;
		found = 1;
	}
	return found ? 0 : -1;
}

void fast_set_alloc_stats(const struct fast_set *s, uint64_t *no_stack, uint64_t *untracked)
{
	*no_stack = __atomic_load_n(&s->h->alloc_no_stack, __ATOMIC_RELAXED);
	*untracked = __atomic_load_n(&s->h->alloc_untracked, __ATOMIC_RELAXED);
}

/* perf's register numbers (PERF_EVENTS_REGS_MASK order). */
enum { PR_BX = 1, PR_BP = 6, PR_SP = 7, PR_IP = 8, PR_R12 = 13, PR_R13, PR_R14, PR_R15 };

/* Room for one more event and, for a sample, len bytes of stack. */
static struct fast_alloc_event *new_event(struct fast_set *s, size_t len)
{
	struct fast_alloc_event *v =
	    array_reserve(s->evs, &s->evs_cap, s->nevs + 1, sizeof(*s->evs));
	if (!v)
		return NULL;
	s->evs = v;
	uint8_t *b = array_reserve(s->stacks, &s->stacks_cap, s->stacks_len + len + 1, 1);
	if (!b)
		return NULL;
	s->stacks = b;
	struct fast_alloc_event *e = &s->evs[s->nevs];
	memset(e, 0, sizeof(*e));
	return e;
}

/* One ring's allocation records, from its tail up to (not past) until
 * while attached: its events appended to s->evs, their stacks to
 * s->stacks (each event's stack is its offset there until all are read).
 * Returns 0 or -ENOMEM. */
static int gather_ring(struct fast_set *s, uint32_t i, uint64_t until, uint64_t skew, uint64_t *bad)
{
	struct recce_fast_slot *sl = slot_at(s, i);
	const struct recce_fast_record *recs = (const void *)(sl + 1);
	uint64_t head = __atomic_load_n(&sl->head, __ATOMIC_ACQUIRE);
	uint64_t tail = __atomic_load_n(&sl->tail, __ATOMIC_RELAXED);
	const uint64_t mask = RING_RECORDS - 1;
	int err = 0;

	if (head - tail > RING_RECORDS)
		tail = head - RING_RECORDS; /* never: the writer does not overwrite */
	while (tail < head && !err) {
		const struct recce_fast_record *r = &recs[tail & mask];
		if (read_later(s, r->tsc, until, skew))
			break;
		/* The library's record: the process may write anything. */
		uint64_t ev = r->args[0], stack = 0, extra = 0;
		if (ev == ALLOC_EV_SAMPLE) {
			stack = r->args[3];
			if (stack > RECCE_FAST_ALLOC_STACK || stack % 8) {
				(*bad)++;
				tail++;
				continue;
			}
			extra = recce_fast_alloc_extra(stack);
			if (head - tail < 1 + extra) {
				(*bad)++;
				tail = head;
				break;
			}
		}
		if (r->site >= s->nhooks ||
		    (ev != ALLOC_EV_SAMPLE && ev != ALLOC_EV_RETURN && ev != ALLOC_EV_FREE)) {
			(*bad)++;
			tail += 1 + extra;
			continue;
		}
		/* A child's, if it is one: found, or exited since (what recce
		 * knows of its mappings still names its stack). */
		pid_t pid = s->pid;
		if (r->pid != s->ns_pid && r->pid > 0) {
			const struct fast_proc *f = record_proc(s, r->pid);
			if (!f || f->verdict == PROC_UNFOUND) {
				s->unfound_calls++;
				tail += 1 + extra;
				continue;
			}
			pid = r->pid;
		}
		struct fast_alloc_event *e = new_event(s, extra * sizeof(*r));
		if (!e) {
			err = -ENOMEM;
			break;
		}
		const struct fast_hook *hk = &s->hooks[r->site];
		e->pid = pid;
		e->tid = r->tid;
		/* A thread moved to a CPU whose clock is behind keeps its
		 * order (ring_tsc: the last of the ring's). */
		e->tsc = r->tsc > s->ring_tsc[i] ? r->tsc : s->ring_tsc[i];
		s->ring_tsc[i] = e->tsc;
		e->seq = s->nevs;
		e->probe = hk->probe;
		e->ip = hk->ip;
		e->event = ev;
		e->value = r->args[1];
		if (ev == ALLOC_EV_SAMPLE) {
			uint8_t *out = s->stacks + s->stacks_len;
			for (uint64_t k = 0; k < extra; k++)
				memcpy(out + k * sizeof(*r), &recs[(tail + 1 + k) & mask],
				       sizeof(*r));
			uint64_t saved[RECCE_FAST_ALLOC_REGS];
			memcpy(saved, out, sizeof(saved));
			e->caller = r->args[2];
			e->regs[PR_BX] = saved[0];
			e->regs[PR_BP] = saved[1];
			e->regs[PR_R12] = saved[2];
			e->regs[PR_R13] = saved[3];
			e->regs[PR_R14] = saved[4];
			e->regs[PR_R15] = saved[5];
			e->regs[PR_SP] = r->args[4];
			e->regs[PR_IP] = hk->ip;
			/* Its offset for now: s->stacks may move. */
			e->stack = (const uint8_t *)(uintptr_t)(s->stacks_len + sizeof(saved));
			e->stack_len = stack;
			s->stacks_len += extra * sizeof(*r);
		} else {
			e->flags = r->args[2];
		}
		s->nevs++;
		tail += 1 + extra;
	}
	__atomic_store_n(&sl->tail, tail, __ATOMIC_RELEASE);
	return err;
}

static int by_tsc(const void *a, const void *b)
{
	const struct fast_alloc_event *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int fast_set_read_allocs(struct fast_set *s, int (*cb)(const struct fast_alloc_event *, void *),
			 void *arg, uint64_t *bad)
{
	uint32_t claimed = __atomic_load_n(&s->h->claimed, __ATOMIC_ACQUIRE);
	uint64_t no_bad = 0;
	int rc = 0;

	if (!bad)
		bad = &no_bad;
	if (claimed > s->slots)
		claimed = s->slots;
	forget_procs(s);
	uint64_t until = fast_set_cal_add(s), skew = ticks_10ms(s);
	s->lost = count_lost(s);
	s->nevs = 0;
	s->stacks_len = 0;
	for (uint32_t i = 0; i < claimed && !rc; i++)
		rc = gather_ring(s, i, until, skew, bad);
	if (rc)
		return rc;
	for (size_t i = 0; i < s->nevs; i++)
		if (s->evs[i].event == ALLOC_EV_SAMPLE)
			s->evs[i].stack = s->stacks + (uintptr_t)s->evs[i].stack;
	/* Within a ring the clock never goes back (gather_ring()), and
	 * ties keep the reading order: a thread's events stay in order. */
	if (s->nevs > 1)
		qsort(s->evs, s->nevs, sizeof(*s->evs), by_tsc);
	for (size_t i = 0; i < s->nevs && !rc; i++)
		rc = cb(&s->evs[i], arg);
	return rc;
}
