/*
 * recce top: a live view of what the threads of running processes are
 * doing (CPU, context switches, memory, and the function each one is in).
 * This file parses options, sets up the session (model, sampler, /proc
 * reader), runs the wait-read-snapshot loop shared by batch mode and the
 * screen, and turns error codes into messages; the page docs/recce-top.md
 * is its --help.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "perf-events.h"
#include "top-ui.h"
#include "usage.h"

#define DEFAULT_FREQ  49
#define DEFAULT_DELAY 1.0
#define MAX_POLLFDS   1025

enum { OPT_JSON = 256, OPT_HISTORY };

static const struct option top_options[] = {
    {"pid", required_argument, NULL, 'p'},
    {"delay", required_argument, NULL, 'd'},
    {"freq", required_argument, NULL, 'F'},
    {"batch", no_argument, NULL, 'b'},
    {"count", required_argument, NULL, 'n'},
    {"json", no_argument, NULL, OPT_JSON},
    {"history", required_argument, NULL, OPT_HISTORY},
    {NULL, 0, NULL, 0},
};

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

double top_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void parse_args(struct top_session *s, int argc, char **argv)
{
	long long max_rate = 100000, v;
	int c;

	s->delay = DEFAULT_DELAY;
	s->freq = DEFAULT_FREQ;
	s->history = TOP_DEFAULT_HISTORY;
	perf_sysctl_read("/proc/sys/kernel/perf_event_max_sample_rate", &max_rate);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":p:d:F:bn:", top_options, NULL)) != -1) {
		switch (c) {
		case 'p':
			parse_pid_list("top", optarg, &s->pids, &s->npids);
			break;
		case 'd':
			if (parse_seconds(optarg, &s->delay) < 0 || s->delay < 0.05)
				usage_die("top",
					  "-d wants a number of seconds of at least 0.05, not '%s'",
					  optarg);
			break;
		case 'F':
			if (parse_int(optarg, 1, max_rate, &v) < 0)
				usage_die("top",
					  "-F must be between 1 and %lld "
					  "(kernel.perf_event_max_sample_rate), not '%s'",
					  max_rate, optarg);
			s->freq = (unsigned)v;
			break;
		case 'b':
			s->batch = 1;
			break;
		case 'n':
			if (parse_int(optarg, 1, 1LL << 40, &s->count) < 0)
				usage_die("top", "-n wants a positive count, not '%s'", optarg);
			break;
		case OPT_JSON:
			s->json = 1;
			break;
		case OPT_HISTORY:
			if (parse_int(optarg, 1, TOP_MAX_HISTORY, &v) < 0)
				usage_die("top", "--history must be between 1 and %d, not '%s'",
					  TOP_MAX_HISTORY, optarg);
			s->history = (unsigned)v;
			break;
		case ':':
			usage_die("top", "option '%s' needs a value", argv[optind - 1]);
		default:
			usage_die("top", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_die("top", "unexpected argument '%s'", argv[optind]);
	if (s->json && !s->batch)
		usage_die("top", "--json goes with -b (batch mode)");
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
		if (stop_requested)
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
		if (r < 0 && errno == EINTR && fd >= 0 && !stop_requested)
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

static void check_pids(const struct top_session *s)
{
	for (size_t i = 0; i < s->npids; i++)
		if (kill(s->pids[i], 0) < 0 && errno == ESRCH)
			die("no process with PID %d", (int)s->pids[i]);
}

static void start_sampling(struct top_session *s)
{
	struct top_sampler_config cfg = {0};

	cfg.freq = s->freq;
	cfg.pids = s->pids;
	cfg.npids = s->npids;
	int err = top_sampler_new(&cfg, &s->sampler);
	if (!err)
		return;
	s->sampler = NULL;
	if (err == -EACCES || err == -EPERM)
		snprintf(s->sampling_off, sizeof(s->sampling_off),
			 "perf_event_open refused: no function columns; run as root, grant "
			 "CAP_PERFMON, or lower kernel.perf_event_paranoid to 0 "
			 "(sysctl -w kernel.perf_event_paranoid=0)");
	else if (err == -EMFILE || err == -ENFILE)
		snprintf(s->sampling_off, sizeof(s->sampling_off),
			 "out of file descriptors: no function columns (raise 'ulimit -n')");
	else
		snprintf(s->sampling_off, sizeof(s->sampling_off),
			 "cannot sample: %s: no function columns", strerror(-err));
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static int run_batch(struct top_session *s)
{
	for (;;) {
		if (top_session_wait(s, -1) < 0)
			return 0;
		int err = top_session_snapshot(s);
		if (err)
			die("cannot read the processes: %s", strerror(-err));
		top_batch_print(s, stdout);
		s->shown++;
		if (s->npids && !s->nalive) {
			note("every watched process has exited");
			return 0;
		}
		if (s->count && s->shown >= s->count)
			return 0;
	}
}

int cmd_top(int argc, char **argv)
{
	struct top_session s;
	struct top_model_config mc = {0};
	int status;

	memset(&s, 0, sizeof(s));
	parse_args(&s, argc, argv);
	check_pids(&s);
	if (procstat_reader_init(&s.reader, NULL) < 0)
		die("out of memory");
	s.alive = malloc(s.npids + 1);
	if (!s.alive)
		die("out of memory");
	memset(s.alive, 1, s.npids + 1);
	s.nalive = s.npids;
	mc.by_process = s.npids == 0;
	mc.history = s.history;
	mc.ticks_per_s = sysconf(_SC_CLK_TCK);
	mc.page_kb = sysconf(_SC_PAGESIZE) / 1024;
	int err = top_model_new(&mc, &s.model);
	if (err)
		die("cannot set up: %s", strerror(-err));
	start_sampling(&s);
	if (!s.sampler && s.batch && !s.json)
		warning("%s", s.sampling_off);
	install_signals();

	/* The first reading is the baseline every rate of the first
	 * snapshot is measured against; it is not shown. */
	err = top_session_snapshot(&s);
	if (err)
		die("cannot read the processes: %s", strerror(-err));
	if (s.npids && !s.nalive)
		die("every watched process exited before the first snapshot");

	status = s.batch ? run_batch(&s) : top_tui_run(&s);

	top_sampler_free(s.sampler);
	top_model_free(s.model);
	procstat_reader_release(&s.reader);
	free(s.scratch_pids);
	free(s.alive);
	free(s.pids);
	return status;
}
