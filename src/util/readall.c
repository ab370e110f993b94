/*
 * Whole-descriptor reads and writes (see readall.h). A regular file's size sizes
 * the buffer at once; anything else grows it by doubling.
 */
#include "util/readall.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int read_all_kept(int fd, size_t max, char **out, size_t *len)
{
	struct stat st;
	size_t cap = 65536, used = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max)
		return -EFBIG;
	if (S_ISREG(st.st_mode) && st.st_size > 0)
		cap = (size_t)st.st_size + 1;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (used + 1 >= cap) {
			char *nb = cap > max ? NULL : realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return cap > max ? -EFBIG : -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + used, cap - used - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;
			buf[used] = '\0';
			*out = buf;
			*len = used;
			return err;
		}
		if (r == 0)
			break;
		used += (size_t)r;
	}
	if (used > max) {
		free(buf);
		return -EFBIG;
	}
	buf[used] = '\0';
	*out = buf;
	*len = used;
	return 0;
}

int read_all(int fd, size_t max, char **out, size_t *len)
{
	char *buf = NULL;
	size_t used = 0;
	int err = read_all_kept(fd, max, &buf, &used);

	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = used;
	return 0;
}

/* Writes all n bytes, by send() on a socket without SIGPIPE or by
 * write(). */
static int put_all(int fd, const void *p, size_t n, int sock)
{
	const char *c = p;

	while (n) {
		ssize_t w = sock ? send(fd, c, n, MSG_NOSIGNAL) : write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int send_all(int fd, const void *p, size_t n)
{
	return put_all(fd, p, n, 1);
}

int write_all(int fd, const void *p, size_t n)
{
	return put_all(fd, p, n, 0);
}
