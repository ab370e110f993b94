/*
 * Messages of reading profiles (see profile-messages.h).
 */
#include "cli/profile-messages.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/builtin.h"
#include "cli/dirs.h"
#include "cli/usage.h"
#include "profile/fill-names.h"
#include "profile/pprof.h"
#include "symbols/symbolize.h"

struct profile *profile_read_or_say(const char *path)
{
	struct profile *p;
	char why[256] = "";
	int ret = pprof_read_file(path, &p, why, sizeof(why));

	if (ret == -EBADMSG)
		error("'%s' is not a valid pprof profile: %s", path, why);
	else if (ret == -EFBIG && why[0])
		error("'%s' is refused: %s", path, why);
	else if (ret == -EFBIG)
		error("'%s' is too large for a profile (over %zu MiB)", path,
		      PPROF_MAX_BYTES >> 20);
	else if (ret)
		error("cannot open '%s': %s", path, strerror(-ret));
	if (ret == -ENOENT && strcmp(path, PROFILE_DEFAULT_FILE) == 0)
		note("record one first, e.g. 'recce record -p PID -d 10'");
	return ret ? NULL : p;
}

const char *profile_write_or_say(const struct profile *p, const char *path, char *where, size_t cap)
{
	int err = pprof_write_file_or_elsewhere(p, path, where, cap);

	if (err && !where[0])
		die("cannot write '%s': %s", path, output_strerror(err));
	if (!err)
		return path;
	error("cannot write '%s': %s; the profile is kept in %s instead", path,
	      output_strerror(err), where);
	return where;
}

void debuginfod_say_stalled(void)
{
	const char *t = getenv("DEBUGINFOD_TIMEOUT");

	if (symbolizer_debuginfod_stalled())
		warning("a debuginfod server sent nothing for %s s (DEBUGINFOD_TIMEOUT): recce "
			"stopped asking, and names only a server has are missing",
			t ? t : "90");
}

long profile_fill_names_or_say(struct profile *p, const char *path)
{
	struct symbolizer *s;
	struct fill_stats st;
	int rc;

	if (profile_unnamed_locations(p) == 0)
		return 0;
	s = symbolizer_new();
	rc = s && dirs_use_cache(s, 0) == 0 ? profile_fill_names(p, s, &st) : -ENOMEM;
	symbolizer_free(s);
	debuginfod_say_stalled();
	if (rc < 0) {
		error("out of memory naming the addresses of '%s'", path);
		return -1;
	}
	if (st.missing)
		warning("'%s': %zu of its %zu addresses without names stay MODULE+0xOFFSET: "
			"no binary and no kept symbol table for %zu mapping%s, such as %s; "
			"run 'recce symbolize' where the binary is",
			path, st.unnamed - st.named, st.unnamed, st.missing,
			st.missing == 1 ? "" : "s", st.missing_example);
	return (long)st.named;
}

int profile_view_say_failed(const char *cmd, const struct profile *p, const struct profile_view *v,
			    int err, const char *path, const char *value, const char *before_path)
{
	char types[512];

	switch (v->failed) {
	case VIEW_NO_TYPE:
		profile_view_types(p, types, sizeof(types));
		usage_die(cmd, "--value: '%s' has no sample type '%s' (it has: %s)", path, value,
			  p->nsample_types ? types : "none");
	case VIEW_NO_TIMELINE:
		error("'%s' has no sample timeline, which --format chrome needs: the order of its "
		      "samples is unknown",
		      path);
		note("record with 'recce record --timeline' to keep each sample's time and thread");
		break;
	case VIEW_MISMATCH:
		error("cannot compare '%s' with '%s': '%s' has no sample type '%s' in %s",
		      before_path, path, before_path, p->sample_types[v->type].type,
		      p->sample_types[v->type].unit);
		note("--diff compares profiles of the same kind (such as two CPU profiles)");
		break;
	case VIEW_EVENTS:
		error("cannot read the timeline of '%s': %s", path, strerror(-err));
		break;
	default:
		if (before_path)
			error("out of memory");
		else
			error("cannot read the stacks of '%s': %s", path, strerror(-err));
	}
	return RECCE_EXIT_ERROR;
}
