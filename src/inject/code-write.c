/*
 * Safe changes of a live process's code (see code-write.h).
 */
#include "inject/code-write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inject/stop-all.h"
#include "inject/target-mem.h"
#include "util/clock.h"

#define STACK_SCAN_MAX	(8u << 20) /* bytes of one stack scanned at most */
#define STOP_TIMEOUT_MS 2000

static int guarded(const struct code_guard *g, size_t ng, uint64_t addr)
{
	for (size_t i = 0; i < ng; i++)
		if (addr >= g[i].lo && addr < g[i].hi)
			return 1;
	return 0;
}

/* Whether a stopped thread is in a guarded range, by its program counter
 * or a word of its stack; fills the stats' busy fields if so. */
static int thread_busy(pid_t pid, const struct stopped_thread *t, const struct tmaps *maps,
		       const struct code_guard *g, size_t ng, uint64_t **buf, size_t *cap,
		       struct code_write_stats *st)
{
	if (guarded(g, ng, t->regs.rip)) {
		st->busy_tid = t->tid;
		st->busy_addr = t->regs.rip;
		st->busy_on_stack = 0;
		return 1;
	}
	uint64_t sp = t->regs.rsp & ~7ull;
	const struct tmap *m = tmaps_find(maps, sp);
	if (!m)
		return 0;
	size_t len = m->end - sp;
	if (len > STACK_SCAN_MAX)
		len = STACK_SCAN_MAX;
	if (len > *cap) {
		uint64_t *nb = realloc(*buf, len);
		if (!nb)
			return 1; /* cannot tell: not safe */
		*buf = nb;
		*cap = len;
	}
	if (tmem_read(pid, sp, *buf, len) != 0)
		return 0;
	for (size_t i = 0; i < len / 8; i++)
		if (guarded(g, ng, (*buf)[i])) {
			st->busy_tid = t->tid;
			st->busy_addr = (*buf)[i];
			st->busy_on_stack = 1;
			return 1;
		}
	return 0;
}

/* One attempt with the process stopped: 1 when a thread was busy, else
 * 0 or -errno. */
static int attempt(struct stop_all *s, const struct code_edit *e, size_t n,
		   const struct code_guard *g, size_t ng, struct code_write_stats *st,
		   size_t *stale)
{
	struct tmaps maps;
	uint64_t *buf = NULL;
	size_t cap = 0;
	uint8_t now[CODE_EDIT_MAX];

	int err = tmaps_read(&maps, s->pid);
	if (err)
		return err;
	for (size_t i = 0; i < s->n && !err; i++)
		if (thread_busy(s->pid, &s->t[i], &maps, g, ng, &buf, &cap, st))
			err = 1;
	free(buf);
	tmaps_release(&maps);
	for (size_t i = 0; i < n && !err; i++) {
		err = tmem_read(s->pid, e[i].addr, now, e[i].len);
		if (!err && memcmp(now, e[i].old, e[i].len) != 0) {
			*stale = i;
			err = -ESTALE;
		}
	}
	for (size_t i = 0; i < n && !err; i++) {
		err = tmem_write(s->pid, e[i].addr, e[i].new, e[i].len);
		if (!err)
			err = tmem_read(s->pid, e[i].addr, now, e[i].len);
		if (!err && memcmp(now, e[i].new, e[i].len) != 0)
			err = -EIO;
	}
	return err;
}

int code_write(pid_t pid, const struct code_edit *e, size_t n, const struct code_guard *g,
	       size_t ng, int timeout_ms, struct code_write_stats *st, size_t *stale)
{
	uint64_t deadline = time_now_ns(CLOCK_MONOTONIC) + (uint64_t)timeout_ms * 1000000;

	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < n; i++)
		if (e[i].len > CODE_EDIT_MAX)
			return -EINVAL;
	for (long wait = 100;; wait = wait < 5000 ? wait * 2 : 5000) {
		struct stop_all s;
		int err = stop_all(&s, pid, STOP_TIMEOUT_MS, STOP_ALL_TAKE_STOPPED);
		if (err)
			return err;
		st->attempts++;
		size_t threads = s.n;
		err = attempt(&s, e, n, g, ng, st, stale);
		uint64_t took = stop_all_release(&s);
		if (took > st->stopped_max_ns)
			st->stopped_max_ns = took;
		if (err <= 0) {
			st->stopped_ns = took;
			st->threads = threads;
			return err;
		}
		if (time_now_ns(CLOCK_MONOTONIC) > deadline)
			return -EBUSY;
		struct timespec ts = {0, wait * 1000};
		nanosleep(&ts, NULL);
	}
}
