/*
 * Unit tests of whole-descriptor reads: a regular file and a pipe come
 * back whole and NUL-terminated, a /proc file (size zero) is read to its
 * end, a file over the cap is refused with -EFBIG, a directory with
 * -EISDIR; numbers read after a key of a status file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "util/lines.h"
#include "util/readall.h"

static void test_regular_and_cap(void **state)
{
	char path[] = "/tmp/recce-test-readall-XXXXXX";
	int fd = mkstemp(path);
	char *buf = NULL;
	size_t len = 0;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello, world", 12), 12);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(read_all(fd, 100, &buf, &len), 0);
	assert_int_equal(len, 12);
	assert_string_equal(buf, "hello, world");
	free(buf);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(read_all(fd, 11, &buf, &len), -EFBIG);
	close(fd);
	unlink(path);
}

static void test_pipe(void **state)
{
	int p[2];
	static char big[200000];
	char *buf = NULL;
	size_t len = 0;

	memset(big, 'x', sizeof(big));
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		_exit(write(p[1], big, sizeof(big)) == (ssize_t)sizeof(big) ? 0 : 1);
	}
	close(p[1]);
	assert_int_equal(read_all(p[0], sizeof(big), &buf, &len), 0);
	close(p[0]);
	assert_int_equal(len, sizeof(big));
	assert_int_equal(buf[len], '\0');
	assert_memory_equal(buf, big, sizeof(big));
	free(buf);
}

static void test_proc_and_dir(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	int fd = open("/proc/self/status", O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(read_all(fd, 1 << 20, &buf, &len), 0);
	close(fd);
	assert_non_null(strstr(buf, "Pid:"));
	assert_int_equal(strlen(buf), len);
	free(buf);
	fd = open("/tmp", O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(read_all(fd, 1 << 20, &buf, &len), -EISDIR);
	close(fd);
}

/* The keys of this process's own status file, known from elsewhere. */
static void test_key_numbers(void **state)
{
	uint64_t v[4] = {0};

	(void)state;
	assert_int_equal(lines_key_numbers("/proc/self/status", "Uid", v, 4), 4);
	assert_int_equal(v[0], getuid());
	assert_int_equal(v[1], geteuid());
	assert_int_equal(lines_key_numbers("/proc/self/status", "Threads", v, 1), 1);
	assert_int_equal(v[0], 1);
	assert_int_equal(lines_key_numbers("/proc/self/status", "Tgid", v, 1), 1);
	assert_int_equal(v[0], getpid());
	/* A key is the whole word before the colon; text is no number. */
	assert_int_equal(lines_key_numbers("/proc/self/status", "Ui", v, 1), 0);
	assert_int_equal(lines_key_numbers("/proc/self/status", "Name", v, 1), 0);
	assert_int_equal(lines_key_numbers("/proc/self/status", "NoSuchKey", v, 1), 0);
	assert_int_equal(lines_key_numbers("/nonexistent/status", "Uid", v, 1), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_regular_and_cap),
	    cmocka_unit_test(test_pipe),
	    cmocka_unit_test(test_proc_and_dir),
	    cmocka_unit_test(test_key_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
