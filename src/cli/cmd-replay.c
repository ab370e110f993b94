/*
 * recce replay: prints trace files written by `recce trace -o`, merged by
 * timestamp across files (a wrapped set, or several processes or
 * machines), filtered with the same --if conditions as a live trace.
 * A damaged file is replayed up to the damage, and recce says where it
 * stopped. docs/recce-replay.md is its --help.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/array.h"
#include "cli/builtin.h"
#include "cli/cmd-trace.h"
#include "cli/options.h"
#include "cli/trace-plot.h"
#include "cli/usage.h"
#include "trace/trace-cond.h"
#include "trace/trace-event.h"
#include "trace/trace-file.h"
#include "trace/trace-pack.h"
#include "trace/trace-report.h"
#include "trace/trace-tree.h"
#include "util/outfile.h"
#include "util/term-safe.h"
#include "util/u64map.h"

/* A record read, sorted by these fields and kept packed at off. */
struct replay_entry {
	uint64_t time_ns, seq, off; /* time_ns on this machine's clock, where known */
	uint32_t pid, tid;
	uint16_t kind, len;
	uint32_t file; /* the index of its file in argv */
};

/* The records of every file read, each packed on its own (about 90 bytes
 * with its entry, against 1 KiB unpacked), so that a file of millions of
 * events is replayed in as much memory as a few times its size. */
struct replay {
	struct replay_entry *v;
	size_t n, cap;
	uint8_t *bytes;
	size_t used, room;
	struct trace_pack pack;
};

/* --clock FILE=SECONDS: that file's clock was so far ahead. */
struct clock_fix {
	const char *file;
	int64_t ahead_ns;
};

struct replay_args {
	const char *cond_text;
	enum trace_format format;
	const char *plot, *output;
	struct tree_args t; /* --tree, --slow and what shapes them */
	int report;	    /* --report */
	struct clock_fix *clocks;
	size_t nclocks, clocks_cap;
};

static void set_format(void *ctx, const char *arg, const struct opt *o)
{
	struct replay_args *a = ctx;

	if (strcmp(arg, "text") == 0)
		a->format = TRACE_FORMAT_TEXT;
	else if (strcmp(arg, "json") == 0)
		a->format = TRACE_FORMAT_JSON;
	else if (strcmp(arg, "chrome") == 0)
		a->format = TRACE_FORMAT_CHROME;
	else
		usage_die("replay", "--format must be text, json or chrome, not '%s'", arg);
}

static void set_tree(void *ctx, const char *arg, const struct opt *o)
{
	struct replay_args *a = ctx;

	tree_option_set("replay", (enum tree_option)o->set, arg, &a->t);
}

static void set_clock(void *ctx, const char *arg, const struct opt *o)
{
	struct replay_args *a = ctx;
	const char *eq = strrchr(arg, '=');
	char *end;
	double seconds = eq ? strtod(eq + 1, &end) : 0;

	if (!eq || eq == arg || end == eq + 1 || *end || seconds != seconds || seconds > 1e9 ||
	    seconds < -1e9)
		usage_die("replay",
			  "--clock wants FILE=SECONDS, how far FILE's host's clock was ahead of "
			  "this one's (-2.5 for behind), not '%s'",
			  arg);
	struct clock_fix *grown =
	    array_reserve(a->clocks, &a->clocks_cap, a->nclocks + 1, sizeof(*grown));
	if (!grown)
		die("out of memory");
	a->clocks = grown;
	a->clocks[a->nclocks++] = (struct clock_fix){arg, (int64_t)(seconds * 1e9)};
}

static const struct opt replay_options[] = {
    OPT_STRING_(0, "if", "EXPR", struct replay_args, cond_text, "only events for which EXPR holds"),
    OPT_CALL_(0, "format", "FORMAT", set_format, 0, "text, json or chrome"),
    OPT_STRING_(0, "plot", "X:Y", struct replay_args, plot,
		"with -o FILE.svg: a scatter plot of Y against X, one point a call"),
    OPT_OUTPUT_('o', "output", "FILE", struct replay_args, output, "the plot's file (with --plot)"),
    OPT_FLAG_(0, "tree", struct replay_args, t.tree, "calls nested as they ran, with durations"),
    OPT_CALL_(0, "depth", "N", set_tree, TREE_DEPTH, "with --tree: N levels of calls"),
    OPT_CALL_(0, "min-duration", "DUR", set_tree, TREE_MIN_DURATION,
	      "with --tree: leave out calls shorter than DUR (100us, 5ms)"),
    OPT_CALL_(0, "slow", "DUR", set_tree, TREE_SLOW,
	      "only the trees of calls that lasted DUR or longer"),
    OPT_CALL_(0, "keep", "N", set_tree, TREE_KEEP, "with --slow: the N slowest, at the end"),
    OPT_FLAG_(0, "report", struct replay_args, report,
	      "calls summed by function: total and own time, as uftrace report"),
    OPT_CALL_(0, "clock", "FILE=SECONDS", set_clock, 0,
	      "FILE's host's clock was SECONDS ahead of this one's"),
    OPT_END_(),
};

static int collect(const struct trace_record *r, void *ctx)
{
	struct replay *rp = ctx;
	struct replay_entry *v = array_reserve(rp->v, &rp->cap, rp->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	rp->v = v;
	uint8_t *b = array_reserve(rp->bytes, &rp->room, rp->used + TRACE_PACK_MAX, 1);
	if (!b)
		return -ENOMEM;
	rp->bytes = b;
	int len = trace_pack_put_alone(&rp->pack, r, rp->bytes + rp->used);
	if (len < 0)
		return len;
	rp->v[rp->n++] = (struct replay_entry){
	    r->time_ns, r->seq, rp->used, r->pid, r->tid, (uint16_t)r->kind, (uint16_t)len, 0};
	rp->used += (size_t)len;
	return 0;
}

/* Record i of the sorted ones, unpacked into *r. */
static struct trace_record *record_at(struct replay *rp, size_t i, struct trace_record *r)
{
	const uint8_t *at = rp->bytes + rp->v[i].off;

	/* Packed here, its names all in the pack: it cannot fail. */
	if (trace_pack_get_alone(&rp->pack, at, at + rp->v[i].len, r) < 0)
		die("an event recce packed does not unpack: this is a bug in recce");
	r->seq = rp->v[i].seq;
	r->time_ns = rp->v[i].time_ns; /* on this machine's clock */
	return r;
}

/* The hosts of the files read: an event says its host when there are
 * several. */
#define MAX_HOSTS 64

struct hosts {
	int *of;	      /* per argv index: its file's host in names, MAX_HOSTS past them */
	char unmeasured[256]; /* files of several hosts whose clock is not known */
	char names[MAX_HOSTS][TRACE_HOST_MAX];
	int nnames;
};

static int host_index(struct hosts *h, const char *host)
{
	for (int k = 0; k < h->nnames; k++)
		if (strcmp(h->names[k], host) == 0)
			return k;
	if (h->nnames == MAX_HOSTS)
		return MAX_HOSTS;
	trace_copy_str(h->names[h->nnames], TRACE_HOST_MAX, host);
	return h->nnames++;
}

/* The host of the file at argv index i ("?" past MAX_HOSTS). */
static const char *host_of(const struct hosts *h, uint32_t i)
{
	return h->of[i] < MAX_HOSTS ? h->names[h->of[i]] : "?";
}

/*
 * The events of file path just read (from before on) moved onto this
 * machine's clock: by --clock's figure for it, else by the offset recce
 * --node measured when it brought the file here.
 */
static void on_one_clock(struct replay *rp, size_t before, const struct replay_args *a, int argi,
			 const char *path, const struct trace_file_info *info, struct hosts *h)
{
	int64_t ahead = info->clock_offset_ns;
	int known = info->clock_known;

	for (size_t k = 0; k < a->nclocks; k++) {
		size_t len = (size_t)(strrchr(a->clocks[k].file, '=') - a->clocks[k].file);
		if (strlen(path) == len && strncmp(path, a->clocks[k].file, len) == 0) {
			ahead = a->clocks[k].ahead_ns;
			known = 1;
		}
	}
	for (size_t k = before; k < rp->n; k++)
		rp->v[k].time_ns = (uint64_t)((int64_t)rp->v[k].time_ns - ahead);
	int host = host_index(h, info->host[0] ? info->host : "?");
	h->of[argi] = host;
	size_t used = strlen(h->unmeasured);
	if (!known && used + strlen(path) + 5 < sizeof(h->unmeasured)) {
		int n = snprintf(h->unmeasured + used, sizeof(h->unmeasured) - used, "%s'%s'",
				 used ? ", " : "", path);
		if (n < 0)
			h->unmeasured[used] = '\0';
	}
}

static void hosts_say(const struct hosts *h)
{
	if (h->nnames > 1 && h->unmeasured[0])
		warning("the files come from several hosts, and the clock of %s was not measured "
			"against this one's (recce --node measures it when it brings a file "
			"here): its events are placed by its own clock; --clock FILE=SECONDS "
			"moves them",
			h->unmeasured);
}

/* Time order; within one time, a call before a return, then file order. */
static int by_time(const void *a, const void *b)
{
	const struct replay_entry *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The index of an earlier argument (from first, before i) naming the same
 * file as argv[i], or -1. */
static int same_file_before(char **argv, int first, int i)
{
	struct stat st, other;

	if (stat(argv[i], &st) < 0)
		return -1;
	for (int j = first; j < i; j++)
		if (stat(argv[j], &other) == 0 && other.st_dev == st.st_dev &&
		    other.st_ino == st.st_ino)
			return j;
	return -1;
}

/* Removes the records that repeat the one before them (sorted: repeats
 * are neighbours), as overlapping files give; returns how many. */
static size_t drop_repeats(struct replay *rp)
{
	size_t out = 1;

	for (size_t i = 1; i < rp->n; i++) {
		const struct replay_entry *a = &rp->v[out - 1], *b = &rp->v[i];
		if (a->seq == b->seq && a->pid == b->pid && a->time_ns == b->time_ns &&
		    a->kind == b->kind && a->tid == b->tid)
			continue;
		rp->v[out++] = *b;
	}
	size_t dropped = rp->n - out;
	rp->n = out;
	return dropped;
}

/* --tree: the events the condition keeps, nested per thread. */
static void replay_tree(struct replay *rp, const struct trace_cond *cond,
			const struct replay_args *a)
{
	struct trace_tree_config tc = tree_options_config(&a->t, stdout);
	struct trace_tree *tree;
	struct trace_record r;

	if (trace_tree_new(&tc, &tree) < 0)
		die("out of memory");
	for (size_t i = 0; i < rp->n; i++) {
		record_at(rp, i, &r);
		if (trace_cond_eval(cond, trace_record_lookup, &r) && trace_tree_add(tree, &r) < 0)
			die("out of memory");
	}
	trace_tree_flush(tree);
	fflush(stdout);
	trace_say_tree(tree, &tc);
	trace_tree_free(tree);
}

/* --report: the events the condition keeps, summed by function, as a
 * table; -1 (said) when there is nothing to sum. */
static int replay_report(struct replay *rp, const struct trace_cond *cond)
{
	struct trace_report *rep = trace_report_new();
	struct trace_record r;

	if (!rep)
		die("out of memory");
	for (size_t i = 0; i < rp->n; i++) {
		record_at(rp, i, &r);
		if (trace_cond_eval(cond, trace_record_lookup, &r) && trace_report_add(rep, &r) < 0)
			die("out of memory");
	}
	int rc = trace_print_report(rep);
	if (rc < 0)
		error("no call in the files returned: the report sums the times of calls, which "
		      "need their returns (recce trace --return -o FILE)");
	trace_report_free(rep);
	return rc;
}

/*
 * The events the condition keeps, in format. Of several hosts, each says
 * its host: a text line's prefix (escaped for the terminal: a file can
 * say anything), a JSON "host"; in a Chrome trace each host's process is
 * one of its own (pids of two hosts are apart), named "HOST pid N".
 */
static void print_events(struct replay *rp, const struct trace_cond *cond, enum trace_format format,
			 const struct hosts *hosts)
{
	struct trace_record r;
	struct u64map named;
	char safe[4 * TRACE_HOST_MAX];
	int first = 1;

	u64map_init(&named);
	for (size_t i = 0; i < rp->n; i++) {
		if (!trace_cond_eval(cond, trace_record_lookup, record_at(rp, i, &r)))
			continue;
		const char *host = hosts->nnames > 1 ? host_of(hosts, rp->v[i].file) : NULL;
		if (host && format == TRACE_FORMAT_TEXT)
			printf("%s ", term_safe(host, safe, sizeof(safe)));
		if (host && format == TRACE_FORMAT_CHROME) {
			/* pid_max is 2^22 at most: each host's pids above it. */
			r.pid = (uint32_t)hosts->of[rp->v[i].file] << 22 | (r.pid & 0x3fffff);
			if (!u64map_get(&named, r.pid, NULL)) {
				char name[TRACE_HOST_MAX + 32];
				snprintf(name, sizeof(name), "%s pid %" PRIu32, host, rp->v[i].pid);
				if (u64map_put(&named, r.pid, 1) < 0)
					die("out of memory");
				trace_chrome_process_name(r.pid, name, first, stdout);
				first = 0;
			}
		}
		trace_record_print_host(&r, format, first, host, stdout);
		first = 0;
	}
	u64map_release(&named);
}

int cmd_replay(int argc, char **argv)
{
	struct replay_args a = {.format = TRACE_FORMAT_TEXT};
	struct trace_plot plot;
	struct trace_cond *cond = NULL;
	struct replay rp = {0};
	struct trace_record r;
	struct hosts hosts = {0};
	int status = 0;

	trace_pack_init(&rp.pack);
	int files = options_parse("replay", replay_options, 0, argc, argv, &a, NULL);
	enum trace_format format = a.format;
	if (a.cond_text)
		cond = parse_cond_option("replay", a.cond_text);
	if (files >= argc)
		usage_die("replay", "name at least one trace file");
	hosts.of = calloc((size_t)argc, sizeof(*hosts.of));
	if (!hosts.of)
		die("out of memory");
	if (!a.plot != !a.output)
		usage_die("replay", "--plot X:Y and -o FILE.svg go together");
	tree_options_check("replay", &a.t);
	if (a.t.tree && (a.plot || format != TRACE_FORMAT_TEXT))
		usage_die("replay", "--tree prints text: leave out %s",
			  a.plot ? "--plot" : "--format");
	if (a.report && (a.t.tree || a.plot || format != TRACE_FORMAT_TEXT))
		usage_die("replay", "--report prints one table: leave out %s",
			  a.t.tree ? "--tree"
			  : a.plot ? "--plot"
				   : "--format");
	if (a.plot) {
		trace_plot_parse("replay", a.plot, &plot);
		int err = outfile_check(a.output);
		if (err)
			die("cannot write '%s': %s", a.output, output_strerror(err));
	}
	for (int i = files; i < argc; i++) {
		struct trace_file_info info;
		size_t before = rp.n;
		int same = same_file_before(argv, files, i);
		if (same >= 0) {
			warning("'%s' is the same file as '%s': read once", argv[i], argv[same]);
			continue;
		}
		int err = trace_file_read(argv[i], collect, &rp, &info);
		if (err == -EBADMSG) {
			error("'%s' is not a recce trace file", argv[i]);
			status = RECCE_EXIT_ERROR;
			continue;
		}
		if (err == -ENOTSUP || err == -EISDIR) {
			error("'%s' is not a regular file: give the trace file itself", argv[i]);
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
		on_one_clock(&rp, before, &a, i, argv[i], &info, &hosts);
		for (size_t k = before; k < rp.n; k++)
			rp.v[k].file = (uint32_t)i;
	}
	hosts_say(&hosts);
	if (rp.n) {
		qsort(rp.v, rp.n, sizeof(*rp.v), by_time);
		size_t twice = drop_repeats(&rp);
		if (twice)
			warning("%zu event%s appeared in more than one file (overlapping wrap "
				"files, or copies): each is shown once",
				twice, twice == 1 ? "" : "s");
	}
	if (a.plot) {
		/* The events the condition keeps become the plot's points. */
		for (size_t i = 0; i < rp.n; i++)
			if (trace_cond_eval(cond, trace_record_lookup, record_at(&rp, i, &r)))
				trace_plot_add(&plot, &r);
		if (trace_plot_write(&plot, a.output) != 0)
			status = RECCE_EXIT_ERROR;
		rp.n = 0;
		format = TRACE_FORMAT_TEXT;
	}
	if (a.t.tree) {
		replay_tree(&rp, cond, &a);
		rp.n = 0;
	}
	if (a.report) {
		if (replay_report(&rp, cond) < 0)
			status = RECCE_EXIT_ERROR;
		rp.n = 0;
	}
	if (format == TRACE_FORMAT_CHROME)
		fputs("{\"traceEvents\":[\n", stdout);
	print_events(&rp, cond, format, &hosts);
	if (format == TRACE_FORMAT_CHROME)
		fputs("\n]}\n", stdout);
	free(rp.v);
	free(rp.bytes);
	free(a.clocks);
	free(hosts.of);
	trace_pack_release(&rp.pack);
	trace_cond_free(cond);
	return status;
}
