/*
 * A target whose threads wait in known places, for the off-CPU and wall
 * tests: each blocking function measures the time it spends, and SIGUSR1
 * makes the main thread print the totals so far, one "NAME NS" line each,
 * then "--".
 *
 *   blocker [SECONDS]   (default: until SIGTERM)
 *
 * Threads and where they wait:
 *   sleeper  nap()        nanosleep, 7 ms at a time
 *   reader   wait_pipe()  read of a pipe the writer fills every 13 ms
 *   writer   pace()       nanosleep, 13 ms
 *   locker   take_lock()  a mutex the holder keeps 17 ms at a time
 *   holder   hold()       nanosleep with the mutex held; rest() 1 ms without
 *   mixed    doze()       nanosleep 5 ms, then spin() on the CPU 5 ms
 *   spinner  spin()       on the CPU all the time
 *   main     main_wait()  sigwaitinfo
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { NAP, WAIT_PIPE, PACE, TAKE_LOCK, HOLD, REST, DOZE, MAIN_WAIT, NCOUNTERS };
static const char *const names[NCOUNTERS] = {"nap",  "wait_pipe", "pace", "take_lock",
					     "hold", "rest",	  "doze", "main_wait"};
static _Atomic unsigned long long spent[NCOUNTERS];
static int pipefd[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long long sink;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {0, ms * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}

#define TIMED(counter, body)                                                                       \
	do {                                                                                       \
		unsigned long long t0_ = now_ns();                                                 \
		body;                                                                              \
		atomic_fetch_add(&spent[counter], now_ns() - t0_);                                 \
	} while (0)

__attribute__((noinline)) static void nap(void)
{
	TIMED(NAP, sleep_ms(7));
}

__attribute__((noinline)) static void wait_pipe(void)
{
	char c;

	TIMED(WAIT_PIPE, if (read(pipefd[0], &c, 1) < 0) abort());
}

__attribute__((noinline)) static void pace(void)
{
	TIMED(PACE, sleep_ms(13));
}

__attribute__((noinline)) static void take_lock(void)
{
	TIMED(TAKE_LOCK, pthread_mutex_lock(&lock));
}

__attribute__((noinline)) static void hold(void)
{
	TIMED(HOLD, sleep_ms(17));
}

__attribute__((noinline)) static void rest(void)
{
	TIMED(REST, sleep_ms(1));
}

__attribute__((noinline)) static void doze(void)
{
	TIMED(DOZE, sleep_ms(5));
}

__attribute__((noinline)) static void spin(unsigned long long ns)
{
	unsigned long long end = now_ns() + ns;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink = sink * 31 + (unsigned long long)i;
}

static void *sleeper(void *arg)
{
	for (;;)
		nap();
	return arg;
}

static void *reader(void *arg)
{
	for (;;)
		wait_pipe();
	return arg;
}

static void *writer(void *arg)
{
	for (;;) {
		pace();
		if (write(pipefd[1], "x", 1) != 1)
			abort();
	}
	return arg;
}

static void *locker(void *arg)
{
	for (;;) {
		take_lock();
		pthread_mutex_unlock(&lock);
		/* Let the holder take it back before trying again. */
		sched_yield();
	}
	return arg;
}

static void *holder(void *arg)
{
	for (;;) {
		pthread_mutex_lock(&lock);
		hold();
		pthread_mutex_unlock(&lock);
		rest();
	}
	return arg;
}

static void *mixed(void *arg)
{
	for (;;) {
		doze();
		spin(5000000);
	}
	return arg;
}

static void *spinner(void *arg)
{
	for (;;)
		spin(1000000000);
	return arg;
}

static void start(const char *name, void *(*fn)(void *))
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, NULL) != 0)
		abort();
	pthread_setname_np(t, name);
}

__attribute__((noinline)) static int main_wait(const sigset_t *set)
{
	int sig;

	TIMED(MAIN_WAIT, sig = sigwaitinfo(set, NULL));
	return sig;
}

int main(int argc, char **argv)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pipe(pipefd) < 0)
		return 1;
	start("sleeper", sleeper);
	start("reader", reader);
	start("writer", writer);
	start("locker", locker);
	start("holder", holder);
	start("mixed", mixed);
	start("spinner", spinner);
	if (argc > 1)
		alarm((unsigned)atoi(argv[1]));
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		int sig = main_wait(&set);
		if (sig != SIGUSR1)
			break;
		for (int i = 0; i < NCOUNTERS; i++)
			printf("%s %llu\n", names[i], (unsigned long long)atomic_load(&spent[i]));
		printf("--\n");
		fflush(stdout);
	}
	return 0;
}
