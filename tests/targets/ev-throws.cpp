// A C++ program that uses librecce, for tests/cli/events.t: spans held
// by an RAII guard, so that an exception thrown inside one ends it while
// the stack unwinds. THREADS threads run ROUNDS rounds each; every odd
// round throws, and the catch writes "caught". Per thread: ROUNDS spans
// "round", ROUNDS events "attempt", ROUNDS / 2 "caught". Prints "ready",
// then sleeps until killed.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <unistd.h>
#include <vector>

#include "recce.h"

namespace
{

class Span
{
      public:
	explicit Span(const char *name) : name_(name)
	{
		recce_span_begin(name_);
	}
	~Span()
	{
		recce_span_end(name_);
	}
	Span(const Span &) = delete;
	Span &operator=(const Span &) = delete;

      private:
	const char *name_;
};

void attempt(int round)
{
	Span s("round");
	recce_event("attempt");
	if (round % 2)
		throw std::runtime_error("odd round");
}

void worker(int rounds)
{
	for (int i = 0; i < rounds; i++) {
		try {
			attempt(i);
		} catch (const std::exception &) {
			recce_event("caught");
		}
	}
}

} // namespace

int main(int argc, char **argv)
{
	int threads = argc > 1 ? std::atoi(argv[1]) : 2;
	int rounds = argc > 2 ? std::atoi(argv[2]) : 10;
	std::vector<std::thread> pool;
	for (int i = 0; i < threads; i++)
		pool.emplace_back(worker, rounds);
	for (auto &t : pool)
		t.join();
	std::printf("ready\n");
	std::fflush(stdout);
	for (;;)
		pause();
}
