/*
 * Trace files: recce's binary format for `recce trace -o FILE`. A file is
 * a 64-byte header (magic "RECCETRC", format version, the minimum version a
 * reader must understand, the file's place in its set), then blocks of
 * records: a block header (its length, how many records, the sequence
 * number of the first, a CRC-32 of it all) and the records packed as
 * trace-pack.h says, each about 30 bytes. A block is written when 64 KiB
 * of records wait or when the writer is flushed, so a recce killed with
 * SIGKILL leaves every event up to its last flush, at worst the last
 * block torn, which the reader detects by its CRC and stops before.
 * Format 3 adds, after the header, the name of the host that wrote the
 * file and, once measured, how far its clock was from the machine it was
 * brought to (recce --node stamps the files it brings back), so files of
 * several hosts merge on one clock. Formats 1 (fixed 1 KiB records, each
 * with its own CRC) and 2 (blocks, no host) are read as well.
 *
 * Wrapping (--wrap SIZE,COUNT): the writer fills FILE.0, FILE.1, ... up to
 * FILE.(COUNT-1), each holding at most SIZE bytes, then starts over at
 * FILE.0, truncating it; the newest events are always kept, and the
 * sequence numbers tell the reader which are the oldest and newest.
 * Without wrapping, one file FILE grows without bound.
 *
 * Ownership: trace_writer_new() returns a heap object; trace_writer_close()
 * flushes and frees it.
 */
#ifndef RECCE_TRACE_FILE_H
#define RECCE_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace-event.h"

#define TRACE_FILE_MAGIC       "RECCETRC"
#define TRACE_FILE_VERSION     3
#define TRACE_FILE_MIN_VERSION 3
#define TRACE_HOST_MAX	       128 /* a host's name in a file, with its NUL */
#define TRACE_FILE_HEADER_SIZE 64
#define TRACE_FILE_MIN_WRAP    4096 /* the smallest file of a --wrap set */

struct trace_writer;

/*
 * Creates the file set. wrap_size 0 means one unbounded file at path;
 * otherwise wrap_count (>= 1) files named PATH.N of at most wrap_size bytes
 * each (at least TRACE_FILE_MIN_WRAP: else -EINVAL). Returns 0 and *out,
 * or -errno.
 */
int trace_writer_new(const char *path, uint64_t wrap_size, unsigned wrap_count, uint32_t pid,
		     struct trace_writer **out);

/* Appends r, setting its seq (and its crc to 0: blocks carry the CRCs).
 * Returns 0 or -errno (-ENOSPC...). */
int trace_writer_write(struct trace_writer *w, struct trace_record *r);

/* Writes out the records appended so far. Returns 0 or -errno. */
int trace_writer_flush(struct trace_writer *w);

/* Records written so far (including those overwritten by wrapping). */
uint64_t trace_writer_count(const struct trace_writer *w);

/* Of those, the ones the files still hold: the newest, all of them
 * without wrapping. */
uint64_t trace_writer_kept(const struct trace_writer *w);

/* Closes the current file and frees w. Returns 0 or the first write error. */
int trace_writer_close(struct trace_writer *w);

/* For a trace that never started: closes and removes the file it created
 * (holding only its header), and frees w. Only before the first write. */
void trace_writer_discard(struct trace_writer *w);

/* What a reader learnt about one file. */
struct trace_file_info {
	uint32_t version, pid, file_index, file_count;
	uint64_t records;	      /* valid records read */
	uint64_t first_seq, last_seq; /* oldest and newest valid record (0 if none) */
	int damaged;		      /* reading stopped before the end */
	uint64_t damage_offset;	      /* byte offset where it stopped */
	const char *damage;	      /* why, static text */
	char host[TRACE_HOST_MAX];    /* who wrote it; "" before format 3 */
	int clock_known;	      /* clock_offset_ns was measured */
	int64_t clock_offset_ns;      /* the host's clock minus the reader's machine's */
};

/*
 * Writes into a file of format 3 the host it came from and how far that
 * host's clock is ahead of this machine's (recce --node, bringing it
 * back). Returns 0, -EBADMSG for a file that is not one of format 3, or
 * -errno.
 */
int trace_file_stamp(const char *path, const char *host, int64_t clock_offset_ns);

/*
 * Reads path, calling fn for each valid record in file order, until the end
 * or the first damaged record (info->damaged says so and where). Returns 0,
 * or -errno for a file that cannot be read at all: -EBADMSG when it is not a
 * trace file, -EPROTONOSUPPORT when it needs a newer recce, -EISDIR for a
 * directory, -ENOTSUP for anything else that is not a regular file (a
 * FIFO, a device), which is never waited on. A non-zero
 * return from fn stops the read and is returned.
 */
int trace_file_read(const char *path, int (*fn)(const struct trace_record *r, void *ctx), void *ctx,
		    struct trace_file_info *info);

#endif
