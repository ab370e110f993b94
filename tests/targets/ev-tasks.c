/*
 * An event loop with known tasks, for tests/cli/tasks.t. The thread
 * "loop-1" runs 50 tasks "parse" twice each (1 ms busy a run) and 20
 * tasks "handle" (3 ms) that each create a child "db_query" (2 ms) which
 * runs after its parent finished; the thread "loop-2" runs 30 tasks
 * "timer" (0.5 ms), each created 1 ms (by the clock) before it runs. Each
 * run is busy for its time by the clock, and the program measures its own
 * runs and how long each task was ready before it (from its creation or
 * its last run), as the least and the most it can have been (the clock
 * read around the calls that make the events), its longest run and its
 * whole time running, each as the least and the most it can have been.
 * At the end it prints, per type, "truth TYPE CREATED RUNS EXEC_NS
 * WAIT_LO_NS WAIT_HI_NS MAX_LO_NS MAX_HI_NS EXEC_HI_NS", then
 * "ready", and sleeps until killed
 * (or, with an argument "loop", keeps running "tick" tasks every 10 ms).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "recce.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct truth {
	const char *type;
	uint64_t created, runs, exec_ns, wait_lo, wait_hi, max_lo, max_hi, exec_hi;
};

/* A run that lasted from t0 to t1 by the clock inside its events, and
 * from s0 to t2 around them: the longest so far, at least and at most. */
static void longest(struct truth *t, uint64_t s0, uint64_t t0, uint64_t t1, uint64_t t2)
{
	if (t1 - t0 > t->max_lo)
		t->max_lo = t1 - t0;
	if (t2 - s0 > t->max_hi)
		t->max_hi = t2 - s0;
}

/* When a task became ready: the clock before and after the call. */
struct ready {
	uint64_t lo, hi;
};
static struct truth truths[4] = {{"parse"}, {"handle"}, {"db_query"}, {"timer"}};

/* One run of task id, ready since *ready: start, busy for ns, stop; its
 * time and its wait measured, and *ready is its end. */
static void run(uint64_t id, uint64_t ns, struct truth *t, struct ready *ready)
{
	uint64_t s0 = now_ns();
	recce_task_start(id);
	uint64_t t0 = now_ns();
	while (now_ns() - t0 < ns)
		;
	uint64_t t1 = now_ns();
	recce_task_stop(id);
	uint64_t t2 = now_ns();
	t->runs++;
	t->exec_ns += t1 - t0;
	t->exec_hi += t2 - s0;
	t->wait_lo += s0 > ready->hi ? s0 - ready->hi : 0;
	t->wait_hi += t0 - ready->lo;
	longest(t, s0, t0, t1, t2);
	*ready = (struct ready){t1, t2};
}

/* Creates task id: when it is ready from. */
static struct ready create(uint64_t id, const char *type, uint64_t parent, struct truth *t)
{
	struct ready at = {now_ns(), 0};
	recce_task_create(id, type, parent);
	at.hi = now_ns();
	t->created++;
	return at;
}

static void *loop2(void *arg)
{
	prctl(PR_SET_NAME, "loop-2");
	for (uint64_t i = 0; i < 30; i++) {
		uint64_t id = 0x30000 + i;
		struct ready ready = create(id, "timer", 0, &truths[3]);
		while (now_ns() - ready.hi < 1000000)
			;
		run(id, 500000, &truths[3], &ready);
		recce_task_finish(id);
	}
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;

	prctl(PR_SET_NAME, "loop-1");
	pthread_create(&t, NULL, loop2, NULL);
	for (uint64_t i = 0; i < 50; i++) {
		uint64_t id = 0x10000 + i;
		struct ready ready = create(id, "parse", 0, &truths[0]);
		run(id, 1000000, &truths[0], &ready);
		run(id, 1000000, &truths[0], &ready);
		recce_task_finish(id);
	}
	for (uint64_t i = 0; i < 20; i++) {
		uint64_t id = 0x20000 + i, child = 0x28000 + i;
		recce_task_create(id, "handle", 0);
		truths[1].created++;
		uint64_t s0 = now_ns();
		recce_task_start(id);
		uint64_t t0 = now_ns();
		while (now_ns() - t0 < 3000000)
			;
		struct ready ready = create(child, "db_query", id, &truths[2]);
		uint64_t t1 = now_ns();
		recce_task_stop(id);
		uint64_t t2 = now_ns();
		longest(&truths[1], s0, t0, t1, t2);
		truths[1].runs++;
		truths[1].exec_ns += t1 - t0;
		truths[1].exec_hi += t2 - s0;
		recce_task_finish(id);
		run(child, 2000000, &truths[2], &ready);
		recce_task_finish(child);
	}
	pthread_join(t, NULL);
	for (int i = 0; i < 4; i++)
		printf("truth %s %llu %llu %llu %llu %llu %llu %llu %llu\n", truths[i].type,
		       (unsigned long long)truths[i].created, (unsigned long long)truths[i].runs,
		       (unsigned long long)truths[i].exec_ns, (unsigned long long)truths[i].wait_lo,
		       (unsigned long long)truths[i].wait_hi, (unsigned long long)truths[i].max_lo,
		       (unsigned long long)truths[i].max_hi, (unsigned long long)truths[i].exec_hi);
	printf("ready\n");
	fflush(stdout);
	struct truth tick = {"tick"};
	for (uint64_t i = 0; argc > 1 && strcmp(argv[1], "loop") == 0; i++) {
		struct ready ready = create(0x40000 + i, "tick", 0, &tick);
		run(0x40000 + i, 100000, &tick, &ready);
		recce_task_finish(0x40000 + i);
		usleep(10000);
	}
	for (;;)
		pause();
}
