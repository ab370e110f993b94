/*
 * Option tables (see options.h): a table is turned into getopt_long's
 * long-option array and short-option string once per parse, and each
 * option found is dispatched to its entry.
 */
#include "cli/options.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/grant.h"
#include "cli/usage.h"

#define MAX_OPTS 64
/* getopt_long's value for long option i: above every short option
 * character and getopt's own '?' and ':', whatever the table's size. */
#define LONG_ID(i) (256 + (int)(i))
#define LIST_ID	   LONG_ID(MAX_OPTS) /* --list-options */

static size_t count_opts(const struct opt *opts)
{
	size_t n = 0;

	while (opts[n].kind != OPT_END)
		n++;
	return n;
}

/* "--name", or "-n" for an option without a long name. */
static const char *opt_name(const struct opt *o, char *buf, size_t len)
{
	if (o->long_name)
		snprintf(buf, len, "--%s", o->long_name);
	else
		snprintf(buf, len, "-%c", o->short_name);
	return buf;
}

static void apply(const char *cmd, const struct opt *o, const char *arg, void *ctx)
{
	char what[128], name[64];

	/* What the agent's client may do is decided here, on the option as
	 * getopt understood it, before the option does anything. */
	if (o->needs || (o->writes && arg)) {
		snprintf(what, sizeof(what), "%s %s", cmd, opt_name(o, name, sizeof(name)));
		grant_need(o->needs, what);
		if (o->writes && arg)
			grant_output(arg, what);
	}
	switch (o->kind) {
	case OPT_FLAG:
		*(int *)((char *)ctx + o->offset) = o->set ? o->set : 1;
		break;
	case OPT_STRING:
		*(const char **)((char *)ctx + o->offset) = arg;
		break;
	case OPT_CALL:
		o->cb(ctx, arg, o);
		break;
	default:
		break;
	}
}

int options_parse(const char *cmd, const struct opt *opts, unsigned flags, int argc, char **argv,
		  void *ctx, int *dashdash_out)
{
	struct option longs[MAX_OPTS + 2];
	char shorts[3 * MAX_OPTS + 3];
	size_t n = count_opts(opts), nl = 0, ns = 0;
	int dashdash = argc, c;

	if (n > MAX_OPTS)
		die("internal error: recce %s has more than %d options", cmd, MAX_OPTS);
	if (flags & OPTIONS_IN_ORDER)
		shorts[ns++] = '+';
	shorts[ns++] = ':'; /* report a missing value as ':' */
	for (size_t i = 0; i < n; i++) {
		int has_arg = opts[i].arg_name ? required_argument : no_argument;
		if (opts[i].long_name)
			longs[nl++] = (struct option){opts[i].long_name, has_arg, NULL, LONG_ID(i)};
		if (opts[i].short_name) {
			shorts[ns++] = opts[i].short_name;
			if (has_arg == required_argument)
				shorts[ns++] = ':';
		}
	}
	shorts[ns] = 0;
	longs[nl++] = (struct option){"list-options", no_argument, NULL, LIST_ID};
	longs[nl] = (struct option){NULL, 0, NULL, 0};

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dashdash = i;
			break;
		}
	opterr = 0;
	optind = 0; /* glibc: a full reset, which reads '+' again */
	while ((c = getopt_long(dashdash, argv, shorts, longs, NULL)) != -1) {
		if (c == LIST_ID) {
			options_list(opts, stdout);
			exit(0);
		}
		if (c == ':')
			usage_die(cmd, "option '%s' needs a value", argv[optind - 1]);
		const struct opt *o = NULL;
		if (c >= LONG_ID(0) && c < LONG_ID(n))
			o = &opts[c - LONG_ID(0)];
		for (size_t i = 0; !o && c != '?' && i < n; i++)
			if (opts[i].short_name == c)
				o = &opts[i];
		if (!o && c == '?' && optopt)
			usage_die(cmd, "unknown option '-%c'", optopt);
		if (!o)
			usage_die(cmd, "unknown option '%s'", argv[optind - 1]);
		apply(cmd, o, optarg, ctx);
	}
	if (dashdash_out) {
		/* getopt moved the options before the operands, and "--"
		 * stayed where it was. */
		*dashdash_out = dashdash;
	}
	return optind;
}

void options_list(const struct opt *opts, FILE *out)
{
	for (const struct opt *o = opts; o->kind != OPT_END; o++) {
		char names[96];
		int len = 0;
		if (o->short_name)
			len += snprintf(names + len, sizeof(names) - (size_t)len, "-%c",
					o->short_name);
		if (o->long_name)
			len += snprintf(names + len, sizeof(names) - (size_t)len, "%s--%s",
					len ? ", " : "", o->long_name);
		if (o->arg_name && len < (int)sizeof(names))
			snprintf(names + len, sizeof(names) - (size_t)len, " %s", o->arg_name);
		fprintf(out, "%s\t%s\n", names, o->help ? o->help : "");
	}
}
