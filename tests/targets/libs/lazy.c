/*
 * lazy: a library tests/targets/torture loads and unloads in a loop. It
 * is linked for lazy binding (-z lazy), so each of its calls below goes
 * through a PLT slot the loader's resolver binds on the first call after
 * each load: the thread that calls it spends its time in the PLT and in
 * _dl_runtime_resolve, with all six argument registers live across it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exported and so interposable: lazy_entry reaches it through the PLT. */
long lazy_mix(long a, long b, long c, long d, long e, long f)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f;
}

/* lazy_mix's result when every libc call below gave the right answer;
 * the caller checks it against its own sum. */
long lazy_entry(long a, long b, long c, long d, long e, long f)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", a);
	if (strtol(buf, NULL, 10) != a || strlen(buf) == 0)
		return -1;
	if (memcmp(buf, "-", 1) == 0 && a >= 0)
		return -1;
	return lazy_mix(a, b, c, d, e, f);
}
