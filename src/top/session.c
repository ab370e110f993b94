/*
 * A session of `recce top` (see session.h): the wait for the next
 * snapshot (draining the sampler's rings meanwhile, so that a long
 * interval loses no samples), and a snapshot read from /proc.
 */
#include "top/session.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_POLLFDS 1025

double top_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int top_session_init(struct top_session *s)
{
	struct top_model_config mc = {0};
	struct top_sampler_config cfg = {0};
	int err;

	if (procstat_reader_init(&s->reader, NULL) < 0)
		return -ENOMEM;
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
	cfg.pids = s->pids;
	cfg.npids = s->npids;
	s->sampling_err = top_sampler_new(&cfg, &s->sampler);
	if (s->sampling_err)
		s->sampler = NULL;
	return 0;
}

void top_session_release(struct top_session *s)
{
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
	struct pollfd fds[MAX_POLLFDS];
	int rings[MAX_POLLFDS - 1];
	size_t nrings = s->sampler ? top_sampler_pollfds(s->sampler, rings, MAX_POLLFDS - 1) : 0;
	double due = s->last_time + s->delay;

	if (nrings > MAX_POLLFDS - 1)
		nrings = MAX_POLLFDS - 1;
	for (;;) {
		if (s->stop && *s->stop)
			return -1;
		double left = due - top_now();
		if (left <= 0)
			return 0;
		size_t n = 0;
		if (fd >= 0) {
			fds[n].fd = fd;
			fds[n++].events = POLLIN;
		}
		for (size_t i = 0; i < nrings; i++) {
			fds[n].fd = rings[i];
			fds[n++].events = POLLIN;
		}
		int r = poll(fds, n, (int)(left * 1000) + 1);
		/* A signal such as SIGWINCH: let the screen look at its keys. */
		if (r < 0 && errno == EINTR && fd >= 0 && !(s->stop && *s->stop))
			return 1;
		if (r < 0 && errno != EINTR)
			return 0;
		if (r <= 0)
			continue;
		if (fd >= 0 && fds[0].revents)
			return 1;
		/* A ring woke us up half full: empty it now rather than lose
		 * samples at the end of a long interval. */
		if (s->sampler)
			top_sampler_read(s->sampler, s->model);
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
	if (n > (ssize_t)s->scratch_cap) {
		pid_t *p = realloc(s->scratch_pids, (size_t)n * sizeof(*p));
		if (!p)
			return 1;
		s->scratch_pids = p;
		s->scratch_cap = (size_t)n;
	}
	memcpy(s->scratch_pids, tids, (size_t)n * sizeof(*tids));
	for (ssize_t i = 0; i < n; i++) {
		struct procstat_task t;
		if (procstat_read_task(&s->reader, pid, s->scratch_pids[i], &t) < 0)
			continue; /* the thread ended since the listing */
		if (t.state == 'Z' || t.state == 'X')
			continue;
		live = 1;
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

int top_session_snapshot(struct top_session *s)
{
	static struct procstat_system sys; /* large: keep it off the stack */
	struct procstat_task self;
	double now = top_now();

	s->nevents = 0;
	if (s->sampler)
		top_sampler_read(s->sampler, s->model);
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
	return top_model_end(s->model);
}
