/*
 * Output files that are whole or absent: every file recce writes (profiles,
 * flamegraphs, folded stacks) is written to PATH.tmp and renamed over PATH
 * when complete, so a failure (a full disk, a signal) never leaves half a
 * file under the name the user asked for. outfile_check() lets a subcommand
 * refuse an unwritable path before it starts work that would be lost.
 *
 * A PATH that exists and is not a plain regular file (a symbolic link, a
 * FIFO, a device such as /dev/stdout or /dev/full) is written in place
 * instead: renaming over it would replace the link or the device node.
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
	char *tmp;  /* PATH.tmp, or NULL when written in place */
};

/* Returns 0 if path can be written by outfile_open(), else -errno:
 * -EISDIR for a directory, -EACCES, -EROFS, -ENOENT for a missing directory,
 * -EINVAL for an empty path. Creates and removes PATH.tmp to find out. */
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

#endif
