/*
 * What recce trace says (see cmd-trace.h): one message a person can act on
 * for each way the tracer fails, the line that says why tracing stopped,
 * and the warnings about what was lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cmd-trace.h"
#include "cli/inject-messages.h"
#include "cli/jit-hint.h"
#include "cli/usage.h"
#include "inject/fast-format.h"
#include "proc/launch.h"
#include "proc/procstat.h"
#include "symbols/perfmap.h"
#include "trace/trace-calls.h"
#include "trace/trace-exits.h"
#include "trace/py-call.h"
#include "trace/trace-hist.h"
#include "trace/trace-report.h"
#include "trace/trace-tree.h"
#include "util/path.h"
#include "util/term-safe.h"

/* The kernel's ENOTSUPP, which it returns to user space for an instruction
 * a uprobe cannot be placed on; libc has no name for it. */
#define ENOTSUPP_KERNEL 524

/* Says why the patterns found nothing to trace, with the nearest names. */
/* Whether pattern names JIT code of pid (its /tmp/perf-PID.map, as the
 * BEAM, Node or a JVM writes it, jit-hint.h spelling its names); if so,
 * says why it cannot be traced. A JIT runtime without a map: says that
 * the pattern may be its code, and how to see it, and returns 0 (its own
 * C names may still be what was meant). */
static int say_jit(const char *pattern, pid_t pid)
{
	struct perfmap *map;
	struct stat st;
	struct procstat_reader r;
	struct procstat_task t = {0};
	char path[64], buf[160];
	const char *name, *hit = NULL, *comm = t.comm;

	if (procstat_reader_init(&r, NULL) == 0) {
		if (procstat_read_process(&r, pid, &t) != 0)
			t.comm[0] = 0;
		procstat_reader_release(&r);
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) < 0 || perfmap_load(pid, st.st_uid, NULL, &map) < 0) {
		if (jit_hint_runtime(comm))
			note("process %d is %s, which keeps no perf map: if '%s' is code its JIT "
			     "compiled, recce trace cannot probe it (JIT code is in no file), and "
			     "recce record shows it as [JIT: %s]; %s",
			     (int)pid, comm, pattern, comm,
			     jit_hint_perf_map(comm, pid, buf, sizeof(buf)));
		return 0;
	}
	/* The shortest matching name: the function, not its helpers
	 * ("$fib:fib/1-CodeInfoPrologue"). */
	for (size_t i = 0; (name = perfmap_name(map, i)) != NULL; i++)
		if (jit_hint_name_matches(pattern, name) && (!hit || strlen(name) < strlen(hit)))
			hit = name;
	if (hit)
		note("it names JIT code of process %d (%s, in /tmp/perf-%d.map): recce trace puts "
		     "probes on code in files, and JIT code is in none; recce record and recce top "
		     "see it",
		     (int)pid, hit, (int)pid);
	perfmap_free(map);
	return hit != NULL;
}

/* Whether pid has exited (gone, or a zombie its parent has not reaped,
 * whose mappings are empty); if so, says so. */
static int say_exited(pid_t pid)
{
	struct procstat_reader r;
	int zombie;

	if (procstat_reader_init(&r, NULL) < 0)
		return 0;
	int gone = procstat_exited(&r, pid, &zombie);
	if (gone)
		error("process %d has exited%s: there is nothing left to trace", (int)pid,
		      zombie ? " (a zombie its parent has not reaped)" : "");
	procstat_reader_release(&r);
	return gone;
}

/* A command whose functions cannot be looked for: not found, or not a
 * program (a script, such as a pyenv shim, whose program is known only
 * when it runs). */
static void program_failed(const char *argv0)
{
	char *path = launch_which(argv0);
	char head[4] = {0};
	FILE *f = path ? fopen(path, "re") : NULL;

	int err = errno;
	if (f) {
		if (fread(head, 1, sizeof(head), f) < 2)
			head[0] = 0;
		fclose(f);
	}
	if (!path || (!f && err == ENOENT))
		error("cannot run '%s': no such executable", argv0);
	else if (!f)
		error("cannot read '%s' (%s): %s", argv0, path, strerror(err));
	else if (head[0] == '#' && head[1] == '!')
		error("'%s' (%s) is a script, and trace looks for a command's functions in its "
		      "program before it runs: name the program the script runs (for a pyenv "
		      "shim, the path 'pyenv which %s' prints), or start the command and trace "
		      "it with -p PID",
		      argv0, path, path_base(argv0));
	else
		error("'%s' (%s) is no program trace can read (an ELF file)", argv0, path);
	free(path);
}

static void resolve_failed(const struct trace_args *a, const struct tracer *t, int err, pid_t pid)
{
	const struct trace_resolved *res = tracer_functions(t);

	if (err == -E2BIG) {
		error("the patterns match %zu functions, more than --max-probes %lld allows: "
		      "narrow them, or raise --max-probes if you mean it",
		      res->total, a->max_probes);
		return;
	}
	if (!a->argv && say_exited(pid))
		return;
	if (err != -ENOENT) {
		error("cannot read the symbols of process %d: %s", (int)pid, strerror(-err));
		return;
	}
	/* What was searched: a process's mappings, or a command's files
	 * before it runs. */
	char who[320], in[400];
	if (a->argv) {
		snprintf(who, sizeof(who), "the command '%s'", a->argv[0]);
		snprintf(in, sizeof(in), "%s or the libraries it loads at its start", who);
	} else {
		snprintf(who, sizeof(who), "process %d", (int)pid);
		snprintf(in, sizeof(in), "%s", who);
	}
	for (size_t p = 0; p < a->npatterns; p++) {
		if (res->matched[p])
			continue;
		if (strncmp(a->patterns[p], "py:", 3) == 0) {
			error("'%s': %s runs no Python with USDT probes: CPython has them when "
			      "built with --with-dtrace (Debian's python3 is; pyenv's builds are "
			      "not); recce record, top and dump show its Python frames without "
			      "them",
			      a->patterns[p], who);
			continue;
		}
		int usdt = strncmp(a->patterns[p], "usdt:", 5) == 0;
		if (usdt)
			error("'%s' matches no USDT probe in %s (readelf -n FILE lists a "
			      "file's probes)",
			      a->patterns[p], in);
		else
			error("'%s' matches no function in %s", a->patterns[p], in);
		/* A name in a JIT's perf map: said so (a probe is in no map). */
		if (!a->argv && !usdt && say_jit(a->patterns[p], pid))
			continue;
		char **near = res->nearest[p];
		if (near[0]) {
			fprintf(stderr, "the nearest names are:");
			for (int i = 0; i < TRACE_NEAREST && near[i]; i++) {
				fputs(i ? ", " : " ", stderr);
				term_fputs(near[i], stderr);
			}
			fputc('\n', stderr);
		}
		/* A stripped program (Debian's): its own functions have no
		 * names but those it exports. */
		if (!usdt && res->unnamed && res->unnamed[p])
			note(
			    "%s keeps no symbol table (it was stripped, as distributions ship "
			    "programs): only the functions it exports are found by name. Its "
			    "debug symbols name the others (its -dbgsym package, or a debuginfod "
			    "server in DEBUGINFOD_URLS); without them, trace one by the name recce "
			    "record gives it (%s!0xSTART-0xEND) or by its address (%s:0xSTART)",
			    res->unnamed[p], path_base(res->unnamed[p]),
			    path_base(res->unnamed[p]));
	}
}

/* --return on a function whose exits cannot be found: refused, since a
 * uretprobe could kill a target that unwinds or checks its stack. */
static void returns_failed(const struct tracer *t, int err)
{
	size_t offset;
	int fn = tracer_failed_code(t, &offset);
	const struct trace_fn *f = &tracer_functions(t)->fns[fn];

	if (err == -ENODATA)
		error("cannot trace the returns of %s:%s: its symbol has no size, so where its "
		      "code ends is unknown",
		      f->object, f->name);
	else if (err == -EFBIG)
		error("cannot trace the returns of %s:%s: its symbol claims %llu bytes, more than "
		      "any compiled function",
		      f->object, f->name, (unsigned long long)f->size);
	else if (err == -EILSEQ)
		error("cannot trace the returns of %s:%s: its code does not decode at +0x%zx",
		      f->object, f->name, offset);
	else
		error("cannot read the code of %s:%s: %s", f->object, f->name, strerror(-err));
	note("trace its calls without --return, or leave it out of the patterns");
}

/* Per-event uprobes past --max-events: what they would cost the target. */
static void events_refused(const struct trace_args *a, const struct tracer *t)
{
	size_t events, probes, ncpus;

	tracer_events_wanted(t, &events, &probes, &ncpus);
	char each[64];
	if (ncpus)
		snprintf(each, sizeof(each), "on each thread and each of %zu CPUs", ncpus);
	else
		snprintf(each, sizeof(each), "in each process");
	error("without BPF links this needs %zu perf uprobe events (%zu probe%s %s), more than "
	      "--max-events %lld: each is removed after a kernel grace period, one at a time, "
	      "with the target slowed until the last is gone (a tenth of a second each, under "
	      "load)",
	      events, probes, probes == 1 ? "" : "s", each, a->max_events);
	note("trace fewer functions or a process with fewer threads, or raise --max-events if "
	     "the target can wait; Linux 6.6 and later trace any number of threads with links");
}

/* What to do about a function --fast refuses: its returns may be the
 * only trouble. */
static const char *fast_advice(const char *why)
{
	return strstr(why, "return") ? "trace it without --fast, or its calls only (no --return)"
				     : "trace it without --fast";
}

void trace_say_failed(const struct trace_args *a, const struct tracer *t, int err)
{
	pid_t pid;
	const char *path;

	switch (tracer_failure(t, &pid, &path)) {
	case TRACER_TARGET:
		if (err == -ESRCH)
			error("no process with PID %d", (int)pid);
		else if (err == -EACCES || err == -EPERM)
			error("not allowed to read process %d: run recce as its user or as root, "
			      "or grant CAP_SYS_PTRACE; kernel.yama.ptrace_scope (sysctl) may "
			      "forbid it too",
			      (int)pid);
		else
			error("cannot read the mappings of process %d: %s", (int)pid,
			      strerror(-err));
		break;
	case TRACER_PROGRAM:
		program_failed(a->argv[0]);
		break;
	case TRACER_RESOLVE:
		resolve_failed(a, t, err, pid);
		break;
	case TRACER_BUFFERS:
		if (err == -EACCES)
			error("perf_event_open refused: run recce as root, or lower "
			      "kernel.perf_event_paranoid and grant CAP_PERFMON");
		else if (err == -ENOENT)
			error("this kernel has no uprobe PMU "
			      "(/sys/bus/event_source/devices/uprobe)");
		else
			error("cannot open the trace buffers: %s", strerror(-err));
		break;
	case TRACER_ATTACH:
		if (err == -EMFILE || err == -ENFILE)
			error("out of file descriptors (each probe needs one per thread and "
			      "CPU): raise 'ulimit -n' or trace fewer functions");
		else if (err == -EACCES || err == -EPERM)
			error("the kernel refused the probes: run recce as root, or grant "
			      "CAP_PERFMON and CAP_BPF");
		else if (err == -E2BIG)
			events_refused(a, t);
		else if (err == -ENOTSUPP_KERNEL)
			error("the kernel refuses a probe in %s (process %d): a function there "
			      "starts with an instruction uprobes cannot run out of line (a lock "
			      "prefix, as pthread_spin_lock has); trace its callers instead, or "
			      "narrow the pattern to leave it out",
			      path ? path : "the traced files", (int)pid);
		else
			error("cannot probe %s in process %d: %s", path ? path : "the functions",
			      (int)pid, strerror(-err));
		break;
	case TRACER_EXITED:
		error("process %d exited before recce could attach", (int)pid);
		break;
	case TRACER_RETURNS:
		returns_failed(t, err);
		break;
	case TRACER_REFUSED: {
		const struct trace_resolved *res = tracer_functions(t);
		if (a->fast) {
			error("--fast cannot trace %s:%s (%s)%s; %s", res->fns[0].object,
			      res->fns[0].name, tracer_refused(t, 0),
			      res->n > 1 ? ", nor the other functions matched" : "",
			      fast_advice(tracer_refused(t, 0)));
			break;
		}
		error("the kernel cannot put a probe on the first instruction of %s:%s (%s)%s",
		      res->fns[0].object, res->fns[0].name, tracer_refused(t, 0),
		      res->n > 1 ? ", nor on those of the other functions matched" : "");
		note("trace its callers instead");
		break;
	}
	case TRACER_FAST:
		fast_say_failed(tracer_fast_info(t), err, pid, "trace");
		break;
	case TRACER_PATCH:
		if (err == -EBUSY)
			error("a thread of process %d stayed inside the first bytes of a traced "
			      "function for 3 s; nothing was changed: try again, or trace without "
			      "--fast",
			      (int)pid);
		else
			inject_die_errno(pid, err);
		error("cannot put the jumps of --fast into process %d: %s; nothing was changed",
		      (int)pid, strerror(-err));
		break;
	case TRACER_LAUNCH:
	case TRACER_EXEC:
		error("cannot run '%s': %s", a->argv[0], strerror(-err));
		break;
	default:
		error("%s", err == -ENOMEM ? "out of memory" : strerror(-err));
	}
}

/* Adds name to the list of the first five in names (cap bytes, len of
 * them used, shown names so far). Returns -1 when it does not fit (the
 * list is left as it was), else 0; past the fifth, adds nothing. */
static int list_name(char *names, size_t cap, size_t *len, size_t *shown, const char *name)
{
	if (*shown == 5)
		return 0;
	int w = snprintf(names + *len, cap - *len, "%s%s", *shown ? ", " : "", name);
	if (w < 0 || (size_t)w >= cap - *len) {
		names[*len] = 0;
		return -1;
	}
	*len += (size_t)w;
	(*shown)++;
	return 0;
}

/* The functions left out because the kernel cannot probe them: each by
 * name when they are few, else the first few and how many. */
static void say_refused(const struct trace_args *a, const struct tracer *t)
{
	const struct trace_resolved *res = tracer_functions(t);
	char names[512];
	size_t n = 0, len = 0, shown = 0;

	for (size_t i = 0; i < res->n; i++)
		n += tracer_refused(t, i) != NULL;
	names[0] = 0;
	for (size_t i = 0; i < res->n && n > 3; i++)
		if (tracer_refused(t, i) &&
		    list_name(names, sizeof(names), &len, &shown, res->fns[i].name) < 0)
			break;
	if (n > 3) {
		warning("%zu functions are not traced: %s: %s and %zu more", n,
			a->fast	 ? "--fast cannot move their code (too short, or jumped into)"
			: a->ret ? "the kernel cannot put a probe on their first instruction, or "
				   "their returns cannot be found"
				 : "the kernel cannot put a probe on their first instruction",
			names, n - shown);
		return;
	}
	for (size_t i = 0; i < res->n; i++)
		if (tracer_refused(t, i) && a->fast)
			warning("%s:%s is not traced: with --fast, %s; %s", res->fns[i].object,
				res->fns[i].name, tracer_refused(t, i),
				fast_advice(tracer_refused(t, i)));
		else if (tracer_refused(t, i) && strncmp(tracer_refused(t, i), TRACE_EXITS_UNKNOWN,
							 strlen(TRACE_EXITS_UNKNOWN)) == 0)
			warning("%s:%s is not traced: %s; trace it without --return",
				res->fns[i].object, res->fns[i].name, tracer_refused(t, i));
		else if (tracer_refused(t, i))
			warning("%s:%s is not traced: the kernel cannot put a probe on its first "
				"instruction (%s)",
				res->fns[i].object, res->fns[i].name, tracer_refused(t, i));
}

/* The IFUNCs matched whose implementation recce could not tell: each by
 * name when they are few, else one line. Returns whether it said it. */
static int say_unresolved_ifuncs(const struct tracer *t)
{
	const struct trace_resolved *res = tracer_functions(t);
	char names[512];
	size_t n = 0, len = 0, shown = 0;

	names[0] = 0;
	for (size_t i = 0; i < res->n; i++) {
		const char *impl = res->fns[i].ifunc;
		if (tracer_refused(t, i) || !impl || *impl)
			continue;
		n++;
		list_name(names, sizeof(names), &len, &shown, res->fns[i].name);
	}
	if (n <= 3)
		return 0;
	char more[48] = "";
	if (n > shown)
		snprintf(more, sizeof(more), " and %zu more", n - shown);
	warning("%zu functions matched are IFUNCs whose implementation in this process recce "
		"could not tell; their resolvers run only at load time, so their calls will not be "
		"seen: %s%s; trace an implementation by name",
		n, names, more);
	return 1;
}

void trace_what_traced(const struct tracer_stats *st, char *buf, size_t cap)
{
	char part[3][48];
	int n = 0;

	if (st->functions || (!st->usdt_probes && !st->pythons))
		snprintf(part[n++], sizeof(part[0]), "%zu function%s", st->functions,
			 st->functions == 1 ? "" : "s");
	if (st->usdt_probes)
		snprintf(part[n++], sizeof(part[0]), "%zu USDT probe%s", st->usdt_probes,
			 st->usdt_probes == 1 ? "" : "s");
	if (st->pythons)
		snprintf(part[n++], sizeof(part[0]),
			 st->pythons == 1 ? "Python calls" : "the Python calls of %zu interpreters",
			 st->pythons);
	snprintf(buf, cap, "%s%s%s%s%s", part[0],
		 n == 3	  ? ", "
		 : n == 2 ? " and "
			  : "",
		 n > 1 ? part[1] : "", n == 3 ? " and " : "", n == 3 ? part[2] : "");
}

void trace_say_python(const struct tracer *t)
{
	const struct trace_resolved *res = tracer_functions(t);

	for (size_t i = 0; i < res->n; i++)
		if (res->fns[i].py == TRACE_PY_TRACING && !tracer_refused(t, i)) {
			note("CPython fires its function probes only in its line-tracing mode, "
			     "and each Python call, shown or not, traps into the kernel: while "
			     "traced, %s runs Python code many times slower (7x to 13x on make "
			     "bench's Python workload); --limit counts every call",
			     res->fns[i].object);
			return;
		}
}

void trace_say_probes(const struct trace_args *a, const struct tracer *t)
{
	const struct trace_resolved *res = tracer_functions(t);

	say_refused(a, t);
	trace_say_python(t);
	int ifuncs_said = say_unresolved_ifuncs(t), blind_said = 0;
	for (size_t i = 0; i < res->n; i++) {
		const struct trace_sig *sig = tracer_signature(t, i);
		if (tracer_refused(t, i))
			continue;
		if (!sig->known && (a->show_args || a->cond))
			warning("%s:%s: arguments shown as raw registers arg0..arg5: %s",
				res->fns[i].object, res->fns[i].name, sig->reason);
		else if (!sig->known && a->ret && !res->fns[i].usdt && !res->fns[i].py &&
			 !blind_said++)
			/* What --return shows of a function of unknown types. */
			note("%s:%s: %s: its calls show no arguments and its returns the "
			     "register rax in hex (%s); --args shows the argument registers",
			     res->fns[i].object, res->fns[i].name, sig->reason,
			     res->fns[i].go ? "Go's first result, or its first word: an "
					      "interface's type, a string's pointer"
					    : "the result, whatever its type");
		const char *impl = res->fns[i].ifunc;
		if (impl && *impl)
			note("%s:%s is chosen at load time (an IFUNC): tracing the implementation "
			     "this process uses, %s (calls of functions that share it are shown "
			     "too)",
			     res->fns[i].object, res->fns[i].name, impl);
		else if (impl && !ifuncs_said)
			warning("%s:%s is an IFUNC: recce could not tell which implementation this "
				"process uses, and its resolver runs only at load time, so calls "
				"will not be seen; trace the implementation by name (recce trace "
				"-p PID '%s:__%s_*' lists the near ones)",
				res->fns[i].object, res->fns[i].name, res->fns[i].object,
				res->fns[i].name);
	}
}

void trace_say_stop(const struct trace_args *a, const struct tracer_stats *st)
{
	char what[160];

	switch (st->stop) {
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
	case TRACE_STOP_OUTPUT:
		snprintf(what, sizeof(what), ": the trace file could not be written");
		break;
	default:
		what[0] = 0;
	}
	note("stopped after %llu event%s%s; all probes removed", (unsigned long long)st->shown,
	     st->shown == 1 ? "" : "s", what);
	if (st->stop == TRACE_STOP_BREAKER)
		trace_say_raise_limit(st, a->rate_n, a->rate_ms, a->fast);
}

void trace_say_raise_limit(const struct tracer_stats *st, uint64_t rate_n, uint64_t rate_ms,
			   int fast)
{
	note("each %s costs the target %s; if it can afford more, raise the "
	     "limit (--limit %llu/%llu) or turn it off (--limit 0)",
	     st->pythons ? "Python call, shown or not," : "traced call",
	     fast ? "tens of nanoseconds, and recce the time to show it" : "a trap into the kernel",
	     (unsigned long long)rate_n * 10, (unsigned long long)rate_ms);
}

/* New processes traced from when recce read of them, not from their first
 * instruction: how many, and why. */
static void say_followed_late(const struct tracer_stats *st)
{
	char why[256];
	unsigned long long n = st->followed_late;

	if (!st->uses_links)
		snprintf(why, sizeof(why), "this kernel has no BPF uprobe links (Linux 6.6)");
	else if (st->fork_outsider > 0) {
		char safe[64];
		snprintf(why, sizeof(why),
			 "process %d (%s), not of the target's family, maps %s too, and recce "
			 "puts no breakpoint in it",
			 (int)st->fork_outsider,
			 st->fork_outsider_comm[0]
			     ? term_safe(st->fork_outsider_comm, safe, sizeof(safe))
			     : "gone now",
			 st->fork_outsider_file ? st->fork_outsider_file : "a traced file");
	} else if (st->fork_err)
		snprintf(why, sizeof(why), "the kernel did not let recce follow forks: %s",
			 strerror(-st->fork_err));
	else if (st->fork_outsider < 0)
		snprintf(why, sizeof(why), "the processes running now could not be listed");
	else
		snprintf(why, sizeof(why),
			 "a parent was not followed from its start either, or the family "
			 "outgrew what recce follows at once");
	warning("%llu process%s the target created while traced %s traced only from when "
		"recce read of %s, so %s first calls may be missing: %s",
		n, n == 1 ? "" : "es", n == 1 ? "was" : "were", n == 1 ? "it" : "them",
		n == 1 ? "its" : "their", why);
}

/* No py: pattern named a call of the many seen: what their names are. */
static void say_py_others(const struct tracer_stats *st)
{
	char names[TRACER_PY_OTHERS * (TRACE_FUNCTION_LEN + 2)] = "";

	for (size_t i = 0; i < st->npy_others; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? ", " : "", st->py_others[i]);
	warning("no pattern named any of the %llu Python calls seen (such as %s): a glob with "
		"one dot matches py:MODULE.FUNCTION (MODULE the file's name without .py, "
		"FUNCTION the code's own name, without its class: py:app.handle), one with two "
		"dots or more, or of __main__, the name recce record gives "
		"(py:__main__.Handler.handle), and one without a dot the code's own name "
		"(py:handle)",
		(unsigned long long)st->py_seen, names);
}

/* --stack: the stacks shown that end early, each reason that did with
 * what it means (the copy's end, with what copies more). */
static void say_stack_ends(const struct trace_args *a, const struct tracer_stats *st)
{
	const uint64_t *e = st->stack_ends;
	uint64_t early = e[UNWIND_END_COPY] + e[UNWIND_END_DEPTH] + e[UNWIND_END_OTHER_STACK] +
			 e[UNWIND_END_NOT_PRESENT];
	char copy_more[96], max_copy[64], why[900];
	size_t n = 0;
	uint32_t copy = st->copy_bytes ? st->copy_bytes : a->stack_bytes;

	if (copy != a->stack_bytes)
		note("the stack copy grew from %u to %u bytes: %llu of the %llu calls taken with "
		     "smaller copies were cut where it ended (--call-graph auto,%u copies that "
		     "much from the start)",
		     (unsigned)a->stack_bytes, (unsigned)copy,
		     (unsigned long long)st->copy_cut_before, (unsigned long long)st->copy_before,
		     (unsigned)copy);
	if (!early)
		return;
	call_graph_copy_more(copy_more, sizeof(copy_more), a->call_graph, copy, st->copy_wanted,
			     UPROBE_MAX_STACK, "a call carries");
	if (copy != a->stack_bytes && st->copy_cut == st->copy_cut_before)
		snprintf(copy_more, sizeof(copy_more), "each with a copy before it grew");
	snprintf(max_copy, sizeof(max_copy), "--call-graph %s,%u",
		 a->call_graph == CALL_GRAPH_DWARF ? "dwarf" : "auto", (unsigned)UPROBE_MAX_STACK);
	why[0] = 0;
	if (e[UNWIND_END_COPY])
		n += (size_t)snprintf(why + n, sizeof(why) - n, ", %llu [stack copy ended] (%s)",
				      (unsigned long long)e[UNWIND_END_COPY], copy_more);
	if (e[UNWIND_END_DEPTH] && n < sizeof(why))
		n += (size_t)snprintf(why + n, sizeof(why) - n,
				      ", %llu [depth limit] (%d callers are the most shown)",
				      (unsigned long long)e[UNWIND_END_DEPTH], TRACER_STACK_FRAMES);
	if (e[UNWIND_END_OTHER_STACK] && n < sizeof(why))
		n += (size_t)snprintf(why + n, sizeof(why) - n,
				      ", %llu [interrupted stack not copied] (a signal handler ran "
				      "on a stack of its own, which is all the copy holds)",
				      (unsigned long long)e[UNWIND_END_OTHER_STACK]);
	if (e[UNWIND_END_NOT_PRESENT] && n < sizeof(why))
		snprintf(
		    why + n, sizeof(why) - n,
		    ", %llu [stack not in memory] (a page of the stack between a frame and its "
		    "caller's was not in memory, never touched yet or swapped out: the probe "
		    "cannot read it, and the copy goes on past it%s%s)",
		    (unsigned long long)e[UNWIND_END_NOT_PRESENT],
		    copy < UPROBE_MAX_STACK ? ": a larger one reaches the callers above it, " : "",
		    copy < UPROBE_MAX_STACK ? max_copy : "");
	note("%llu stacks shown end early, at a frame that says why: %s", (unsigned long long)early,
	     why + 2); /* past the first ", " */
}

void trace_say_losses(const struct trace_args *a, struct tracer *t, const struct tracer_stats *st)
{
	const struct trace_resolved *res = tracer_functions(t);

	/* Those lost after the last call --count asked for are no loss of
	 * what was shown: said, not warned of. */
	uint64_t after = st->lost_after_count, before = st->lost - after;
	char more[128] = "";
	if (after && before)
		snprintf(more, sizeof(more),
			 ", and %llu more after the last call --count asked for",
			 (unsigned long long)after);
	if (before && a->fast)
		warning("%llu calls or returns were not recorded%s: recce read a thread's ring "
			"too slowly, or more threads ran at once than it made rings for (one for "
			"each thread and child process at the start, and 4 more, 64 at most; a "
			"thread or child that ended leaves its ring to the next); narrow the "
			"trace with --if, or write it with -o",
			(unsigned long long)before, more);
	else if (before)
		warning("the kernel dropped %llu events (the ring was full)%s",
			(unsigned long long)before, more);
	else if (after)
		note("the kernel dropped %llu events (the ring was full), all after the last call "
		     "--count asked for: none of the calls shown is missing%s",
		     (unsigned long long)after,
		     a->ret ? ", and a shown call whose return was among them says so" : "");
	if (st->malformed)
		warning("%llu records in the kernel's rings failed recce's bounds checks and "
			"were skipped (after a bad header, with the rest of its ring): calls may "
			"be missing",
			(unsigned long long)st->malformed);
	if (st->returns_unseen)
		warning("%llu goroutine call%s shown with (return lost): %s may have returned on "
			"a thread the Go runtime started during the trace, which recce watches "
			"only from when it reads of it on a kernel without BPF uprobe links "
			"(Linux 6.6)",
			(unsigned long long)st->returns_unseen, st->returns_unseen == 1 ? "" : "s",
			st->returns_unseen == 1 ? "it" : "each");
	if (st->fast_forks)
		warning("%llu process%s forked from the target during the trace %s not traced: "
			"more than %u of its children were traced at once, or one could not "
			"start its watchdog thread (trace without --fast to follow every child)",
			(unsigned long long)st->fast_forks, st->fast_forks == 1 ? "" : "es",
			st->fast_forks == 1 ? "was" : "were", RECCE_FAST_CHILDREN);
	if (st->fast_unfound)
		warning("%llu call%s came from children of the target that recce could not "
			"confirm (they exec'd, or live in another PID namespace): shown with "
			"the pid they gave, their string and pointed-to values unread",
			(unsigned long long)st->fast_unfound, st->fast_unfound == 1 ? "" : "s");
	if (st->fast_children_left)
		warning("%zu child process%s of the target still hold%s recce's jumps: each "
			"one's own watchdog removes them as soon as it runs",
			st->fast_children_left, st->fast_children_left == 1 ? "" : "es",
			st->fast_children_left == 1 ? "s" : "");
	if (st->unfollowed)
		warning("%llu probes could not be opened on threads the target created "
			"while traced",
			(unsigned long long)st->unfollowed);
	if (st->followed_late)
		say_followed_late(st);
	if (st->py_unnamed)
		warning(
		    "%llu Python calls could not be named (their names were not copied when "
		    "the probe fired, and were gone when recce read them: the process exited, or "
		    "freed the code) and were matched by no pattern",
		    (unsigned long long)st->py_unnamed);
	if (st->py_unqualified)
		warning("%llu Python calls were named by their file and code name alone, not "
			"module.qualname as the patterns ask: their frame could not be read (recce "
			"had not read their process's interpreter yet, or their code was gone)",
			(unsigned long long)st->py_unqualified);
	if (st->py_seen && !st->py_named && st->npy_others)
		say_py_others(st);
	say_stack_ends(a, st);
	if (st->py_frames_off)
		warning("the stacks show the interpreter's C functions, not the Python callers: "
			"reading them at the call needs the probes' BPF program and Linux 5.17 or "
			"later (a BPF loop)");
	if (st->py_no_frames && !st->py_frames_off)
		warning(
		    "%llu Python calls were shown without their Python callers: recce had not "
		    "read their process's interpreter yet (a command's first calls), or found no "
		    "state of their thread",
		    (unsigned long long)st->py_no_frames);
	if (st->py_frames_unread)
		warning("%llu Python frames of the stacks shown could not be named (their code "
			"was gone when recce read the call: the process exited, or freed it): "
			"shown as [unknown Python code]",
			(unsigned long long)st->py_frames_unread);
	if (st->dropped)
		warning("%llu calls nested deeper than %d or on more than %d threads were not "
			"paired with their returns",
			(unsigned long long)st->dropped, TRACE_CALLS_DEPTH, TRACE_CALLS_STACKS);
	for (size_t i = 0; a->hist && i < res->n; i++) {
		struct trace_hist *h = tracer_hist(t, i);
		char name[256];
		if (!h || !h->count)
			continue;
		snprintf(name, sizeof(name), "%s:%s", res->fns[i].object, res->fns[i].name);
		trace_hist_print(h, name, stdout);
	}
	const char *py;
	struct trace_hist *h;
	for (size_t i = 0; a->hist && (h = tracer_py_hist(t, i, &py)) != NULL; i++)
		trace_hist_print(h, py, stdout);
	if (a->hist && tracer_py_hists_dropped(t))
		warning("%llu calls of Python functions past the first %d shown have no "
			"histogram: narrow the pattern",
			(unsigned long long)tracer_py_hists_dropped(t), PY_HISTS);
}

void trace_say_tree(const struct trace_tree *tree, const struct trace_tree_config *cfg)
{
	struct trace_tree_counts c;
	char d[32], why[128] = "";

	trace_tree_counts(tree, &c);
	if (cfg->slow_ns) {
		trace_format_duration(d, sizeof(d), cfg->slow_ns);
		if (!c.slow)
			note("none of the %llu calls at the top of a thread's tree lasted --slow "
			     "%s; "
			     "nothing is shown",
			     (unsigned long long)c.trees, d);
		else if (c.slow_shown < c.slow)
			note(
			    "%llu of the %llu calls at the top of a thread's tree lasted --slow %s "
			    "or longer: the %llu slowest are shown (--keep %u)",
			    (unsigned long long)c.slow, (unsigned long long)c.trees, d,
			    (unsigned long long)c.slow_shown, cfg->keep);
		else
			note(
			    "%llu of the %llu calls at the top of a thread's tree lasted --slow %s "
			    "or longer: each is shown with the calls under it",
			    (unsigned long long)c.slow, (unsigned long long)c.trees, d);
		return;
	}
	if (!c.hidden)
		return;
	if (cfg->min_ns) {
		trace_format_duration(d, sizeof(d), cfg->min_ns);
		snprintf(why, sizeof(why), "shorter than --min-duration %s%s", d,
			 cfg->max_depth ? " or " : "");
	}
	if (cfg->max_depth)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "deeper than --depth %u",
			 cfg->max_depth);
	if (!why[0])
		snprintf(why, sizeof(why), "their ends were not seen");
	note("the tree shows %llu call%s; %llu more %s left out: %s", (unsigned long long)c.shown,
	     c.shown == 1 ? "" : "s", (unsigned long long)c.hidden, c.hidden == 1 ? "is" : "are",
	     why);
}

int trace_print_report(struct trace_report *rep)
{
	char total[32], self[32], avg[32], max[32];
	size_t n;

	if (!trace_report_returns(rep))
		return -1;
	const struct trace_report_row *rows = trace_report_rows(rep, &n);
	if (!rows)
		die("out of memory");
	printf("%12s  %12s  %10s  %12s  %12s  %s\n", "TOTAL", "SELF", "CALLS", "AVERAGE", "MAX",
	       "FUNCTION");
	for (size_t i = 0; i < n; i++) {
		trace_format_duration(total, sizeof(total), rows[i].total_ns);
		trace_format_duration(self, sizeof(self), rows[i].self_ns);
		trace_format_duration(avg, sizeof(avg), rows[i].total_ns / rows[i].calls);
		trace_format_duration(max, sizeof(max), rows[i].max_ns);
		printf("%12s  %12s  %10llu  %12s  %12s  ", total, self,
		       (unsigned long long)rows[i].calls, avg, max);
		term_fputs(rows[i].function, stdout);
		fputc('\n', stdout);
	}
	fflush(stdout);
	uint64_t open = trace_report_open(rep);
	if (open)
		note("%llu call%s had not returned when the trace ended: not in the table",
		     (unsigned long long)open, open == 1 ? "" : "s");
	return 0;
}
