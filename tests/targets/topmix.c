/*
 * A target for `recce top`'s black-box tests: threads with known
 * behaviour and names.
 *
 *   topmix [SECONDS]
 *
 * Thread "busy" spins in busy_spin() for ever; thread "idle" sleeps in
 * idle_sleep(); the main thread waits for signals. SIGUSR1 starts one more
 * thread, "late", which spins in late_spin(). Prints "topmix: ready" when
 * the first two threads run and "topmix: late started" after SIGUSR1. Exits
 * after SECONDS (default 60) or at SIGTERM.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

__attribute__((noinline)) void busy_spin(void)
{
	volatile uint64_t h = 1;

	for (;;)
		h = h * 6364136223846793005ULL + 1442695040888963407ULL;
}

__attribute__((noinline)) void late_spin(void)
{
	volatile uint64_t h = 3;

	for (;;)
		h = h * 6364136223846793005ULL + 1;
}

__attribute__((noinline)) void idle_sleep(void)
{
	for (;;)
		sleep(100);
}

static void *busy_main(void *arg)
{
	(void)arg;
	busy_spin();
	return NULL;
}

static void *idle_main(void *arg)
{
	(void)arg;
	idle_sleep();
	return NULL;
}

static void *late_main(void *arg)
{
	(void)arg;
	late_spin();
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 60;
	pthread_t t;
	sigset_t set;
	struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
	siginfo_t si;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Each thread is named by main before it is said to run: a reader
	 * of its comm then finds it. */
	if (pthread_create(&t, NULL, busy_main, NULL))
		return 1;
	pthread_setname_np(t, "busy");
	if (pthread_create(&t, NULL, idle_main, NULL))
		return 1;
	pthread_setname_np(t, "idle");
	printf("topmix: ready\n");
	while (sigtimedwait(&set, &si, &ts) == SIGUSR1) {
		if (pthread_create(&t, NULL, late_main, NULL))
			return 1;
		pthread_setname_np(t, "late");
		printf("topmix: late started\n");
	}
	return 0;
}
