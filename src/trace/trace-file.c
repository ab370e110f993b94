/*
 * Trace file writing and reading (see trace-file.h): the file header,
 * blocks of packed records with their CRCs, the files of a --wrap set,
 * and the reader of both formats, which stops at the first record or
 * block it cannot trust.
 */
#include "trace/trace-file.h"

#include "trace/trace-pack.h"

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

/* Format 3 puts this after the header: where the file was written and,
 * once measured, how far that machine's clock was from the reader's. */
#define META_MAGIC 0x54534852u /* "RHST" as the file holds it */
struct file_meta {
	uint32_t magic;
	uint32_t flags;		 /* TRACE_META_* */
	int64_t clock_offset_ns; /* with TRACE_META_CLOCK: its clock minus ours */
	char host[TRACE_HOST_MAX];
	uint32_t pad;
	uint32_t crc; /* of the bytes before it */
};

#define TRACE_META_CLOCK 1u

_Static_assert(sizeof(struct file_meta) == 152, "trace meta size");

/* Format 2's records come in blocks: this header, then `bytes` bytes of
 * `count` packed records numbered from first_seq. The CRC covers the
 * header's bytes before it and the records. */
struct block_header {
	uint32_t magic;
	uint32_t bytes;
	uint64_t first_seq;
	uint32_t count;
	uint32_t crc;
};

_Static_assert(sizeof(struct block_header) == 24, "trace block header size");

#define BLOCK_MAGIC 0x4b4c4252u /* "RBLK" */
/* A block is written once this many bytes of records are waiting, or
 * when the writer is flushed (recce has read every event there was). */
#define BLOCK_BYTES (64u * 1024)
#define BLOCK_MAX   (BLOCK_BYTES + TRACE_PACK_MAX)

_Static_assert(TRACE_FILE_MIN_WRAP >=
		   TRACE_FILE_HEADER_SIZE + sizeof(struct block_header) + TRACE_PACK_MAX,
	       "a file of the smallest --wrap holds a record");

struct trace_writer {
	char *path;
	uint64_t wrap_size;
	unsigned wrap_count, index;
	uint32_t pid;
	int fd;
	uint64_t file_bytes; /* written to the current file */
	uint64_t *in_file;   /* records in each file of the set (one without wrapping) */
	uint64_t seq;
	int err;
	struct trace_pack pack; /* the current file's */
	/* The block being filled: its header's room, then its records. */
	uint8_t *buf;
	size_t used;
	uint32_t count;
};

/* Writes out the block being filled. */
static int flush(struct trace_writer *w)
{
	if (!w->count || w->err)
		return w->err;
	struct block_header b = {BLOCK_MAGIC, (uint32_t)w->used, w->seq - w->count + 1, w->count,
				 0};
	uint32_t crc = (uint32_t)crc32(0L, (const Bytef *)&b, offsetof(struct block_header, crc));
	b.crc = (uint32_t)crc32(crc, w->buf + sizeof(b), (uInt)w->used);
	memcpy(w->buf, &b, sizeof(b));
	w->err = write_all(w->fd, w->buf, sizeof(b) + w->used);
	w->file_bytes += sizeof(b) + w->used;
	w->used = 0;
	w->count = 0;
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
	h.record_size = 0; /* packed records, in blocks */
	h.file_index = w->index;
	h.file_count = w->wrap_size ? w->wrap_count : 1;
	h.wrap_size = w->wrap_size;
	clock_gettime(CLOCK_REALTIME, &ts);
	h.created_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	h.pid = w->pid;
	h.crc = crc_of(&h, offsetof(struct file_header, crc));
	struct file_meta m;
	memset(&m, 0, sizeof(m));
	m.magic = META_MAGIC;
	if (gethostname(m.host, sizeof(m.host) - 1) < 0)
		m.host[0] = '\0';
	m.crc = crc_of(&m, offsetof(struct file_meta, crc));
	w->in_file[w->index] = 0;
	w->file_bytes = sizeof(h) + sizeof(m);
	/* Each file is read from its start on its own. */
	trace_pack_release(&w->pack);
	trace_pack_init(&w->pack);
	err = write_all(w->fd, &h, sizeof(h));
	return err ? err : write_all(w->fd, &m, sizeof(m));
}

int trace_writer_new(const char *path, uint64_t wrap_size, unsigned wrap_count, uint32_t pid,
		     struct trace_writer **out)
{
	if (!path || !*path)
		return -EINVAL;
	if (wrap_size && (wrap_count < 1 || wrap_size < TRACE_FILE_MIN_WRAP))
		return -EINVAL;
	struct trace_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->path = strdup(path);
	w->buf = malloc(sizeof(struct block_header) + BLOCK_MAX);
	w->in_file = calloc(wrap_size ? wrap_count : 1, sizeof(*w->in_file));
	w->fd = -1;
	w->wrap_size = wrap_size;
	w->wrap_count = wrap_count;
	w->pid = pid;
	trace_pack_init(&w->pack);
	int err = w->path && w->buf && w->in_file ? open_current(w) : -ENOMEM;
	if (err) {
		if (w->fd >= 0)
			close(w->fd);
		trace_pack_release(&w->pack);
		free(w->path);
		free(w->buf);
		free(w->in_file);
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
	r->seq = w->seq + 1;
	r->crc = 0;
	uint8_t *at = w->buf + sizeof(struct block_header) + w->used;
	int n = trace_pack_put(&w->pack, r, at);
	/* Past the file's size: the record starts the next file of the set,
	 * packed again for it. */
	if (n >= 0 && w->wrap_size &&
	    w->file_bytes + sizeof(struct block_header) + w->used + (size_t)n > w->wrap_size) {
		w->index = (w->index + 1) % w->wrap_count;
		w->err = open_current(w);
		if (w->err)
			return w->err;
		at = w->buf + sizeof(struct block_header);
		n = trace_pack_put(&w->pack, r, at);
	}
	if (n < 0)
		return w->err = n;
	w->used += (size_t)n;
	w->count++;
	w->seq++;
	w->in_file[w->index]++;
	/* Room is left for the longest record after fewer than BLOCK_BYTES. */
	return w->used >= BLOCK_BYTES ? flush(w) : 0;
}

int trace_writer_flush(struct trace_writer *w)
{
	return flush(w);
}

uint64_t trace_writer_count(const struct trace_writer *w)
{
	return w->seq;
}

uint64_t trace_writer_kept(const struct trace_writer *w)
{
	uint64_t kept = 0;

	for (unsigned i = 0; i < (w->wrap_size ? w->wrap_count : 1); i++)
		kept += w->in_file[i];
	return kept;
}

int trace_writer_close(struct trace_writer *w)
{
	if (!w)
		return 0;
	int err = w->fd >= 0 ? flush(w) : w->err;
	if (w->fd >= 0 && close(w->fd) < 0 && !err)
		err = -errno;
	trace_pack_release(&w->pack);
	free(w->path);
	free(w->buf);
	free(w->in_file);
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

/* Marks where and why reading stopped. */
static void damaged(struct trace_file_info *info, uint64_t offset, const char *why)
{
	info->damaged = 1;
	info->damage_offset = offset;
	info->damage = why;
}

/* Counts one valid record read and hands it on. */
static int deliver(struct trace_record *r, int (*fn)(const struct trace_record *r, void *ctx),
		   void *ctx, struct trace_file_info *info)
{
	if (!info->records)
		info->first_seq = r->seq;
	info->last_seq = r->seq;
	info->records++;
	return fn(r, ctx);
}

/* Format 1: fixed records of record_size bytes, each with its CRC. */
static int read_fixed(int fd, uint32_t record_size,
		      int (*fn)(const struct trace_record *r, void *ctx), void *ctx,
		      struct trace_file_info *info)
{
	struct trace_record r;
	uint64_t offset = TRACE_FILE_HEADER_SIZE, prev_seq = 0;

	/* A later version may make records longer; this reader reads the
	 * prefix it knows and skips the rest. */
	if (record_size < TRACE_RECORD_SIZE || record_size > (1u << 20))
		return -EBADMSG;
	for (;;) {
		ssize_t n = read_full(fd, &r, sizeof(r));
		if (n <= 0)
			return (int)n;
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
			damaged(info, offset, why);
			return 0;
		}
		if (record_size > sizeof(r) &&
		    lseek(fd, (off_t)(record_size - sizeof(r)), SEEK_CUR) < 0)
			return -errno;
		/* Strings are NUL-terminated by the writer; make sure of it. */
		r.function[sizeof(r.function) - 1] = 0;
		r.caller[sizeof(r.caller) - 1] = 0;
		r.ret_text[sizeof(r.ret_text) - 1] = 0;
		for (int i = 0; i < TRACE_MAX_ARGS; i++) {
			r.args[i].name[sizeof(r.args[i].name) - 1] = 0;
			r.args[i].str[sizeof(r.args[i].str) - 1] = 0;
		}
		offset += record_size;
		prev_seq = r.seq;
		int rc = deliver(&r, fn, ctx, info);
		if (rc)
			return rc;
	}
}

/* The records of one block of format 2, checked and unpacked: 0, or why
 * they cannot be trusted. */
static const char *read_block(struct trace_pack *pack, const struct block_header *b,
			      const uint8_t *buf, uint64_t prev_seq,
			      int (*fn)(const struct trace_record *r, void *ctx), void *ctx,
			      struct trace_file_info *info, int *rc)
{
	uint32_t crc = crc_of(b, offsetof(struct block_header, crc));
	struct trace_record r;

	if ((uint32_t)crc32(crc, buf, b->bytes) != b->crc)
		return "a block of records fails its checksum";
	if (b->first_seq <= prev_seq || b->first_seq > UINT64_MAX - b->count)
		return "a block of records is out of sequence";
	const uint8_t *at = buf, *end = buf + b->bytes;
	for (uint32_t i = 0; i < b->count; i++) {
		int err = trace_pack_get(pack, &at, end, &r);
		if (err == -ENOMEM) {
			*rc = err;
			return NULL;
		}
		if (err)
			return "a record is malformed";
		r.seq = b->first_seq + i;
		*rc = deliver(&r, fn, ctx, info);
		if (*rc)
			return NULL;
	}
	return at == end ? NULL : "a block of records is malformed";
}

/* Format 2: blocks of packed records. */
static int read_blocks(int fd, uint64_t offset, int (*fn)(const struct trace_record *r, void *ctx),
		       void *ctx, struct trace_file_info *info)
{
	struct trace_pack pack;
	struct block_header b;
	uint64_t prev_seq = 0;
	uint8_t *buf = malloc(BLOCK_MAX);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	trace_pack_init(&pack);
	for (;;) {
		ssize_t n = read_full(fd, &b, sizeof(b));
		if (n <= 0) {
			rc = (int)n;
			break;
		}
		const char *why = NULL;
		if ((size_t)n < sizeof(b))
			why = "the file is truncated in the middle of a block of records";
		else if (b.magic != BLOCK_MAGIC || b.bytes > BLOCK_MAX || b.count == 0 ||
			 b.count > b.bytes)
			why = "a block of records is malformed";
		if (!why) {
			n = read_full(fd, buf, b.bytes);
			if (n < 0) {
				rc = (int)n;
				break;
			}
			if ((size_t)n < b.bytes)
				why = "the file is truncated in the middle of a block of records";
		}
		if (!why)
			why = read_block(&pack, &b, buf, prev_seq, fn, ctx, info, &rc);
		if (why)
			damaged(info, offset, why);
		if (why || rc)
			break;
		offset += sizeof(b) + b.bytes;
		prev_seq = b.first_seq + b.count - 1;
	}
	trace_pack_release(&pack);
	free(buf);
	return rc;
}

int trace_file_stamp(const char *path, const char *host, int64_t clock_offset_ns)
{
	struct file_header h;
	struct file_meta m;
	int err = 0;
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		err = -ENOTSUP;
		goto out_close;
	}
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, TRACE_FILE_MAGIC, 8) != 0 ||
	    h.crc != crc_of(&h, offsetof(struct file_header, crc)) || h.version < 3 ||
	    pread(fd, &m, sizeof(m), sizeof(h)) != (ssize_t)sizeof(m) || m.magic != META_MAGIC) {
		err = -EBADMSG;
		goto out_close;
	}
	memset(m.host, 0, sizeof(m.host));
	trace_copy_str(m.host, sizeof(m.host), host);
	m.flags |= TRACE_META_CLOCK;
	m.clock_offset_ns = clock_offset_ns;
	m.crc = crc_of(&m, offsetof(struct file_meta, crc));
	if (pwrite(fd, &m, sizeof(m), sizeof(h)) != (ssize_t)sizeof(m))
		err = errno ? -errno : -EIO;
out_close:
	close(fd);
	return err;
}

int trace_file_read(const char *path, int (*fn)(const struct trace_record *r, void *ctx), void *ctx,
		    struct trace_file_info *info)
{
	struct file_header h;
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
	info->pid = h.pid;
	info->file_index = h.file_index;
	info->file_count = h.file_count;
	uint64_t start = TRACE_FILE_HEADER_SIZE;
	if (h.version >= 3) {
		struct file_meta m;
		n = read_full(fd, &m, sizeof(m));
		if (n < 0) {
			err = (int)n;
			goto out_close;
		}
		if ((size_t)n < sizeof(m) || m.magic != META_MAGIC ||
		    m.crc != crc_of(&m, offsetof(struct file_meta, crc))) {
			err = -EBADMSG;
			goto out_close;
		}
		memcpy(info->host, m.host, sizeof(info->host));
		info->host[sizeof(info->host) - 1] = '\0';
		info->clock_known = (m.flags & TRACE_META_CLOCK) != 0;
		info->clock_offset_ns = info->clock_known ? m.clock_offset_ns : 0;
		start += sizeof(m);
	}
	/* Version 1 wrote fixed records; later ones say 0 and write blocks. */
	err = h.min_version < 2 && h.record_size ? read_fixed(fd, h.record_size, fn, ctx, info)
						 : read_blocks(fd, start, fn, ctx, info);
out_close:
	close(fd);
	return err;
}
