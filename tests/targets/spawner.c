/*
 * A target that starts threads one after another, as a server with a
 * thread per request does: each does nothing and ends, and the main
 * thread waits for it before it starts the next. Built without frame
 * pointers, its samples in glibc's clone3 are of a wrapper without CFI
 * (it ends its CFI before the syscall, for the child's sake), with rbp
 * holding whatever the compiler left there: the parent's, and the
 * child's, which it inherits.
 *
 *   spawner [SECONDS]
 *
 * Prints "ready" once the first thread has ended, and runs for SECONDS
 * (default 60) of wall time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 60;
	time_t end = time(NULL) + (time_t)seconds;

	for (int first = 1; time(NULL) < end; first = 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
		if (first) {
			printf("ready\n");
			fflush(stdout);
		}
	}
	return 0;
}
