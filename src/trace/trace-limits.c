/*
 * Trace limits (see trace-limits.h). The circuit breaker uses a fixed
 * window, not a sliding one: it costs two integers and is what recon_trace
 * users expect.
 */
#include "trace/trace-limits.h"

#include <errno.h>
#include <stdlib.h>

void trace_limits_init(struct trace_limits *l, uint64_t count_max, uint64_t time_ns,
		       uint64_t rate_n, uint64_t rate_ms, uint64_t now_ns)
{
	*l = (struct trace_limits){0};
	l->count_max = count_max;
	l->time_ns = time_ns;
	l->rate_n = rate_n;
	l->rate_ms = rate_ms;
	l->start_ns = now_ns;
	l->window_start_ns = now_ns;
	l->flood_ns = now_ns;
}

enum trace_stop trace_limits_seen(struct trace_limits *l, uint64_t t)
{
	if (l->stop)
		return l->stop;
	if (l->rate_n) {
		if (t - l->window_start_ns >= l->rate_ms * 1000000ULL || t < l->window_start_ns) {
			l->window_start_ns = t;
			l->window_count = 0;
		}
		if (++l->window_count > l->rate_n)
			return l->stop = TRACE_STOP_BREAKER;
	}
	return TRACE_RUNNING;
}

enum trace_stop trace_limits_flood(struct trace_limits *l, uint64_t now_ns, uint64_t seen,
				   uint64_t lost)
{
	uint64_t win = l->rate_ms * 1000000ULL;

	if (l->stop || !l->rate_n || now_ns < l->flood_ns + win)
		return l->stop;
	double n = (double)(seen - l->flood_seen) + (double)(lost - l->flood_lost);
	double per_window = n * (double)win / (double)(now_ns - l->flood_ns);
	l->flood_ns = now_ns;
	l->flood_seen = seen;
	l->flood_lost = lost;
	if (per_window > (double)l->rate_n)
		return l->stop = TRACE_STOP_BREAKER;
	return TRACE_RUNNING;
}

enum trace_stop trace_limits_event(struct trace_limits *l, uint64_t t)
{
	enum trace_stop s = trace_limits_seen(l, t);

	return s ? s : trace_limits_shown(l);
}

enum trace_stop trace_limits_shown(struct trace_limits *l)
{
	if (l->stop)
		return l->stop;
	l->count++;
	if (l->count_max && l->count >= l->count_max)
		return l->stop = TRACE_STOP_COUNT;
	return TRACE_RUNNING;
}

enum trace_stop trace_limits_tick(struct trace_limits *l, uint64_t now_ns)
{
	if (!l->stop && l->time_ns && now_ns - l->start_ns >= l->time_ns)
		l->stop = TRACE_STOP_TIME;
	return l->stop;
}

void trace_limits_stop(struct trace_limits *l, enum trace_stop why)
{
	if (!l->stop)
		l->stop = why;
}

uint64_t trace_limits_remaining(const struct trace_limits *l, uint64_t now_ns)
{
	if (!l->time_ns)
		return UINT64_MAX;
	uint64_t used = now_ns - l->start_ns;
	return used >= l->time_ns ? 0 : l->time_ns - used;
}

int trace_limits_parse_rate(const char *s, uint64_t *n, uint64_t *ms)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	unsigned long long a = strtoull(s, &end, 10);
	if (*end != '/' || end[1] < '0' || end[1] > '9' || a == 0)
		return -EINVAL;
	unsigned long long b = strtoull(end + 1, &end, 10);
	if (*end || b == 0 || b > 86400000ULL || a > 1000000000ULL)
		return -EINVAL;
	*n = a;
	*ms = b;
	return 0;
}
