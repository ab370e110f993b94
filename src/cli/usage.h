/*
 * Messages and exits for the program side (subcommands), in git's style:
 * messages start lowercase, say what went wrong first and quote the
 * subject. Engine modules never call these; they return -errno codes that
 * a subcommand turns into a message.
 *
 *   die("cannot open '%s': %s", path, strerror(errno));   exits 1
 *   return error("no samples in '%s'", path);               prints, returns -1
 *   usage_die("record", "-F must be between 1 and %d", max); exits 2
 */
#ifndef RECCE_USAGE_H
#define RECCE_USAGE_H

#include <stddef.h>
#include <regex.h>
#include <stdint.h>
#include <sys/types.h>

#define RECCE_EXIT_ERROR 1
#define RECCE_EXIT_USAGE 2

__attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) int error(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void warning(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void note(const char *fmt, ...);

/* A usage error of subcommand cmd: prints the message and a pointer to
 * `recce CMD --help`, exits 2. */
__attribute__((noreturn, format(printf, 2, 3))) void usage_die(const char *cmd, const char *fmt,
							       ...);

/* Parses a decimal integer in [min, max]; returns 0 or -1. */
int parse_int(const char *s, long long min, long long max, long long *out);
/* Parses a non-negative number of seconds, fractions allowed; returns 0 or -1. */
int parse_seconds(const char *s, double *out);
/* The seconds option opt of subcommand cmd gives (more than 0), or dflt
 * when it was not given (s NULL); a bad value is a usage error. */
double option_seconds(const char *cmd, const char *opt, const char *s, double dflt);
/* Parses "1,2,3" into a heap array of integers; returns the count or -1. */
int parse_int_list(const char *s, int64_t **out);
/* Parses "PID[,PID...]" of option opt (-p, or -t for thread ids) for
 * subcommand cmd and appends the ids to the heap array *pids of *npids
 * entries; a bad list is a usage error. */
void parse_pid_list(const char *cmd, const char *opt, const char *s, pid_t **pids, size_t *npids);

/* Parses an option's "12,34" into the heap array *ids (freed first: the
 * last one given counts); a bad list is a usage error. */
void parse_ids_option(const char *cmd, const char *opt, const char *arg, int64_t **ids, int *n);

/* Appends the names of a list such as nginx,redis-server (each a copy;
 * empty ones skipped) to (*names)[0..*n), its room *cap (util/array.h). */
void parse_names_option(const char *arg, const char ***names, size_t *n, size_t *cap);

/* Compiles an option's extended regex into *re (releasing the one before
 * if *has) and sets *has; a bad regex is a usage error. */
void parse_regex_option(const char *cmd, const char *opt, const char *arg, regex_t *re, int *has);

/* Parses -F HZ for subcommand cmd: 1 to kernel.perf_event_max_sample_rate,
 * else a usage error that names the sysctl. */
long long parse_freq_option(const char *cmd, const char *arg);

/* How user stacks are walked. */
enum call_graph {
	CALL_GRAPH_AUTO, /* the copied stack unwound, then frame pointers (the default) */
	CALL_GRAPH_FP,	 /* the kernel's frame-pointer walk */
	CALL_GRAPH_DWARF /* the copied stack unwound, nothing more */
};

/* --call-graph auto|fp|dwarf[,BYTES], as record and capture take it:
 * sets *mode and, for auto and dwarf, *stack_bytes (BYTES, default
 * CALL_GRAPH_STACK_BYTES, cut to a multiple of 8 as the kernel wants);
 * exits with a usage error otherwise. Returns 1 when BYTES was given (a
 * copy given keeps its size), else 0. */
#define CALL_GRAPH_STACK_BYTES 8192
int parse_call_graph_option(const char *cmd, const char *arg, enum call_graph *mode,
			    uint32_t *stack_bytes);

/* What to say copies more stack than --call-graph MODE,BYTES did, into
 * buf: "--call-graph MODE,N copies more", N twice BYTES or more until it
 * holds wanted (what the stacks cut wanted for their next frame), at
 * most max; at max already, "BYTES bytes are the most " and most. */
void call_graph_copy_more(char *buf, size_t len, enum call_graph mode, uint32_t bytes,
			  uint64_t wanted, uint32_t max, const char *most);

/* --limit N/MS, the tracer's circuit breaker ("0" turns it off: *rate_n
 * 0); exits with a usage error otherwise. */
void parse_limit_option(const char *cmd, const char *arg, uint64_t *rate_n, uint64_t *rate_ms);

/* A size at the start of s: "4096", "512K", "1M", "2G" (a B may
 * follow), ending at the end of s or a comma. Returns the count of
 * characters read, or -1. */
int parse_size_prefix(const char *s, uint64_t *out);

/* Exits with "no process with PID N" for the first of pids not running. */
void check_pids_exist(const pid_t *pids, size_t n);
/* The same for thread ids: "no thread with TID N". */
void check_tids_exist(const pid_t *tids, size_t n);

/* A size for people: "512 bytes", "12 KiB", "3.4 MiB". */
void format_bytes(char *buf, size_t len, long long bytes);

struct trace_cond;

/* Parses --if's EXPR for subcommand cmd; a condition that does not parse
 * is shown with a caret under the column, and exits 2. */
struct trace_cond *parse_cond_option(const char *cmd, const char *text);

/* Why an output file cannot be written, for "cannot write 'PATH': %s":
 * strerror, but in words a user can act on where strerror misleads (a
 * link another user owns, a directory that takes no new files). */
const char *output_strerror(int err);

#endif
