/*
 * The off-CPU benchmark: two threads pass a byte back and forth over two
 * pipes, so that each blocks in read() and is switched off its CPU once
 * per pass. Both run on the last CPU: a switch is then the CPU going from
 * one to the other, not a wakeup of an idle CPU, which on a virtual
 * machine costs ten times more and would hide what a profiler adds. `switches N`: prints "ready",
 * waits BENCH_WAIT_MS (so that a profiler can attach), makes N round trips and prints
 * "ns_per_iter=X" (one round trip: two switches off a CPU) and
 * "switches_per_s=Y".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static long rounds;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Waits for the byte on from, then sends it on to. */
__attribute__((noinline)) static void pass(int from, int to)
{
	char c;

	if (read(from, &c, 1) != 1 || write(to, &c, 1) != 1)
		exit(1);
}

static void *echo(void *arg)
{
	for (long i = 0; i < rounds; i++)
		pass(ping[0], pong[1]);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char c = 'x';

	if (argc < 2 || pipe(ping) || pipe(pong)) {
		fprintf(stderr, "usage: switches N\n");
		return 2;
	}
	rounds = atol(argv[1]);
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sysconf(_SC_NPROCESSORS_ONLN) - 1, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		perror("sched_setaffinity");
	printf("ready\n");
	fflush(stdout);
	const char *wait = getenv("BENCH_WAIT_MS");
	if (wait)
		usleep((useconds_t)atoi(wait) * 1000);
	if (pthread_create(&t, NULL, echo, NULL))
		return 1;
	double t0 = now_ns();
	/* The first byte starts the rounds; each pass sends it back. */
	if (write(ping[1], &c, 1) != 1)
		return 1;
	for (long i = 0; i < rounds - 1; i++)
		pass(pong[0], ping[1]);
	if (read(pong[0], &c, 1) != 1)
		return 1;
	double ns = now_ns() - t0;
	pthread_join(t, NULL);
	printf("ns_per_iter=%.1f\nswitches_per_s=%.0f\n", ns / (double)rounds,
	       2e9 * (double)rounds / ns);
	return 0;
}
