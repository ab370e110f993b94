/*
 * Unit tests of span-track.c and time-labels.c: the span and token of a
 * thread at any time from its events, where events were lost, for writers
 * that state their depth and for older ones; and samples moved to labelled
 * copies with their values and their timeline.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "events/ring-format.h"
#include "events/span-track.h"
#include "profile/profile.h"
#include "profile/time-labels.h"
#include "profile/timeline.h"

/* A reader whose clock is the events' own (realtime = time). */
static struct ring_thread threads[4];
static struct ring_reader reader = {.threads = threads, .nthreads = 4};

static struct ring_event ev(uint32_t thread, uint64_t time, uint16_t kind, const char *name,
			    unsigned depth, int token)
{
	struct ring_event e = {0};
	e.time_ns = time;
	e.tid = threads[thread].tid;
	e.thread = thread;
	e.kind = kind;
	e.name = name ? name : "";
	e.flags = (uint16_t)(RECCE_FLAG_STATE | depth | (token ? RECCE_FLAG_TOKEN : 0));
	return e;
}

static void feed(struct span_track *t, struct ring_event *e, size_t n)
{
	assert_int_equal(span_track_feed(t, 0, &reader, e, n), 0);
}

static void expect(struct span_track *t, int32_t tid, uint64_t time, enum span_state span,
		   const char *name)
{
	struct span_at at;
	span_track_at(t, tid, time, &at);
	assert_int_equal(at.span, span);
	if (name)
		assert_string_equal(at.name, name);
}

static void setup_threads(void)
{
	memset(threads, 0, sizeof(threads));
	threads[0].tid = 100;
	threads[1].tid = 200;
	threads[2].tid = 300;
	threads[3].tid = 100; /* a later thread with the tid of the first */
}

static void test_nesting(void **state)
{
	setup_threads();
	struct span_track *t = span_track_new();
	struct ring_event e[] = {
	    ev(0, 10, RECCE_EV_SPAN_BEGIN, "a", 1, 0),	 ev(0, 20, RECCE_EV_SPAN_BEGIN, "b", 2, 0),
	    ev(0, 30, RECCE_EV_SPAN_END, "b", 1, 0),	 ev(0, 40, RECCE_EV_SPAN_END, "a", 0, 0),
	    ev(3, 1000, RECCE_EV_SPAN_BEGIN, "c", 1, 0),
	};
	feed(t, e, 5);
	expect(t, 100, 5, SPAN_NONE, NULL);
	expect(t, 100, 15, SPAN_KNOWN, "a");
	expect(t, 100, 25, SPAN_KNOWN, "b");
	expect(t, 100, 35, SPAN_KNOWN, "a");
	expect(t, 100, 45, SPAN_NONE, NULL);
	expect(t, 100, 2000, SPAN_KNOWN, "c"); /* the later thread of that tid */
	expect(t, 999, 15, SPAN_NONE, NULL);   /* a thread that wrote nothing */
	assert_int_equal(span_track_spans(t), 5);
	span_track_free(t);
}

static void test_loss_then_state(void **state)
{
	setup_threads();
	struct span_track *t = span_track_new();
	struct ring_event a[] = {ev(1, 10, RECCE_EV_SPAN_BEGIN, "x", 1, 0)};
	feed(t, a, 1);
	/* Lost: the begin of an inner span "y"; the next record says two
	 * spans are open and the thread carries a token. */
	threads[1].lost = 5;
	struct ring_event b[] = {
	    ev(1, 100, RECCE_EV_COUNTER, "n", 2, 1),
	    ev(1, 120, RECCE_EV_SPAN_END, "y", 1, 1),
	    ev(1, 130, RECCE_EV_SPAN_END, "x", 0, 0),
	};
	feed(t, b, 3);
	struct span_at at;
	expect(t, 200, 5, SPAN_NONE, NULL);
	expect(t, 200, 50, SPAN_UNKNOWN, NULL); /* where events were lost */
	span_track_at(t, 200, 50, &at);
	assert_int_equal(at.token, SPAN_UNKNOWN);
	expect(t, 200, 110, SPAN_KNOWN, "y"); /* named by its end */
	span_track_at(t, 200, 110, &at);
	assert_int_equal(at.token, SPAN_UNKNOWN); /* a token whose id was lost */
	expect(t, 200, 125, SPAN_KNOWN, "x");
	expect(t, 200, 135, SPAN_NONE, NULL);
	span_track_at(t, 200, 135, &at);
	assert_int_equal(at.token, SPAN_NONE);

	/* Lost after its last event: unknown to the end. */
	threads[1].lost = 7;
	assert_int_equal(span_track_end(t, 0, &reader), 0);
	expect(t, 200, 125, SPAN_KNOWN, "x");
	expect(t, 200, 500, SPAN_UNKNOWN, NULL);
	span_track_free(t);
}

static void test_unnamed_open(void **state)
{
	setup_threads();
	struct span_track *t = span_track_new();
	/* The ring went round before the first read: a span is open whose
	 * begin was lost and whose end is never read. */
	threads[0].lost = 3;
	struct ring_event a[] = {ev(0, 50, RECCE_EV_EVENT, "e", 1, 0),
				 ev(0, 60, RECCE_EV_SPAN_BEGIN, "in", 2, 0),
				 ev(0, 70, RECCE_EV_SPAN_END, "in", 1, 0)};
	feed(t, a, 3);
	expect(t, 100, 40, SPAN_UNKNOWN, NULL); /* before the first event read */
	expect(t, 100, 55, SPAN_UNKNOWN, NULL); /* open, its name not known */
	expect(t, 100, 65, SPAN_KNOWN, "in");
	expect(t, 100, 75, SPAN_UNKNOWN, NULL);
	span_track_free(t);
}

static void test_tokens(void **state)
{
	setup_threads();
	struct span_track *t = span_track_new();
	struct ring_event a[] = {ev(2, 10, RECCE_EV_SEQ_BEGIN, "req", 0, 1),
				 ev(2, 20, RECCE_EV_SEQ_SEND, "req", 0, 1),
				 ev(2, 30, RECCE_EV_SEQ_END, "req", 0, 0)};
	a[0].id_hi = a[1].id_hi = 0x4bf92f3577b34da6ULL;
	a[0].id_lo = a[1].id_lo = 0xa3ce929d0e0e4736ULL;
	feed(t, a, 3);
	struct span_at at;
	span_track_at(t, 300, 5, &at);
	assert_int_equal(at.token, SPAN_NONE);
	span_track_at(t, 300, 25, &at);
	assert_int_equal(at.token, SPAN_KNOWN);
	assert_true(at.id_hi == 0x4bf92f3577b34da6ULL && at.id_lo == 0xa3ce929d0e0e4736ULL);
	span_track_at(t, 300, 35, &at);
	assert_int_equal(at.token, SPAN_NONE);
	span_track_free(t);
}

static void test_older_writer(void **state)
{
	setup_threads();
	struct span_track *t = span_track_new();
	struct ring_event a[] = {ev(2, 10, RECCE_EV_SPAN_BEGIN, "p", 0, 0),
				 ev(2, 20, RECCE_EV_SPAN_BEGIN, "q", 0, 0),
				 ev(2, 30, RECCE_EV_SPAN_END, "p", 0, 0)};
	for (int i = 0; i < 3; i++)
		a[i].flags = 0; /* no state in its records */
	feed(t, a, 3);
	expect(t, 300, 25, SPAN_KNOWN, "q");
	expect(t, 300, 35, SPAN_NONE, NULL); /* p's end closes q too */
	threads[2].lost = 1;
	struct ring_event b[] = {ev(2, 50, RECCE_EV_SPAN_BEGIN, "r", 0, 0)};
	b[0].flags = 0;
	feed(t, b, 1);
	expect(t, 300, 35, SPAN_UNKNOWN, NULL); /* from its last event before the loss */
	expect(t, 300, 60, SPAN_UNKNOWN, NULL); /* and to the end: no state to find again */
	span_track_free(t);
}

static void test_stop(void **state)
{
	setup_threads();
	struct span_track *t = span_track_new();
	struct ring_event a[] = {ev(0, 10, RECCE_EV_SPAN_BEGIN, "a", 1, 0),
				 ev(0, 20, RECCE_EV_COUNTER, "n", 1, 0)};
	feed(t, a, 2);
	/* The file could not be read on at 100: unknown from its last event. */
	assert_int_equal(span_track_stop(t, 0, &reader, 100), 0);
	expect(t, 100, 15, SPAN_KNOWN, "a");
	expect(t, 100, 25, SPAN_UNKNOWN, NULL);
	expect(t, 200, 150, SPAN_UNKNOWN, NULL); /* a thread with no event read */
	expect(t, 200, 50, SPAN_NONE, NULL);
	span_track_free(t);
}

/* time-labels: tid 1's samples before time 15 get span=a. */
static size_t label_early(void *arg, int64_t tid, int64_t time_ns, struct profile_label *labels)
{
	(void)arg;
	if (tid != 1 || time_ns >= 15)
		return 0;
	labels[0] = (struct profile_label){"span", "a", 0, NULL};
	return 1;
}

static void test_time_labels(void **state)
{
	struct profile *p = profile_new();
	struct profile_value_type types[] = {{"samples", "count"}, {"cpu", "nanoseconds"}};
	assert_int_equal(profile_set_sample_types(p, types, 2), 0);
	uint64_t fn = profile_add_function(p, "f", "f", "", 0);
	struct profile_line line = {fn, 0};
	uint64_t loc = profile_add_location(p, 0, 0x10, &line, 1);
	int64_t v0[] = {2, 200}, v1[] = {1, 100};
	struct profile_label l0[] = {{"tid", NULL, 1, NULL}}, l1[] = {{"tid", NULL, 2, NULL}};
	assert_int_equal(profile_add_sample(p, &loc, 1, v0, l0, 1), 0);
	assert_int_equal(profile_add_sample(p, &loc, 1, v1, l1, 1), 0);
	struct timeline_writer w;
	unsigned char *buf;
	size_t len;
	timeline_writer_init(&w, 0);
	assert_int_equal(timeline_writer_add(&w, 0, 10, 100), 0);
	assert_int_equal(timeline_writer_add(&w, 1, 12, 100), 0);
	assert_int_equal(timeline_writer_add(&w, 0, 20, 100), 0);
	assert_int_equal(timeline_writer_take(&w, &buf, &len), 0);
	timeline_writer_release(&w);
	assert_int_equal(profile_set_timeline(p, buf, len), 0);
	free(buf);

	assert_int_equal(profile_label_times(p, label_early, NULL), 0);
	/* tid 1: one sample left unlabelled, one moved; tid 2 untouched. */
	assert_int_equal(p->nsamples, 3);
	assert_int_equal(p->samples[0].values[0], 1);
	assert_int_equal(p->samples[0].values[1], 100);
	assert_null(profile_sample_label(&p->samples[0], "span"));
	assert_int_equal(p->samples[2].values[0], 1);
	assert_string_equal(profile_sample_label(&p->samples[2], "span")->str, "a");
	assert_int_equal(profile_sample_label(&p->samples[2], "tid")->num, 1);
	struct timeline_event *e;
	size_t n;
	assert_int_equal(timeline_decode(p->timeline, p->timeline_len, p->nsamples, &e, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(e[0].index, 2);
	assert_int_equal(e[1].index, 1);
	assert_int_equal(e[2].index, 0);
	free(e);

	/* Labelled again: the labelled sample moves whole into a copy with
	 * the same labels, and the emptied one goes. */
	assert_int_equal(profile_label_times(p, label_early, NULL), 0);
	assert_int_equal(p->nsamples, 3);
	assert_int_equal(p->samples[2].values[0], 1);
	assert_string_equal(profile_sample_label(&p->samples[2], "span")->str, "a");
	profile_free(p);
}

/* time-labels: at 10 one label whose value holds what once separated
 * labels, at 20 the two labels it reads like. */
static size_t label_crafted(void *arg, int64_t tid, int64_t time_ns, struct profile_label *labels)
{
	(void)arg;
	(void)tid;
	if (time_ns == 10) {
		labels[0] = (struct profile_label){"span", "a\x1etrace\x1f" "b", 0, NULL};
		return 1;
	}
	labels[0] = (struct profile_label){"span", "a", 0, NULL};
	labels[1] = (struct profile_label){"trace", "b", 0, NULL};
	return 2;
}

static void test_time_labels_crafted(void **state)
{
	struct profile *p = profile_new();
	struct profile_value_type types[] = {{"samples", "count"}};
	assert_int_equal(profile_set_sample_types(p, types, 1), 0);
	uint64_t fn = profile_add_function(p, "f", "f", "", 0);
	struct profile_line line = {fn, 0};
	uint64_t loc = profile_add_location(p, 0, 0x10, &line, 1);
	int64_t v[] = {2};
	struct profile_label l[] = {{"tid", NULL, 1, NULL}};
	assert_int_equal(profile_add_sample(p, &loc, 1, v, l, 1), 0);
	struct timeline_writer w;
	unsigned char *buf;
	size_t len;
	timeline_writer_init(&w, 0);
	assert_int_equal(timeline_writer_add(&w, 0, 10, 100), 0);
	assert_int_equal(timeline_writer_add(&w, 0, 20, 100), 0);
	assert_int_equal(timeline_writer_take(&w, &buf, &len), 0);
	timeline_writer_release(&w);
	assert_int_equal(profile_set_timeline(p, buf, len), 0);
	free(buf);

	assert_int_equal(profile_label_times(p, label_crafted, NULL), 0);
	/* Two sets of labels: two copies, each with its own. */
	assert_int_equal(p->nsamples, 2);
	int crafted = 0, two = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct profile_label *trace = profile_sample_label(&p->samples[i], "trace");
		const char *span = profile_sample_label(&p->samples[i], "span")->str;
		assert_int_equal(p->samples[i].values[0], 1);
		crafted += !trace && strcmp(span, "a\x1etrace\x1f" "b") == 0;
		two += trace && strcmp(trace->str, "b") == 0 && strcmp(span, "a") == 0;
	}
	assert_int_equal(crafted, 1);
	assert_int_equal(two, 1);
	profile_free(p);
}

static void test_no_timeline(void **state)
{
	struct profile *p = profile_new();
	assert_int_equal(profile_label_times(p, label_early, NULL), -ENODATA);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nesting),	 cmocka_unit_test(test_loss_then_state),
	    cmocka_unit_test(test_unnamed_open), cmocka_unit_test(test_tokens),
	    cmocka_unit_test(test_older_writer), cmocka_unit_test(test_stop),
	    cmocka_unit_test(test_time_labels),	 cmocka_unit_test(test_time_labels_crafted),
	    cmocka_unit_test(test_no_timeline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
