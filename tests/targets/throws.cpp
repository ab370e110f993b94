/*
 * A C++ target whose traced function throws, for the tests that recce
 * trace --return leaves a program that unwinds exactly as it was.
 *
 *   throws [N] [PAUSE_MS] [EVERY] [GAP_MS]
 *
 * Waits PAUSE_MS (default 500; "go": its "ready" line and SIGUSR1, see ready.h) so a tracer can
 * attach, then calls shop::restock(i) for i = 0..N-1 (default 200), one call every GAP_MS (default
 * 2; 0: one after the other, an exception always soon in flight, for the unwinder's tests); restock
 * calls shop::fill_map(i), which throws std::runtime_error when i is a multiple of EVERY (default
 * 7), and main catches it. Prints "throws: calls=N thrown=K sum=S", sleeps PAUSE_MS again and exits
 * 0.
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <time.h>

#include "ready.h"

static volatile long sink;

namespace shop
{
__attribute__((noinline)) long fill_map(long i, long every)
{
	if (i % every == 0)
		throw std::runtime_error("the map is full");
	sink = sink + i;
	return i * 3 + 1;
}

__attribute__((noinline)) long restock(long i, long every)
{
	long r = fill_map(i, every);
	sink = sink + 1;
	return r + 1;
}
} // namespace shop

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, nullptr);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200;
	long every = argc > 3 ? atol(argv[3]) : 7;
	long gap = argc > 4 ? atol(argv[4]) : 2;
	long thrown = 0, sum = 0;

	int go = target_start(argc > 2 ? argv[2] : NULL, "throws");
	for (long i = 0; i < n; i++) {
		try {
			sum += shop::restock(i, every);
		} catch (const std::runtime_error &) {
			thrown++;
		}
		if (gap)
			pause_ms(gap);
	}
	printf("throws: calls=%ld thrown=%ld sum=%ld\n", n, thrown, sum);
	fflush(stdout);
	if (!go)
		target_start(argc > 2 ? argv[2] : NULL, "throws");
	return 0;
}
