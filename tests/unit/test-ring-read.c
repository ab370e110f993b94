/*
 * Unit tests of ring-read.c's search for a process's event file: a file
 * the process maps but has not finished making (no magic yet) is not
 * there yet, so that a reader tries again rather than give the process
 * up; once the magic is written the file is read, and judged.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "events/ring-format.h"
#include "events/ring-read.h"

static void test_unfinished_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/recce-ring-read.XXXXXX", path[256], found[4096];
	struct ring_reader r;

	assert_non_null(mkdtemp(dir));
	/* The name librecce makes its file under before the rename. */
	snprintf(path, sizeof(path), "%s/recce-%d.events.Ab12Cd", dir, (int)getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 65536), 0);
	char *map = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(map != MAP_FAILED);

	assert_int_equal(ring_reader_open_pid(&r, getpid(), found, sizeof(found)), -ENOENT);

	memcpy(map + offsetof(struct recce_file_header, magic), RECCE_FILE_MAGIC,
	       sizeof(((struct recce_file_header *)0)->magic));
	/* Found and read now: a header with nothing else in it is bad. */
	assert_int_equal(ring_reader_open_pid(&r, getpid(), found, sizeof(found)), -EBADMSG);
	assert_string_equal(found, path);

	munmap(map, 65536);
	close(fd);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unfinished_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
