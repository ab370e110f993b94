/*
 * recce replay: prints trace files written by `recce trace -o`, merged by
 * timestamp across files (a wrapped set, or several processes or
 * machines), filtered with the same --if conditions as a live trace.
 * A damaged file is replayed up to the damage, and recce says where it
 * stopped. docs/recce-replay.md is its --help.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "cli/builtin.h"
#include "cli/usage.h"
#include "trace/trace-cond.h"
#include "trace/trace-event.h"
#include "trace/trace-file.h"

struct replay {
	struct trace_record *recs;
	size_t n, cap;
};

static const struct option replay_options[] = {
    {"if", required_argument, NULL, 'i'},
    {"format", required_argument, NULL, 'f'},
    {NULL, 0, NULL, 0},
};

static int collect(const struct trace_record *r, void *ctx)
{
	struct replay *rp = ctx;
	struct trace_record *n = array_reserve(rp->recs, &rp->cap, rp->n + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	rp->recs = n;
	rp->recs[rp->n++] = *r;
	return 0;
}

/* Time order; within one time, a call before a return, then file order. */
static int by_time(const void *a, const void *b)
{
	const struct trace_record *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

int cmd_replay(int argc, char **argv)
{
	struct trace_cond *cond = NULL;
	enum trace_format format = TRACE_FORMAT_TEXT;
	struct replay rp = {0};
	int c, status = 0;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":", replay_options, NULL)) != -1) {
		switch (c) {
		case 'i': {
			struct trace_cond_error e;
			int err = trace_cond_parse(optarg, &cond, &e);
			if (err == -EINVAL) {
				error("--if: %s at column %d:", e.message, e.column);
				fprintf(stderr, "    %s\n    %*s^\n", optarg, e.column - 1, "");
				return RECCE_EXIT_USAGE;
			}
			if (err)
				die("out of memory");
			break;
		}
		case 'f':
			if (strcmp(optarg, "text") == 0)
				format = TRACE_FORMAT_TEXT;
			else if (strcmp(optarg, "json") == 0)
				format = TRACE_FORMAT_JSON;
			else if (strcmp(optarg, "chrome") == 0)
				format = TRACE_FORMAT_CHROME;
			else
				usage_die("replay",
					  "--format must be text, json or chrome, not '%s'",
					  optarg);
			break;
		case ':':
			usage_die("replay", "option '%s' needs a value", argv[optind - 1]);
		default:
			usage_die("replay", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		usage_die("replay", "name at least one trace file");
	for (int i = optind; i < argc; i++) {
		struct trace_file_info info;
		size_t before = rp.n;
		int err = trace_file_read(argv[i], collect, &rp, &info);
		if (err == -EBADMSG) {
			error("'%s' is not a recce trace file", argv[i]);
			status = RECCE_EXIT_ERROR;
			continue;
		}
		if (err == -EPROTONOSUPPORT) {
			error("'%s' needs a newer recce (format version %u)", argv[i],
			      info.version);
			status = RECCE_EXIT_ERROR;
			continue;
		}
		if (err) {
			error("cannot read '%s': %s", argv[i], strerror(-err));
			status = RECCE_EXIT_ERROR;
			continue;
		}
		if (info.damaged) {
			warning("'%s': %s at byte %llu; replaying the %zu events before it",
				argv[i], info.damage, (unsigned long long)info.damage_offset,
				rp.n - before);
			status = RECCE_EXIT_ERROR;
		}
	}
	qsort(rp.recs, rp.n, sizeof(*rp.recs), by_time);
	if (format == TRACE_FORMAT_CHROME)
		fputs("{\"traceEvents\":[\n", stdout);
	int first = 1;
	for (size_t i = 0; i < rp.n; i++) {
		if (!trace_cond_eval(cond, trace_record_lookup, &rp.recs[i]))
			continue;
		trace_record_print(&rp.recs[i], format, first, stdout);
		first = 0;
	}
	if (format == TRACE_FORMAT_CHROME)
		fputs("\n]}\n", stdout);
	free(rp.recs);
	trace_cond_free(cond);
	return status;
}
