/*
 * What the fuzz targets share: each defines LLVMFuzzerTestOneInput, the
 * libFuzzer entry point, and readers that want a path get the input as
 * a temporary file in /dev/shm.
 *
 * Built two ways: with libFuzzer (`make fuzz`, clang) to search, and with
 * replay.c's main (`make check`, under ASan and UBSan) to run every input
 * of the corpus once.
 */
#ifndef RECCE_FUZZ_H
#define RECCE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes data to a new file in /dev/shm (a real file: readers refuse
 * symlinks, such as a memfd's /proc/self/fd entry) and puts its path in
 * path[64]; returns its descriptor or -1. fuzz_file_done() removes it. */
static inline int fuzz_file(const uint8_t *data, size_t size, char path[64])
{
	snprintf(path, 64, "/dev/shm/recce-fuzz-XXXXXX");
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	for (size_t off = 0; off < size;) {
		ssize_t n = write(fd, data + off, size - off);
		if (n <= 0) {
			close(fd);
			unlink(path);
			return -1;
		}
		off += (size_t)n;
	}
	return fd;
}

static inline void fuzz_file_done(int fd, const char *path)
{
	close(fd);
	unlink(path);
}

#endif
