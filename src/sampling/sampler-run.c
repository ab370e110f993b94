/*
 * The sampler in its caller's event loop (see sampler.h): its sources,
 * its timers and the check that reads its rings after every wake, the
 * stop conditions (the duration, the stop descriptor, every target gone),
 * and the end of a run: the drain, the finish, the launched command
 * ended. The loop wakes when a ring is half full or every half second,
 * so a sampled process costs recce a few wakeups per second, not one per
 * sample.
 */
#include "sampling/sampler-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf/perf-events.h"
#include "proc/unwind.h"
#include "sampling/alloc-fast.h"
#include "sampling/alloc-growth.h"
#include "sampling/alloc-probes.h"
#include "sampling/offcpu.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/progress.h"

#define POLL_MS	       500
#define PY_POLL_MS     100
#define FAST_POLL_MS   2    /* the in-process allocation rings wake nobody */
#define FIRST_READ_MS  20   /* after a launch */
#define CHILD_GRACE_MS 2000 /* between SIGTERM and SIGKILL of the launched command */

/* Reaps the launched command if it has exited; returns 1 if it did. */
int sampler_child_wait(struct sampler *s, int options)
{
	int st;

	if (!s->child || waitpid(s->child, &st, options) != s->child)
		return 0;
	s->stats.child_status = st;
	s->stats.child_exited = 1;
	s->child = 0;
	return 1;
}

/* A target's pidfd became readable: that process has exited. */
static void on_target_exit(void *arg, int fd, short revents)
{
	struct sampler *s = arg;

	(void)revents;
	for (size_t i = 0; i < s->ntargets; i++) {
		if (s->pidfds[i] != fd)
			continue;
		if (s->targets[i].pid == s->child)
			sampler_child_wait(s, WNOHANG);
		s->alive[i] = 0;
		close(s->pidfds[i]);
		s->pidfds[i] = -1;
	}
}

static void on_stop_signal(void *arg, int fd, short revents)
{
	(void)fd;
	(void)revents;
	((struct sampler *)arg)->signalled = 1;
}

static void on_until(void *arg, int fd, short revents)
{
	(void)fd;
	(void)revents;
	((struct sampler *)arg)->until_done = 1;
}

void sampler_until(struct sampler *s, int pidfd)
{
	s->until_fd = pidfd;
}

/* Notes the targets without a pidfd that exited; returns how many targets
 * are still alive. */
static size_t check_targets(struct sampler *s)
{
	size_t alive = 0;

	for (size_t i = 0; i < s->ntargets; i++) {
		if (!s->alive[i])
			continue;
		pid_t pid = s->targets[i].pid;
		int gone;
		if (s->pidfds[i] >= 0)
			gone = 0; /* on_target_exit() will say */
		else if (pid == s->child)
			gone = sampler_child_wait(s, WNOHANG);
		else
			gone = kill(pid, 0) < 0 && errno == ESRCH;
		if (gone)
			s->alive[i] = 0;
		else
			alive++;
	}
	return alive;
}

/* Ends the launched command if it outlives its recording. */
void sampler_child_reap(struct sampler *s)
{
	if (!s->child || sampler_child_wait(s, WNOHANG))
		return;
	kill(s->child, SIGTERM);
	for (int waited = 0; waited < CHILD_GRACE_MS; waited += 10) {
		if (sampler_child_wait(s, WNOHANG))
			return;
		usleep(10000);
	}
	kill(s->child, SIGKILL);
	sampler_child_wait(s, 0);
}

/* Sampling is over, for why (an error when negative). */
static void stop(struct sampler *s, int err)
{
	s->stopping = 1;
	s->run_err = err;
	s->end_mono = time_now_ns(CLOCK_MONOTONIC);
	evloop_leave(&s->seat, s, 1);
}

/* After every wake of the loop: read the rings, then see whether it is
 * over. */
static void on_wake(void *arg)
{
	struct sampler *s = arg;

	if (s->stopping)
		return;
	if (s->py)
		py_samples_read(s->py);
	/* On what the last reads unwound: what the rings hold now was taken
	 * with the copy as it was, and is read as such. */
	stack_copy_check(&s->copy, s->pe, unwinder_copy_wanted(s->unwinder),
			 s->cpu_wide ? sampler_cpu_prog(s) : -1);
	int r = perf_events_read(s->pe, time_now_ns(CLOCK_MONOTONIC), sampler_handle_record, s);
	/* After the mappings the rings told of: a sample's stack is
	 * unwound through them. */
	if (r >= 0 && s->alloc_fast)
		r = alloc_fast_read(s->alloc_fast, sampler_handle_fast_alloc, s);
	if (r >= 0 && s->growth)
		r = alloc_growth_tick(s->growth, s->alloc, time_now_ns(CLOCK_MONOTONIC));
	if (r < 0) {
		stop(s, r);
		return;
	}
	progress("recording", (uint64_t)(time_now_ns(CLOCK_MONOTONIC) - s->start_mono) / 1000000,
		 s->cfg.duration > 0 ? (uint64_t)(s->cfg.duration * 1e3) : 0, "ms");
	if (s->signalled)
		s->stats.stop = SAMPLER_STOP_SIGNAL;
	else if (s->until_done)
		s->stats.stop = SAMPLER_STOP_COMMAND;
	else if (!s->cfg.system_wide && !check_targets(s))
		s->stats.stop = SAMPLER_STOP_EXITED;
	else if ((int64_t)time_now_ns(CLOCK_MONOTONIC) >= s->deadline)
		s->stats.stop = SAMPLER_STOP_DURATION;
	if (s->stats.stop != SAMPLER_STOP_NONE)
		stop(s, 0);
}

int sampler_attach(struct sampler *s, struct evloop *loop, void (*done)(void *arg), void *arg)
{
	size_t nrings = perf_events_pollfds(s->pe, NULL, 0);
	int *rings = calloc(nrings ? nrings : 1, sizeof(*rings));
	int ret = 0;

	if (!rings)
		return -ENOMEM;
	evloop_seat_take(&s->seat, loop, done, arg);
	s->deadline =
	    s->cfg.duration > 0 ? s->start_mono + (int64_t)(s->cfg.duration * 1e9) : INT64_MAX;
	perf_events_pollfds(s->pe, rings, nrings);
	/* The rings only wake the loop: on_wake() reads them all. */
	for (size_t i = 0; i < nrings && !ret; i++)
		ret = evloop_add(loop, rings[i], 0, NULL, s);
	free(rings);
	if (!ret)
		ret = evloop_add(loop, s->cfg.stop_fd, 0, on_stop_signal, s);
	if (!ret && s->until_fd >= 0)
		ret = evloop_add(loop, s->until_fd, EVLOOP_ONCE, on_until, s);
	for (size_t i = 0; i < s->ntargets && !ret; i++)
		if (s->alive[i])
			ret = evloop_add(loop, s->pidfds[i], EVLOOP_ONCE, on_target_exit, s);
	/* A wake every POLL_MS, whatever the rings do, and one at the end;
	 * every PY_POLL_MS with Python frames read: a frame's code is named
	 * when its record is read, and a process that ended cannot be read. */
	int64_t now = time_now_ns(CLOCK_MONOTONIC);
	int64_t poll_ns = (s->alloc_fast ? FAST_POLL_MS : s->py ? PY_POLL_MS : POLL_MS) * 1000000LL;
	if (!ret) {
		int id = evloop_timer_add(loop, now + poll_ns, poll_ns, NULL, s);
		ret = id < 0 ? id : 0;
	}
	/* With Python frames read, a launched command is read soon after
	 * its exec (a CPython is named to the frame reader at its first
	 * sample read; its samples before have no Python frames). */
	if (!ret && s->py && s->child) {
		int id = evloop_timer_add(loop, now + FIRST_READ_MS * 1000000LL, 0, NULL, s);
		ret = id < 0 ? id : 0;
	}
	if (!ret && s->deadline != INT64_MAX) {
		int id = evloop_timer_add(loop, s->deadline, 0, NULL, s);
		ret = id < 0 ? id : 0;
	}
	if (!ret)
		ret = evloop_check_add(loop, on_wake, s);
	if (ret)
		evloop_leave(&s->seat, s, 0);
	return ret;
}

int sampler_read(struct sampler *s)
{
	return s->stopping ? 0
			   : perf_events_read(s->pe, time_now_ns(CLOCK_MONOTONIC),
					      sampler_handle_record, s);
}

int sampler_drain(struct sampler *s)
{
	/* Stopped by the loop's owner, not by a condition of its own. */
	if (!s->stopping) {
		s->stopping = 1;
		s->end_mono = time_now_ns(CLOCK_MONOTONIC);
		if (s->stats.stop == SAMPLER_STOP_NONE)
			s->stats.stop = SAMPLER_STOP_SIGNAL;
	}
	evloop_leave(&s->seat, s, 0);
	s->stats.duration_ns = s->end_mono - s->start_mono;
	/* The target runs at full speed again before anything else. */
	if (s->alloc_probes)
		alloc_probes_detach(s->alloc_probes);
	if (s->alloc_fast)
		alloc_fast_detach(s->alloc_fast); /* its stats say if it failed */
	if (s->run_err)
		return s->run_err;
	/* What the kernel wrote until now still counts, and what the
	 * process did. */
	int r = perf_events_read(s->pe, UINT64_MAX, sampler_handle_record, s);
	if (r >= 0 && s->alloc_fast)
		r = alloc_fast_read(s->alloc_fast, sampler_handle_fast_alloc, s);
	return r < 0 ? r : 0;
}

int sampler_finish(struct sampler *s)
{
	int ret = 0;

	/* Read once, as the run ends: the events count on until closed. A
	 * CPU's event of -a or --cgroup counts its time, idle or not. */
	if (s->pe && (s->cfg.events & PERF_EVENTS_CPU_CLOCK) && !s->cfg.system_wide &&
	    s->cfg.cgroup_fd < 0)
		s->stats.cpu_ns = perf_events_cpu_ns(s->pe);
	/* Losses at the very end have no record yet (the kernel writes one
	 * once the ring has room): the events' own counts hold them. */
	if (s->pe && perf_events_lost(s->pe) > s->stats.lost)
		s->stats.lost = perf_events_lost(s->pe);
	if (s->offcpu)
		offcpu_finish(s->offcpu, (uint64_t)s->end_mono);
	if (s->growth) {
		s->stats.growing_stacks = alloc_growth_finish(s->growth, s->alloc);
		alloc_growth_span(s->growth, &s->stats.growth_points, &s->stats.growth_every_ns);
	}
	if (s->alloc && alloc_samples_finish(s->alloc) < 0)
		ret = -ENOMEM;
	sampler_child_reap(s);
	return ret;
}

int sampler_run(struct sampler *s)
{
	struct evloop loop;

	evloop_init(&loop);
	int ret = sampler_attach(s, &loop, evloop_stop_done, &loop);
	if (!ret)
		ret = evloop_run(&loop);
	int r = sampler_drain(s);
	evloop_release(&loop);
	ret = ret ? ret : r;
	r = sampler_finish(s);
	return ret ? ret : r;
}
