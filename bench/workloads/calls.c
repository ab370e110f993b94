/*
 * calls: one small function called in a loop, for the cost of tracing it.
 *
 *     calls SECONDS              calls traced() for SECONDS of wall time;
 *                                the stats give calls= and ns_per_call=
 *     calls --recovery SECONDS   the same, timing every call on
 *                                CLOCK_REALTIME (the clock recce trace
 *                                prints), to see when a probe on it went
 *                                away: the stats give probe_start_ns and
 *                                probe_end_ns, the first and the last call
 *                                of the last run of RUN consecutive slow
 *                                calls, and slow_runs, how many such runs
 *                                there were
 *     calls --bursts N           N bursts of BURST calls, 50 ms apart,
 *                                timing the bursts only: a tracer whose
 *                                rings hold a burst reads it in the gaps,
 *                                so every call is recorded at full cost
 *     calls --bursts-signal N    the same, after printing "ready" and
 *                                waiting for SIGUSR1 (so that recce trace
 *                                --fast attaches to an idle process first)
 *
 * A traced call takes microseconds (a breakpoint trap each way) against
 * nanoseconds untraced, so "slow" (SLOW_NS) separates them cleanly; a run
 * of RUN slow calls in a row cannot be a stray preemption.
 */
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define SLOW_NS 400
#define RUN	8

static volatile uint64_t sink;

NOINLINE uint64_t traced(uint64_t x)
{
	return x * 2654435761u + 1;
}

static int plain(double seconds)
{
	int64_t end = clock_ns(CLOCK_MONOTONIC) + (int64_t)(seconds * 1e9);
	uint64_t calls = 0, acc = 0;

	bench_begin();
	do {
		for (int i = 0; i < 256; i++)
			acc += traced(acc);
		calls += 256;
	} while (clock_ns(CLOCK_MONOTONIC) < end);
	sink = acc;
	int64_t wall = clock_ns(CLOCK_MONOTONIC) - bench_start_ns;
	bench_end();
	bench_note("calls=%llu\tns_per_call=%.2f", (unsigned long long)calls,
		   (double)wall / (double)calls);
	return 0;
}

static int recovery(double seconds)
{
	int64_t end = clock_ns(CLOCK_REALTIME) + (int64_t)(seconds * 1e9);
	int64_t run_first = 0, probe_start = 0, probe_end = 0, now;
	uint64_t acc = 0, slow_runs = 0;
	int run = 0;

	bench_begin();
	do {
		int64_t t0 = clock_ns(CLOCK_REALTIME);
		acc += traced(acc);
		now = clock_ns(CLOCK_REALTIME);
		if (now - t0 < SLOW_NS) {
			run = 0;
			continue;
		}
		if (run == 0)
			run_first = t0;
		if (++run == RUN) {
			slow_runs++;
			probe_start = run_first;
		}
		if (run >= RUN)
			probe_end = now;
	} while (now < end);
	sink = acc;
	bench_end();
	bench_note("slow_runs=%llu\tprobe_start_ns=%lld\tprobe_end_ns=%lld",
		   (unsigned long long)slow_runs, (long long)probe_start, (long long)probe_end);
	return 0;
}

#define BURST 8192

static int bursts(long n)
{
	uint64_t acc = 0, calls = 0;
	int64_t busy = 0;

	bench_begin();
	for (long b = 0; b < n; b++) {
		int64_t t0 = clock_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < BURST; i++)
			acc += traced(acc);
		busy += clock_ns(CLOCK_MONOTONIC) - t0;
		calls += BURST;
		struct timespec gap = {0, 50000000};
		nanosleep(&gap, NULL);
	}
	sink = acc;
	bench_end();
	bench_note("calls=%llu\tns_per_call=%.2f", (unsigned long long)calls,
		   (double)busy / (double)calls);
	return 0;
}

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--bursts-signal") == 0) {
		signal(SIGUSR1, on_usr1);
		printf("ready\n");
		fflush(stdout);
		while (!go)
			pause();
		return bursts(atol(argv[2]));
	}
	if (argc == 3 && strcmp(argv[1], "--bursts") == 0)
		return bursts(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "--recovery") == 0)
		return recovery(atof(argv[2]));
	if (argc == 2)
		return plain(atof(argv[1]));
	fprintf(stderr, "usage: calls SECONDS | calls --recovery SECONDS | calls --bursts[-signal] N\n");
	return 2;
}
