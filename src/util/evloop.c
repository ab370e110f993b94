/*
 * The event loop (see evloop.h): an array of sources mirrored into a
 * pollfd array for each wait, and small arrays of timers and checks
 * (a loop has a handful: a linear scan is cheaper than a heap).
 */
#include "util/evloop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/array.h"
#include "util/clock.h"

void evloop_init(struct evloop *l)
{
	memset(l, 0, sizeof(*l));
}

static void drop(struct evloop_source *s)
{
	if (s->fd >= 0 && (s->flags & EVLOOP_CLOSE))
		close(s->fd);
	s->fd = -1;
}

void evloop_release(struct evloop *l)
{
	for (size_t i = 0; i < l->n; i++)
		drop(&l->src[i]);
	free(l->src);
	free(l->pfd);
	free(l->timers);
	free(l->checks);
	evloop_init(l);
}

int evloop_add(struct evloop *l, int fd, int flags, evloop_fn fn, void *arg)
{
	if (fd < 0)
		return 0;
	struct evloop_source *src = array_reserve(l->src, &l->cap, l->n + 1, sizeof(*src));
	struct pollfd *pfd =
	    src ? array_reserve(l->pfd, &l->pfd_cap, l->n + 1, sizeof(*pfd)) : NULL;
	if (src)
		l->src = src;
	if (pfd)
		l->pfd = pfd;
	if (!src || !pfd) {
		if (flags & EVLOOP_CLOSE)
			close(fd);
		return -ENOMEM;
	}
	short events = (flags & EVLOOP_WRITE) ? POLLOUT : POLLIN;
	l->src[l->n++] = (struct evloop_source){fd, flags, events, fn, arg};
	return 0;
}

/* Removes the dropped sources (fd -1), keeping the others in order. */
static void compact(struct evloop *l)
{
	size_t k = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->src[i].fd >= 0)
			l->src[k++] = l->src[i];
	l->n = k;
}

/* Safe inside a callback: the slot is emptied now, compacted later. */
void evloop_remove(struct evloop *l, int fd)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->src[i].fd == fd)
			drop(&l->src[i]);
}

int evloop_watch(struct evloop *l, int fd, short events)
{
	int found = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->src[i].fd == fd && fd >= 0) {
			l->src[i].events = events;
			found = 1;
		}
	return found ? 0 : -ENOENT;
}

size_t evloop_count(const struct evloop *l)
{
	size_t k = 0;

	for (size_t i = 0; i < l->n; i++)
		k += l->src[i].fd >= 0;
	return k;
}

/* The poll timeout, in milliseconds, for a deadline and a cap. */
static int timeout_ms(int64_t deadline_ns, int max_ms)
{
	if (deadline_ns == INT64_MAX)
		return max_ms;
	int64_t left = deadline_ns - (int64_t)time_now_ns(CLOCK_MONOTONIC);
	if (left <= 0)
		return 0;
	/* Round up: waking a little late is better than spinning early. */
	int64_t ms = (left + 999999) / 1000000;
	if (max_ms >= 0 && ms > max_ms)
		return max_ms;
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

int evloop_wait(struct evloop *l, int64_t deadline_ns, int max_ms)
{
	compact(l);
	size_t n = l->n;

	for (size_t i = 0; i < n; i++)
		l->pfd[i] = (struct pollfd){.fd = l->src[i].fd, .events = l->src[i].events};
	int r = poll(l->pfd, n, timeout_ms(deadline_ns, max_ms));
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	/* Callbacks may add sources; they are not in this round's pfd. */
	for (size_t i = 0; i < n; i++) {
		struct evloop_source s = l->src[i];
		if (!l->pfd[i].revents || s.fd < 0)
			continue;
		if (s.fn)
			s.fn(s.arg, s.fd, l->pfd[i].revents);
		if (s.flags & EVLOOP_ONCE)
			drop(&l->src[i]);
	}
	compact(l);
	return r;
}

int evloop_timer_add(struct evloop *l, int64_t when_ns, int64_t period_ns, evloop_timer_fn fn,
		     void *arg)
{
	struct evloop_timer *t =
	    array_reserve(l->timers, &l->timers_cap, l->ntimers + 1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	l->timers = t;
	if (l->next_id <= 0 || l->next_id == INT32_MAX)
		l->next_id = 1;
	int id = l->next_id++;
	l->timers[l->ntimers++] =
	    (struct evloop_timer){id, when_ns, period_ns > 0 ? period_ns : 0, fn, arg};
	return id;
}

void evloop_timer_remove(struct evloop *l, int id)
{
	for (size_t i = 0; i < l->ntimers; i++)
		if (l->timers[i].id == id && id > 0)
			l->timers[i].id = 0;
}

int evloop_check_add(struct evloop *l, evloop_check_fn fn, void *arg)
{
	struct evloop_check *c =
	    array_reserve(l->checks, &l->checks_cap, l->nchecks + 1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	l->checks = c;
	l->checks[l->nchecks++] = (struct evloop_check){fn, arg};
	return 0;
}

void evloop_remove_arg(struct evloop *l, const void *arg)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->src[i].arg == arg)
			drop(&l->src[i]);
	for (size_t i = 0; i < l->ntimers; i++)
		if (l->timers[i].arg == arg)
			l->timers[i].id = 0;
	for (size_t i = 0; i < l->nchecks; i++)
		if (l->checks[i].arg == arg)
			l->checks[i].fn = NULL;
}

void evloop_stop(struct evloop *l, int ret)
{
	if (l->stopped)
		return;
	l->stopped = 1;
	l->ret = ret;
}

void evloop_stop_done(void *loop)
{
	evloop_stop(loop, 0);
}

int evloop_stopped(const struct evloop *l)
{
	return l->stopped;
}

/* Drops the removed timers and checks, keeping the others in order. */
static void compact_timers(struct evloop *l)
{
	size_t k = 0;

	for (size_t i = 0; i < l->ntimers; i++)
		if (l->timers[i].id)
			l->timers[k++] = l->timers[i];
	l->ntimers = k;
	k = 0;
	for (size_t i = 0; i < l->nchecks; i++)
		if (l->checks[i].fn)
			l->checks[k++] = l->checks[i];
	l->nchecks = k;
}

/* Runs each timer that is due once; returns when the next one is due. */
static int64_t run_timers(struct evloop *l)
{
	int64_t now = (int64_t)time_now_ns(CLOCK_MONOTONIC);
	size_t n = l->ntimers; /* callbacks may add timers: they wait a round */

	for (size_t i = 0; i < n && !l->stopped; i++) {
		struct evloop_timer t = l->timers[i];
		if (!t.id || t.due_ns > now)
			continue;
		if (t.period_ns && !t.fn && now - t.due_ns >= t.period_ns)
			/* A late wake-only tick: its next period after now. */
			l->timers[i].due_ns += ((now - t.due_ns) / t.period_ns + 1) * t.period_ns;
		else if (t.period_ns)
			l->timers[i].due_ns += t.period_ns;
		else
			l->timers[i].id = 0;
		if (t.fn)
			t.fn(t.arg, t.due_ns);
	}
	compact_timers(l);
	int64_t next = INT64_MAX;
	for (size_t i = 0; i < l->ntimers; i++)
		if (l->timers[i].due_ns < next)
			next = l->timers[i].due_ns;
	return next;
}

int evloop_run(struct evloop *l)
{
	while (!l->stopped) {
		int64_t next = run_timers(l);
		if (l->stopped)
			break;
		int r = evloop_wait(l, next, -1);
		if (r < 0 && r != -EINTR)
			return r;
		for (size_t i = 0; i < l->nchecks; i++) {
			struct evloop_check c = l->checks[i];
			if (c.fn)
				c.fn(c.arg);
		}
	}
	return l->ret;
}

int evloop_wait_fd(int fd, short events, int64_t deadline_ns)
{
	struct pollfd p = {fd, events, 0};
	int r = poll(&p, 1, deadline_ns ? timeout_ms(deadline_ns, -1) : 0);

	if (r < 0)
		return -errno;
	return r ? p.revents : 0;
}

int evloop_ready_now(const int *fds, size_t n, unsigned char *ready)
{
	struct pollfd p[64];
	int total = 0;

	memset(ready, 0, n);
	for (size_t i = 0; i < n; i += 64) {
		size_t k = n - i < 64 ? n - i : 64;
		for (size_t j = 0; j < k; j++)
			p[j] = (struct pollfd){fds[i + j], POLLIN, 0};
		if (poll(p, (nfds_t)k, 0) < 0) {
			int err = -errno;
			memset(ready, 0, n);
			return err;
		}
		for (size_t j = 0; j < k; j++) {
			ready[i + j] = (p[j].revents & POLLIN) != 0;
			total += ready[i + j];
		}
	}
	return total;
}

void evloop_seat_take(struct evloop_seat *seat, struct evloop *loop, void (*done)(void *arg),
		      void *arg)
{
	seat->loop = loop;
	seat->done = done;
	seat->done_arg = arg;
}

void evloop_leave(struct evloop_seat *seat, const void *owner, int tell)
{
	if (!seat->loop)
		return;
	evloop_remove_arg(seat->loop, owner);
	seat->loop = NULL;
	if (tell && seat->done)
		seat->done(seat->done_arg);
}
