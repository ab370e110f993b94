/*
 * What recce capture writes (see cmd-capture.h): each call named by its
 * arguments, result and duration, the recording cut into the calls
 * (profile/capture-profile.h), and the result through report's writers,
 * in one file or one a call.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd-capture.h"
#include "cli/usage.h"
#include "profile/capture-profile.h"
#include "profile/profile.h"
#include "profile/view.h"
#include "trace/trace-event.h"
#include "trace/tracer.h"
#include "util/outfile.h"

#define CALL_NAME_BYTES 256

/* "call 2: fib(n=30) = 832040, 12.31 ms" */
static void call_name(char *buf, size_t size, size_t i, const struct trace_record *r)
{
	const char *fn = strchr(r->function, ':');
	size_t len = (size_t)snprintf(buf, size, "call %zu: %s(", i + 1, fn ? fn + 1 : r->function);

	for (int k = 0; k < r->nargs && len < size; k++) {
		const struct trace_arg *arg = &r->args[k];
		char v[64];
		if (arg->kind == TRACE_ARG_STR)
			snprintf(v, sizeof(v), "\"%s\"", arg->str);
		else
			trace_format_value(v, sizeof(v), arg->kind, arg->value);
		len += (size_t)snprintf(buf + len, size - len, "%s%s%s%s", k ? ", " : "", arg->name,
					arg->name[0] ? "=" : "", v);
	}
	if (len < size) {
		char ret[64] = "";
		if (r->ret_kind == TRACE_ARG_RESULTS && !(r->flags & TRACE_RECORD_UNWOUND))
			trace_copy_str(ret, sizeof(ret), r->ret_text);
		else if (r->ret_kind != TRACE_ARG_NONE && r->ret_kind != TRACE_ARG_UNKNOWN &&
			 !(r->flags & TRACE_RECORD_UNWOUND))
			trace_format_value(ret, sizeof(ret), r->ret_kind, r->ret);
		snprintf(buf + len, size - len, ")%s%s, %.2f ms%s", ret[0] ? " = " : "", ret,
			 (double)r->duration_ns / 1e6,
			 r->flags & TRACE_RECORD_UNWOUND ? " (left by an exception)" : "");
	}
}

/* FILE-N.EXT for call n: before the extension, if the name has one. */
static void split_name(char *buf, size_t size, const char *path, size_t n)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');

	if (!dot || (slash && dot < slash) || dot == path || (slash && dot == slash + 1))
		snprintf(buf, size, "%s-%zu", path, n);
	else
		snprintf(buf, size, "%.*s-%zu%s", (int)(dot - path), path, n, dot);
}

/* Writes the calls [from, from + n) to path in a's format. */
static int write_calls(const struct capture_args *a, const struct profile *all,
		       const char *const *symbols, size_t nsymbols,
		       const struct capture_call *calls, size_t n, const char *path,
		       struct capture_counts *counts)
{
	struct profile *q = NULL;
	struct profile_view pv = {0};
	int err = capture_profile(all, symbols, nsymbols, calls, n, &q, counts);

	if (!err) {
		for (size_t i = 0; i < all->ncomments && !err; i++)
			err = profile_add_comment(q, all->comments[i]);
		for (size_t i = 0; i < n && !err; i++)
			err = profile_add_comment(q, calls[i].name);
	}
	if (!err)
		err = profile_view_build(q, NULL, NULL, 1, &pv);
	if (err) {
		error("cannot cut the recording into calls: %s", strerror(-err));
		profile_free(q);
		return RECCE_EXIT_ERROR;
	}
	struct render_view v = {.format = a->format,
				.p = q,
				.set = &pv.set,
				.events = pv.events,
				.nevents = pv.nevents,
				.name = path,
				.title = n == 1 ? calls[0].name : NULL};
	err = outfile_write(strcmp(path, "-") == 0 ? NULL : path, render_write, &v);
	if (err)
		error("cannot write '%s': %s", path, output_strerror(err));
	profile_view_release(&pv);
	profile_free(q);
	return err ? RECCE_EXIT_ERROR : 0;
}

/* The capture's calls on the recording's timeline, named. */
static struct capture_call *calls_of(const struct trace_record *r, size_t n, int64_t start_ns,
				     char (**names)[CALL_NAME_BYTES])
{
	struct capture_call *c = calloc(n ? n : 1, sizeof(*c));

	*names = calloc(n ? n : 1, sizeof(**names));
	if (!c || !*names)
		die("out of memory");
	for (size_t i = 0; i < n; i++) {
		call_name((*names)[i], CALL_NAME_BYTES, i, &r[i]);
		c[i].tid = r[i].tid;
		c[i].end_ns = (int64_t)r[i].time_ns - start_ns;
		c[i].start_ns = c[i].end_ns - (int64_t)r[i].duration_ns;
		c[i].name = (*names)[i];
		/* A Python call's stacks are cut at its function, known
		 * by its file, in place of the interpreter's symbols. */
		c[i].file = trace_record_py_file(&r[i], &c[i].file_cut);
		c[i].function = c[i].file ? r[i].function : NULL;
	}
	return c;
}

/* Writes the calls, all in one file or one file each (--split). */
static int write_output(const struct capture_args *a, const struct profile *p,
			const struct tracer *t, const struct capture_call *calls, size_t n)
{
	const struct trace_resolved *res = tracer_functions(t);
	const char **symbols = calloc(res->n ? res->n : 1, sizeof(*symbols));
	struct capture_counts counts, one;
	int status = 0;

	if (!symbols)
		die("out of memory");
	for (size_t i = 0; i < res->n; i++)
		symbols[i] = res->fns[i].symbol;
	if (!a->split) {
		status = write_calls(a, p, symbols, res->n, calls, n, a->output, &counts);
	} else {
		memset(&counts, 0, sizeof(counts));
		for (size_t i = 0; i < n && !status; i++) {
			char path[4096];
			split_name(path, sizeof(path), a->output, i + 1);
			status = write_calls(a, p, symbols, res->n, calls + i, 1, path, &one);
			counts.kept += one.kept;
			counts.outside += one.outside;
		}
	}
	free(symbols);
	if (!status)
		note("%zu call%s, %" PRIu64 " samples inside them; wrote %s%s", n,
		     n == 1 ? "" : "s", counts.kept, a->output,
		     a->split ? " (one file a call)" : "");
	if (counts.outside)
		warning(
		    "%" PRIu64 " samples taken during the calls lack the function on their "
		    "stack (a stack the unwinder could not finish): left out; --call-graph dwarf "
		    "may help",
		    counts.outside);
	return status;
}

int capture_write(const struct capture_args *a, const struct profile *p, const struct tracer *t,
		  const struct trace_record *recs, size_t n, int64_t start_ns)
{
	char(*names)[CALL_NAME_BYTES];
	struct capture_call *calls = calls_of(recs, n, start_ns, &names);
	int status = write_output(a, p, t, calls, n);

	free(calls);
	free(names);
	return status;
}
