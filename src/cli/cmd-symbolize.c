/*
 * recce symbolize: names the addresses of a profile recorded without
 * names (`recce record --no-symbolize`, or a pprof file from another
 * profiler that kept build-ids), on another machine or later: from each
 * binary at its recorded path when the build-id matches, else from the
 * table the symbol cache kept of it. docs/recce-symbolize.md is its --help.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/builtin.h"
#include "cli/grant.h"
#include "cli/options.h"
#include "cli/profile-messages.h"
#include "cli/usage.h"
#include "profile/fill-names.h"
#include "profile/pprof.h"

struct symbolize_args {
	const char *output;
};

static const struct opt symbolize_options[] = {
    OPT_OUTPUT_('o', "output", "FILE", struct symbolize_args, output,
		"the named profile to write (default: IN itself)"),
    OPT_END_(),
};

int cmd_symbolize(int argc, char **argv)
{
	struct symbolize_args a = {NULL};
	int first = options_parse("symbolize", symbolize_options, 0, argc, argv, &a, NULL);

	if (first >= argc)
		usage_die("symbolize", "name the profile to symbolize");
	if (first + 1 < argc)
		usage_die("symbolize", "one profile at a time, not also '%s'", argv[first + 1]);
	const char *in = argv[first], *out = a.output ? a.output : in;
	if (!a.output)
		grant_output(in, "symbolize IN (rewritten in place without -o)");
	int err = pprof_check_writable(out);
	if (err)
		die("cannot write '%s': %s", out, output_strerror(err));
	struct profile *p = profile_read_or_say(in);
	if (!p)
		return RECCE_EXIT_ERROR;
	size_t unnamed = profile_unnamed_locations(p);
	long named = profile_fill_names_or_say(p, in);
	if (named < 0) {
		profile_free(p);
		return RECCE_EXIT_ERROR;
	}
	char elsewhere[4096];
	const char *written = profile_write_or_say(p, out, elsewhere, sizeof(elsewhere));
	profile_free(p);
	if (written != out)
		return RECCE_EXIT_ERROR;
	if (unnamed == 0) {
		note("'%s' had no addresses without names; wrote '%s' unchanged", in, out);
		return 0;
	}
	if (named == 0)
		return error("named none of the %zu addresses of '%s'; wrote '%s' as it was",
			     unnamed, in, out),
		       RECCE_EXIT_ERROR;
	note("named %ld of %zu addresses; wrote '%s'", named, unnamed, out);
	return 0;
}
