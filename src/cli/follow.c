/*
 * Following event files until there is no reason to (follow.h).
 */
#include <poll.h>
#include <stdlib.h>

#include "cli/follow.h"
#include "util/clock.h"

int follow_wait(int sfd, const int *pidfds, size_t n, uint64_t deadline)
{
	uint64_t now = time_now_ns(CLOCK_MONOTONIC);
	if (deadline && now >= deadline)
		return 0;
	int ms =
	    deadline && deadline - now < 100000000ULL ? (int)((deadline - now) / 1000000) : 100;
	struct pollfd p = {sfd, POLLIN, 0};
	poll(&p, 1, ms);
	if (p.revents & POLLIN)
		return 0;
	size_t watched = 0, gone = 0;
	for (size_t i = 0; i < n; i++) {
		if (pidfds[i] < 0)
			continue;
		struct pollfd q = {pidfds[i], POLLIN, 0};
		watched++;
		gone += poll(&q, 1, 0) == 1 && (q.revents & POLLIN);
	}
	return !(watched && gone == watched);
}

uint64_t follow_deadline(double seconds)
{
	return seconds > 0 ? time_now_ns(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9) : 0;
}
