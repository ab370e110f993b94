/*
 * recce tasks: the tasks of a program's event loops, per type, from
 * librecce's task hooks read out of its rings, or with --libuv from
 * probes on a libuv program's callbacks (trace/uv-tasks.h): a live table
 * in the style of top, snapshots for scripts (-b, --json), or a
 * Prometheus /metrics page (--serve); or once, from an event file saved
 * or left by a crash. docs/recce-tasks.md is its --help.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/events-messages.h"
#include "cli/follow.h"
#include "cli/options.h"
#include "remote/scopes.h"
#include "cli/usage.h"
#include "events/ring-read.h"
#include "events/tasks-print.h"
#include "proc/self.h"
#include "trace/trace-limits.h"
#include "trace/uv-tasks.h"
#include "util/clock.h"
#include "util/http-serve.h"
#include "util/tcp.h"
#include "util/signals.h"

#define MAX_RINGS 1024 /* --libuv's probe rings polled, one a CPU */
/* --libuv's circuit breaker: callbacks at about 40 us of probes each, at
 * most a fifth of a core. */
#define UV_DEFAULT_RATE_N  5000
#define UV_DEFAULT_RATE_MS 1000

struct tasks_args {
	pid_t *pids;
	size_t npids;
	int batch, json, libuv;
	const char *duration, *iterations, *sort, *filter, *serve, *top_k, *interval, *limit;
};

static void pid_cb(void *ctx, const char *arg, const struct opt *o)
{
	struct tasks_args *a = ctx;
	parse_pid_list("tasks", "-p", arg, &a->pids, &a->npids);
}

static const struct opt tasks_options[] = {
    OPT_CALL_('p', "pid", "PID", pid_cb, 0, "the process whose tasks to show"),
    OPT_FLAG_('b', "batch", struct tasks_args, batch, "print a table each interval, no screen"),
    OPT_FLAG_(0, "json", struct tasks_args, json, "print a JSON object each interval"),
    OPT_FLAG_NEEDS_(0, "libuv", struct tasks_args, libuv, SCOPE_TRACE,
		    "a libuv program's callbacks, by probes: no hooks, no restart"),
    OPT_STRING_(0, "limit", "N/MS", struct tasks_args, limit,
		"--libuv's circuit breaker (default 5000/1000)"),
    OPT_STRING_('d', "duration", "SECONDS", struct tasks_args, duration, "stop after this long"),
    OPT_STRING_('n', "iterations", "N", struct tasks_args, iterations, "stop after N tables"),
    OPT_STRING_('i', "interval", "SECONDS", struct tasks_args, interval,
		"between tables (default 1)"),
    OPT_STRING_('s', "sort", "COLUMN", struct tasks_args, sort,
		"exec, runs, max, avg, wall, wait, children, created or name"),
    OPT_STRING_(0, "filter", "TEXT", struct tasks_args, filter, "only types whose name holds it"),
    OPT_STRING_NEEDS_(0, "serve", "ADDR", struct tasks_args, serve, SCOPE_ADMIN,
		      "serve Prometheus metrics at http://ADDR/metrics"),
    OPT_STRING_(0, "top-k", "K", struct tasks_args, top_k,
		"types a process exports to Prometheus (default 50)"),
    OPT_END_(),
};

struct session {
	struct ring_reader r;
	struct uv_tasks *uv; /* --libuv: the source instead of r */
	char comm[32];
	struct tasks t;
	struct tasks_view v;
	struct ring_event *ev;
	size_t cap;
	size_t top_k;
};

static void metrics_body(FILE *fp, void *ctx)
{
	struct session *s = ctx;
	tasks_print_prometheus(fp, &s->v, s->top_k);
}

/* The terminal in raw mode for single keys, restored by restore_tty. */
static struct termios saved_tty;
static int tty_raw;

static void raw_tty(void)
{
	struct termios t;
	if (tcgetattr(0, &saved_tty) != 0)
		return;
	t = saved_tty;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	tty_raw = tcsetattr(0, TCSANOW, &t) == 0;
}

static void restore_tty(void)
{
	if (tty_raw)
		tcsetattr(0, TCSANOW, &saved_tty);
	tty_raw = 0;
}

static void show(struct session *s, const struct tasks_args *a, int screen)
{
	if (screen)
		fputs("\033[H\033[2J", stdout);
	if (a->json)
		tasks_print_json(stdout, &s->v);
	else
		tasks_print_table(stdout, &s->v);
	if (screen)
		printf("\n[q] quit  [s] sort: by %s\n", task_sort_name(s->v.sort));
	else if (!a->json)
		putchar('\n');
	fflush(stdout);
}

int cmd_tasks(int argc, char **argv)
{
	struct tasks_args a = {0};
	int first = options_parse("tasks", tasks_options, 0, argc, argv, &a, NULL);
	long long iterations = 0, top_k = 50;

	const char *file = first < argc ? argv[first] : NULL;
	if (first + 1 < argc)
		usage_die("tasks", "one event file at a time, not also '%s'", argv[first + 1]);
	if ((a.npids != 1) == !file)
		usage_die("tasks", "name one process (-p PID) or one event file");
	if (file && a.serve)
		usage_die("tasks", "--serve follows a running process: give -p PID");
	if (file && a.libuv)
		usage_die("tasks", "--libuv follows a running process: give -p PID");
	double duration = option_seconds("tasks", "-d", a.duration, 0),
	       every = option_seconds("tasks", "-i", a.interval, 1);
	if (a.iterations && parse_int(a.iterations, 1, 1LL << 40, &iterations) != 0)
		usage_die("tasks", "-n wants a number of tables, not '%s'", a.iterations);
	if (a.top_k && parse_int(a.top_k, 1, 100000, &top_k) != 0)
		usage_die("tasks", "--top-k wants a number of types, not '%s'", a.top_k);
	int sort = a.sort ? task_sort_parse(a.sort) : TASK_SORT_EXEC;
	if (sort < 0)
		usage_die("tasks",
			  "cannot sort by '%s': exec, runs, max, avg, wall, wait, children, "
			  "created or name",
			  a.sort);

	struct session s = {.top_k = (size_t)top_k};
	char path[4096], bound[96];
	pid_t pid = file ? 0 : a.pids[0];
	int lfd = -1;
	if (a.serve) {
		/* A client that leaves mid-answer is an error of its write,
		 * not the end of recce. */
		signal(SIGPIPE, SIG_IGN);
		lfd = tcp_listen(a.serve, bound, sizeof(bound));
		if (lfd == -EINVAL)
			usage_die("tasks", "--serve wants HOST:PORT or PORT, not '%s'", a.serve);
		if (lfd < 0)
			die("cannot listen on '%s': %s", a.serve, strerror(-lfd));
	}
	uint64_t rate_n = UV_DEFAULT_RATE_N, rate_ms = UV_DEFAULT_RATE_MS;
	if (a.limit && !a.libuv)
		usage_die("tasks", "--limit is --libuv's circuit breaker: give --libuv");
	if (a.limit && strcmp(a.limit, "0") == 0)
		rate_n = 0;
	else if (a.limit && trace_limits_parse_rate(a.limit, &rate_n, &rate_ms) != 0)
		usage_die("tasks",
			  "--limit wants N/MS (callbacks within milliseconds) or 0, not '%s'",
			  a.limit);
	int err;
	if (a.libuv) {
		char why[512];
		err = uv_tasks_open(pid, rate_n, rate_ms, &s.uv, why, sizeof(why));
		if (err == -ENOMEM)
			die("out of memory");
		if (err)
			die("%s", why);
		snprintf(s.comm, sizeof(s.comm), "%s", uv_tasks_comm(s.uv));
		struct uv_tasks_stats st;
		uv_tasks_stats(s.uv, &st);
		note("following the callbacks of process %d through %s (%zu call sites probed)",
		     (int)pid, uv_tasks_library(s.uv), st.sites);
	} else {
		err = file ? ring_reader_open_path(&s.r, file)
			   : follow_open_events(&s.r, pid, path, sizeof(path), duration);
		if (err)
			events_die_open(err, file ? file : path, pid);
		snprintf(s.comm, sizeof(s.comm), "%s", s.r.hdr.comm);
	}
	tasks_init(&s.t);
	s.v = (struct tasks_view){&s.t, (int)pid, s.comm, 0, 0, (enum task_sort)sort, a.filter, 0};
	if (file)
		s.v.pid = (int)s.r.hdr.pid;
	if (lfd >= 0)
		note("serving Prometheus metrics at http://%s/metrics", bound);
	int screen = !a.batch && !a.json && !a.serve && isatty(1) && isatty(0);
	if (screen)
		raw_tty();

	sigset_t old;
	int sfd = block_stop_signals(&old), pidfd = file ? -1 : proc_pidfd_open(pid);
	/* The rings hold what came before: their first table is at once.
	 * Probes see nothing before they are there: theirs after a while. */
	uint64_t start = time_now_ns(CLOCK_MONOTONIC);
	uint64_t next = s.uv ? start + (uint64_t)(every * 1e9) : start;
	uint64_t end = duration ? start + (uint64_t)(duration * 1e9) : 0;
	long long shown = 0;
	int done = 0, stopped = 0, tripped = 0;
	while (!done) {
		size_t n = 0;
		err = s.uv ? uv_tasks_drain(s.uv, &s.ev, &n, &s.cap)
			   : ring_reader_drain(&s.r, &s.ev, &n, &s.cap);
		if (!err)
			err = tasks_feed(&s.t, s.ev, n);
		if (err) {
			error("reading pid %d's events stopped: %s", s.v.pid,
			      err == -EBADMSG  ? "its file is damaged"
			      : err == -ENOMEM ? "out of memory"
					       : strerror(-err));
			break;
		}
		uint64_t now = time_now_ns(CLOCK_MONOTONIC);
		if (s.uv) {
			struct uv_tasks_stats st;
			uv_tasks_stats(s.uv, &st);
			s.v.lost = st.lost;
			if (uv_tasks_tripped(s.uv) && !tripped) {
				tripped = 1;
				warning(
				    "more than %llu callbacks within %llu ms: every probe removed, "
				    "so as not to slow pid %d further (--limit N/MS to allow more, "
				    "--limit 0 for no limit); the numbers stop here",
				    (unsigned long long)rate_n, (unsigned long long)rate_ms,
				    (int)pid);
				done = 1;
			}
		} else {
			s.v.lost = ring_reader_lost(&s.r);
		}
		s.v.elapsed_s = (double)(now - start) / 1e9;
		int gone = pidfd >= 0 && poll(&(struct pollfd){pidfd, POLLIN, 0}, 1, 0) == 1;
		/* A file (saved, or left by a crash) is read once. */
		if (file || gone || (!s.uv && s.r.hdr.state == RECCE_PROC_EXITED) ||
		    (end && now >= end))
			done = 1;
		if (!a.serve && (now >= next || done)) {
			show(&s, &a, screen);
			next = now + (uint64_t)(every * 1e9);
			if (iterations && ++shown >= iterations)
				done = 1;
		}
		/* With --libuv, the probes' rings too: drained as they fill. */
		struct pollfd p[3 + MAX_RINGS] = {
		    {sfd, POLLIN, 0}, {lfd, POLLIN, 0}, {screen ? 0 : -1, POLLIN, 0}};
		size_t np = 3;
		if (s.uv) {
			int fds[MAX_RINGS];
			size_t nf = uv_tasks_pollfds(s.uv, fds, MAX_RINGS);
			for (size_t i = 0; i < nf; i++)
				p[np++] = (struct pollfd){fds[i], POLLIN, 0};
		}
		if (!done && poll(p, (nfds_t)np, 100) > 0) {
			char key = 0;
			if (p[0].revents & POLLIN)
				done = stopped = 1;
			if (p[1].revents & POLLIN)
				http_answer(lfd, "/metrics", "text/plain; version=0.0.4",
					    metrics_body, &s);
			if ((p[2].revents & POLLIN) && read(0, &key, 1) == 1) {
				if (key == 'q')
					done = 1;
				else if (key == 's') {
					s.v.sort =
					    (enum task_sort)((s.v.sort + 1) % (TASK_SORT_NAME + 1));
					next = 0;
				}
			}
		}
	}
	/* Stopped by Ctrl-C or SIGTERM: the last numbers are still said. */
	if (stopped && !err && !a.serve && !screen)
		show(&s, &a, 0);
	restore_tty();
	unblock_stop_signals(sfd, &old);
	if (pidfd >= 0)
		close(pidfd);
	if (lfd >= 0)
		close(lfd);
	if (s.v.lost && s.uv)
		warning("the kernel dropped %llu probe hits of pid %d: the counts are short",
			(unsigned long long)s.v.lost, (int)pid);
	else if (s.v.lost)
		warning(
		    "%llu events of pid %d were overwritten before they were read: the counts are "
		    "short; give it larger rings (RECCE_RING_EVENTS)",
		    (unsigned long long)s.v.lost, (int)pid);
	tasks_release(&s.t);
	if (s.uv)
		uv_tasks_free(s.uv);
	else
		ring_reader_release(&s.r);
	free(s.ev);
	free(a.pids);
	return err ? RECCE_EXIT_ERROR : 0;
}
