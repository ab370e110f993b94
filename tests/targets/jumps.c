/*
 * A C target that leaves traced functions by longjmp, for the tests that
 * recce trace --return sees an unwound call as unwound and leaves the
 * program's own control flow untouched.
 *
 *   jumps [N] [PAUSE_MS] [EVERY]
 *
 * Waits PAUSE_MS (default 500; "go": its "ready" line and SIGUSR1, see ready.h), then calls hop(i)
 * for i = 0..N-1 (default 200), one call every 2 ms; hop calls leap(i), which longjmps back to main
 * when i is a multiple of EVERY (default 5). Prints "jumps: calls=N jumped=K sum=S", sleeps
 * PAUSE_MS again and exits 0.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ready.h"

static jmp_buf back;
static volatile long sink;

__attribute__((noinline)) long leap(long i, long every)
{
	if (i % every == 0)
		longjmp(back, 1);
	sink = sink + i;
	return i * 2;
}

__attribute__((noinline)) long hop(long i, long every)
{
	long r = leap(i, every);
	sink = sink + 1;
	return r + 1;
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200;
	long every = argc > 3 ? atol(argv[3]) : 5;
	volatile long jumped = 0, sum = 0;

	int go = target_start(argc > 2 ? argv[2] : NULL, "jumps");
	for (volatile long i = 0; i < n; i++) {
		if (setjmp(back) == 0)
			sum += hop(i, every);
		else
			jumped++;
		pause_ms(2);
	}
	printf("jumps: calls=%ld jumped=%ld sum=%ld\n", n, (long)jumped, (long)sum);
	fflush(stdout);
	if (!go)
		target_start(argc > 2 ? argv[2] : NULL, "jumps");
	return 0;
}
