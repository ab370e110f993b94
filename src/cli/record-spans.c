/*
 * record's spans (see record-spans.h): the follower in record's loop, and
 * the labels of each sample from the track it filled.
 */
#include "cli/record-spans.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/usage.h"
#include "events/span-follow.h"
#include "profile/profile.h"
#include "profile/time-labels.h"
#include "sampling/sampler.h"
#include "util/evloop.h"

#define UNKNOWN "[unknown]"

struct span_follow *record_spans_new(const pid_t *pids, size_t n)
{
	struct span_follow *f;

	if (!n)
		return NULL;
	if (span_follow_new(pids, n, &f) < 0)
		die("out of memory");
	return f;
}

int record_spans_run(struct sampler *s, struct span_follow *f)
{
	struct evloop loop;

	evloop_init(&loop);
	int ret = sampler_attach(s, &loop, evloop_stop_done, &loop);
	if (!ret)
		ret = span_follow_attach(f, &loop);
	if (!ret)
		ret = evloop_run(&loop);
	int r = sampler_drain(s);
	/* After the samples: the spans of every sample's time are read. */
	span_follow_finish(f);
	evloop_release(&loop);
	ret = ret ? ret : r;
	r = sampler_finish(s);
	return ret ? ret : r;
}

struct labeller {
	const struct span_track *track;
	int64_t start_ns;
	char id[33];
	uint64_t samples, in_span, span_unknown, with_token, token_unknown;
};

static size_t label_sample(void *arg, int64_t tid, int64_t time_ns, struct profile_label *labels)
{
	struct labeller *l = arg;
	struct span_at at;
	size_t n = 0;

	span_track_at(l->track, (int32_t)tid, (uint64_t)(l->start_ns + time_ns), &at);
	l->samples++;
	if (at.span != SPAN_NONE) {
		l->in_span += at.span == SPAN_KNOWN;
		l->span_unknown += at.span == SPAN_UNKNOWN;
		labels[n++] = (struct profile_label){
		    "span_name", at.span == SPAN_KNOWN ? at.name : UNKNOWN, 0, NULL};
	}
	if (at.token != SPAN_NONE) {
		l->with_token += at.token == SPAN_KNOWN;
		l->token_unknown += at.token == SPAN_UNKNOWN;
		if (at.token == SPAN_KNOWN)
			snprintf(l->id, sizeof(l->id), "%016" PRIx64 "%016" PRIx64, at.id_hi,
				 at.id_lo);
		labels[n++] = (struct profile_label){
		    "trace_id", at.token == SPAN_KNOWN ? l->id : UNKNOWN, 0, NULL};
	}
	return n;
}

int record_spans_label(struct span_follow *f, struct profile *p, int64_t start_ns,
		       int keep_timeline)
{
	struct span_follow_stats st;
	int status = 0;

	span_follow_get_stats(f, &st);
	if (st.err && st.err_opening)
		warning("cannot look for the librecce events of process %d (%s): if it writes "
			"any, its samples have no span labels",
			(int)st.err_pid, strerror(-st.err));
	else if (st.err)
		warning("the librecce events of process %d could not be read to the end (%s): "
			"samples after that are labelled span_name=" UNKNOWN,
			(int)st.err_pid, strerror(-st.err));
	if (st.files && p->timeline) {
		struct labeller l = {span_follow_track(f), start_ns, "", 0, 0, 0, 0, 0};
		int err = profile_label_times(p, label_sample, &l);
		if (err) {
			error(
			    "cannot label the samples with their spans: %s; the profile is written "
			    "without them",
			    strerror(-err));
			status = 1;
		} else if (l.in_span || l.with_token || l.span_unknown || l.token_unknown) {
			note("%" PRIu64 " of %" PRIu64 " samples fell in librecce spans, %" PRIu64
			     " carried a trace id: labelled span_name and trace_id (recce report "
			     "--tag span_name=NAME)",
			     l.in_span, l.samples, l.with_token);
		}
		if (!err && (l.span_unknown || l.token_unknown))
			warning("%" PRIu64
				" samples fell where their thread's librecce events were "
				"overwritten before recce read them (%" PRIu64
				" events lost): their span or trace id is " UNKNOWN,
				l.span_unknown > l.token_unknown ? l.span_unknown : l.token_unknown,
				st.lost);
		uint64_t full = span_track_full(span_follow_track(f));
		if (full)
			warning("recce keeps %u spans at most: samples after the first %.1f s are "
				"labelled " UNKNOWN,
				SPAN_TRACK_MAX, (double)((int64_t)full - start_ns) / 1e9);
	}
	if (!keep_timeline) {
		p->timeline = NULL; /* it was kept for the labels alone */
		p->timeline_len = 0;
	}
	return status;
}
