/*
 * Whole-or-absent output files (see outfile.h): write PATH.tmp, rename it
 * over PATH. fsync is left out on purpose: the guarantee wanted is that an
 * error never leaves a truncated file, not durability across a power cut.
 */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether path must be written in place: it exists and is a symbolic link
 * or not a regular file. Returns 1, 0, or -errno (-EISDIR). */
static int path_in_place(const char *path)
{
	struct stat st, lst;

	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (lstat(path, &lst) < 0)
		return -errno;
	return !S_ISREG(lst.st_mode);
}

static char *path_tmp(const char *path)
{
	size_t n = strlen(path);
	char *tmp = malloc(n + sizeof(".tmp"));

	if (tmp) {
		memcpy(tmp, path, n);
		memcpy(tmp + n, ".tmp", sizeof(".tmp"));
	}
	return tmp;
}

int outfile_check(const char *path)
{
	if (!path || !*path)
		return -EINVAL;
	int in_place = path_in_place(path);
	if (in_place < 0)
		return in_place;
	if (in_place)
		return access(path, W_OK) < 0 ? -errno : 0;

	char *tmp = path_tmp(path);
	if (!tmp)
		return -ENOMEM;
	int ret = 0;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	} else if (errno == EEXIST) {
		/* A temporary left by an earlier run: outfile_open() reuses it. */
		fd = open(tmp, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			ret = -errno;
		else
			close(fd);
	} else {
		ret = -errno;
	}
	free(tmp);
	return ret;
}

int outfile_open(struct outfile *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	if (!path || !*path)
		return -EINVAL;
	int in_place = path_in_place(path);
	if (in_place < 0)
		return in_place;
	o->path = strdup(path);
	o->tmp = in_place ? NULL : path_tmp(path);
	if (!o->path || (!in_place && !o->tmp)) {
		outfile_abort(o);
		return -ENOMEM;
	}
	int fd = open(in_place ? path : o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		int err = -errno;
		outfile_abort(o);
		return err;
	}
	o->fp = fdopen(fd, "w");
	if (!o->fp) {
		close(fd);
		outfile_abort(o);
		return -ENOMEM;
	}
	return 0;
}

static void outfile_release(struct outfile *o)
{
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
}

int outfile_commit(struct outfile *o)
{
	int err = 0;

	errno = 0;
	if (fflush(o->fp) != 0 || ferror(o->fp))
		err = errno ? -errno : -EIO;
	if (fclose(o->fp) != 0 && !err)
		err = errno ? -errno : -EIO;
	o->fp = NULL;
	if (!err && o->tmp && rename(o->tmp, o->path) < 0)
		err = -errno;
	if (err && o->tmp)
		unlink(o->tmp);
	outfile_release(o);
	return err;
}

void outfile_abort(struct outfile *o)
{
	if (o->fp)
		fclose(o->fp);
	if (o->tmp && o->fp)
		unlink(o->tmp);
	outfile_release(o);
}

int outfile_write(const char *path, int (*write)(FILE *fp, const void *arg), const void *arg)
{
	struct outfile o;
	int ret;

	if (!path) {
		ret = write(stdout, arg);
		if (fflush(stdout) != 0 && !ret)
			ret = -errno;
		return ret;
	}
	ret = outfile_open(&o, path);
	if (ret)
		return ret;
	ret = write(o.fp, arg);
	if (ret) {
		outfile_abort(&o);
		return ret;
	}
	return outfile_commit(&o);
}
