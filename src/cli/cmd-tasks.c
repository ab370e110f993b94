/*
 * recce tasks: the tasks of a program's event loops, per type, from
 * librecce's task hooks read out of its rings, or with --libuv from
 * probes on a libuv program's callbacks (trace/uv-tasks.h): a live table
 * in the style of top, snapshots for scripts (-b, --json), or a
 * Prometheus /metrics page (--serve); or once, from an event file saved
 * or left by a crash. docs/recce-tasks.md is its --help.
 */
#include <errno.h>
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
#include "tasks/session.h"
#include "trace/trace-limits.h"
#include "trace/uv-tasks.h"
#include "util/tcp.h"
#include "util/signals.h"
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

/* How views are shown: a screen redrawn, or tables or JSON objects. */
struct display {
	const struct tasks_args *a;
	int screen;
};

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

static void show(void *arg, const struct tasks_view *v)
{
	const struct display *d = arg;

	if (d->screen)
		fputs("\033[H\033[2J", stdout);
	if (d->a->json)
		tasks_print_json(stdout, v);
	else
		tasks_print_table(stdout, v);
	if (d->screen)
		printf("\n[q] quit  [s] sort: by %s\n", task_sort_name(v->sort));
	else if (!d->a->json)
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

	struct ring_reader r;
	struct uv_tasks *uv = NULL; /* --libuv: the source instead of r */
	char path[4096], bound[96], comm[32];
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
		err = uv_tasks_open(pid, rate_n, rate_ms, getenv("RECCE_NO_LINKS") != NULL, &uv,
				    why, sizeof(why));
		if (err == -ENOMEM)
			die("out of memory");
		if (err)
			die("%s", why);
		snprintf(comm, sizeof(comm), "%s", uv_tasks_comm(uv));
		struct uv_tasks_stats st;
		uv_tasks_stats(uv, &st);
		note("following the callbacks of process %d through %s (%zu call sites probed)",
		     (int)pid, uv_tasks_library(uv), st.sites);
	} else {
		err = file ? ring_reader_open_path(&r, file)
			   : follow_open_events(&r, pid, path, sizeof(path), duration);
		if (err)
			events_die_open(err, file ? file : path, pid);
		snprintf(comm, sizeof(comm), "%s", r.hdr.comm);
	}
	if (lfd >= 0)
		note("serving Prometheus metrics at http://%s/metrics", bound);
	struct display d = {&a, !a.batch && !a.json && !a.serve && isatty(1) && isatty(0)};
	if (d.screen)
		raw_tty();

	sigset_t old;
	int sfd = block_stop_signals(&old);
	struct tasks_session_config cfg = {
	    .rings = uv ? NULL : &r,
	    .file = file != NULL,
	    .uv = uv,
	    .pid = pid,
	    .comm = comm,
	    .duration = duration,
	    .every = every,
	    .views = iterations,
	    .listen_fd = lfd,
	    .top_k = (size_t)top_k,
	    .stop_fd = sfd,
	    .key_fd = d.screen ? 0 : -1,
	    .sort = (enum task_sort)sort,
	    .filter = a.filter,
	    .show = show,
	    .arg = &d,
	};
	struct tasks_session *s;
	err = tasks_session_new(&cfg, &s);
	if (!err)
		err = tasks_session_run(s);
	enum tasks_stop why = s ? tasks_session_stop(s) : TASKS_FAILED;
	const struct tasks_view *v = s ? tasks_session_view(s) : NULL;
	if (why == TASKS_FAILED) {
		int e = err ? err : tasks_session_error(s);
		error("reading pid %d's events stopped: %s", v ? v->pid : (int)pid,
		      e == -EBADMSG  ? "its file is damaged"
		      : e == -ENOMEM ? "out of memory"
				     : strerror(-e));
		err = e;
	}
	if (why == TASKS_TRIPPED)
		warning("more than %llu callbacks within %llu ms: every probe removed, so as not "
			"to slow pid %d further (--limit N/MS to allow more, --limit 0 for no "
			"limit); the numbers stop here",
			(unsigned long long)rate_n, (unsigned long long)rate_ms, (int)pid);
	/* Stopped by Ctrl-C or SIGTERM: the last numbers are still said. */
	if (why == TASKS_SIGNAL && !a.serve && !d.screen)
		show(&d, v);
	restore_tty();
	unblock_stop_signals(sfd, &old);
	if (lfd >= 0)
		close(lfd);
	if (v && v->lost && uv)
		warning("the kernel dropped %llu probe hits of pid %d: the counts are short",
			(unsigned long long)v->lost, (int)pid);
	else if (v && v->lost)
		warning(
		    "%llu events of pid %d were overwritten before they were read: the counts are "
		    "short; give it larger rings (RECCE_RING_EVENTS)",
		    (unsigned long long)v->lost, (int)pid);
	tasks_session_free(s);
	if (uv)
		uv_tasks_free(uv);
	else
		ring_reader_release(&r);
	free(a.pids);
	return err ? RECCE_EXIT_ERROR : 0;
}
