/*
 * The pairing of samples with Python frame records (see py-match.h).
 */
#include "profile/py-match.h"

void py_match_init(struct py_match *m, uint64_t window_ns)
{
	m->window_ns = window_ns;
	m->side = PY_SIDE_UNKNOWN;
	m->leaning = PY_SIDE_UNKNOWN;
	m->agreed = 0;
}

int py_match_orphan(const struct py_match *m, const struct py_match_run *head,
		    const struct py_match_run *next, uint64_t time)
{
	switch (m->side) {
	case PY_SIDE_AFTER:
		return head->start < time;
	case PY_SIDE_BEFORE:
		return next && next->end <= time;
	default:
		return head->end + m->window_ns < time;
	}
}

/* A match within the window, on the side of its sample it fell on (a
 * sample timed inside the run, which no kernel does, teaches nothing). */
static void learn(struct py_match *m, const struct py_match_run *head, uint64_t time)
{
	enum py_match_side s = head->start >= time ? PY_SIDE_AFTER
			       : head->end <= time ? PY_SIDE_BEFORE
						   : PY_SIDE_UNKNOWN;

	if (s != m->leaning) {
		m->leaning = s;
		m->agreed = 0;
	}
	if (s != PY_SIDE_UNKNOWN && ++m->agreed >= PY_MATCH_LEARN)
		m->side = s;
}

enum py_match_take py_match_take(struct py_match *m, const struct py_match_run *head, uint64_t time)
{
	uint64_t d;

	if (m->side == PY_SIDE_UNKNOWN) {
		if (head->start > time + m->window_ns)
			return PY_TAKE_NO;
		learn(m, head, time);
		return PY_TAKE_YES;
	}
	if (m->side == PY_SIDE_BEFORE) {
		if (head->start > time)
			return PY_TAKE_NO; /* a later sample's */
		d = head->end < time ? time - head->end : 0;
	} else {
		if (head->start < time)
			return PY_TAKE_NO; /* an orphan */
		d = head->start - time;
	}
	if (d <= m->window_ns)
		return PY_TAKE_YES;
	return d <= PY_MATCH_STALL_NS ? PY_TAKE_IF_NO_DROPS : PY_TAKE_NO;
}
