/*
 * Times and spans as people write them (see when.h), read with strtod
 * and strptime in the local time zone.
 */
#include "util/when.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int when_span(const char *s, int64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"", 1e9},	  {"s", 1e9},	 {"ms", 1e6},	{"us", 1e3},   {"ns", 1},
		     {"m", 60e9}, {"min", 60e9}, {"h", 3600e9}, {"d", 86400e9}};
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v >= 0))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) != 0)
			continue;
		double t = v * units[i].ns;
		if (t > 9.2e18)
			return -1;
		*ns = (int64_t)t;
		return 0;
	}
	return -1;
}

/* s read with fmt as local time of the day *tm holds, whole: 0 or -1. */
static int local_time(const char *s, const char *fmt, struct tm *tm, int64_t *ns)
{
	const char *end = strptime(s, fmt, tm);

	if (!end || *end)
		return -1;
	tm->tm_isdst = -1;
	time_t t = mktime(tm);
	if (t == (time_t)-1)
		return -1;
	*ns = (int64_t)t * 1000000000;
	return 0;
}

int when_time(const char *s, int64_t now, int64_t day_of, int64_t *ns)
{
	int64_t span;

	if (!s || !*s)
		return -1;
	if (strcmp(s, "now") == 0) {
		*ns = now;
		return 0;
	}
	if (s[0] == '-') {
		if (when_span(s + 1, &span) < 0)
			return -1;
		*ns = now - span;
		return 0;
	}
	if (s[0] == '@') {
		char *end;
		errno = 0;
		double v = strtod(s + 1, &end);
		if (errno || end == s + 1 || *end || !(v >= 0) || v > 9.2e9)
			return -1;
		*ns = (int64_t)(v * 1e9);
		return 0;
	}
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	if (local_time(s, "%Y-%m-%d %H:%M:%S", &tm, ns) == 0)
		return 0;
	memset(&tm, 0, sizeof(tm));
	if (local_time(s, "%Y-%m-%d %H:%M", &tm, ns) == 0)
		return 0;
	memset(&tm, 0, sizeof(tm));
	if (local_time(s, "%Y-%m-%d", &tm, ns) == 0)
		return 0;
	time_t day = (time_t)(day_of / 1000000000);
	struct tm base;
	if (!localtime_r(&day, &base))
		return -1;
	tm = base;
	tm.tm_sec = 0;
	if (local_time(s, "%H:%M:%S", &tm, ns) == 0)
		return 0;
	tm = base;
	tm.tm_sec = 0;
	return local_time(s, "%H:%M", &tm, ns);
}
