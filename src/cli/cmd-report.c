/*
 * recce report: reads a pprof profile and shows it as a table of functions
 * or source lines, or writes it in a format another tool reads (folded
 * stacks, pprof, callgrind, speedscope, Chrome trace, flamegraph SVG), or
 * compares two profiles (--diff). This file only parses options and wires
 * pprof-read.c, profile/view.c and writers/render.c together, and
 * profile-messages.c says what went wrong; the page
 * docs/recce-report.md is its --help.
 */
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/builtin.h"
#include "cli/options.h"
#include "cli/profile-messages.h"
#include "cli/usage.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "profile/stacks.h"
#include "profile/view.h"
#include "util/array.h"
#include "util/outfile.h"
#include "writers/render.h"
#include "writers/report-diff.h"
#include "writers/report-text.h"

#define DEFAULT_TOP 20

struct report_args {
	const char *file;
	const char *before; /* --diff BEFORE; file is AFTER */
	int diff;
	enum render_format mode; /* --lines, --folded, --flame: older spellings */
	int mode_set;
	const char *output; /* -o, or the SVG of --flame; NULL: stdout */
	const char *flame;
	const char *value;
	long long top;
	int64_t *pids, *tids;
	int npids, ntids;
	const char **comms; /* --comm */
	size_t ncomms, comms_cap;
	const char **tags; /* --tag KEY=VALUE */
	size_t ntags, tags_cap;
	regex_t focus, ignore;
	int has_focus, has_ignore;
	int icicle;
	const char *title;
};

static void args_set_mode(struct report_args *a, enum render_format mode, const char *opt)
{
	if (a->mode_set && a->mode != mode)
		usage_die("report",
			  "%s cannot be combined with another output format "
			  "(--format, --lines, --folded, --flame)",
			  opt);
	a->mode = mode;
	a->mode_set = 1;
}

enum {
	V_TOP,
	V_LINES,
	V_FOLDED,
	V_FLAME,
	V_FORMAT,
	V_PID,
	V_TID,
	V_COMM,
	V_TAG,
	V_FOCUS,
	V_IGNORE
};

static void set_format(struct report_args *a, const char *arg)
{
	enum render_format f;

	if (render_format_parse(arg, &f) < 0)
		usage_die("report", "unknown format '%s' (known: " RENDER_FORMAT_NAMES ")", arg);
	/* --lines is text too. */
	if (!(f == RENDER_TEXT && a->mode == RENDER_LINES))
		args_set_mode(a, f, "--format");
}

static void set_value(void *ctx, const char *arg, const struct opt *o)
{
	struct report_args *a = ctx;

	switch (o->set) {
	case V_TOP:
		if (parse_int(arg, 0, INT_MAX, &a->top) < 0)
			usage_die("report", "-n wants a number of rows (0 for all), not '%s'", arg);
		break;
	case V_LINES:
		if (a->mode_set && a->mode == RENDER_TEXT)
			a->mode_set = 0; /* --format text --lines */
		args_set_mode(a, RENDER_LINES, "--lines");
		break;
	case V_FOLDED:
		args_set_mode(a, RENDER_FOLDED, "--folded");
		break;
	case V_FLAME:
		args_set_mode(a, RENDER_SVG, "--flame");
		a->flame = arg;
		break;
	case V_FORMAT:
		set_format(a, arg);
		break;
	case V_PID:
		parse_ids_option("report", "--pid", arg, &a->pids, &a->npids);
		break;
	case V_COMM:
		parse_names_option(arg, &a->comms, &a->ncomms, &a->comms_cap);
		if (!a->ncomms)
			usage_die("report",
				  "--comm wants command names, such as nginx,redis-server");
		break;
	case V_TAG: {
		const char *eq = strchr(arg, '=');
		if (!eq || eq == arg)
			usage_die("report",
				  "--tag wants KEY=VALUE, such as span_name=handle_request or "
				  "trace_id=4bf92f3577b34da6a3ce929d0e0e4736, not '%s'",
				  arg);
		const char **grown =
		    array_reserve(a->tags, &a->tags_cap, a->ntags + 1, sizeof(*grown));
		if (!grown)
			die("out of memory");
		a->tags = grown;
		a->tags[a->ntags++] = arg;
		break;
	}
	case V_TID:
		parse_ids_option("report", "--tid", arg, &a->tids, &a->ntids);
		break;
	case V_FOCUS:
		parse_regex_option("report", "--focus", arg, &a->focus, &a->has_focus);
		break;
	case V_IGNORE:
		parse_regex_option("report", "--ignore", arg, &a->ignore, &a->has_ignore);
		break;
	}
}

static const struct opt report_options[] = {
    OPT_CALL_('n', "top", "N", set_value, V_TOP, "rows to show (default 20; 0: all)"),
    OPT_OUTPUT_('o', "output", "FILE", struct report_args, output, "write here ('-': stdout)"),
    OPT_CALL_(0, "lines", NULL, set_value, V_LINES, "rows by source line, not function"),
    OPT_CALL_(0, "folded", NULL, set_value, V_FOLDED, "folded stacks, one a line"),
    OPT_CALL_OUTPUT_(0, "flame", "SVG", set_value, V_FLAME, "write a flamegraph"),
    OPT_STRING_(0, "value", "TYPE", struct report_args, value, "the sample type to show"),
    OPT_CALL_(0, "pid", "PID[,PID...]", set_value, V_PID, "only these processes"),
    OPT_CALL_(0, "tid", "TID[,TID...]", set_value, V_TID, "only these threads"),
    OPT_CALL_(0, "comm", "NAME[,NAME...]", set_value, V_COMM,
	      "only processes of these command names (record -a, query)"),
    OPT_CALL_(0, "tag", "KEY=VALUE", set_value, V_TAG,
	      "only samples with this label (span_name, trace_id: record of librecce spans)"),
    OPT_CALL_(0, "focus", "REGEX", set_value, V_FOCUS, "only stacks through a match"),
    OPT_CALL_(0, "ignore", "REGEX", set_value, V_IGNORE, "drop stacks through a match"),
    OPT_CALL_(0, "format", "FORMAT", set_value, V_FORMAT, RENDER_FORMAT_NAMES),
    OPT_FLAG_(0, "icicle", struct report_args, icicle, "the flamegraph upside down"),
    OPT_STRING_(0, "title", "TEXT", struct report_args, title, "the flamegraph's title"),
    OPT_FLAG_(0, "diff", struct report_args, diff, "compare two profiles"),
    OPT_END_(),
};

static void args_parse(struct report_args *a, int argc, char **argv)
{
	a->top = DEFAULT_TOP;
	int at = options_parse("report", report_options, 0, argc, argv, a, NULL);
	if (a->flame && a->output)
		usage_die("report", "--flame names its own output file; drop -o");
	if (a->flame)
		a->output = a->flame;
	else if (a->output && strcmp(a->output, "-") == 0)
		a->output = NULL; /* -o - is standard output */
	if (a->diff) {
		if (argc - at != 2)
			usage_die("report", "--diff compares two profiles: --diff BEFORE AFTER");
		a->before = argv[at++];
		a->file = argv[at++];
		if (a->mode != RENDER_TEXT && a->mode != RENDER_SVG)
			usage_die("report", "--diff writes --format text or svg");
		return;
	}
	if (at < argc)
		a->file = argv[at++];
	if (at < argc)
		usage_die("report", "one profile at a time: '%s' is one too many", argv[at]);
	if (!a->file)
		a->file = PROFILE_DEFAULT_FILE;
}

static void args_release(struct report_args *a)
{
	free(a->pids);
	free(a->tids);
	free(a->tags);
	if (a->has_focus)
		regfree(&a->focus);
	if (a->has_ignore)
		regfree(&a->ignore);
}

/* Writes v to -o's file (whole or not at all) or standard output; prints
 * why not and returns non-zero on failure. */
static int output_run(const struct report_args *a, int (*write)(FILE *, const void *),
		      const struct render_view *v)
{
	int ret = outfile_write(a->output, write, v);

	if (ret)
		error("cannot write '%s': %s", a->output ? a->output : "standard output",
		      output_strerror(ret));
	return ret;
}

static struct render_view view_of(const struct report_args *a, const struct profile *p,
				  const struct stack_set *set)
{
	return (struct render_view){.format = a->mode,
				    .p = p,
				    .set = set,
				    .name = a->file,
				    .top = (size_t)a->top,
				    .title = a->title,
				    .icicle = a->icicle};
}

static struct stack_filter filter_of(const struct report_args *a)
{
	return (struct stack_filter){
	    .pids = a->pids,
	    .npids = (size_t)a->npids,
	    .tids = a->tids,
	    .ntids = (size_t)a->ntids,
	    .comms = a->comms,
	    .ncomms = a->ncomms,
	    .tags = a->tags,
	    .ntags = a->ntags,
	    .focus = a->has_focus ? (regex_t *)&a->focus : NULL,
	    .ignore = a->has_ignore ? (regex_t *)&a->ignore : NULL,
	};
}

/* recce report --diff BEFORE AFTER: the same sample type from both. */
static int report_diff(struct report_args *a)
{
	struct profile *before = profile_read_or_say(a->before), *after = NULL;
	struct stack_filter filter = filter_of(a);
	struct profile_view pv = {0};
	int status = RECCE_EXIT_ERROR;

	if (!before || !(after = profile_read_or_say(a->file)))
		goto out;
	if (profile_fill_names_or_say(before, a->before) < 0 ||
	    profile_fill_names_or_say(after, a->file) < 0)
		goto out;
	int err = profile_view_diff(before, after, a->value, &filter, &pv);
	if (err) {
		status = profile_view_say_failed("report", after, &pv, err, a->file, a->value,
						 a->before);
		goto out;
	}
	struct render_view v = view_of(a, after, &pv.set);
	v.before = &pv.before;
	v.merged = &pv.merged;
	v.before_name = a->before;
	if (output_run(a, render_diff_write, &v) == 0)
		status = 0;
out:
	profile_view_release(&pv);
	profile_free(before);
	profile_free(after);
	return status;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = {0};
	struct profile_view pv = {0};
	struct profile *p = NULL;
	int status = RECCE_EXIT_ERROR;
	int ret;

	args_parse(&a, argc, argv);
	/* Refuse an unwritable output before reading a large profile. */
	ret = a.output ? outfile_check(a.output) : 0;
	if (ret) {
		error("cannot write '%s': %s", a.output, output_strerror(ret));
		goto out;
	}
	if (a.diff) {
		status = report_diff(&a);
		goto out;
	}
	p = profile_read_or_say(a.file);
	if (!p || profile_fill_names_or_say(p, a.file) < 0)
		goto out;
	struct stack_filter filter = filter_of(&a);
	int timeline =
	    render_needs_timeline(a.mode) || (render_uses_timeline(a.mode) && p->timeline);
	ret = profile_view_build(p, a.value, &filter, timeline, &pv);
	if (ret) {
		status = profile_view_say_failed("report", p, &pv, ret, a.file, a.value, NULL);
		goto out;
	}
	if (!pv.set.n && a.mode != RENDER_TEXT && a.mode != RENDER_LINES)
		warning("no samples%s in '%s'", pv.set.dropped ? " left after the filters" : "",
			a.file);

	struct render_view v = view_of(&a, p, &pv.set);
	v.events = pv.events;
	v.nevents = pv.nevents;
	if (output_run(&a, render_write, &v))
		goto out;
	if (a.mode == RENDER_SVG && a.output) {
		char total[32];
		report_value_format(total, sizeof(total), pv.set.total, pv.set.unit);
		note("wrote '%s' (%s %s)", a.output, total, pv.set.type);
	}
	status = 0;
out:
	profile_view_release(&pv);
	profile_free(p);
	args_release(&a);
	return status;
}
