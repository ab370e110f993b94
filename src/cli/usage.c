/*
 * Messages, exits and small option-parsing helpers shared by subcommands.
 */
#include "cli/usage.h"
#include "perf/perf-events.h"
#include "perf/perf-sys.h"
#include "proc/procstat.h"
#include "proc/select.h"
#include "proc/tasks.h"
#include "trace/trace-cond.h"
#include "trace/trace-limits.h"

#include <errno.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/term-safe.h"

/* A message, its lines escaped for the terminal: messages name functions,
 * files and threads of the target, which it controls. */
__attribute__((format(printf, 2, 0))) static void vreport(const char *prefix, const char *fmt,
							  va_list ap)
{
	char *msg = NULL;

	/* Whole, however long: a message is never cut. */
	if (vasprintf(&msg, fmt, ap) < 0) {
		fflush(stdout);
		fprintf(stderr, "%sout of memory\n", prefix);
		return;
	}
	fflush(stdout);
	fputs(prefix, stderr);
	for (char *line = msg, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		term_fputs(line, stderr);
		if (next)
			fputc('\n', stderr);
	}
	fputc('\n', stderr);
	free(msg);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("recce: error: ", fmt, ap);
	va_end(ap);
	exit(RECCE_EXIT_ERROR);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("recce: error: ", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("recce: warning: ", fmt, ap);
	va_end(ap);
}

void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("recce: ", fmt, ap);
	va_end(ap);
}

void usage_die(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("recce: usage: ", fmt, ap);
	va_end(ap);
	fprintf(stderr, "see 'recce %s --help'\n", cmd);
	exit(RECCE_EXIT_USAGE);
}

int parse_int(const char *s, long long min, long long max, long long *out)
{
	char *end;

	if (!s || !*s)
		return -1;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int parse_seconds(const char *s, double *out)
{
	char *end;

	if (!s || !*s)
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !(v >= 0) || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

double option_seconds(const char *cmd, const char *opt, const char *s, double dflt)
{
	double v;

	if (!s)
		return dflt;
	if (parse_seconds(s, &v) != 0 || v <= 0)
		usage_die(cmd, "%s wants a number of seconds, not '%s'", opt, s);
	return v;
}

int parse_int_list(const char *s, int64_t **out)
{
	size_t n = 1;

	for (const char *c = s; *c; c++)
		n += *c == ',';
	int64_t *v = calloc(n, sizeof(*v));
	if (!v)
		return -1;
	size_t i = 0;
	const char *c = s;
	while (i < n) {
		char *end;
		errno = 0;
		long long x = strtoll(c, &end, 10);
		if (errno || end == c || x < 0 || (*end && *end != ',')) {
			free(v);
			return -1;
		}
		v[i++] = x;
		c = *end ? end + 1 : end;
	}
	*out = v;
	return (int)n;
}

/* Appends the processes selector chooses (proc/select.h), and says which. */
static void add_selected(const char *cmd, const char *selector, pid_t **pids, size_t *npids)
{
	pid_t *got;
	size_t n;
	int err = proc_select(selector, &got, &n);

	if (err == -EINVAL)
		usage_die(cmd,
			  "-p %s: a selector is comm:NAME or exe:PATH, each a shell "
			  "pattern (comm:redis-server, 'exe:*/nginx')",
			  selector);
	if (err == -ESRCH)
		die("no running process matches %s: pgrep and ps show what runs", selector);
	if (err)
		die("cannot list the processes: %s", strerror(-err));
	pid_t *grown = realloc(*pids, (*npids + n) * sizeof(*grown));
	if (!grown)
		die("out of memory");
	memcpy(grown + *npids, got, n * sizeof(*got));
	*pids = grown;
	*npids += n;
	fprintf(stderr, "recce: %s is process%s", selector, n == 1 ? "" : "es");
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s %d", i ? "," : "", (int)got[i]);
	fputc('\n', stderr);
	free(got);
}

void parse_pid_list(const char *cmd, const char *opt, const char *s, pid_t **pids, size_t *npids)
{
	const char *what = strcmp(opt, "-t") == 0 ? "thread" : "process";
	int64_t *v;

	if (strcmp(opt, "-p") == 0 && proc_is_selector(s)) {
		/* Selectors take the whole list: a pattern may hold a comma. */
		add_selected(cmd, s, pids, npids);
		return;
	}
	int n = parse_int_list(s, &v);
	if (n <= 0)
		usage_die(cmd, "%s wants a %s id or a comma-separated list%s, not '%s'", opt, what,
			  strcmp(opt, "-p") == 0 ? " (or comm:NAME, exe:PATH)" : "", s);
	pid_t *grown = realloc(*pids, (*npids + (size_t)n) * sizeof(*grown));
	if (!grown)
		die("out of memory");
	for (int i = 0; i < n; i++) {
		if (v[i] <= 0 || v[i] > INT32_MAX)
			usage_die(cmd, "%s: '%s' is not a %s id", opt, s, what);
		grown[(*npids)++] = (pid_t)v[i];
	}
	free(v);
	*pids = grown;
}

struct trace_cond *parse_cond_option(const char *cmd, const char *text)
{
	struct trace_cond_error e;
	struct trace_cond *c;
	int err = trace_cond_parse(text, &c, &e);

	if (err == -EINVAL) {
		error("--if: %s at column %d:", e.message, e.column);
		fprintf(stderr, "    %s\n    %*s^\n", text, e.column - 1, "");
		fprintf(stderr, "see 'recce %s --help'\n", cmd);
		exit(RECCE_EXIT_USAGE);
	}
	if (err)
		die("out of memory");
	return c;
}

long long parse_freq_option(const char *cmd, const char *arg)
{
	long long max_rate = 100000, v;

	perf_sysctl_read("/proc/sys/kernel/perf_event_max_sample_rate", &max_rate);
	if (parse_int(arg, 1, max_rate, &v) < 0)
		usage_die(cmd,
			  "-F must be between 1 and %lld "
			  "(kernel.perf_event_max_sample_rate), not '%s'",
			  max_rate, arg);
	return v;
}

int parse_call_graph_option(const char *cmd, const char *arg, enum call_graph *mode,
			    uint32_t *stack_bytes)
{
	static const struct {
		const char *name;
		enum call_graph mode;
	} modes[] = {{"auto", CALL_GRAPH_AUTO}, {"dwarf", CALL_GRAPH_DWARF}};

	if (strcmp(arg, "fp") == 0) {
		*mode = CALL_GRAPH_FP;
		return 0;
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		size_t n = strlen(modes[i].name);
		if (strncmp(arg, modes[i].name, n) != 0 || (arg[n] != 0 && arg[n] != ','))
			continue;
		long long bytes = CALL_GRAPH_STACK_BYTES;
		if (arg[n] == ',' &&
		    parse_int(arg + n + 1, 8, PERF_EVENTS_MAX_STACK_BYTES, &bytes) < 0)
			usage_die(cmd, "--call-graph %s,BYTES: BYTES must be between 8 and %u",
				  modes[i].name, PERF_EVENTS_MAX_STACK_BYTES);
		*mode = modes[i].mode;
		*stack_bytes = (uint32_t)bytes & ~7u;
		return arg[n] == ',';
	}
	usage_die(cmd, "--call-graph must be auto, fp or dwarf[,BYTES], not '%s'", arg);
}

void call_graph_copy_more(char *buf, size_t len, enum call_graph mode, uint32_t bytes,
			  uint64_t wanted, uint32_t max, const char *most)
{
	uint64_t more = (uint64_t)bytes * 2;

	while (more < wanted && more < max)
		more *= 2;
	if (more > max)
		more = max;
	if (more > bytes)
		snprintf(buf, len, "--call-graph %s,%u copies more",
			 mode == CALL_GRAPH_DWARF ? "dwarf" : "auto", (unsigned)more);
	else
		snprintf(buf, len, "%u bytes are the most %s", (unsigned)bytes, most);
}

void parse_limit_option(const char *cmd, const char *arg, uint64_t *rate_n, uint64_t *rate_ms)
{
	if (strcmp(arg, "0") == 0)
		*rate_n = 0;
	else if (trace_limits_parse_rate(arg, rate_n, rate_ms) < 0)
		usage_die(cmd, "--limit wants N/MS (calls per milliseconds), not '%s'", arg);
}

void format_bytes(char *buf, size_t len, long long bytes)
{
	if (bytes < 1024)
		snprintf(buf, len, "%lld bytes", bytes);
	else if (bytes < 1024 * 1024)
		snprintf(buf, len, "%lld KiB", (bytes + 512) / 1024);
	else
		snprintf(buf, len, "%.1f MiB", (double)bytes / (1024.0 * 1024.0));
}

int parse_size_prefix(const char *s, uint64_t *out)
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

void check_pids_exist(const pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (kill(pids[i], 0) < 0 && errno == ESRCH)
			die("no process with PID %d", (int)pids[i]);
}

void check_tids_exist(const pid_t *tids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (proc_tgid_of(tids[i]) == -ESRCH)
			die("no thread with TID %d (the threads of process PID are in "
			    "/proc/PID/task)",
			    (int)tids[i]);
}

void parse_ids_option(const char *cmd, const char *opt, const char *arg, int64_t **ids, int *n)
{
	free(*ids); /* the last one given counts */
	*n = parse_int_list(arg, ids);
	if (*n < 0)
		usage_die(cmd, "%s wants a list of ids such as 12,34, not '%s'", opt, arg);
}

void parse_names_option(const char *arg, const char ***names, size_t *n, size_t *cap)
{
	for (const char *c = arg; *c;) {
		size_t len = strcspn(c, ",");
		if (len) {
			const char **grown = array_reserve(*names, cap, *n + 1, sizeof(**names));
			char *name = strndup(c, len);
			if (!grown || !name)
				die("out of memory");
			*names = grown;
			(*names)[(*n)++] = name;
		}
		c += len + (c[len] == ',');
	}
}

void parse_regex_option(const char *cmd, const char *opt, const char *arg, regex_t *re, int *has)
{
	if (*has)
		regfree(re); /* the last one given counts */
	int err = regcomp(re, arg, REG_EXTENDED | REG_NOSUB);
	if (err) {
		char msg[256];
		regerror(err, re, msg, sizeof(msg));
		usage_die(cmd, "bad %s regex '%s': %s", opt, arg, msg);
	}
	*has = 1;
}

const char *output_strerror(int err)
{
	switch (err) {
	case -ELOOP:
		return "it is a symbolic link another user owns, and recce does not write "
		       "through such links (remove it, or name the file it points to)";
	case -ENOENT:
		return "its directory does not exist, or takes no new files";
	default:
		return strerror(-err);
	}
}
