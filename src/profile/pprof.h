/*
 * pprof files: encodes a struct profile into pprof's profile.proto
 * (protobuf-c, then gzip) and decodes any pprof file back into one, ours or
 * a foreign program's (Go's runtime/pprof, for example).
 *
 * Encoding: the string table is built from the profile's strings, entry 0
 * is "". Ids are written as they are in the model (dense, 1-based).
 * default_sample_type is written as the name of the default type, as the
 * format wants. A string label with an empty value reads back as the number
 * 0, since pprof tells a string label from a numeric one by str != 0.
 *
 * Decoding treats the file as untrusted: every string index, every id that
 * one message uses to name another (location -> mapping, line -> function,
 * sample -> location) and the count of values of each sample are checked,
 * and a file that fails any check is refused as a whole with -EBADMSG and a
 * one-line reason. Ids are renumbered densely in file order (foreign files
 * may use any non-zero ids); functions equal in name, system name and file
 * are merged. When the file names no default sample type the last one is
 * the default, as pprof's documentation says. Fields the model has no room
 * for (line columns, doc_url, is_folded) are dropped.
 *
 * Errors are negative errno values. Functions that take why/whylen write a
 * reason there for -EBADMSG ("truncated gzip stream", "sample 3 names
 * location 99, which does not exist"); why may be NULL.
 */
#ifndef RECCE_PPROF_H
#define RECCE_PPROF_H

#include <stddef.h>

#include "profile/profile.h"

/*
 * recce's sample timeline (timeline.h), when a profile has one, is written
 * as bytes in this field number of the Profile message, which
 * profile.proto leaves undefined: pprof readers skip fields they do not
 * know (Go's pprof does, by design of protobuf), so the file stays a valid
 * profile for them, with the same totals. The decoder checks it against
 * the samples and refuses a file whose timeline is malformed.
 */
#define PPROF_TIMELINE_FIELD 1001

/* Files larger than this, compressed or not, are refused with -EFBIG. */
#define PPROF_MAX_BYTES ((size_t)1 << 30)

/* The most of each element a file may hold; one with more is refused
 * (-EBADMSG, with a message that says which) before any is decoded. A
 * profile recce records aggregates its samples by stack and stays far
 * below these. */
#define PPROF_MAX_SAMPLES      ((size_t)1 << 22)
#define PPROF_MAX_LOCATIONS    ((size_t)1 << 22)
#define PPROF_MAX_FUNCTIONS    ((size_t)1 << 21)
#define PPROF_MAX_MAPPINGS     ((size_t)1 << 16)
#define PPROF_MAX_STRINGS      ((size_t)1 << 23)
#define PPROF_MAX_SAMPLE_TYPES ((size_t)1024)
#define PPROF_MAX_COMMENTS     ((size_t)1 << 16)

/*
 * Encodes p into a heap buffer the caller frees with free(): gzip
 * compressed when gzip is non-zero, else the raw protobuf message.
 * Returns 0, -ENOMEM, or -EINVAL when p breaks its invariants (an id out
 * of range).
 */
int pprof_encode(const struct profile *p, int gzip, void **buf, size_t *len);

/*
 * Writes p gzip-compressed to path, whole or not at all (see outfile.h):
 * on failure path is left as it was. Returns 0 or -errno (-ENOSPC, -EACCES,
 * -EISDIR, -ENOMEM, ...).
 */
int pprof_write_file(const struct profile *p, const char *path);

/* As pprof_write_file(), but a profile that a full or failing disk keeps
 * from path is written to a private directory elsewhere instead (see
 * outfile_write_elsewhere()), named in where (cap bytes; "" when it could
 * not be kept). Returns path's result: 0, or why path failed. */
int pprof_write_file_or_elsewhere(const struct profile *p, const char *path, char *where,
				  size_t cap);

/*
 * Returns 0 if pprof_write_file() can write path, else the -errno it would
 * fail with. Call it before recording, so that an unwritable path is
 * refused before any work. Same as outfile_check().
 */
int pprof_check_writable(const char *path);

/*
 * Decodes a pprof message, gzip compressed (detected by its magic bytes)
 * or raw, into a new profile in *out, which the caller frees with
 * profile_free(). Returns 0, -EBADMSG (reason in why), -EFBIG, -ENOMEM.
 */
int pprof_decode(const void *buf, size_t len, struct profile **out, char *why, size_t whylen);

/*
 * Reads and decodes the file at path. Returns 0 and *out, or -errno:
 * -ENOENT, -EACCES, -EISDIR from opening it, -EBADMSG (reason in why) for
 * a file that is not a valid pprof profile (an empty file included).
 */
int pprof_read_file(const char *path, struct profile **out, char *why, size_t whylen);

#endif
