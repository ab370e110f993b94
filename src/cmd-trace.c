/*
 * recce trace: Erlang-style call tracing of live native processes. This
 * file parses options, resolves the patterns (trace-pattern), opens the
 * probes (uprobe), pairs calls with returns per thread, applies --if
 * (trace-cond) and the limits (trace-limits), and prints or writes the
 * events (trace-event, trace-file). docs/recce-trace.md is its --help.
 *
 * Safety: probes are perf events; they are removed the moment a limit
 * fires, and the kernel removes them anyway when recce dies, however it
 * dies. The target is never stopped: -p attaches without ptrace.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "builtin.h"
#include "proc-maps.h"
#include "signals.h"
#include "symbolize.h"
#include "trace-args.h"
#include "trace-cond.h"
#include "trace-event.h"
#include "trace-file.h"
#include "trace-hist.h"
#include "trace-limits.h"
#include "trace-pattern.h"
#include "uprobe.h"
#include "usage.h"

#define MAX_DEPTH    64 /* pending calls remembered per thread */
#define MAX_THREADS  4096
#define STACK_FRAMES 16

struct trace_args {
	pid_t *pids;
	size_t npids;
	char **argv;
	char **patterns;
	size_t npatterns;
	int show_args, ret, stack, caller, hist;
	const char *cond_text;
	struct trace_cond *cond;
	long long count, max_probes;
	double seconds;
	uint64_t rate_n, rate_ms;
	enum trace_format format;
	const char *output;
	uint64_t wrap_size;
	unsigned wrap_count;
};

struct frame {
	int fn;
	int selected;
	uint64_t time; /* CLOCK_MONOTONIC ns */
	struct trace_arg args[TRACE_MAX_ARGS];
	uint8_t nargs;
	uint64_t regs[TRACE_MAX_ARGS];
};

struct thread_calls {
	uint32_t tid;
	int depth;
	struct frame *frames; /* MAX_DEPTH, allocated on the thread's first call */
};

struct tracer {
	struct trace_args *a;
	struct symbolizer *sym;
	struct proc_registry *procs;
	struct trace_resolved res;
	struct trace_sig *sigs;
	struct trace_hist *hists;
	struct uprobe_set *up;
	int *probe_fn; /* probe index -> function index */
	struct trace_limits limits;
	struct trace_writer *writer;
	struct thread_calls *threads;
	size_t nthreads;
	uint64_t mono_to_real;
	uint64_t pending; /* selected calls whose return is still to come */
	int draining;	  /* --count reached: wait for the returns of shown calls */
	uint64_t shown;	  /* events shown (a call and its return once) */
	uint64_t dropped; /* calls beyond MAX_DEPTH or MAX_THREADS */
	int first_chrome;
	int write_err;
};

enum {
	OPT_ARGS = 256,
	OPT_RETURN,
	OPT_STACK,
	OPT_CALLER,
	OPT_IF,
	OPT_COUNT,
	OPT_TIME,
	OPT_LIMIT,
	OPT_MAX_PROBES,
	OPT_FORMAT,
	OPT_HIST,
	OPT_WRAP,
};

static const struct option trace_options[] = {
    {"pid", required_argument, NULL, 'p'},
    {"args", no_argument, NULL, OPT_ARGS},
    {"return", no_argument, NULL, OPT_RETURN},
    {"stack", no_argument, NULL, OPT_STACK},
    {"caller", no_argument, NULL, OPT_CALLER},
    {"if", required_argument, NULL, OPT_IF},
    {"count", required_argument, NULL, OPT_COUNT},
    {"time", required_argument, NULL, OPT_TIME},
    {"limit", required_argument, NULL, OPT_LIMIT},
    {"max-probes", required_argument, NULL, OPT_MAX_PROBES},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"hist", no_argument, NULL, OPT_HIST},
    {"output", required_argument, NULL, 'o'},
    {"wrap", required_argument, NULL, OPT_WRAP},
    {NULL, 0, NULL, 0},
};

/*
 * How often the kernel wakes recce, in hits per CPU. A wakeup costs the
 * traced thread several times what the probe does, so recce takes the
 * hits in batches: a quarter of the smallest limit, so that --count and
 * --limit still stop the trace within a fraction of their count, and at
 * most WAKEUP_MAX_HITS, so that a flood is seen (and the breaker trips)
 * within a few milliseconds. Between wakeups, the poll timeout
 * (POLL_MS) shows slow trickles of calls without delay a person notices.
 *
 * A string argument (char *) is read from the target's memory when recce
 * handles the call, so it must be handled while the call is still
 * running: a trace that shows strings wakes recce on every hit, and pays
 * for it.
 */
#define WAKEUP_MAX_HITS 256
#define POLL_MS		50

static unsigned wakeup_hits(const struct trace_args *a, const struct trace_sig *sigs, size_t n_fns)
{
	uint64_t n = WAKEUP_MAX_HITS * 4;

	for (size_t i = 0; i < n_fns; i++)
		for (int k = 0; k < sigs[i].nparams; k++)
			if (sigs[i].params[k].kind == TRACE_ARG_STR)
				return 1;

	if (a->count > 0 && (uint64_t)a->count < n)
		n = (uint64_t)a->count;
	if (a->rate_n > 0 && a->rate_n < n)
		n = a->rate_n;
	return n / 4 ? (unsigned)(n / 4) : 1;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* "1M", "512K", "4096" -> bytes. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return -1;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		v <<= 30, end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end != ',' && *end)
		return -1;
	*out = v;
	return (int)(end - s);
}

static void parse_wrap(struct trace_args *a, const char *s)
{
	long long count;
	int n = parse_size(s, &a->wrap_size);

	if (n <= 0 || s[n] != ',' || parse_int(s + n + 1, 1, 1000, &count) < 0 ||
	    a->wrap_size < TRACE_FILE_HEADER_SIZE + TRACE_RECORD_SIZE)
		usage_die("trace",
			  "--wrap wants SIZE,COUNT (SIZE at least %d bytes, with K, M or G; COUNT "
			  "1 to 1000), not '%s'",
			  TRACE_FILE_HEADER_SIZE + TRACE_RECORD_SIZE, s);
	a->wrap_count = (unsigned)count;
}

/* Shows where a condition fails to parse, and exits 2. */
static void cond_die(const char *text, const struct trace_cond_error *e)
{
	error("--if: %s at column %d:", e->message, e->column);
	fprintf(stderr, "    %s\n    %*s^\n", text, e->column - 1, "");
	fprintf(stderr, "see 'recce trace --help'\n");
	exit(RECCE_EXIT_USAGE);
}

static void parse_args(struct trace_args *a, int argc, char **argv)
{
	int dashdash = argc, c;
	long long v;

	memset(a, 0, sizeof(*a));
	a->count = TRACE_DEFAULT_COUNT;
	a->seconds = TRACE_DEFAULT_SECONDS;
	a->rate_n = TRACE_DEFAULT_RATE_N;
	a->rate_ms = TRACE_DEFAULT_RATE_MS;
	a->max_probes = 100;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dashdash = i;
			break;
		}
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(dashdash, argv, ":p:o:", trace_options, NULL)) != -1) {
		switch (c) {
		case 'p':
			parse_pid_list("trace", optarg, &a->pids, &a->npids);
			break;
		case OPT_ARGS:
			a->show_args = 1;
			break;
		case OPT_RETURN:
			a->ret = 1;
			break;
		case OPT_STACK:
			a->stack = 1;
			break;
		case OPT_CALLER:
			a->caller = 1;
			break;
		case OPT_HIST:
			a->hist = a->ret = 1;
			break;
		case OPT_IF:
			a->cond_text = optarg;
			break;
		case OPT_COUNT:
			if (parse_int(optarg, 0, INT32_MAX, &a->count) < 0)
				usage_die(
				    "trace",
				    "--count wants a number of events (0: no limit), not '%s'",
				    optarg);
			break;
		case OPT_TIME:
			if (parse_seconds(optarg, &a->seconds) < 0)
				usage_die("trace", "--time wants seconds (0: no limit), not '%s'",
					  optarg);
			break;
		case OPT_LIMIT:
			if (strcmp(optarg, "0") == 0)
				a->rate_n = 0;
			else if (trace_limits_parse_rate(optarg, &a->rate_n, &a->rate_ms) < 0)
				usage_die("trace",
					  "--limit wants N/MS (events per milliseconds), not '%s'",
					  optarg);
			break;
		case OPT_MAX_PROBES:
			if (parse_int(optarg, 1, 100000, &v) < 0)
				usage_die("trace", "--max-probes wants 1 to 100000, not '%s'",
					  optarg);
			a->max_probes = v;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") == 0)
				a->format = TRACE_FORMAT_TEXT;
			else if (strcmp(optarg, "json") == 0)
				a->format = TRACE_FORMAT_JSON;
			else
				usage_die("trace", "--format must be text or json, not '%s'",
					  optarg);
			break;
		case 'o':
			a->output = optarg;
			break;
		case OPT_WRAP:
			parse_wrap(a, optarg);
			break;
		case ':':
			usage_die("trace", "option '%s' needs a value", argv[optind - 1]);
		default:
			usage_die("trace", "unknown option '%s'", argv[optind - 1]);
		}
	}
	a->patterns = argv + optind;
	a->npatterns = (size_t)(dashdash - optind);
	if (dashdash < argc - 1)
		a->argv = argv + dashdash + 1;
	if (!a->npatterns)
		usage_die("trace", "name at least one function to trace");
	if (!a->npids && !a->argv)
		usage_die("trace", "nothing to trace: give -p PID or a command after --");
	if (a->npids && a->argv)
		usage_die("trace", "give either -p PID or a command, not both");
	if (a->wrap_size && !a->output)
		usage_die("trace", "--wrap needs -o FILE");
	if (a->cond_text) {
		struct trace_cond_error e;
		int err = trace_cond_parse(a->cond_text, &a->cond, &e);
		if (err == -EINVAL)
			cond_die(a->cond_text, &e);
		if (err)
			die("out of memory");
	}
}

/* The threads of pid from /proc/PID/task; returns the count (0 if gone). */
static size_t list_threads(pid_t pid, pid_t **out)
{
	char path[64];
	size_t n = 0, cap = 0;
	pid_t *tids = NULL;
	struct dirent *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		long tid = strtol(d->d_name, NULL, 10);
		if (tid <= 0)
			continue;
		tids = array_reserve(tids, &cap, n + 1, sizeof(*tids));
		if (!tids)
			die("out of memory");
		tids[n++] = (pid_t)tid;
	}
	closedir(dir);
	*out = tids;
	return n;
}

/* The executable a command will run: argv0 if it has a slash, else the
 * first match on PATH. */
static char *find_program(const char *argv0)
{
	if (strchr(argv0, '/'))
		return strdup(argv0);
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		const char *colon = strchrnul(p, ':');
		char buf[4096];
		int n = snprintf(buf, sizeof(buf), "%.*s/%s", (int)(colon - p), p, argv0);
		if (n > 0 && (size_t)n < sizeof(buf) && access(buf, X_OK) == 0)
			return strdup(buf);
		p = *colon ? colon + 1 : colon;
	}
	return NULL;
}

/* Adds the distinct ELF files mapped by pid to objs. */
static void add_process_objects(struct tracer *t, pid_t pid, const char *skip,
				struct trace_object **objs, size_t *n, size_t *cap)
{
	const struct proc_map *maps;
	size_t nmaps = procs_maps(t->procs, pid, &maps);

	for (size_t i = 0; i < nmaps; i++) {
		if (!maps[i].file || maps[i].path[0] != '/')
			continue;
		if (skip && strcmp(skip, maps[i].path) == 0)
			continue;
		int seen = 0;
		for (size_t j = 0; j < *n && !seen; j++)
			seen = (*objs)[j].file == maps[i].file;
		if (seen)
			continue;
		struct trace_object *no = array_reserve(*objs, cap, *n + 1, sizeof(*no));
		if (!no)
			die("out of memory");
		*objs = no;
		no[*n].file = maps[i].file;
		no[*n].path = maps[i].path;
		(*n)++;
	}
}

static void resolve_failed(struct tracer *t, int err, pid_t pid)
{
	struct trace_args *a = t->a;

	if (err == -E2BIG) {
		error("the patterns match %zu functions, more than --max-probes %lld allows: "
		      "narrow them, or raise --max-probes if you mean it",
		      t->res.total, a->max_probes);
		exit(RECCE_EXIT_ERROR);
	}
	if (err != -ENOENT)
		die("cannot read the symbols of process %d: %s", (int)pid, strerror(-err));
	for (size_t p = 0; p < a->npatterns; p++) {
		if (t->res.matched[p])
			continue;
		error("'%s' matches no function in %s %d", a->patterns[p],
		      a->argv ? "the command, run as" : "process", (int)pid);
		char **near = t->res.nearest[p];
		if (near[0]) {
			fprintf(stderr, "the nearest names are:");
			for (int i = 0; i < TRACE_NEAREST && near[i]; i++)
				fprintf(stderr, "%s %s", i ? "," : "", near[i]);
			fputc('\n', stderr);
		}
	}
	exit(RECCE_EXIT_ERROR);
}

static struct thread_calls *thread_of(struct tracer *t, uint32_t tid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return &t->threads[i];
	if (t->nthreads == MAX_THREADS)
		return NULL;
	struct thread_calls *th = &t->threads[t->nthreads];
	th->frames = calloc(MAX_DEPTH, sizeof(*th->frames));
	if (!th->frames)
		return NULL;
	th->tid = tid;
	th->depth = 0;
	t->nthreads++;
	return th;
}

/* The name of the code at addr in pid: "function" or "object+0xoff". */
static void name_address(struct tracer *t, uint32_t pid, uint64_t addr, char *buf, size_t len,
			 const char **file, int *line)
{
	const struct proc_map *m = procs_find(t->procs, (pid_t)pid, addr);
	struct sym_frame fr[8];
	uint64_t vaddr;

	if (file)
		*file = NULL;
	if (!m) {
		/* A command's mappings appear after recce looked; look again. */
		procs_scan(t->procs, (pid_t)pid);
		m = procs_find(t->procs, (pid_t)pid, addr);
	}
	if (m && m->file &&
	    sym_file_offset_to_vaddr(m->file, addr - m->start + m->pgoff, &vaddr) == 0) {
		int n = symbolizer_lookup(t->sym, m->file, vaddr - 1, fr, 8);
		if (n > 0 && fr[n - 1].function) {
			snprintf(buf, len, "%s",
				 fr[0].function ? fr[0].function : fr[n - 1].function);
			if (file) {
				*file = fr[0].file;
				*line = fr[0].line;
			}
			return;
		}
		const char *slash = strrchr(m->path, '/');
		snprintf(buf, len, "%s+0x%llx", slash ? slash + 1 : m->path,
			 (unsigned long long)(addr - m->start + m->pgoff));
		return;
	}
	snprintf(buf, len, "0x%llx", (unsigned long long)addr);
}

static void emit(struct tracer *t, struct trace_record *r)
{
	if (t->writer) {
		int err = trace_writer_write(t->writer, r);
		if (err && !t->write_err)
			t->write_err = err;
		return;
	}
	trace_record_print(r, t->a->format, 0, stdout);
}

static void emit_stack(struct tracer *t, const struct uprobe_hit *h)
{
	char name[256];
	const char *file;
	int line;

	if (t->writer || t->a->format != TRACE_FORMAT_TEXT)
		return;
	for (size_t i = 1; i < h->nchain && i <= STACK_FRAMES; i++) {
		name_address(t, h->pid, h->chain[i], name, sizeof(name), &file, &line);
		if (file)
			printf("    at %s (%s:%d)\n", name, file, line);
		else
			printf("    at %s\n", name);
	}
}

static int on_call(struct tracer *t, const struct uprobe_hit *h, int fn)
{
	struct trace_args *a = t->a;
	struct trace_record r;
	struct thread_calls *th = a->ret ? thread_of(t, h->tid) : NULL;

	memset(&r, 0, sizeof(r));
	r.kind = TRACE_CALL;
	r.time_ns = h->time + t->mono_to_real;
	r.pid = h->pid;
	r.tid = h->tid;
	snprintf(r.function, sizeof(r.function), "%s:%s", t->res.fns[fn].object,
		 t->res.fns[fn].name);
	trace_args_fill(&t->sigs[fn], h->args, (pid_t)h->pid, a->show_args || a->cond, &r);
	if (!a->show_args && !t->sigs[fn].known)
		r.nargs = 0; /* registers were only filled for --if */
	int selected = !t->draining && trace_cond_eval(a->cond, trace_record_lookup, &r);
	if (selected) {
		enum trace_stop st = trace_limits_event(&t->limits, h->time);
		if (st == TRACE_STOP_BREAKER)
			return 1;
		if (a->caller && h->nchain > 1)
			name_address(t, h->pid, h->chain[1], r.caller, sizeof(r.caller), NULL,
				     NULL);
		emit(t, &r);
		if (a->stack)
			emit_stack(t, h);
		t->shown++;
		if (st == TRACE_STOP_COUNT)
			t->draining = 1;
	}
	if (a->ret) {
		if (!th || th->depth >= MAX_DEPTH) {
			t->dropped++;
		} else {
			struct frame *f = &th->frames[th->depth++];
			f->fn = fn;
			f->selected = selected;
			f->time = h->time;
			f->nargs = r.nargs;
			memcpy(f->args, r.args, sizeof(f->args));
			memcpy(f->regs, r.regs, sizeof(f->regs));
			if (selected)
				t->pending++;
		}
	}
	/* Without --return a shown call is the whole event. */
	return t->draining && !t->pending;
}

static int on_return(struct tracer *t, const struct uprobe_hit *h, int fn)
{
	struct thread_calls *th = thread_of(t, h->tid);
	struct trace_record r;

	if (!th)
		return 0;
	/* Unwind to the frame of this function: a longjmp or an exception
	 * may have skipped returns above it. */
	int d = th->depth - 1;
	while (d >= 0 && th->frames[d].fn != fn)
		d--;
	if (d < 0)
		return 0; /* called before the probes were in place */
	for (int i = th->depth - 1; i > d; i--)
		if (th->frames[i].selected)
			t->pending--;
	th->depth = d;
	struct frame *f = &th->frames[d];
	if (!f->selected)
		return 0;
	t->pending--;
	memset(&r, 0, sizeof(r));
	r.kind = TRACE_RETURN;
	r.time_ns = h->time + t->mono_to_real;
	r.duration_ns = h->time - f->time;
	r.pid = h->pid;
	r.tid = h->tid;
	r.arity = t->sigs[fn].arity;
	r.ret_kind = (uint8_t)(t->sigs[fn].known ? t->sigs[fn].ret_kind : TRACE_ARG_HEX);
	r.ret = trace_args_narrow_ret(&t->sigs[fn], h->ret);
	r.nargs = f->nargs;
	memcpy(r.args, f->args, sizeof(r.args));
	memcpy(r.regs, f->regs, sizeof(r.regs));
	snprintf(r.function, sizeof(r.function), "%s:%s", t->res.fns[fn].object,
		 t->res.fns[fn].name);
	emit(t, &r);
	if (t->hists)
		trace_hist_add(&t->hists[fn], r.duration_ns);
	return t->draining && !t->pending;
}

static int on_hit(const struct uprobe_hit *h, void *arg)
{
	struct tracer *t = arg;
	int fn = t->probe_fn[h->probe];

	if (t->limits.stop == TRACE_STOP_BREAKER)
		return 1;
	return h->retprobe ? on_return(t, h, fn) : on_call(t, h, fn);
}

static int pidfd_of(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	/* Probes cost one descriptor per thread and CPU each. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void stop_line(struct tracer *t)
{
	struct trace_args *a = t->a;
	char what[160];

	switch (t->limits.stop) {
	case TRACE_STOP_COUNT:
		snprintf(what, sizeof(what), " (--count %lld)", a->count);
		break;
	case TRACE_STOP_TIME:
		snprintf(what, sizeof(what), ": time limit reached (--time %g)", a->seconds);
		break;
	case TRACE_STOP_BREAKER:
		snprintf(what, sizeof(what),
			 ": circuit breaker tripped (--limit %llu/%llu: more than %llu events in "
			 "%llu ms)",
			 (unsigned long long)a->rate_n, (unsigned long long)a->rate_ms,
			 (unsigned long long)a->rate_n, (unsigned long long)a->rate_ms);
		break;
	case TRACE_STOP_EXITED:
		snprintf(what, sizeof(what), ": the target exited");
		break;
	case TRACE_STOP_SIGNAL:
		snprintf(what, sizeof(what), ": interrupted");
		break;
	default:
		what[0] = 0;
	}
	note("stopped after %llu event%s%s; all probes removed", (unsigned long long)t->shown,
	     t->shown == 1 ? "" : "s", what);
}

/* Starts the command stopped at a gate; returns its pid and the gate fd. */
static pid_t start_command(char **argv, const sigset_t *mask, int *gate)
{
	int go[2];

	if (pipe2(go, O_CLOEXEC) < 0)
		die("cannot create a pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		die("cannot fork: %s", strerror(errno));
	if (pid == 0) {
		char c;
		sigprocmask(SIG_SETMASK, mask, NULL);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* recce went away: do not run untraced */
		execvp(argv[0], argv);
		fprintf(stderr, "recce: error: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	*gate = go[1];
	return pid;
}

static void describe_probes(struct tracer *t)
{
	struct trace_args *a = t->a;

	for (size_t i = 0; i < t->res.n; i++)
		if (!t->sigs[i].known && (a->show_args || a->cond))
			warning("%s:%s: arguments shown as raw registers arg0..arg5: %s",
				t->res.fns[i].object, t->res.fns[i].name, t->sigs[i].reason);
}

int cmd_trace(int argc, char **argv)
{
	struct trace_args a;
	struct tracer t;
	sigset_t old_mask;
	pid_t child = 0;
	int gate = -1, err;

	parse_args(&a, argc, argv);
	memset(&t, 0, sizeof(t));
	t.a = &a;
	for (size_t i = 0; i < a.npids; i++)
		if (kill(a.pids[i], 0) < 0 && errno == ESRCH)
			die("no process with PID %d", (int)a.pids[i]);
	if (a.output) {
		/* Refuse an unwritable path before any probe exists. */
		err = trace_writer_new(a.output, a.wrap_size, a.wrap_count,
				       a.npids ? (uint32_t)a.pids[0] : 0, &t.writer);
		if (err)
			die("cannot write '%s': %s", a.output, strerror(-err));
	}
	t.sym = symbolizer_new();
	t.procs = t.sym ? procs_new(t.sym) : NULL;
	if (!t.procs)
		die("out of memory");

	struct trace_object *objs = NULL;
	size_t nobj = 0, objs_cap = 0;
	char *program = NULL;
	if (a.npids) {
		for (size_t i = 0; i < a.npids; i++) {
			err = procs_scan(t.procs, a.pids[i]);
			if (err == -ESRCH)
				die("no process with PID %d", (int)a.pids[i]);
			if (err)
				die("cannot read the mappings of process %d: %s", (int)a.pids[i],
				    strerror(-err));
			add_process_objects(&t, a.pids[i], NULL, &objs, &nobj, &objs_cap);
		}
	} else {
		/* The command is not running yet: search its executable, and
		 * the shared libraries recce itself maps (libc and friends),
		 * which are the very files the command will map. */
		program = find_program(a.argv[0]);
		struct sym_file *f;
		if (!program || symbolizer_open(t.sym, program, -1, &f) < 0)
			die("cannot run '%s': no such executable", a.argv[0]);
		objs = array_reserve(NULL, &objs_cap, 1, sizeof(*objs));
		if (!objs)
			die("out of memory");
		objs[0] = (struct trace_object){f, program};
		nobj = 1;
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = 0;
		if (procs_scan(t.procs, getpid()) == 0)
			add_process_objects(&t, getpid(), self, &objs, &nobj, &objs_cap);
	}

	pid_t first = a.npids ? a.pids[0] : 0;
	struct trace_pattern *pats = calloc(a.npatterns, sizeof(*pats));
	if (!pats)
		die("out of memory");
	for (size_t i = 0; i < a.npatterns; i++)
		if (trace_pattern_parse(a.patterns[i], &pats[i]) < 0)
			usage_die("trace", "'%s' is not a pattern: [OBJECT:]FUNCTION",
				  a.patterns[i]);
	err = trace_resolve(t.sym, pats, a.npatterns, objs, nobj, (size_t)a.max_probes, &t.res);
	if (err)
		resolve_failed(&t, err, first);

	t.sigs = calloc(t.res.n, sizeof(*t.sigs));
	t.hists = a.hist ? calloc(t.res.n, sizeof(*t.hists)) : NULL;
	t.threads = calloc(MAX_THREADS, sizeof(*t.threads));
	t.probe_fn = calloc(t.res.n * 2, sizeof(*t.probe_fn));
	if (!t.sigs || (a.hist && !t.hists) || !t.threads || !t.probe_fn)
		die("out of memory");
	for (size_t i = 0; i < t.res.n; i++) {
		trace_args_describe(t.res.fns[i].file, t.res.fns[i].name, t.res.fns[i].vaddr,
				    &t.sigs[i]);
		if (t.hists)
			trace_hist_init(&t.hists[i]);
	}
	describe_probes(&t);
	raise_fd_limit();

	struct uprobe_set_config ucfg = {a.stack || a.caller, 0, wakeup_hits(&a, t.sigs, t.res.n)};
	err = uprobe_set_new(&ucfg, &t.up);
	if (err == -EACCES)
		die("perf_event_open refused: run recce as root, or lower "
		    "kernel.perf_event_paranoid and grant CAP_PERFMON");
	if (err == -ENOENT)
		die("this kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe)");
	if (err)
		die("cannot open the trace buffers: %s", strerror(-err));

	int sfd = block_stop_signals(&old_mask);
	if (a.argv) {
		child = start_command(a.argv, &old_mask, &gate);
		first = child;
	}
	pid_t *targets = a.npids ? a.pids : &child;
	size_t ntargets = a.npids ? a.npids : 1;
	for (size_t i = 0; i < t.res.n; i++)
		for (int ret = 0; ret <= a.ret; ret++) {
			int probe =
			    uprobe_set_add(t.up, t.res.fns[i].path, t.res.fns[i].offset, ret);
			if (probe < 0)
				die("out of memory");
			t.probe_fn[probe] = (int)i;
		}
	size_t attached = 0;
	for (size_t p = 0; p < ntargets; p++) {
		pid_t *tids = NULL;
		size_t ntids = list_threads(targets[p], &tids);
		int rc = ntids ? uprobe_set_attach(t.up, targets[p], tids, ntids) : -ESRCH;
		free(tids);
		if (rc == -ESRCH)
			continue; /* exited: the others are traced */
		if (rc < 0) {
			const char *path = uprobe_set_error_path(t.up);
			uprobe_set_free(t.up);
			if (child)
				kill(child, SIGKILL);
			if (rc == -EMFILE || rc == -ENFILE)
				die("out of file descriptors (each probe needs one per thread and "
				    "CPU): raise 'ulimit -n' or trace fewer functions");
			if (rc == -EACCES || rc == -EPERM)
				die("the kernel refused the probes: run recce as root, or grant "
				    "CAP_PERFMON and CAP_BPF");
			die("cannot probe %s in process %d: %s", path ? path : "the functions",
			    (int)targets[p], strerror(-rc));
		}
		attached++;
	}
	if (!attached) {
		uprobe_set_free(t.up);
		if (child)
			kill(child, SIGKILL);
		die("process %d exited before recce could attach", (int)first);
	}
	t.mono_to_real = now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC);
	trace_limits_init(&t.limits, (uint64_t)a.count, (uint64_t)(a.seconds * 1e9), a.rate_n,
			  a.rate_ms, now_ns(CLOCK_MONOTONIC));
	if (a.npids)
		note("tracing %zu function%s in %s %d with %s; limits: --count %lld, --time %g, "
		     "--limit %llu/%llu",
		     t.res.n, t.res.n == 1 ? "" : "s", ntargets > 1 ? "processes from" : "process",
		     (int)first, uprobe_set_uses_links(t.up) ? "BPF links" : "perf uprobe events",
		     a.count, a.seconds, (unsigned long long)a.rate_n,
		     (unsigned long long)a.rate_ms);
	if (gate >= 0) {
		if (write(gate, "g", 1) != 1)
			die("cannot start '%s'", a.argv[0]);
		close(gate);
	}

	/* Poll the rings, the signals and the targets' pidfds. */
	size_t nrings = uprobe_set_pollfds(t.up, NULL, 0);
	struct pollfd *pfd = calloc(nrings + 1 + ntargets, sizeof(*pfd));
	int *ringfds = calloc(nrings, sizeof(*ringfds));
	if (!pfd || !ringfds)
		die("out of memory");
	uprobe_set_pollfds(t.up, ringfds, nrings);
	for (size_t i = 0; i < nrings; i++)
		pfd[i] = (struct pollfd){ringfds[i], POLLIN, 0};
	pfd[nrings] = (struct pollfd){sfd, POLLIN, 0};
	size_t alive = 0;
	for (size_t i = 0; i < ntargets; i++) {
		pfd[nrings + 1 + i] = (struct pollfd){pidfd_of(targets[i]), POLLIN, 0};
		if (pfd[nrings + 1 + i].fd >= 0)
			alive++;
	}
	int child_status = 0, child_done = 0;
	for (;;) {
		uint64_t left = trace_limits_remaining(&t.limits, now_ns(CLOCK_MONOTONIC));
		/* After --count, wait for the returns of the calls shown, but
		 * no longer than the time limit. */
		if (t.limits.stop && !(t.limits.stop == TRACE_STOP_COUNT && t.pending && left))
			break;
		int timeout = left > POLL_MS * 1000000ULL ? POLL_MS : (int)(left / 1000000ULL) + 1;
		poll(pfd, nrings + 1 + ntargets, timeout);
		if (uprobe_set_read(t.up, on_hit, &t) < 0)
			break;
		if (t.limits.stop == TRACE_STOP_BREAKER || (t.draining && !t.pending))
			break;
		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			trace_limits_stop(&t.limits, TRACE_STOP_SIGNAL);
		for (size_t i = 0; i < ntargets; i++) {
			struct pollfd *p = &pfd[nrings + 1 + i];
			if (p->fd >= 0 && (p->revents & (POLLIN | POLLHUP))) {
				close(p->fd);
				p->fd = -1;
				alive--;
			}
		}
		if (child && !child_done && waitpid(child, &child_status, WNOHANG) == child)
			child_done = 1;
		if (!alive || child_done) {
			/* Read what the target did before it exited. */
			uprobe_set_read(t.up, on_hit, &t);
			trace_limits_stop(&t.limits, TRACE_STOP_EXITED);
		}
		trace_limits_tick(&t.limits, now_ns(CLOCK_MONOTONIC));
	}
	/* The target first: remove every probe before anything else. */
	uprobe_set_remove_all(t.up);
	fflush(stdout);
	stop_line(&t);
	const struct uprobe_stats *us = uprobe_set_stats(t.up);
	if (us->lost)
		warning("the kernel dropped %llu events (the ring was full)",
			(unsigned long long)us->lost);
	if (us->unfollowed)
		warning("%llu probes could not be opened on threads the target created "
			"while traced",
			(unsigned long long)us->unfollowed);
	if (t.dropped)
		warning("%llu calls nested deeper than %d or on more than %d threads were not "
			"paired with their returns",
			(unsigned long long)t.dropped, MAX_DEPTH, MAX_THREADS);
	if (t.hists)
		for (size_t i = 0; i < t.res.n; i++) {
			char name[256];
			if (!t.hists[i].count)
				continue;
			snprintf(name, sizeof(name), "%s:%s", t.res.fns[i].object,
				 t.res.fns[i].name);
			trace_hist_print(&t.hists[i], name, stdout);
		}
	int status = 0;
	if (t.writer) {
		uint64_t n = trace_writer_count(t.writer);
		err = trace_writer_close(t.writer);
		if (err || t.write_err) {
			error("cannot write '%s': %s", a.output,
			      strerror(-(err ? err : t.write_err)));
			status = RECCE_EXIT_ERROR;
		} else {
			note("wrote %llu events to %s%s", (unsigned long long)n, a.output,
			     a.wrap_size ? ".*" : "");
		}
	}
	if (child) {
		/* The command runs on, untraced, to its end: wait for it,
		 * with the stop signals delivered again. */
		unblock_stop_signals(sfd, &old_mask);
		if (!child_done)
			waitpid(child, &child_status, 0);
	}
	uprobe_set_free(t.up);
	for (size_t i = 0; i < t.nthreads; i++)
		free(t.threads[i].frames);
	free(t.threads);
	free(t.probe_fn);
	free(t.sigs);
	free(t.hists);
	free(pfd);
	free(ringfds);
	trace_resolved_release(&t.res, a.npatterns);
	for (size_t i = 0; i < a.npatterns; i++)
		trace_pattern_release(&pats[i]);
	free(pats);
	free(objs);
	free(program);
	procs_free(t.procs);
	symbolizer_free(t.sym);
	trace_cond_free(a.cond);
	free(a.pids);
	return status;
}
