/*
 * recce query's options: the table --help and the completion are made
 * from, the values checked as they are parsed, and the combinations
 * refused (see cmd-query.h).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd-query.h"
#include "cli/options.h"
#include "cli/usage.h"
#include "store/query.h"
#include "util/array.h"
#include "writers/render.h"

#define DEFAULT_TOP 20

enum { V_PID, V_COMM, V_LABEL, V_TOP };

static void push(const char ***v, size_t *n, size_t *cap, const char *s)
{
	const char **grown = array_reserve(*v, cap, *n + 1, sizeof(**v));
	if (!grown)
		die("out of memory");
	*v = grown;
	(*v)[(*n)++] = s;
}

static void set_value(void *ctx, const char *arg, const struct opt *o)
{
	struct query_args *a = ctx;

	switch (o->set) {
	case V_PID:
		parse_ids_option("query", "--pid", arg, &a->pids, &a->npids);
		break;
	case V_COMM:
		parse_names_option(arg, &a->comms, &a->ncomms, &a->ncomms_cap);
		break;
	case V_LABEL: {
		const char *eq = strchr(arg, '=');
		char *key = eq ? strndup(arg, (size_t)(eq - arg)) : NULL;
		if (!key || !store_label_known(key))
			usage_die(
			    "query",
			    "--label wants KEY=VALUE with a KEY of host, comm, exe, build_id, "
			    "cgroup or pid, not '%s'",
			    arg);
		size_t n = a->nlabels;
		push(&a->keys, &n, &a->keys_cap, key);
		push(&a->values, &a->nlabels, &a->values_cap, eq + 1);
		break;
	}
	case V_TOP:
		if (parse_int(arg, 0, INT_MAX, &a->top) < 0)
			usage_die("query", "-n wants a number of rows (0 for all), not '%s'", arg);
		break;
	}
}

static const struct opt query_options[] = {
    OPT_STRING_(0, "store", "DIR", struct query_args, store,
		"the store to read (default /var/lib/recce as root)"),
    OPT_STRING_(0, "clickhouse", "clickhouse://HOST[:PORT]/DB", struct query_args, clickhouse,
		"read the fleet store the agents export to"),
    OPT_STRING_(0, "clickhouse-password", "FILE", struct query_args, clickhouse_password,
		"--clickhouse's password, from the first line of FILE (never in the URL)"),
    OPT_STRING_(0, "from", "TIME", struct query_args, from, "the range's start (default -1h)"),
    OPT_STRING_(0, "to", "TIME", struct query_args, to, "the range's end (default now)"),
    OPT_CALL_(0, "pid", "PID[,PID...]", set_value, V_PID, "only these processes"),
    OPT_CALL_(0, "comm", "NAME[,NAME...]", set_value, V_COMM, "only processes of these names"),
    OPT_STRING_(0, "host", "NAME", struct query_args, host, "only this host's windows"),
    OPT_CALL_(0, "label", "KEY=VALUE", set_value, V_LABEL, "only processes so labelled"),
    OPT_FLAG_(0, "diff", struct query_args, diff, "compare with the range of --from2 --to2"),
    OPT_STRING_(0, "from2", "TIME", struct query_args, from2, "the start of the base range"),
    OPT_STRING_(0, "to2", "TIME", struct query_args, to2, "the end of the base range"),
    OPT_OUTPUT_('o', "output", "FILE", struct query_args, output,
		"write here (a pprof profile unless --format)"),
    OPT_STRING_(0, "format", "FORMAT", struct query_args, format, RENDER_FORMAT_NAMES),
    OPT_CALL_('n', "top", "N", set_value, V_TOP, "rows to show (default 20; 0: all)"),
    OPT_FLAG_(0, "windows", struct query_args, windows, "list the windows stored in the range"),
    OPT_FLAG_(0, "json", struct query_args, json, "--windows as JSON, one object a line"),
    OPT_END_(),
};

void query_parse_args(struct query_args *a, int argc, char **argv)
{
	memset(a, 0, sizeof(*a));
	a->top = DEFAULT_TOP;
	int at = options_parse("query", query_options, 0, argc, argv, a, NULL);
	if (at < argc)
		usage_die("query", "unexpected argument '%s'", argv[at]);
	if (!a->diff && (a->from2 || a->to2))
		usage_die("query", "--from2 and --to2 go with --diff");
	if (a->json && !a->windows)
		usage_die("query", "--json goes with --windows");
	if (a->windows && (a->diff || a->output || a->format))
		usage_die("query", "--windows lists windows: not with --diff, -o or --format");
	if (a->clickhouse_password && !a->clickhouse)
		usage_die("query", "--clickhouse-password goes with --clickhouse");
	if (a->clickhouse && a->store)
		usage_die("query", "--store and --clickhouse are two stores: give one");
	if (a->clickhouse && a->windows)
		usage_die("query",
			  "--windows lists a local store's windows: not with --clickhouse");
	if (a->diff && !a->from2)
		usage_die("query", "--diff compares with a base range: give --from2 (and --to2)");
}
