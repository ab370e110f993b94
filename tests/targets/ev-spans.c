/*
 * Requests of two steps in librecce spans, for tests/cli/record-spans.t:
 * two threads ("worker-1", "worker-2") each serve requests until killed,
 * a request being
 *
 *   a sequence token begun ("req"), its trace id printed: "id HEX"
 *   parse_work() inside the span "parse"
 *   gap_work() in no span
 *   render_work() inside the span "render"
 *   gap_work() in no span, and the token ended
 *
 * so that a sample in the core of parse_work (its own spin, not edge's)
 * must be labelled parse, of render_work render, of gap_work no span: the
 * edges keep the cores tens of microseconds from any span's edge, far
 * more than the clocks' error. With NOISE, each gap also writes NOISE events (run
 * with a small RECCE_RING_EVENTS: the rings go round between recce's
 * reads and events are lost).
 *
 *   ev-spans [NOISE]      prints "ev-spans: ready" after its first requests
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "recce.h"

static long noise;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void spin(long units)
{
	for (volatile long i = 0; i < units * 1000; i++)
		;
}

/* Beside every edge of a span or a token: a sample here may fall on
 * either side of it (two clocks, each converted); one in a step's core is
 * 50,000 iterations from any edge. */
__attribute__((noinline)) static void edge(void)
{
	spin(50);
}

__attribute__((noinline)) static void parse_work(void)
{
	edge();
	spin(300);
	edge();
}

__attribute__((noinline)) static void render_work(void)
{
	edge();
	spin(700);
	edge();
}

__attribute__((noinline)) static void gap_work(void)
{
	for (long i = 0; i < noise; i++)
		recce_event("noise");
	edge();
	spin(200);
	edge();
}

static void request(void)
{
	char hdr[RECCE_SEQ_HEADER_MAX];

	recce_seq_begin("req");
	if (recce_seq_inject(hdr, sizeof(hdr)) > 35) {
		pthread_mutex_lock(&out_lock);
		printf("id %.32s\n", hdr + 3);
		pthread_mutex_unlock(&out_lock);
	}
	recce_span_begin("parse");
	parse_work();
	recce_span_end("parse");
	gap_work();
	recce_span_begin("render");
	render_work();
	recce_span_end("render");
	gap_work();
	recce_seq_end();
}

static void *worker(void *arg)
{
	prctl(PR_SET_NAME, (const char *)arg);
	for (;;)
		request();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	noise = argc > 1 ? atol(argv[1]) : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	request();
	printf("ev-spans: ready\n");
	if (pthread_create(&t, NULL, worker, "worker-2"))
		return 1;
	worker("worker-1");
	return 0;
}
