/*
 * A target whose hot code is called from libc, for recce's
 * --call-graph dwarf test.
 *
 *   qsort [SECONDS]
 *
 * main() calls sort_batch() repeatedly until it has used SECONDS of CPU time
 * (default 2): a profile's sample count is then the same however busy the
 * machine is, only the wall time grows. sort_batch()
 * shuffles an array and sorts it with libc's qsort(), whose comparator
 * slow_compare() burns CPU on every call. Debian's libc is built without
 * frame pointers, so only a DWARF unwinder sees the whole chain
 * main -> sort_batch -> qsort (libc internals) -> slow_compare.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 2000

static volatile uint64_t sink;

__attribute__((noinline)) int slow_compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	volatile uint64_t h = (uint64_t)x;

	for (int i = 0; i < 400; i++)
		h = h * 6364136223846793005ULL + (uint64_t)y;
	sink = h;
	return (x > y) - (x < y);
}

__attribute__((noinline)) long sort_batch(int *v, int n, unsigned *seed)
{
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(rand_r(seed) % (unsigned)(i + 1));
		int t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
	qsort(v, (size_t)n, sizeof(*v), slow_compare);
	return v[0] + v[n - 1];
}

/* The CPU time the process has used. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static int v[N];
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	double end = cpu_now() + seconds;
	unsigned seed = 42;
	long batches = 0, check = 0;

	for (int i = 0; i < N; i++)
		v[i] = i;
	while (cpu_now() < end) {
		check += sort_batch(v, N, &seed);
		batches++;
	}
	printf("qsort: %ld batches, check %ld\n", batches, check == batches * (N - 1) ? 0L : check);
	return 0;
}
