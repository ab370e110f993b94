/*
 * The events benchmark: a loop of N iterations, each writing one event,
 * built three ways by bench/run.sh: with librecce (-DWITH_RECCE), with an
 * LTTng-UST tracepoint (-DWITH_LTTNG), and with -pg for uftrace, where
 * each iteration calls a function uftrace records. `events MODE N`:
 *
 *   base    the loop alone (an empty asm that uses i keeps it a loop)
 *   recce   recce_event_value("tick", i) each iteration
 *   task    recce_task_start(1) and recce_task_stop(1) each iteration
 *   lttng   tracepoint recce_bench:tick each iteration
 *   call    a call of tick(i), not inlined (uftrace's unit)
 *   clock   a read of the CPU's time-stamp counter, the one thing every
 *           librecce event must do
 *
 * Writes one event first, prints "ready", waits BENCH_WAIT_MS (so a
 * reader can attach), runs the loop and prints "ns_per_iter=X", the time
 * of one event (N a multiple of 8).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#ifdef WITH_RECCE
#include "recce.h"
#endif
#ifdef WITH_LTTNG
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "events-tp.h"
#endif

static volatile long sink;

__attribute__((noinline)) void tick(long i)
{
	sink = i;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: events base|recce|lttng|call N\n");
		return 2;
	}
	const char *mode = argv[1];
	long n = atol(argv[2]);
	int m = !strcmp(mode, "task")	 ? 5
		: !strcmp(mode, "recce") ? 1
		: !strcmp(mode, "lttng") ? 2
		: !strcmp(mode, "call")	 ? 3
		: !strcmp(mode, "clock") ? 4
					 : 0;
	const char *wait = getenv("BENCH_WAIT_MS");

#ifdef WITH_RECCE
	if (m == 1)
		recce_event_value("tick", -1);
	if (m == 5)
		recce_task_create(1, "bench", 0);
#endif
	printf("ready\n");
	fflush(stdout);
	if (wait)
		usleep((useconds_t)atoi(wait) * 1000);
	/* A fifth of a second of spinning first: after the sleep the CPU may
	 * still be slow, which short loops (the bare one) would measure. */
	for (double w = now_ns(); now_ns() - w < 2e8;)
		;
		/* Each mode its own loop, each iteration writing 8 events, so that
		 * neither a switch nor the loop's own cost blurs a nanosecond. */
#define EIGHT(x) x x x x x x x x
	double t0 = now_ns();
	switch (m) {
#ifdef WITH_RECCE
	case 1:
		for (long i = 0; i < n; i += 8) {
			EIGHT(recce_event_value("tick", i);)
		}
		break;
	case 5:
		for (long i = 0; i < n; i += 8) {
			EIGHT(recce_task_start(1); recce_task_stop(1);)
		}
		break;
#endif
#ifdef WITH_LTTNG
	case 2:
		for (long i = 0; i < n; i += 8) {
			EIGHT(lttng_ust_tracepoint(recce_bench, tick, i);)
		}
		break;
#endif
	case 3:
		for (long i = 0; i < n; i += 8) {
			EIGHT(tick(i);)
		}
		break;
	case 4:
		for (long i = 0; i < n; i += 8) {
			EIGHT(sink = (long)__builtin_ia32_rdtsc();)
		}
		break;
	default:
		for (long i = 0; i < n; i += 8) {
			EIGHT(__asm__ volatile("" : : "r"(i));)
		}
	}
	double t1 = now_ns();
	printf("ns_per_iter=%.3f\n", (t1 - t0) / (double)n);
	return 0;
}
