/*
 * threads: many threads for a profiler to follow, for SECONDS.
 *
 *     threads SECONDS [NTHREADS [WORK_US]]
 *                                  NTHREADS (default 200) threads, each
 *                                  working about WORK_US (default 50) us
 *                                  every 10 ms, like the workers of a busy
 *                                  server
 *     threads --churn SECONDS      creates and ends 1,000 threads a second,
 *                                  each doing about 50 us of work
 *
 * 200 threads then keep about one CPU busy: not all of them spin, because
 * on a small machine a profiler competing with 200 runnable threads gets
 * 1/201 of the CPU and cannot even start in time. The stats say how many
 * threads were created and, for --churn, the rate reached.
 */
#include <errno.h>
#include <pthread.h>

#include "common.h"

static volatile int stop;
static volatile uint64_t sink;
static uint64_t work_steps = 25000; /* about 50 us */

NOINLINE static uint64_t chunk(uint64_t n, uint64_t seed)
{
	uint64_t x = seed | 1;

	XORSHIFT_LOOP(x, n, 0x94d049bb133111ebull);
	return x;
}

static void *worker(void *arg)
{
	const struct timespec pause = {0, 10000000};
	uint64_t acc = (uintptr_t)arg;

	while (!stop) {
		acc += chunk(work_steps, acc);
		nanosleep(&pause, NULL);
	}
	sink += acc;
	return NULL;
}

static void *short_lived(void *arg)
{
	sink += chunk(25000, (uintptr_t)arg); /* about 50 us */
	return NULL;
}

static int run_many(double seconds, int n)
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
	int created = 0;

	if (!t)
		return 1;
	for (; created < n; created++)
		if (pthread_create(&t[created], NULL, worker, (void *)(uintptr_t)created) != 0)
			break;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	stop = 1;
	for (int i = 0; i < created; i++)
		pthread_join(t[i], NULL);
	free(t);
	bench_note("threads_created=%d", created);
	return created == n ? 0 : 1;
}

/* One thread a millisecond, on an absolute schedule so slow creations do
 * not lower the rate; each is joined after the next one starts. */
static int run_churn(double seconds)
{
	int64_t start = clock_ns(CLOCK_MONOTONIC);
	long ticks = (long)(seconds * 1000);
	pthread_t prev;
	int have_prev = 0, created = 0;

	for (long i = 0; i < ticks; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_lived, (void *)(uintptr_t)i) == 0)
			created++;
		else
			continue;
		if (have_prev)
			pthread_join(prev, NULL);
		prev = t;
		have_prev = 1;
		int64_t next = start + (i + 1) * 1000000;
		struct timespec ts = {(time_t)(next / 1000000000), (long)(next % 1000000000)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	if (have_prev)
		pthread_join(prev, NULL);
	double secs = (double)(clock_ns(CLOCK_MONOTONIC) - start) / 1e9;
	bench_note("threads_created=%d\tthreads_per_s=%.0f", created, created / secs);
	return 0;
}

int main(int argc, char **argv)
{
	int rc;

	bench_begin();
	if (argc == 3 && strcmp(argv[1], "--churn") == 0)
		rc = run_churn(atof(argv[2]));
	else if (argc >= 2 && argc <= 4) {
		if (argc == 4)
			work_steps = (uint64_t)(atof(argv[3]) * 500);
		rc = run_many(atof(argv[1]), argc >= 3 ? atoi(argv[2]) : 200);
	} else {
		fprintf(stderr,
			"usage: threads SECONDS [NTHREADS [WORK_US]] | threads --churn SECONDS\n");
		return 2;
	}
	bench_end();
	return rc;
}
