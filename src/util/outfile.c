/*
 * Whole-or-absent output files (see outfile.h): write a new PATH.XXXXXX
 * made with O_EXCL, fsync it, rename it over PATH.
 */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/path.h"

int outfile_link_trusted(const char *path)
{
	struct stat lst;

	if (lstat(path, &lst) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISLNK(lst.st_mode))
		return 0;
	/* Like the kernel's protected_symlinks, whatever its setting: a link
	 * someone else planted is not followed. */
	if (lst.st_uid != geteuid() && lst.st_uid != 0)
		return -ELOOP;
	return 1;
}

/* Whether path must be written in place: it exists and is not a regular
 * file (a device, a FIFO), or is a trusted link. Returns 1, 0, or -errno
 * (-EISDIR, -ELOOP for a link someone else owns). */
static int path_in_place(const char *path)
{
	struct stat st;
	int link = outfile_link_trusted(path);

	if (link < 0)
		return link;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? link : -errno; /* a link to a new file: in place */
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	return link || !S_ISREG(st.st_mode);
}

/* Creates a new file beside path, PATH.XXXXXX with a random suffix, that
 * nobody else can have made or linked: O_CREAT|O_EXCL (which also refuses
 * a symbolic link), the caller's umask on mode 0666. Sets *tmp (the
 * caller frees it) and returns the descriptor, or -errno. */
static int create_beside(const char *path, char **tmp)
{
	static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	size_t n = strlen(path);
	char *name = malloc(n + 8);

	*tmp = NULL;
	if (!name)
		return -ENOMEM;
	for (int attempt = 0; attempt < 100; attempt++) {
		uint64_t r = 0;
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint64_t)getpid() * 2654435761u + (uint64_t)attempt;
		memcpy(name, path, n);
		name[n] = '.';
		for (int i = 0; i < 6; i++, r /= 36)
			name[n + 1 + i] = digits[r % 36];
		name[n + 7] = 0;
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0) {
			*tmp = name;
			return fd;
		}
		if (errno != EEXIST) {
			int err = -errno;
			free(name);
			return err;
		}
	}
	free(name);
	return -EEXIST;
}

int outfile_check(const char *path)
{
	if (!path || !*path)
		return -EINVAL;
	int in_place = path_in_place(path);
	if (in_place < 0)
		return in_place;
	if (in_place) {
		/* A link of the caller's to a file still to be made: open()
		 * will make it. */
		if (access(path, W_OK) < 0 && (errno != ENOENT || outfile_link_trusted(path) != 1))
			return -errno;
		return 0;
	}
	char *tmp;
	int fd = create_beside(path, &tmp);
	if (fd < 0)
		return fd;
	close(fd);
	unlink(tmp);
	free(tmp);
	return 0;
}

int outfile_open_now(const char *path)
{
	int in_place = path && *path ? path_in_place(path) : -EINVAL;

	if (in_place < 0)
		return in_place;
	if (in_place) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		return fd < 0 ? -errno : fd;
	}
	char *tmp;
	int fd = create_beside(path, &tmp);
	if (fd < 0)
		return fd;
	if (rename(tmp, path) < 0) {
		int err = -errno;
		close(fd);
		unlink(tmp);
		free(tmp);
		return err;
	}
	free(tmp);
	return fd;
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
	if (!o->path) {
		outfile_abort(o);
		return -ENOMEM;
	}
	int fd = in_place ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)
			  : create_beside(path, &o->tmp);
	if (fd < 0) {
		int err = in_place ? -errno : fd;
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
	/* On disk before the rename: a crash leaves the old file or the new
	 * one, never an empty one under the name. */
	if (!err && o->tmp && fsync(fileno(o->fp)) != 0)
		err = -errno;
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

/* Why writing to fp (a file about to be removed) failed, when a writer
 * could only say -EIO: writing one more byte fails for the same reason
 * (-ENOSPC for a full disk, -EDQUOT, -EFBIG). */
static int stream_errno(FILE *fp)
{
	clearerr(fp);
	errno = 0;
	if ((fputc(0, fp) == EOF || fflush(fp) != 0) && errno)
		return -errno;
	return -EIO;
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
	if (ret == -EIO && ferror(o.fp))
		ret = stream_errno(o.fp);
	if (ret) {
		outfile_abort(&o);
		return ret;
	}
	return outfile_commit(&o);
}

int outfile_disk_error(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -EFBIG || err == -EIO || err == -EROFS;
}

int outfile_write_elsewhere(const char *path, int (*write)(FILE *fp, const void *arg),
			    const void *arg, char *where, size_t cap)
{
	const char *dirs[] = {getenv("TMPDIR"), "/var/tmp", "/tmp", "/dev/shm"};
	const char *name = path_base(path); /* path itself when it ends in '/' */
	int err = -ENOENT;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char dir[4096];
		if (!dirs[i] || dirs[i][0] != '/' ||
		    (size_t)snprintf(dir, sizeof(dir), "%s/recce-XXXXXX", dirs[i]) >= sizeof(dir))
			continue;
		/* A directory only recce's user can enter: no name in it can
		 * have been planted by anyone else. */
		if (!mkdtemp(dir)) {
			err = -errno;
			continue;
		}
		if ((size_t)snprintf(where, cap, "%s/%s", dir,
				     *name && !strchr(name, '/') ? name : "recce.out") >= cap) {
			rmdir(dir);
			return -ENAMETOOLONG;
		}
		err = outfile_write(where, write, arg);
		if (!err)
			return 0;
		rmdir(dir);
	}
	return err;
}
