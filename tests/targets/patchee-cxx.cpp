// patchee-cxx: a C++ target for recce patch. Two threads ask
// shop::Basket::total for totals; a negative count throws, and the caller
// catches it. Every 50 ms it prints "old=N new=N thrown=N bad=N": which
// code answered (Basket::who, 1 for this one, 2 for fixes/basket-fix.cpp)
// and how many exceptions crossed the (patched) function.
#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <time.h>

namespace shop
{
struct Basket {
	int who = 0;
	__attribute__((noinline)) long total(int count);
};

long Basket::total(int count)
{
	who = 1;
	if (count < 0)
		throw std::invalid_argument("negative count");
	long sum = 0;
	for (int i = 0; i < count; i++)
		sum += i % 7;
	return sum;
}
} // namespace shop

static std::atomic<long> old_calls, new_calls, thrown, bad;

static long expect(int count)
{
	long sum = 0;
	for (int i = 0; i < count; i++)
		sum += i % 7;
	return sum;
}

static void worker()
{
	for (unsigned n = 0;; n++) {
		shop::Basket b;
		int count = (int)(n % 50) - 1;
		try {
			if (b.total(count) != expect(count))
				bad++;
		} catch (const std::invalid_argument &) {
			thrown++;
		}
		(b.who == 2 ? new_calls : old_calls)++;
	}
}

int main()
{
	std::thread a(worker), b(worker);
	for (;;) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, nullptr);
		std::printf("old=%ld new=%ld thrown=%ld bad=%ld\n", old_calls.load(),
			    new_calls.load(), thrown.load(), bad.load());
		std::fflush(stdout);
	}
}
