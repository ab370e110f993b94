/*
 * A replacement that takes its time to load: its constructor waits inside
 * the target's dlopen until the file named by the target's environment
 * variable SLOW_FIX_GATE exists (without it, 1.5 s), so that a test can
 * kill recce while the borrowed thread is still in the call, and see the
 * thread come back by itself. It says it loaded by creating the file named
 * by SLOW_FIX_DONE.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((constructor)) static void load_slowly(void)
{
	const char *gate = getenv("SLOW_FIX_GATE");
	struct timespec ts = {1, 500 * 1000 * 1000}, tick = {0, 10 * 1000 * 1000};

	if (gate) {
		for (int i = 0; i < 6000 && access(gate, F_OK) != 0; i++)
			nanosleep(&tick, NULL);
	} else {
		while (nanosleep(&ts, &ts) != 0)
			;
	}
	const char *done = getenv("SLOW_FIX_DONE");
	if (done) {
		int fd = open(done, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd >= 0)
			close(fd);
	}
}

unsigned long long slow_loading_fib(unsigned n, int *who)
{
	unsigned long long a = 0, b = 1;

	*who = 2;
	for (unsigned i = 0; i < n; i++) {
		unsigned long long t = a + b;
		a = b;
		b = t;
	}
	return a;
}
