/*
 * Trace file writing and reading (see trace-file.h). Records are written
 * with one write(2) each, unbuffered, so that a recce killed with SIGKILL
 * leaves every event it had handled on disk, at worst the last record
 * torn, which the reader detects by its CRC.
 */
#include "trace/trace-file.h"

#include "util/outfile.h"
#include "util/readall.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct file_header {
	char magic[8];
	uint16_t version, min_version;
	uint32_t record_size;
	uint32_t file_index, file_count;
	uint64_t wrap_size;
	uint64_t created_ns;
	uint32_t pid;
	uint32_t crc; /* of the bytes before it */
	uint8_t reserved[TRACE_FILE_HEADER_SIZE - 48];
};

_Static_assert(sizeof(struct file_header) == TRACE_FILE_HEADER_SIZE, "trace header size");

struct trace_writer {
	char *path;
	uint64_t wrap_size;
	unsigned wrap_count, index;
	uint32_t pid;
	int fd;
	uint64_t in_file, per_file; /* records in the current file, and its capacity */
	uint64_t seq;
	int err;
	/* Records not written yet: one write() for many (a --fast trace makes
	 * hundreds of thousands a second). */
	uint8_t *buf;
	size_t used;
};

#define WRITE_BUFFER (64u * TRACE_RECORD_SIZE)

/* Writes the buffered records out. */
static int flush(struct trace_writer *w)
{
	if (!w->used || w->err)
		return w->err;
	w->err = write_all(w->fd, w->buf, w->used);
	w->used = 0;
	return w->err;
}

static uint32_t crc_of(const void *p, size_t n)
{
	return (uint32_t)crc32(0L, p, (uInt)n);
}

/* Opens (truncating) the current file of the set and writes its header. */
static int open_current(struct trace_writer *w)
{
	char name[4096];
	struct file_header h;
	struct timespec ts;

	int err = flush(w);
	if (err)
		return err;
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	if (w->wrap_size) {
		if (snprintf(name, sizeof(name), "%s.%u", w->path, w->index) >= (int)sizeof(name))
			return -ENAMETOOLONG;
	} else {
		trace_copy_str(name, sizeof(name), w->path);
	}
	w->fd = outfile_open_now(name);
	if (w->fd < 0)
		return w->fd;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, TRACE_FILE_MAGIC, 8);
	h.version = TRACE_FILE_VERSION;
	h.min_version = TRACE_FILE_MIN_VERSION;
	h.record_size = TRACE_RECORD_SIZE;
	h.file_index = w->index;
	h.file_count = w->wrap_size ? w->wrap_count : 1;
	h.wrap_size = w->wrap_size;
	clock_gettime(CLOCK_REALTIME, &ts);
	h.created_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	h.pid = w->pid;
	h.crc = crc_of(&h, offsetof(struct file_header, crc));
	w->in_file = 0;
	return write_all(w->fd, &h, sizeof(h));
}

int trace_writer_new(const char *path, uint64_t wrap_size, unsigned wrap_count, uint32_t pid,
		     struct trace_writer **out)
{
	if (!path || !*path)
		return -EINVAL;
	if (wrap_size && (wrap_count < 1 || wrap_size < TRACE_FILE_HEADER_SIZE + TRACE_RECORD_SIZE))
		return -EINVAL;
	struct trace_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->path = strdup(path);
	w->buf = malloc(WRITE_BUFFER);
	w->fd = -1;
	w->wrap_size = wrap_size;
	w->wrap_count = wrap_count;
	w->pid = pid;
	w->per_file = wrap_size ? (wrap_size - TRACE_FILE_HEADER_SIZE) / TRACE_RECORD_SIZE : 0;
	int err = w->path && w->buf ? open_current(w) : -ENOMEM;
	if (err) {
		if (w->fd >= 0)
			close(w->fd);
		free(w->path);
		free(w->buf);
		free(w);
		return err;
	}
	*out = w;
	return 0;
}

int trace_writer_write(struct trace_writer *w, struct trace_record *r)
{
	if (w->err)
		return w->err;
	if (w->per_file && w->in_file >= w->per_file) {
		w->index = (w->index + 1) % w->wrap_count;
		w->err = open_current(w);
		if (w->err)
			return w->err;
	}
	r->seq = ++w->seq;
	r->crc = crc_of((const char *)r + sizeof(r->crc), sizeof(*r) - sizeof(r->crc));
	memcpy(w->buf + w->used, r, sizeof(*r));
	w->used += sizeof(*r);
	w->in_file++;
	return w->used == WRITE_BUFFER ? flush(w) : 0;
}

uint64_t trace_writer_count(const struct trace_writer *w)
{
	return w->seq;
}

uint64_t trace_writer_kept(const struct trace_writer *w)
{
	if (!w->per_file)
		return w->seq;
	/* The current file, and the others of the set, full, as far as
	 * they were written. */
	uint64_t full = (w->seq - w->in_file) / w->per_file;
	if (full > w->wrap_count - 1)
		full = w->wrap_count - 1;
	return w->in_file + full * w->per_file;
}

int trace_writer_close(struct trace_writer *w)
{
	if (!w)
		return 0;
	int err = w->fd >= 0 ? flush(w) : w->err;
	if (w->fd >= 0 && close(w->fd) < 0 && !err)
		err = -errno;
	free(w->path);
	free(w->buf);
	free(w);
	return err;
}

void trace_writer_discard(struct trace_writer *w)
{
	char name[4096];

	if (!w)
		return;
	if (w->seq == 0) {
		if (!w->wrap_size)
			unlink(w->path);
		else if (snprintf(name, sizeof(name), "%s.%u", w->path, w->index) <
			 (int)sizeof(name))
			unlink(name);
	}
	trace_writer_close(w);
}

/* Reads exactly n bytes; returns n, fewer at the end of the file, or -errno. */
static ssize_t read_full(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)p + got, n - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int trace_file_read(const char *path, int (*fn)(const struct trace_record *r, void *ctx), void *ctx,
		    struct trace_file_info *info)
{
	struct file_header h;
	struct trace_record r;
	int err = 0;

	memset(info, 0, sizeof(*info));
	/* Non-blocking: a FIFO named by mistake must not wait for a writer. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -ENOTSUP;
		goto out_close;
	}
	ssize_t n = read_full(fd, &h, sizeof(h));
	if (n < 0) {
		err = (int)n;
		goto out_close;
	}
	if ((size_t)n < sizeof(h) || memcmp(h.magic, TRACE_FILE_MAGIC, 8) != 0 ||
	    h.crc != crc_of(&h, offsetof(struct file_header, crc))) {
		err = -EBADMSG;
		goto out_close;
	}
	info->version = h.version;
	if (h.min_version > TRACE_FILE_VERSION) {
		err = -EPROTONOSUPPORT;
		goto out_close;
	}
	/* A later version may make records longer; this reader reads the
	 * prefix it knows and skips the rest. */
	if (h.record_size < TRACE_RECORD_SIZE || h.record_size > (1u << 20)) {
		err = -EBADMSG;
		goto out_close;
	}
	info->pid = h.pid;
	info->file_index = h.file_index;
	info->file_count = h.file_count;
	uint64_t offset = sizeof(h), prev_seq = 0;
	for (;;) {
		n = read_full(fd, &r, sizeof(r));
		if (n < 0) {
			err = (int)n;
			break;
		}
		if (n == 0)
			break;
		const char *why = NULL;
		if ((size_t)n < sizeof(r))
			why = "the file is truncated in the middle of a record";
		else if (r.crc !=
			 crc_of((const char *)&r + sizeof(r.crc), sizeof(r) - sizeof(r.crc)))
			why = "a record fails its checksum";
		else if (r.seq <= prev_seq || (r.kind != TRACE_CALL && r.kind != TRACE_RETURN) ||
			 r.nargs > TRACE_MAX_ARGS)
			why = "a record is out of sequence or malformed";
		if (why) {
			info->damaged = 1;
			info->damage_offset = offset;
			info->damage = why;
			break;
		}
		if (h.record_size > sizeof(r) &&
		    lseek(fd, (off_t)(h.record_size - sizeof(r)), SEEK_CUR) < 0) {
			err = -errno;
			break;
		}
		/* Strings are NUL-terminated by the writer; make sure of it. */
		r.function[sizeof(r.function) - 1] = 0;
		r.caller[sizeof(r.caller) - 1] = 0;
		for (int i = 0; i < TRACE_MAX_ARGS; i++) {
			r.args[i].name[sizeof(r.args[i].name) - 1] = 0;
			r.args[i].str[sizeof(r.args[i].str) - 1] = 0;
		}
		offset += h.record_size;
		prev_seq = r.seq;
		if (!info->records)
			info->first_seq = r.seq;
		info->last_seq = r.seq;
		info->records++;
		int rc = fn(&r, ctx);
		if (rc) {
			err = rc;
			break;
		}
	}
out_close:
	close(fd);
	return err;
}
