/*
 * recce report: reads a pprof profile and shows it as a table of functions
 * or source lines, or writes it in a format another tool reads (folded
 * stacks, pprof, callgrind, speedscope, Chrome trace, flamegraph SVG), or
 * compares two profiles (--diff). This file only parses options and wires
 * pprof.c, stacks.c and the writers together; the page
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
#include "cli/usage.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "profile/stacks.h"
#include "util/outfile.h"
#include "writers/report-diff.h"
#include "writers/report-text.h"
#include "writers/writer-callgrind.h"
#include "writers/writer-chrome.h"
#include "writers/writer-flame.h"
#include "writers/writer-folded.h"
#include "writers/writer-pprof.h"
#include "writers/writer-speedscope.h"

#define DEFAULT_FILE "recce.pb.gz"
#define DEFAULT_TOP  20

/* The output format; --lines, --folded and --flame are older spellings. */
enum report_mode {
	MODE_TABLE,
	MODE_LINES,
	MODE_FOLDED,
	MODE_FLAME,
	MODE_PPROF,
	MODE_CALLGRIND,
	MODE_SPEEDSCOPE,
	MODE_CHROME,
};

static const struct {
	const char *name;
	enum report_mode mode;
} formats[] = {
    {"text", MODE_TABLE},	   {"folded", MODE_FOLDED},	    {"pprof", MODE_PPROF},
    {"callgrind", MODE_CALLGRIND}, {"speedscope", MODE_SPEEDSCOPE}, {"chrome", MODE_CHROME},
    {"svg", MODE_FLAME},
};
#define FORMAT_NAMES "text, folded, pprof, callgrind, speedscope, chrome, svg"

struct report_args {
	const char *file;
	const char *before; /* --diff BEFORE; file is AFTER */
	int diff;
	enum report_mode mode;
	int mode_set;
	const char *output; /* -o, or the SVG of --flame; NULL: stdout */
	const char *flame;
	const char *value;
	long long top;
	int64_t *pids, *tids;
	int npids, ntids;
	regex_t focus, ignore;
	int has_focus, has_ignore;
	int icicle;
	const char *title;
};

static void args_set_mode(struct report_args *a, enum report_mode mode, const char *opt)
{
	if (a->mode_set && a->mode != mode)
		usage_die("report",
			  "%s cannot be combined with another output format "
			  "(--format, --lines, --folded, --flame)",
			  opt);
	a->mode = mode;
	a->mode_set = 1;
}

static void regex_compile(regex_t *re, const char *pattern, const char *opt)
{
	int err = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);

	if (err) {
		char msg[256];
		regerror(err, re, msg, sizeof(msg));
		usage_die("report", "bad %s regex '%s': %s", opt, pattern, msg);
	}
}

enum { V_TOP, V_LINES, V_FOLDED, V_FLAME, V_FORMAT, V_PID, V_TID, V_FOCUS, V_IGNORE };

static void set_format(struct report_args *a, const char *arg)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(arg, formats[i].name) == 0)
			break;
	if (i == sizeof(formats) / sizeof(formats[0]))
		usage_die("report", "unknown format '%s' (known: " FORMAT_NAMES ")", arg);
	/* --lines is text too. */
	if (!(formats[i].mode == MODE_TABLE && a->mode == MODE_LINES))
		args_set_mode(a, formats[i].mode, "--format");
}

static void set_ids(const char *opt, const char *arg, int64_t **ids, int *n)
{
	free(*ids); /* the last one given counts */
	*n = parse_int_list(arg, ids);
	if (*n < 0)
		usage_die("report", "%s wants a list of ids such as 12,34, not '%s'", opt, arg);
}

static void set_regex(regex_t *re, int *has, const char *arg, const char *opt)
{
	if (*has)
		regfree(re);
	regex_compile(re, arg, opt);
	*has = 1;
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
		if (a->mode_set && a->mode == MODE_TABLE)
			a->mode_set = 0; /* --format text --lines */
		args_set_mode(a, MODE_LINES, "--lines");
		break;
	case V_FOLDED:
		args_set_mode(a, MODE_FOLDED, "--folded");
		break;
	case V_FLAME:
		args_set_mode(a, MODE_FLAME, "--flame");
		a->flame = arg;
		break;
	case V_FORMAT:
		set_format(a, arg);
		break;
	case V_PID:
		set_ids("--pid", arg, &a->pids, &a->npids);
		break;
	case V_TID:
		set_ids("--tid", arg, &a->tids, &a->ntids);
		break;
	case V_FOCUS:
		set_regex(&a->focus, &a->has_focus, arg, "--focus");
		break;
	case V_IGNORE:
		set_regex(&a->ignore, &a->has_ignore, arg, "--ignore");
		break;
	}
}

static const struct opt report_options[] = {
    OPT_CALL_('n', "top", "N", set_value, V_TOP, "rows to show (default 20; 0: all)"),
    OPT_STRING_('o', "output", "FILE", struct report_args, output, "write here ('-': stdout)"),
    OPT_CALL_(0, "lines", NULL, set_value, V_LINES, "rows by source line, not function"),
    OPT_CALL_(0, "folded", NULL, set_value, V_FOLDED, "folded stacks, one a line"),
    OPT_CALL_(0, "flame", "SVG", set_value, V_FLAME, "write a flamegraph"),
    OPT_STRING_(0, "value", "TYPE", struct report_args, value, "the sample type to show"),
    OPT_CALL_(0, "pid", "PID[,PID...]", set_value, V_PID, "only these processes"),
    OPT_CALL_(0, "tid", "TID[,TID...]", set_value, V_TID, "only these threads"),
    OPT_CALL_(0, "focus", "REGEX", set_value, V_FOCUS, "only stacks through a match"),
    OPT_CALL_(0, "ignore", "REGEX", set_value, V_IGNORE, "drop stacks through a match"),
    OPT_CALL_(0, "format", "FORMAT", set_value, V_FORMAT, FORMAT_NAMES),
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
		if (a->mode != MODE_TABLE && a->mode != MODE_FLAME)
			usage_die("report", "--diff writes --format text or svg");
		return;
	}
	if (at < argc)
		a->file = argv[at++];
	if (at < argc)
		usage_die("report", "one profile at a time: '%s' is one too many", argv[at]);
	if (!a->file)
		a->file = DEFAULT_FILE;
}

static void args_release(struct report_args *a)
{
	free(a->pids);
	free(a->tids);
	if (a->has_focus)
		regfree(&a->focus);
	if (a->has_ignore)
		regfree(&a->ignore);
}

/* Reads the profile, or prints why not; returns NULL on failure. */
static struct profile *profile_load(const char *path)
{
	struct profile *p;
	char why[256];
	int ret = pprof_read_file(path, &p, why, sizeof(why));

	if (ret == -EBADMSG)
		error("'%s' is not a valid pprof profile: %s", path, why);
	else if (ret == -EFBIG)
		error("'%s' is too large for a profile (over %zu MiB)", path,
		      PPROF_MAX_BYTES >> 20);
	else if (ret)
		error("cannot open '%s': %s", path, strerror(-ret));
	if (ret == -ENOENT && strcmp(path, DEFAULT_FILE) == 0)
		note("record one first, e.g. 'recce record -p PID -d 10'");
	return ret ? NULL : p;
}

/* The index of the sample type to show; exits 2 for an unknown --value. */
static size_t value_index(const struct profile *p, const struct report_args *a)
{
	if (!a->value)
		return p->default_sample_type;
	int i = profile_sample_type_index(p, a->value);
	if (i >= 0)
		return (size_t)i;
	char types[512] = "";
	size_t len = 0;
	for (size_t t = 0; t < p->nsample_types && len < sizeof(types); t++)
		len += (size_t)snprintf(types + len, sizeof(types) - len, "%s%s", t ? ", " : "",
					p->sample_types[t].type);
	usage_die("report", "--value: '%s' has no sample type '%s' (it has: %s)", a->file, a->value,
		  p->nsample_types ? types : "none");
}

/* The command that was recorded, from recce's comments; NULL if none. */
static const char *profile_command(const struct profile *p)
{
	for (size_t i = 0; i < p->ncomments; i++)
		if (strncmp(p->comments[i], "command: ", 9) == 0)
			return p->comments[i] + 9;
	return NULL;
}

static int output_write(FILE *out, const struct report_args *a, const struct profile *p,
			const struct stack_set *set, const struct stack_event *events,
			size_t nevents)
{
	struct report_text_opts text = {
	    .top = (size_t)a->top,
	    .lines = a->mode == MODE_LINES,
	    .comments = p->comments,
	    .ncomments = p->ncomments,
	};
	struct flame_opts flame = {a->title, NULL, a->icicle, 0, 0};

	switch (a->mode) {
	case MODE_FOLDED:
		return folded_write(out, set);
	case MODE_FLAME:
		return flame_write_svg(out, set, &flame);
	case MODE_PPROF:
		return pprof_write_view(out, p, set);
	case MODE_CALLGRIND:
		return callgrind_write(out, set, p->sample_types, p->nsample_types,
				       profile_command(p));
	case MODE_SPEEDSCOPE:
		return speedscope_write(out, set, events, nevents, a->title ? a->title : a->file);
	case MODE_CHROME:
		return chrome_write(out, set, events, nevents);
	default:
		return report_text_write(out, set, &text);
	}
}

/* Writes to -o's file (whole or not at all) or standard output; prints
 * why not and returns non-zero on failure. */
static int output_run(const struct report_args *a, int (*write)(FILE *, const void *),
		      const void *arg)
{
	struct outfile o = {0};
	int ret = a->output ? outfile_open(&o, a->output) : 0;

	if (!ret) {
		ret = write(a->output ? o.fp : stdout, arg);
		if (a->output && ret)
			outfile_abort(&o);
		else if (a->output)
			ret = outfile_commit(&o);
		else if (fflush(stdout) != 0 && !ret)
			ret = -errno;
	}
	if (ret)
		error("cannot write '%s': %s", a->output ? a->output : "standard output",
		      strerror(-ret));
	return ret;
}

struct report_job {
	const struct report_args *a;
	const struct profile *p;
	const struct stack_set *set;
	const struct stack_event *events;
	size_t nevents;
	const struct stack_set *before; /* --diff */
	int64_t base_total;
};

static int job_write(FILE *out, const void *arg)
{
	const struct report_job *j = arg;

	return output_write(out, j->a, j->p, j->set, j->events, j->nevents);
}

static int diff_job_write(FILE *out, const void *arg)
{
	const struct report_job *j = arg;
	struct flame_opts flame = {j->a->title ? j->a->title : "Differential Flame Graph", NULL,
				   j->a->icicle, 1, j->base_total};

	if (j->a->mode == MODE_FLAME)
		return flame_write_svg(out, j->set, &flame);
	return report_diff_write(out, j->before, j->set, (size_t)j->a->top, j->a->before,
				 j->a->file);
}

static struct stack_filter filter_of(const struct report_args *a)
{
	return (struct stack_filter){
	    .pids = a->pids,
	    .npids = (size_t)a->npids,
	    .tids = a->tids,
	    .ntids = (size_t)a->ntids,
	    .focus = a->has_focus ? (regex_t *)&a->focus : NULL,
	    .ignore = a->has_ignore ? (regex_t *)&a->ignore : NULL,
	};
}

/* recce report --diff BEFORE AFTER: the same sample type from both. */
static int report_diff(struct report_args *a)
{
	struct profile *before = profile_load(a->before), *after = NULL;
	struct stack_set sb = {0}, sa = {0}, merged = {0};
	struct stack_filter filter = filter_of(a);
	int status = RECCE_EXIT_ERROR;

	if (!before || !(after = profile_load(a->file)))
		goto out;
	size_t ia = value_index(after, a);
	const struct profile_value_type *t = &after->sample_types[ia];
	int ib = profile_sample_type_index(before, t->type);
	if (ib < 0 || strcmp(before->sample_types[ib].unit, t->unit) != 0) {
		error("cannot compare '%s' with '%s': '%s' has no sample type '%s' in %s",
		      a->before, a->file, a->before, t->type, t->unit);
		note("--diff compares profiles of the same kind (such as two CPU profiles)");
		goto out;
	}
	if (stacks_from_profile(before, (size_t)ib, &filter, &sb) ||
	    stacks_from_profile(after, ia, &filter, &sa) || stacks_diff_merge(&sb, &sa, &merged)) {
		error("out of memory");
		goto out;
	}
	struct report_job job = {.a = a, .p = after, .before = &sb, .base_total = sb.total};
	job.set = a->mode == MODE_FLAME ? &merged : &sa;
	if (output_run(a, diff_job_write, &job) == 0)
		status = 0;
out:
	stacks_release(&merged);
	stacks_release(&sb);
	stacks_release(&sa);
	profile_free(before);
	profile_free(after);
	return status;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = {0};
	struct stack_filter filter;
	struct stack_set set;
	struct stack_event *events = NULL;
	size_t nevents = 0;
	struct profile *p;
	int status = RECCE_EXIT_ERROR;
	int ret;

	args_parse(&a, argc, argv);
	/* Refuse an unwritable output before reading a large profile. */
	ret = a.output ? outfile_check(a.output) : 0;
	if (ret) {
		error("cannot write '%s': %s", a.output, strerror(-ret));
		goto out_args;
	}
	if (a.diff) {
		status = report_diff(&a);
		goto out_args;
	}
	p = profile_load(a.file);
	if (!p)
		goto out_args;
	if (a.mode == MODE_CHROME && !p->timeline) {
		error("'%s' has no sample timeline, which --format chrome needs: the order of its "
		      "samples is unknown",
		      a.file);
		note("record with 'recce record --timeline' to keep each sample's time and thread");
		goto out_profile;
	}

	filter = filter_of(&a);
	ret = stacks_from_profile(p, value_index(p, &a), &filter, &set);
	if (ret) {
		error("cannot read the stacks of '%s': %s", a.file, strerror(-ret));
		goto out_profile;
	}
	if ((a.mode == MODE_CHROME || a.mode == MODE_SPEEDSCOPE) && p->timeline) {
		ret = stacks_timeline(&set, p, &events, &nevents);
		if (ret) {
			error("cannot read the timeline of '%s': %s", a.file, strerror(-ret));
			goto out_stacks;
		}
	}
	if (!set.n && a.mode != MODE_TABLE && a.mode != MODE_LINES)
		warning("no samples%s in '%s'", set.dropped ? " left after the filters" : "",
			a.file);

	struct report_job job = {&a, p, &set, events, nevents, NULL, 0};
	if (output_run(&a, job_write, &job))
		goto out_stacks;
	if (a.mode == MODE_FLAME && a.output) {
		char total[32];
		report_value_format(total, sizeof(total), set.total, set.unit);
		note("wrote '%s' (%s %s)", a.output, total, set.type);
	}
	status = 0;
out_stacks:
	free(events);
	stacks_release(&set);
out_profile:
	profile_free(p);
out_args:
	args_release(&a);
	return status;
}
