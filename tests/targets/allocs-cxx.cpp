/*
 * An allocation target in C++ with exceptions and a Rust-named function,
 * for `recce record --event alloc`. Each round:
 *   shop::Basket::fill      new Item[50] (2000 bytes), deleted at once
 *   shop::Basket::reject    throws and catches a std::runtime_error with
 *                           a 3000-byte message (the exception object, the
 *                           string and its copy)
 *   alloc::raw_vec::finish_grow (as rustc names it: a Vec growing through
 *                           the system allocator) malloc(3000), freed
 * Prints "ready" and runs until killed, or for argv[1] seconds; with
 * argv[2], at most that many rounds a millisecond (a pause after each
 * batch), for a profiler that sees every sample.
 */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <time.h>
#include <unistd.h>

namespace shop
{
struct Item {
	char name[32];
	long price;
};
static_assert(sizeof(Item) == 40, "50 items are 2000 bytes");

class Basket
{
      public:
	__attribute__((noinline)) void fill();
	__attribute__((noinline)) void reject();
	volatile long sink = 0;
};

/* Seen from outside, so that the compiler keeps the new and the delete. */
static Item *volatile filled;

void Basket::fill()
{
	Item *items = new Item[50];
	filled = items;
	items[3].price = 7;
	sink += items[3].price;
	delete[] filled;
}

void Basket::reject()
{
	try {
		throw std::runtime_error(std::string(3000, 'x'));
	} catch (const std::runtime_error &e) {
		sink += (long)e.what()[0];
	}
}
} // namespace shop

/* What rustc would emit for alloc::raw_vec::finish_grow (legacy mangling). */
extern "C" void
rust_finish_grow(void) __asm__("_ZN5alloc7raw_vec11finish_grow17h0123456789abcdefE");
static void *volatile keep;
extern "C" __attribute__((noinline)) void rust_finish_grow(void)
{
	keep = malloc(3000);
	free(keep);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	unsigned long per_ms = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	struct timespec pause = {0, 1000000};
	auto start = std::chrono::steady_clock::now();
	shop::Basket basket;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (unsigned long n = 0;; n++) {
		basket.fill();
		basket.reject();
		rust_finish_grow();
		if (per_ms && n % per_ms == 0)
			nanosleep(&pause, NULL);
		if (n % 256 == 0 && seconds > 0 &&
		    std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
			    .count() >= seconds)
			break;
	}
	return 0;
}
