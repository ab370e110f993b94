/*
 * Shared by the bench workloads: clocks, a CPU-bound work loop, the
 * calibration that turns "about N seconds" into a fixed amount of work, and
 * the stats line each workload writes when it ends.
 *
 * The stats line is what bench/run.sh measures the target with: the
 * workload's own wall time (from main to the end of its work), its own CPU
 * time (getrusage of the whole process, every thread included), and the
 * CLOCK_MONOTONIC instant its work ended, so the time a profiler takes
 * after its target is done can be told apart. It goes, as tab-separated
 * key=value fields, to the file named by $BENCH_STATS (appended), or to
 * standard error when that is not set.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))

static inline int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A serial chain of xorshift steps: it cannot be vectorized or folded into
 * a closed form, so its cost is proportional to n. */
#define XORSHIFT_LOOP(x, n, c)                                                                     \
	for (uint64_t i_ = 0; i_ < (n); i_++) {                                                    \
		(x) ^= (x) << 13;                                                                  \
		(x) ^= (x) >> 7;                                                                   \
		(x) ^= (x) << 17;                                                                  \
		(x) += (c);                                                                        \
	}

/* Runs unit() in growing batches until it has used at least 0.3 s of this
 * thread's CPU time, and returns how many units fill `seconds` of CPU. */
static inline long bench_calibrate(double seconds, void (*unit)(void))
{
	long n = 1;

	for (;;) {
		int64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		for (long i = 0; i < n; i++)
			unit();
		int64_t t = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (t >= 300000000)
			return (long)(seconds * 1e9 / ((double)t / (double)n)) + 1;
		n *= 2;
	}
}

static int64_t bench_start_ns;

static __attribute__((unused)) void bench_begin(void)
{
	bench_start_ns = clock_ns(CLOCK_MONOTONIC);
}

static FILE *bench_stats_open(void)
{
	const char *path = getenv("BENCH_STATS");
	FILE *f = path && *path ? fopen(path, "a") : NULL;

	return f ? f : stderr;
}

static void bench_stats_close(FILE *f)
{
	if (f != stderr)
		fclose(f);
}

/* Writes extra key=value fields (one printf-style string) to the stats. */
__attribute__((format(printf, 1, 2))) static void bench_note(const char *fmt, ...)
{
	FILE *f = bench_stats_open();
	va_list ap;

	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	bench_stats_close(f);
}

static __attribute__((unused)) void bench_end(void)
{
	int64_t end = clock_ns(CLOCK_MONOTONIC);
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	double user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	double sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	bench_note("wall_s=%.6f\tcpu_s=%.6f\tuser_s=%.6f\tsys_s=%.6f\tend_ns=%lld",
		   (double)(end - bench_start_ns) / 1e9, user + sys, user, sys, (long long)end);
}

/* "--calibrate SECONDS" as the first argument: print the units and exit. */
static inline int bench_calibrate_mode(int argc, char **argv, void (*unit)(void))
{
	if (argc < 3 || strcmp(argv[1], "--calibrate") != 0)
		return 0;
	printf("%ld\n", bench_calibrate(atof(argv[2]), unit));
	return 1;
}

#endif
