/*
 * The tasks session (see session.h): after every wake of the loop, what
 * the source holds is read into the table; a view is shown when one is
 * due. The loop wakes for the source's rings (--libuv's probes fill
 * them), a key, a scrape of /metrics, the process's exit, and every
 * WAKE_MS, since librecce's rings in the process's memory wake nobody.
 */
#include "tasks/session.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "events/ring-read.h"
#include "events/tasks.h"
#include "proc/self.h"
#include "trace/uv-tasks.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/http-serve.h"

#define WAKE_MS	  100
#define MAX_RINGS 1024 /* --libuv's probe rings watched, one a CPU */

struct tasks_session {
	struct tasks_session_config cfg;
	struct tasks t;
	struct tasks_view v;
	struct ring_event *ev;
	size_t cap;
	int pidfd;
	int gone; /* the pidfd fired */
	uint64_t start, next, end;
	long long shown;
	enum tasks_stop stop;
	int err;
	struct evloop_seat seat;
};

int tasks_session_new(const struct tasks_session_config *cfg, struct tasks_session **out)
{
	struct tasks_session *s = calloc(1, sizeof(*s));

	*out = s;
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->pidfd = -1;
	tasks_init(&s->t);
	s->v =
	    (struct tasks_view){&s->t, (int)cfg->pid, cfg->comm, 0, 0, cfg->sort, cfg->filter, 0};
	if (cfg->file && cfg->rings)
		s->v.pid = (int)cfg->rings->hdr.pid;
	return 0;
}

/* The session is over, for why (the first reason stays); tell says
 * whether its caller hears of it. */
static void leave(struct tasks_session *s, enum tasks_stop why, int tell)
{
	if (!s->stop)
		s->stop = why;
	evloop_leave(&s->seat, s, tell);
}

static void on_stop_signal(void *arg, int fd, short revents)
{
	(void)fd;
	(void)revents;
	leave(arg, TASKS_SIGNAL, 1);
}

static void on_target_exit(void *arg, int fd, short revents)
{
	(void)fd;
	(void)revents;
	((struct tasks_session *)arg)->gone = 1;
}

static void metrics_body(FILE *fp, void *arg)
{
	struct tasks_session *s = arg;

	tasks_print_prometheus(fp, &s->v, s->cfg.top_k);
}

static int take_events(struct tasks_session *s);

/* A scrape: answered with what the source holds now, read first. */
static void on_scrape(void *arg, int fd, short revents)
{
	struct tasks_session *s = arg;

	(void)revents;
	if (!s->stop && take_events(s) < 0)
		return;
	http_answer(fd, "/metrics", "text/plain; version=0.0.4", metrics_body, s);
}

static void on_key(void *arg, int fd, short revents)
{
	struct tasks_session *s = arg;
	char key = 0;

	(void)revents;
	if (read(fd, &key, 1) != 1)
		return;
	if (key == 'q') {
		leave(s, TASKS_QUIT, 1);
	} else if (key == 's') {
		s->v.sort = (enum task_sort)((s->v.sort + 1) % (TASK_SORT_NAME + 1));
		s->next = 0; /* shown again at once */
	}
}

/* What the source holds, into the table; a failure ends the session. */
static int take_events(struct tasks_session *s)
{
	size_t n = 0;
	int err = s->cfg.uv ? uv_tasks_drain(s->cfg.uv, &s->ev, &n, &s->cap)
			    : ring_reader_drain(s->cfg.rings, &s->ev, &n, &s->cap);

	if (!err)
		err = tasks_feed(&s->t, s->ev, n);
	if (err) {
		s->err = err;
		leave(s, TASKS_FAILED, 1);
		return err;
	}
	if (s->cfg.uv) {
		struct uv_tasks_stats st;
		uv_tasks_stats(s->cfg.uv, &st);
		s->v.lost = st.lost;
	} else {
		s->v.lost = ring_reader_lost(s->cfg.rings);
	}
	s->v.elapsed_s = (double)(time_now_ns(CLOCK_MONOTONIC) - s->start) / 1e9;
	return 0;
}

/* After every wake: read the source, then see whether a view is due and
 * whether the session is over. */
static void on_wake(void *arg)
{
	struct tasks_session *s = arg;
	int done = 0;

	if (s->stop || take_events(s) < 0)
		return;
	uint64_t now = time_now_ns(CLOCK_MONOTONIC);
	if (s->cfg.uv && uv_tasks_tripped(s->cfg.uv)) {
		s->stop = TASKS_TRIPPED;
		done = 1;
	}
	/* A file (saved, or left by a crash) is read once. */
	if (s->cfg.file || s->gone ||
	    (!s->cfg.uv && s->cfg.rings->hdr.state == RECCE_PROC_EXITED) ||
	    (s->end && now >= s->end))
		done = 1;
	if (s->cfg.listen_fd < 0 && (now >= s->next || done)) {
		if (s->cfg.show)
			s->cfg.show(s->cfg.arg, &s->v);
		s->next = now + (uint64_t)(s->cfg.every * 1e9);
		if (s->cfg.views && ++s->shown >= s->cfg.views)
			done = 1;
	}
	if (done)
		leave(s, TASKS_ENDED, 1);
}

int tasks_session_attach(struct tasks_session *s, struct evloop *loop, void (*done)(void *arg),
			 void *arg)
{
	int err = 0;

	evloop_seat_take(&s->seat, loop, done, arg);
	/* The rings hold what came before: their first view is at once.
	 * Probes see nothing before they are there: theirs after a while. */
	s->start = time_now_ns(CLOCK_MONOTONIC);
	s->next = s->cfg.uv ? s->start + (uint64_t)(s->cfg.every * 1e9) : s->start;
	s->end = s->cfg.duration ? s->start + (uint64_t)(s->cfg.duration * 1e9) : 0;
	if (!s->cfg.file && s->pidfd < 0)
		s->pidfd = proc_pidfd_open(s->cfg.pid);
	if (s->cfg.uv) {
		int fds[MAX_RINGS];
		size_t nf = uv_tasks_pollfds(s->cfg.uv, fds, MAX_RINGS);
		for (size_t i = 0; i < nf && !err; i++)
			err = evloop_add(loop, fds[i], 0, NULL, s);
	}
	if (!err)
		err = evloop_add(loop, s->cfg.stop_fd, 0, on_stop_signal, s);
	if (!err)
		err = evloop_add(loop, s->pidfd, EVLOOP_ONCE, on_target_exit, s);
	if (!err)
		err = evloop_add(loop, s->cfg.listen_fd, 0, on_scrape, s);
	if (!err)
		err = evloop_add(loop, s->cfg.key_fd, 0, on_key, s);
	int64_t now = (int64_t)s->start;
	int id = err ? err : evloop_timer_add(loop, now, 0, NULL, s); /* a first look at once */
	if (id >= 0)
		id =
		    evloop_timer_add(loop, now + WAKE_MS * 1000000LL, WAKE_MS * 1000000LL, NULL, s);
	err = id < 0 ? id : 0;
	if (!err)
		err = evloop_check_add(loop, on_wake, s);
	if (err) {
		leave(s, TASKS_FAILED, 0);
		s->err = err;
	}
	return err;
}

int tasks_session_run(struct tasks_session *s)
{
	struct evloop loop;

	evloop_init(&loop);
	int err = tasks_session_attach(s, &loop, evloop_stop_done, &loop);
	if (!err)
		err = evloop_run(&loop);
	if (evloop_seated(&s->seat)) /* the loop failed under it */
		leave(s, TASKS_FAILED, 0);
	evloop_release(&loop);
	return err;
}

enum tasks_stop tasks_session_stop(const struct tasks_session *s)
{
	return s->stop;
}

int tasks_session_error(const struct tasks_session *s)
{
	return s->err;
}

const struct tasks_view *tasks_session_view(const struct tasks_session *s)
{
	return &s->v;
}

void tasks_session_free(struct tasks_session *s)
{
	if (!s)
		return;
	if (s->pidfd >= 0)
		close(s->pidfd);
	tasks_release(&s->t);
	free(s->ev);
	free(s);
}
