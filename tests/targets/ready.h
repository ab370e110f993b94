/*
 * The handshake of the targets a test starts before its tracer: say
 * "NAME: ready" with SIGUSR1 blocked, and go on only when the test sends
 * SIGUSR1 once the tracer is in (target_wait_go()); again for a later step.
 */
#ifndef RECCE_TARGET_READY_H
#define RECCE_TARGET_READY_H

#include <signal.h>
#include <stdio.h>

/* Blocks SIGUSR1, makes stdout line-buffered and prints "name: ready". */
static inline void target_ready(const char *name)
{
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("%s: ready\n", name);
}

/* Waits for the next SIGUSR1. */
static inline void target_wait_go(void)
{
	sigset_t usr1;
	int sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigwait(&usr1, &sig);
}

#endif
