/*
 * A target that spends its time in libc's read(), from a process with a
 * second thread, so that glibc takes read's cancellable path: the code
 * its debug info describes as __libc_read inlined into itself, at an
 * address whose symbol is read. One call, which a profile must show as
 * one frame.
 *
 *   reader [SECONDS]
 *
 * Reads /dev/zero one byte at a time for SECONDS (default 1) of its own
 * CPU time (a busy machine gives it less per second: a profile still has
 * its samples), prints "reader: N reads" and exits 0.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1);
	pthread_t t;
	char buf[1];
	long n = 0;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0 || pthread_create(&t, NULL, idle, NULL) != 0)
		return 1;
	while (now() < end)
		for (int i = 0; i < 1000; i++)
			n += read(fd, buf, 1);
	printf("reader: %ld reads\n", n);
	return 0;
}
