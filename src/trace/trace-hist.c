/*
 * Log2 latency histograms (see trace-hist.h). The bars are drawn in the
 * style of bcc's funclatency so that the shape reads at a glance.
 */
#include "trace/trace-hist.h"

#include <stdlib.h>
#include <string.h>

void trace_hist_init(struct trace_hist *h)
{
	memset(h, 0, sizeof(*h));
}

static int bucket_of(uint64_t ns)
{
	return ns ? 63 - __builtin_clzll(ns) : 0;
}

void trace_hist_add(struct trace_hist *h, uint64_t ns)
{
	if (h->count < TRACE_HIST_SAMPLES)
		h->samples[h->count] = ns;
	if (!h->count || ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->count++;
	h->sum += ns;
	h->buckets[bucket_of(ns)]++;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

uint64_t trace_hist_quantile(struct trace_hist *h, double q)
{
	if (!h->count)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	/* The nearest-rank definition: the smallest value with at least q of
	 * the durations at or below it. */
	uint64_t rank = (uint64_t)(q * (double)h->count + 0.999999);
	if (rank < 1)
		rank = 1;
	if (h->count <= TRACE_HIST_SAMPLES) {
		qsort(h->samples, h->count, sizeof(h->samples[0]), cmp_u64);
		return h->samples[rank - 1];
	}
	uint64_t seen = 0;
	for (int b = 0; b < TRACE_HIST_BUCKETS; b++) {
		seen += h->buckets[b];
		if (seen >= rank) {
			uint64_t top = b >= 63 ? UINT64_MAX : (2ULL << b) - 1;
			return top < h->max ? top : h->max;
		}
	}
	return h->max;
}

/* v hundredths as "V.VV UNIT", in integers: a trace formats a duration
 * for every call it shows. */
static void hundredths(char *buf, size_t len, uint64_t v, const char *unit)
{
	char tmp[32];
	size_t n = sizeof(tmp);

	tmp[--n] = 0;
	for (const char *u = unit + strlen(unit); u > unit;)
		tmp[--n] = *--u;
	tmp[--n] = ' ';
	tmp[--n] = (char)('0' + v % 10);
	tmp[--n] = (char)('0' + v / 10 % 10);
	tmp[--n] = '.';
	v /= 100;
	do
		tmp[--n] = (char)('0' + v % 10);
	while ((v /= 10) && n > 0);
	snprintf(buf, len, "%s", tmp + n);
}

void trace_format_duration(char *buf, size_t len, uint64_t ns)
{
	/* Rounded to the nearest hundredth, as %.2f would. */
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 999995)
		hundredths(buf, len, (ns + 5) / 10, "us");
	else if (ns < 999995000)
		hundredths(buf, len, (ns + 5000) / 10000, "ms");
	else
		hundredths(buf, len, (ns + 5000000) / 10000000, "s");
}

void trace_hist_print(struct trace_hist *h, const char *name, FILE *out)
{
	char mn[32], med[32], p99[32], mx[32];
	uint64_t peak = 0;

	trace_format_duration(mn, sizeof(mn), h->min);
	trace_format_duration(med, sizeof(med), trace_hist_quantile(h, 0.5));
	trace_format_duration(p99, sizeof(p99), trace_hist_quantile(h, 0.99));
	trace_format_duration(mx, sizeof(mx), h->max);
	fprintf(out, "%s: count %llu, min %s, median %s, p99 %s, max %s\n", name,
		(unsigned long long)h->count, mn, med, p99, mx);
	for (int b = 0; b < TRACE_HIST_BUCKETS; b++)
		if (h->buckets[b] > peak)
			peak = h->buckets[b];
	for (int b = 0; b < TRACE_HIST_BUCKETS && peak; b++) {
		if (!h->buckets[b])
			continue;
		char lo[32], hi[32], bar[41];
		trace_format_duration(lo, sizeof(lo), b ? 1ULL << b : 0);
		trace_format_duration(hi, sizeof(hi), b >= 63 ? UINT64_MAX : (2ULL << b) - 1);
		size_t w = (size_t)(h->buckets[b] * 40 / peak);
		memset(bar, '*', w);
		bar[w] = 0;
		fprintf(out, "  %10s .. %-10s %8llu |%-40s|\n", lo, hi,
			(unsigned long long)h->buckets[b], bar);
	}
}
