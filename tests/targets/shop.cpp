/*
 * C++ and Rust-shaped names for the pattern tests of recce trace, built at
 * -O2 so that the compiler splits and clones as it does for users:
 *
 *   shop [N] [PAUSE_MS]
 *
 * Waits PAUSE_MS (default 500), then N times (default 100, one round
 * every 2 ms) calls shop::fill_map (whose unlikely error path the
 * compiler moves to a fragment, shop::fill_map [clone .cold]),
 * shop::Cart::total, shop::sort_batch with a constant length (which
 * becomes the clone sort_batch.constprop.0), and hot::engine::rank, a
 * function named as rustc names one (legacy mangling, with its hash),
 * shop::make_key (a std::string returned in memory, its text on the
 * heap), shop::short_key (one short enough to live inside the object),
 * shop::quote (a struct returned in memory) and shop::price (a double
 * returned in xmm0).
 * Prints "shop: sum=S", sleeps PAUSE_MS again and exits 0.
 *
 * With PAUSE_MS "go" it waits for SIGUSR1 instead (ready.h); N 0 then
 * means rounds until the next SIGUSR1, and no last pause.
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <time.h>

#include <signal.h>

#include "ready.h"

static volatile long sink;

namespace shop
{
struct Cart {
	long items[8];
	__attribute__((noinline)) long total() const;
};

long Cart::total() const
{
	long t = 0;
	for (long v : items)
		t += v;
	return t;
}

__attribute__((noinline)) long fill_map(long i)
{
	if (__builtin_expect(i < 0, 0))
		throw std::invalid_argument("shop: negative index");
	sink = sink + i;
	return i * 3 + 1;
}

static __attribute__((noinline)) long sort_batch(long *v, long n)
{
	for (long i = 1; i < n; i++)
		for (long j = i; j > 0 && v[j - 1] > v[j]; j--) {
			long t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[0] + v[n - 1];
}
/* Returned in memory: the caller passes where, hidden, in rdi. */
__attribute__((noinline)) std::string make_key(unsigned long i)
{
	return "key-" + std::to_string(i) + "-of-the-shop";
}

__attribute__((noinline)) std::string short_key(unsigned long i)
{
	return "k" + std::to_string(i % 10);
}

/* 24 bytes: returned in memory too. */
struct Quote {
	long id;
	double price;
	int qty;
	bool open;
};

__attribute__((noinline)) Quote quote(long i)
{
	return Quote{i, (double)i / 4.0, (int)(i % 9), i % 2 == 0};
}

__attribute__((noinline)) double price(long cents)
{
	return (double)cents / 100.0;
}
} // namespace shop

/* What rustc would emit for hot::engine::rank (legacy mangling). */
extern "C" long rank(long x) __asm__("_ZN3hot6engine4rank17h0123456789abcdefE");
extern "C" __attribute__((noinline, used)) long rank(long x)
{
	return x * 2654435761L % 1000;
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, nullptr);
}

static volatile sig_atomic_t stop;

static void on_usr1(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	long sum = 0;
	shop::Cart cart = {{1, 2, 3, 4, 5, 6, 7, 8}};

	int go = target_start(argc > 2 ? argv[2] : nullptr, "shop");
	if (go && n == 0) {
		sigset_t usr1;
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		signal(SIGUSR1, on_usr1);
		sigprocmask(SIG_UNBLOCK, &usr1, nullptr);
	}
	for (long i = 0; (n == 0 && go) ? !stop : i < n; i++) {
		long v[8] = {i % 7, 3, i % 5, 9, 1, i % 3, 4, 2};
		sum += shop::fill_map(i) + cart.total() + shop::sort_batch(v, 8) + rank(i);
		sum += (long)shop::make_key((unsigned long)i).size() + (long)shop::price(i * 7);
		shop::Quote q = shop::quote(i);
		sum += (long)shop::short_key((unsigned long)i).size() + q.id + q.qty;
		pause_ms(2);
	}
	printf("shop: sum=%ld\n", sum);
	fflush(stdout);
	if (!go)
		target_start(argc > 2 ? argv[2] : nullptr, "shop");
	return 0;
}
