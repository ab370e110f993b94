/*
 * Output files that are whole or absent, and that nobody else can steer:
 * every file recce writes (profiles, flamegraphs, folded stacks) is
 * written to a new file beside PATH (PATH.XXXXXX, created with O_EXCL, so
 * neither a file nor a symbolic link another user planted there is ever
 * opened), synced, and renamed over PATH when complete, so a failure (a
 * full disk, a signal) never leaves half a file under the name the user
 * asked for. outfile_check() lets a subcommand refuse an unwritable path
 * before it starts work that would be lost.
 *
 * A PATH that exists and is not a plain regular file (a FIFO, a device
 * such as /dev/null or /dev/full) is written in place instead: renaming
 * over it would replace the device node. So is a symbolic link the caller
 * or root owns (/dev/stdout); one that another user owns is refused with
 * -ELOOP, as the kernel's protected_symlinks would (recce, often run as
 * root, must not be made to overwrite what a link points at).
 *
 * Ownership: outfile_open() fills a caller-allocated struct outfile; exactly
 * one of outfile_commit() and outfile_abort() releases it.
 */
#ifndef RECCE_OUTFILE_H
#define RECCE_OUTFILE_H

#include <stdio.h>

struct outfile {
	FILE *fp;   /* write here */
	char *path; /* the final name (a copy) */
	char *tmp;  /* PATH.XXXXXX, or NULL when written in place */
};

/* Returns 0 if path can be written by outfile_open(), else -errno:
 * -EISDIR for a directory, -ELOOP for a symbolic link another user owns,
 * -EACCES, -EROFS, -ENOENT for a missing directory, -EINVAL for an empty
 * path. Creates and removes a file beside it to find out. */
int outfile_check(const char *path);

/* Opens path for writing (see above). Returns 0 or -errno. */
int outfile_open(struct outfile *o, const char *path);

/* Flushes and closes the file and renames it into place. On any failure the
 * temporary is removed and PATH is left as it was. Returns 0 or -errno
 * (-ENOSPC, -EIO, ...). Releases o either way. */
int outfile_commit(struct outfile *o);

/* Closes and removes the temporary; PATH is left as it was. Releases o. */
void outfile_abort(struct outfile *o);

/* Runs write(fp, arg) on path as above (whole or not at all), or on
 * standard output when path is NULL, and flushes. Returns 0, write's
 * negative return, or -errno. */
int outfile_write(const char *path, int (*write)(FILE *fp, const void *arg), const void *arg);

/* Whether err is a failure of the disk or filesystem that writing the same
 * bytes to another one may avoid (-ENOSPC, -EDQUOT, -EFBIG, -EIO, -EROFS). */
int outfile_disk_error(int err);

/* After outfile_write(path, ...) failed with a disk error: writes the same
 * to a new private directory (mode 0700, recce-XXXXXX) under $TMPDIR,
 * /var/tmp, /tmp or /dev/shm, the first where it succeeds, keeping
 * path's file name, and puts the new path in where (cap bytes). Returns
 * 0 or the last -errno. */
int outfile_write_elsewhere(const char *path, int (*write)(FILE *fp, const void *arg),
			    const void *arg, char *where, size_t cap);

/* For a file written as it goes (a trace file): opens path for writing at
 * once. An absent path or a regular file is replaced by a new file made
 * beside it (as above) and renamed into place before any byte is
 * written, so it is the caller's, with its umask, whoever made the old
 * one; a device, a FIFO or a trusted link is opened in place; another
 * user's link is refused (-ELOOP). Returns a descriptor or -errno. */
int outfile_open_now(const char *path);

/* Whether path is a symbolic link recce may follow: 0 when it is no link
 * (or does not exist), 1 for a link the caller or root owns, -ELOOP for
 * one another user owns, or another -errno. */
int outfile_link_trusted(const char *path);

#endif
