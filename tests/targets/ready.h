/*
 * The handshake of the targets a test starts before its tracer: say
 * "NAME: ready" with SIGUSR1 blocked, and go on only when the test sends
 * SIGUSR1 once the tracer is in (target_wait_go()); again for a later step.
 * A target whose PAUSE_MS argument is "go" does so (target_start()).
 */
#ifndef RECCE_TARGET_READY_H
#define RECCE_TARGET_READY_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Blocks SIGUSR1, makes stdout line-buffered and prints "name: ready". */
static inline __attribute__((always_inline)) void target_ready(const char *name)
{
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("%s: ready\n", name);
}

/* Waits for the next SIGUSR1. */
static inline __attribute__((always_inline)) void target_wait_go(void)
{
	sigset_t usr1;
	int sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigwait(&usr1, &sig);
}

/* The first pause of a target taking PAUSE_MS: "go" says "name: ready"
 * and waits for SIGUSR1, and returns 1 (the target then exits without its
 * last pause); a number sleeps that many milliseconds and returns 0. Call
 * it before any thread starts. */
static inline __attribute__((always_inline)) int target_start(const char *arg, const char *name)
{
	if (arg && strcmp(arg, "go") == 0) {
		target_ready(name);
		target_wait_go();
		return 1;
	}
	long ms = arg ? atol(arg) : 500;
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
	return 0;
}

#endif
