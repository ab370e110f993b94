/*
 * recce report: reads a pprof profile and shows it as a table of functions
 * or source lines, as folded stacks, or as a flamegraph SVG. This file only
 * parses options and wires pprof.c, stacks.c and the writers together; the
 * page docs/recce-report.md is its --help.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "outfile.h"
#include "pprof.h"
#include "profile.h"
#include "report-text.h"
#include "stacks.h"
#include "usage.h"
#include "writer-flame.h"
#include "writer-folded.h"

#define DEFAULT_FILE "recce.pb.gz"
#define DEFAULT_TOP  20

/* One output mode; --format (later) selects among more of them. */
enum report_mode {
	MODE_TABLE,
	MODE_LINES,
	MODE_FOLDED,
	MODE_FLAME,
};

struct report_args {
	const char *file;
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
};

enum {
	OPT_LINES = 256,
	OPT_FOLDED,
	OPT_FLAME,
	OPT_VALUE,
	OPT_PID,
	OPT_TID,
	OPT_FOCUS,
	OPT_IGNORE,
};

static const struct option report_options[] = {
    {"top", required_argument, NULL, 'n'},
    {"output", required_argument, NULL, 'o'},
    {"lines", no_argument, NULL, OPT_LINES},
    {"folded", no_argument, NULL, OPT_FOLDED},
    {"flame", required_argument, NULL, OPT_FLAME},
    {"value", required_argument, NULL, OPT_VALUE},
    {"pid", required_argument, NULL, OPT_PID},
    {"tid", required_argument, NULL, OPT_TID},
    {"focus", required_argument, NULL, OPT_FOCUS},
    {"ignore", required_argument, NULL, OPT_IGNORE},
    {NULL, 0, NULL, 0},
};

static void args_set_mode(struct report_args *a, enum report_mode mode, const char *opt)
{
	if (a->mode_set && a->mode != mode)
		usage_die("report",
			  "%s cannot be combined with another output mode "
			  "(--lines, --folded, --flame)",
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

static void args_parse(struct report_args *a, int argc, char **argv)
{
	int c;

	a->top = DEFAULT_TOP;
	opterr = 0;
	optind = 0; /* glibc: a full reset, in case getopt ran before */
	/* The leading ':' makes a missing value ':' rather than '?'. */
	while ((c = getopt_long(argc, argv, ":n:o:", report_options, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_int(optarg, 0, INT_MAX, &a->top) < 0)
				usage_die("report",
					  "-n wants a number of rows (0 for all), not '%s'",
					  optarg);
			break;
		case 'o':
			a->output = optarg;
			break;
		case OPT_LINES:
			args_set_mode(a, MODE_LINES, "--lines");
			break;
		case OPT_FOLDED:
			args_set_mode(a, MODE_FOLDED, "--folded");
			break;
		case OPT_FLAME:
			args_set_mode(a, MODE_FLAME, "--flame");
			a->flame = optarg;
			break;
		case OPT_VALUE:
			a->value = optarg;
			break;
		case OPT_PID:
		case OPT_TID: {
			int64_t **ids = c == OPT_PID ? &a->pids : &a->tids;
			free(*ids); /* the last one given counts */
			int n = parse_int_list(optarg, ids);
			if (n < 0)
				usage_die("report",
					  "%s wants a list of ids such as 12,34, not '%s'",
					  c == OPT_PID ? "--pid" : "--tid", optarg);
			*(c == OPT_PID ? &a->npids : &a->ntids) = n;
			break;
		}
		case OPT_FOCUS:
			if (a->has_focus)
				regfree(&a->focus);
			regex_compile(&a->focus, optarg, "--focus");
			a->has_focus = 1;
			break;
		case OPT_IGNORE:
			if (a->has_ignore)
				regfree(&a->ignore);
			regex_compile(&a->ignore, optarg, "--ignore");
			a->has_ignore = 1;
			break;
		case ':':
			usage_die("report", "option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt)
				usage_die("report", "unknown option '-%c'", optopt);
			usage_die("report", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (a->flame && a->output)
		usage_die("report", "--flame names its own output file; drop -o");
	if (a->flame)
		a->output = a->flame;
	else if (a->output && strcmp(a->output, "-") == 0)
		a->output = NULL; /* -o - is standard output */
	if (optind < argc)
		a->file = argv[optind++];
	if (optind < argc)
		usage_die("report", "one profile at a time: '%s' is one too many", argv[optind]);
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

static int output_write(FILE *out, const struct report_args *a, const struct profile *p,
			const struct stack_set *set)
{
	struct report_text_opts text = {
	    .top = (size_t)a->top,
	    .lines = a->mode == MODE_LINES,
	    .comments = p->comments,
	    .ncomments = p->ncomments,
	};

	switch (a->mode) {
	case MODE_FOLDED:
		return folded_write(out, set);
	case MODE_FLAME:
		return flame_write_svg(out, set, NULL);
	default:
		return report_text_write(out, set, &text);
	}
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = {0};
	struct stack_filter filter;
	struct stack_set set;
	struct outfile o = {0};
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
	p = profile_load(a.file);
	if (!p)
		goto out_args;

	filter = (struct stack_filter){
	    .pids = a.pids,
	    .npids = (size_t)a.npids,
	    .tids = a.tids,
	    .ntids = (size_t)a.ntids,
	    .focus = a.has_focus ? &a.focus : NULL,
	    .ignore = a.has_ignore ? &a.ignore : NULL,
	};
	ret = stacks_from_profile(p, value_index(p, &a), &filter, &set);
	if (ret) {
		error("cannot read the stacks of '%s': %s", a.file, strerror(-ret));
		goto out_profile;
	}
	if (!set.n && a.mode != MODE_TABLE && a.mode != MODE_LINES)
		warning("no samples%s in '%s'", set.dropped ? " left after the filters" : "",
			a.file);

	ret = a.output ? outfile_open(&o, a.output) : 0;
	if (ret) {
		error("cannot write '%s': %s", a.output, strerror(-ret));
		goto out_stacks;
	}
	ret = output_write(a.output ? o.fp : stdout, &a, p, &set);
	if (a.output && ret)
		outfile_abort(&o);
	else if (a.output)
		ret = outfile_commit(&o);
	else if (fflush(stdout) != 0 && !ret)
		ret = -errno;
	if (ret) {
		error("cannot write '%s': %s", a.output ? a.output : "standard output",
		      strerror(-ret));
		goto out_stacks;
	}
	if (a.mode == MODE_FLAME) {
		char total[32];
		report_value_format(total, sizeof(total), set.total, set.unit);
		note("wrote '%s' (%s %s)", a.output, total, set.type);
	}
	status = 0;
out_stacks:
	stacks_release(&set);
out_profile:
	profile_free(p);
out_args:
	args_release(&a);
	return status;
}
