/*
 * uvloop: a libuv loop whose idle callback runs as often as the loop
 * turns, for the cost per callback of `recce tasks --libuv`.
 *
 *     uvloop WAIT SECONDS
 *
 * Waits WAIT seconds on a timer (a tracer attaches meanwhile), then runs
 * idle_work(), an idle callback that does a few nanoseconds of work, for
 * SECONDS of wall time; the stats give callbacks= and ns_per_callback=
 * (the loop's whole turn: libuv's own work around each callback
 * included). Built against Debian's libuv1.
 */
#include <uv.h>

#include "common.h"

static uv_idle_t idler;
static uv_timer_t waiter;
static int64_t end_ns;
static uint64_t callbacks, acc = 1;

NOINLINE void idle_work(uv_idle_t *h)
{
	XORSHIFT_LOOP(acc, 8, 1);
	if ((++callbacks & 255) == 0 && clock_ns(CLOCK_MONOTONIC) >= end_ns)
		uv_idle_stop(h);
}

static void start(uv_timer_t *t)
{
	double *seconds = t->data;

	bench_begin();
	end_ns = clock_ns(CLOCK_MONOTONIC) + (int64_t)(*seconds * 1e9);
	uv_idle_start(&idler, idle_work);
}

int main(int argc, char **argv)
{
	double wait = argc > 1 ? atof(argv[1]) : 1, seconds = argc > 2 ? atof(argv[2]) : 2;
	uv_loop_t *loop = uv_default_loop();

	uv_idle_init(loop, &idler);
	uv_timer_init(loop, &waiter);
	waiter.data = &seconds;
	uv_timer_start(&waiter, start, (uint64_t)(wait * 1e3), 0);
	uv_run(loop, UV_RUN_DEFAULT);
	int64_t wall = clock_ns(CLOCK_MONOTONIC) - bench_start_ns;
	bench_end();
	bench_note("callbacks=%llu\tns_per_callback=%.2f\tacc=%llu", (unsigned long long)callbacks,
		   (double)wall / (double)callbacks, (unsigned long long)(acc & 1));
	return 0;
}
