/*
 * The one table of librecce's errors, as libuv has: every error is a
 * negative errno value, and this table gives its name and a sentence
 * (not strerror(), whose words depend on the program's locale).
 */
#include <errno.h>

#include "recce.h"

static const struct {
	int err;
	const char *name;
	const char *text;
} errors[] = {
    {0, "OK", "success"},
    {EAGAIN, "EAGAIN", "not yet: no event has been written"},
    {EALREADY, "EALREADY", "the event file already exists"},
    {EACCES, "EACCES", "permission denied where the event file goes"},
    {EPERM, "EPERM", "operation not permitted"},
    {ENOENT, "ENOENT", "the directory for the event file does not exist"},
    {ENOSPC, "ENOSPC", "no space left for the event file"},
    {ENOMEM, "ENOMEM", "out of memory"},
    {EMFILE, "EMFILE", "too many open files"},
    {ENAMETOOLONG, "ENAMETOOLONG", "the event file's path is too long"},
    {EROFS, "EROFS", "the directory for the event file is read-only"},
    {EINVAL, "EINVAL", "invalid argument"},
};

static int find(int err)
{
	for (unsigned i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].err == -err)
			return (int)i;
	return -1;
}

const char *recce_strerror(int err)
{
	int i = find(err);
	return i < 0 ? "unknown error" : errors[i].text;
}

const char *recce_err_name(int err)
{
	int i = find(err);
	return i < 0 ? "UNKNOWN" : errors[i].name;
}
