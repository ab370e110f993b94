/*
 * Whole-descriptor I/O: reading a file descriptor (a regular file, a pipe,
 * a /proc file whose size reads as zero) into one heap buffer, with a cap
 * on its size, and writing a buffer out in full.
 */
#ifndef RECCE_READALL_H
#define RECCE_READALL_H

#include <stddef.h>

/* Reads fd to its end into a new buffer (*out, freed by the caller) of
 * *len bytes followed by a NUL. Returns 0, -EISDIR, -EFBIG past max
 * bytes, -ENOMEM or the read's -errno. */
int read_all(int fd, size_t max, char **out, size_t *len);

/* As read_all(), but when a read fails part way (a connection reset
 * after its peer's answer, say) the bytes read before it are kept in
 * *out and *len, NUL-terminated, and the read's -errno is returned; the
 * caller frees *out then too. */
int read_all_kept(int fd, size_t max, char **out, size_t *len);

/* Writes all n bytes of p to fd, through short writes and EINTR.
 * Returns 0, the write's -errno, or -EIO when it writes nothing. */
int write_all(int fd, const void *p, size_t n);

/* As write_all(), to a socket, without SIGPIPE: a peer that closed gives
 * -EPIPE whatever the process does with the signal. */
int send_all(int fd, const void *p, size_t n);

#endif
