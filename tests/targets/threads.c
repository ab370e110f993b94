/*
 * A multi-threaded target for recce's black-box tests: threads are created
 * and joined in waves while it runs, so a profiler attached before a wave
 * must follow threads that did not exist when it started.
 *
 *   threads [SECONDS] [--wait] [--cpu]
 *
 * First an early wave of two threads named "early-0" and "early-1" runs
 * early_worker_spin() for 0.3 s and is joined. With --wait, the main thread
 * then spins in main_wait_spin() until it receives SIGUSR1 (a test sends it
 * once the profiler is attached). Then, for SECONDS (default 2), waves of two
 * threads named "late-N" run late_worker_spin() for 0.25 s each and are
 * joined; with --cpu, until the process has used SECONDS of CPU time (all
 * its threads), so that a profile's sample count holds however busy the
 * machine is. Prints "threads: early wave done" when the early threads are
 * joined and "threads: N late threads" at the end; each worker prints
 * "threads: tid TID NAME" as it starts and "threads: cpu NAME SECONDS",
 * the CPU time it had, as it ends: what a profiler's samples of it must
 * add up to, however busy the machine.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t go;
static volatile uint64_t sink;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

struct worker {
	double end;
	char name[16];
};

/*
 * Each worker names itself first, so that every sample of it carries its
 * name, then spins in its own function until its deadline.
 */
__attribute__((noinline)) static uint64_t spin_until(struct worker *w)
{
	volatile uint64_t h = 1;

	pthread_setname_np(pthread_self(), w->name);
	/* Its id, for a test to know which samples are its own: a poll of
	 * /proc from outside misses threads while two spinners hold both
	 * CPUs of a small machine. */
	printf("threads: tid %d %s\n", (int)gettid(), w->name);
	while (now() < w->end)
		for (int i = 0; i < 100000; i++)
			h = h * 6364136223846793005ULL + 1442695040888963407ULL;
	struct timespec cpu;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	printf("threads: cpu %s %.4f\n", w->name, cpu.tv_sec + cpu.tv_nsec / 1e9);
	return h;
}

__attribute__((noinline)) void *early_worker_spin(void *arg)
{
	sink = spin_until(arg);
	return NULL;
}

__attribute__((noinline)) void *late_worker_spin(void *arg)
{
	sink = spin_until(arg);
	return NULL;
}

__attribute__((noinline)) void main_wait_spin(void)
{
	volatile uint64_t h = 1;

	while (!go)
		for (int i = 0; i < 100000; i++)
			h = h * 6364136223846793005ULL + 1;
	sink = h;
}

static void wave(void *(*fn)(void *), const char *prefix, int first, double seconds)
{
	pthread_t t[2];
	struct worker w[2];

	for (int i = 0; i < 2; i++) {
		w[i].end = now() + seconds;
		snprintf(w[i].name, sizeof(w[i].name), "%s-%d", prefix, first + i);
		if (pthread_create(&t[i], NULL, fn, &w[i]) != 0) {
			perror("pthread_create");
			exit(1);
		}
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
	double seconds = 2;
	int wait = 0, late = 0;
	clockid_t clock = CLOCK_MONOTONIC;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--wait") == 0)
			wait = 1;
		else if (strcmp(argv[i], "--cpu") == 0)
			clock = CLOCK_PROCESS_CPUTIME_ID;
		else
			seconds = atof(argv[i]);
	}
	signal(SIGUSR1, on_usr1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	wave(early_worker_spin, "early", 0, 0.3);
	printf("threads: early wave done\n");
	if (wait)
		main_wait_spin();
	for (double end = clock_s(clock) + seconds; clock_s(clock) < end; late += 2)
		wave(late_worker_spin, "late", late, 0.25);
	printf("threads: %d late threads\n", late);
	return 0;
}
