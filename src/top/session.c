/*
 * A session of `recce top` (see session.h): the wait for the next
 * snapshot (draining the sampler's rings meanwhile, so that a long
 * interval loses no samples), and a snapshot read from /proc.
 */
#include "top/session.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "proc/self.h"
#include "util/array.h"

double top_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A ring woke the loop up half full: empty it now rather than lose samples
 * at the end of a long interval. */
static void on_ring(void *arg, int fd, short revents)
{
	struct top_session *s = arg;

	(void)fd;
	(void)revents;
	top_sampler_read(s->sampler, s->model);
}

static void on_stop_signal(void *arg, int fd, short revents)
{
	(void)fd;
	(void)revents;
	((struct top_session *)arg)->stopped = 1;
}

static void on_input(void *arg, int fd, short revents)
{
	(void)fd;
	(void)revents;
	((struct top_session *)arg)->input_ready = 1;
}

static int add_sources(struct top_session *s)
{
	size_t nrings = s->sampler ? top_sampler_pollfds(s->sampler, NULL, 0) : 0;
	int *rings = calloc(nrings ? nrings : 1, sizeof(*rings));
	int err = rings ? 0 : -ENOMEM;

	if (rings && s->sampler)
		top_sampler_pollfds(s->sampler, rings, nrings);
	for (size_t i = 0; i < nrings && !err; i++)
		err = evloop_add(&s->loop, rings[i], 0, on_ring, s);
	free(rings);
	if (!err)
		err = evloop_add(&s->loop, s->stop_fd, 0, on_stop_signal, s);
	return err;
}

/* The /proc files a snapshot reads are kept open for the next (a read
 * instead of an open, a read and a close: most of what watching 500
 * threads costs), in a quarter of the descriptors recce may open, the
 * rest left to its sampling's events; at most this many. */
#define HELD_FILES_MAX 16384

int top_session_init(struct top_session *s)
{
	struct top_model_config mc = {0};
	struct top_sampler_config cfg = {0};
	int err;

	evloop_init(&s->loop);
	s->input_fd = -1;
	if (procstat_reader_init(&s->reader, NULL) < 0)
		return -ENOMEM;
	proc_raise_fd_limit();
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		procstat_reader_hold(&s->reader, rl.rlim_cur / 4 < HELD_FILES_MAX
						     ? (size_t)rl.rlim_cur / 4
						     : HELD_FILES_MAX);
	s->alive = malloc(s->npids + 1);
	if (!s->alive)
		return -ENOMEM;
	memset(s->alive, 1, s->npids + 1);
	s->nalive = s->npids;
	mc.by_process = s->npids == 0;
	mc.history = s->history;
	mc.ticks_per_s = sysconf(_SC_CLK_TCK);
	mc.page_kb = sysconf(_SC_PAGESIZE) / 1024;
	err = top_model_new(&mc, &s->model);
	if (err)
		return err;
	cfg.freq = s->freq;
	cfg.dwarf = s->dwarf;
	cfg.fp_after = s->fp_after;
	cfg.stack_bytes = s->stack_bytes;
	cfg.copy_grows = s->copy_grows;
	s->copy_said = s->stack_bytes;
	cfg.pids = s->pids;
	cfg.npids = s->npids;
	s->sampling_err = top_sampler_new(&cfg, &s->sampler);
	if (s->sampling_err)
		s->sampler = NULL;
	return add_sources(s);
}

void top_session_release(struct top_session *s)
{
	evloop_release(&s->loop);
	top_sampler_free(s->sampler);
	top_model_free(s->model);
	procstat_reader_release(&s->reader);
	free(s->scratch_pids);
	free(s->alive);
	s->sampler = NULL;
	s->model = NULL;
	s->scratch_pids = NULL;
	s->alive = NULL;
}

static void add_exited(struct top_session *s, pid_t pid)
{
	if (s->nevents < TOP_MAX_EVENTS)
		snprintf(s->events[s->nevents++], sizeof(s->events[0]), "process %d exited",
			 (int)pid);
}

int top_session_wait(struct top_session *s, int fd)
{
	int64_t due = (int64_t)((s->last_time + s->delay) * 1e9);

	if (fd >= 0 && s->input_fd < 0) {
		int err = evloop_add(&s->loop, fd, 0, on_input, s);
		if (err)
			return err;
		s->input_fd = fd;
	}
	for (;;) {
		if (s->stopped)
			return -1;
		if (s->input_ready) {
			s->input_ready = 0;
			return 1;
		}
		if ((int64_t)(top_now() * 1e9) >= due)
			return 0;
		int r = evloop_wait(&s->loop, due, -1);
		/* A signal such as SIGWINCH: let the screen look at its keys. */
		if (r == -EINTR && fd >= 0 && !s->stopped)
			return 1;
		if (r < 0 && r != -EINTR)
			return 0;
	}
}

/* Whether a process still runs: it has a task that is not a zombie. */
static int read_process(struct top_session *s, pid_t pid)
{
	const pid_t *tids;
	ssize_t n = procstat_list_tasks(&s->reader, pid, &tids);
	int live = 0;

	if (n < 0)
		return 0;
	/* The listing lives in the reader, which the reads below reuse. */
	pid_t *p = array_reserve(s->scratch_pids, &s->scratch_cap, (size_t)n, sizeof(*p));
	if (!p)
		return 1;
	s->scratch_pids = p;
	memcpy(s->scratch_pids, tids, (size_t)n * sizeof(*tids));
	/* A process row: its ticks in one read, not the sum of reads spread
	 * over the time it takes to read every thread; a thread row of its
	 * ended threads: what those read do not account for. */
	struct procstat_task whole;
	if (procstat_read_process(&s->reader, pid, &whole) == 0)
		top_model_add_process(s->model, &whole);
	for (ssize_t i = 0; i < n; i++) {
		struct procstat_task t;
		if (procstat_read_task(&s->reader, pid, s->scratch_pids[i], &t) < 0)
			continue; /* the thread ended since the listing */
		if (t.state == 'Z' || t.state == 'X')
			continue;
		live = 1;
		/* A CPython's threading.Thread goes by its Python name. */
		const char *py = top_sampler_thread_name(s->sampler, pid, t.tid);
		if (py)
			snprintf(t.comm, sizeof(t.comm), "%s", py);
		top_model_add_task(s->model, &t);
	}
	return live;
}

static void read_all_processes(struct top_session *s)
{
	const pid_t *ids;
	ssize_t n = procstat_list_pids(&s->reader, &ids);

	if (n <= 0)
		return;
	pid_t *pids = malloc((size_t)n * sizeof(*pids));
	if (!pids)
		return;
	memcpy(pids, ids, (size_t)n * sizeof(*ids));
	for (ssize_t i = 0; i < n; i++)
		read_process(s, pids[i]);
	free(pids);
}

/* The stack copy, when it grew since the last snapshot: said once. */
static void copy_grew(struct top_session *s)
{
	struct top_sampler_stats st;

	top_sampler_get_stats(s->sampler, &st);
	if (!st.copy_bytes || st.copy_bytes == s->copy_said || s->nevents >= TOP_MAX_EVENTS)
		return;
	snprintf(s->events[s->nevents++], sizeof(s->events[0]),
		 "the stack copy grew from %u to %u bytes (--call-graph auto,%u copies that "
		 "much from the start)",
		 (unsigned)s->copy_said, (unsigned)st.copy_bytes, (unsigned)st.copy_bytes);
	s->copy_said = st.copy_bytes;
}

int top_session_snapshot(struct top_session *s)
{
	static struct procstat_system sys; /* large: keep it off the stack */
	struct procstat_task self;
	double now = top_now();

	s->nevents = 0;
	if (s->sampler) {
		top_sampler_read(s->sampler, s->model);
		copy_grew(s);
	}
	top_model_begin(s->model, s->last_time ? now - s->last_time : 0);
	s->last_time = now;
	if (s->npids) {
		for (size_t i = 0; i < s->npids; i++) {
			if (!s->alive[i])
				continue;
			if (read_process(s, s->pids[i]))
				continue;
			s->alive[i] = 0;
			s->nalive--;
			add_exited(s, s->pids[i]);
			if (s->sampler)
				top_sampler_forget(s->sampler, s->pids[i]);
		}
	} else {
		read_all_processes(s);
	}
	if (procstat_read_system(&s->reader, &sys) == 0) {
		uint64_t ticks = 0;
		if (procstat_read_task(&s->reader, getpid(), getpid(), &self) == 0)
			ticks = self.utime + self.stime;
		top_model_set_system(s->model, &sys, ticks);
	}
	/* The files of threads that ended, or of processes no longer
	 * shown, are closed. */
	procstat_reader_sweep(&s->reader);
	return top_model_end(s->model);
}
