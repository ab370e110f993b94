/*
 * C++ and Rust-shaped waiting, for the off-CPU tests of recce record:
 *
 *   blocker-cxx [SECONDS]   (default 5)
 *
 * Thread "waiter": waiting::Waiter::wait_turn waits 10 ms on a condition
 * variable that nobody signals, then throws; the loop around it catches.
 * Thread "parker": a function named as rustc names service::worker::park
 * (legacy mangling, with its hash) sleeps 10 ms at a time.
 * Prints "ready" when both run.
 */
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <time.h>
#include <unistd.h>

namespace waiting
{
struct Waiter {
	std::mutex m;
	std::condition_variable cv;
	bool ready = false;

	__attribute__((noinline)) void wait_turn()
	{
		std::unique_lock<std::mutex> lk(m);
		cv.wait_for(lk, std::chrono::milliseconds(10), [this] { return ready; });
		throw std::runtime_error("nobody came");
	}
};
} // namespace waiting

/* What rustc would emit for service::worker::park (legacy mangling). */
extern "C" void rust_park(void) __asm__("_ZN7service6worker4park17h0123456789abcdefE");

extern "C" __attribute__((noinline)) void rust_park(void)
{
	struct timespec ts = {0, 10 * 1000 * 1000};

	nanosleep(&ts, nullptr);
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 5;
	std::thread waiter([] {
		pthread_setname_np(pthread_self(), "waiter");
		waiting::Waiter w;
		long caught = 0;
		for (;;) {
			try {
				w.wait_turn();
			} catch (const std::runtime_error &) {
				caught++;
			}
		}
	});
	std::thread parker([] {
		pthread_setname_np(pthread_self(), "parker");
		for (;;)
			rust_park();
	});
	std::printf("ready\n");
	std::fflush(stdout);
	sleep((unsigned)seconds);
	_exit(0);
}
