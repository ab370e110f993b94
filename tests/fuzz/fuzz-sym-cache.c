/* Fuzz target: a symbol cache table (symbols/sym-cache.h) as read from a
 * disk another process may have damaged: every index check, the bucket
 * index built on load, then lookups at and around each interval start,
 * reading every string they return in full. The checksum is skipped, so
 * that mutations reach the index checks. */
#include <string.h>

#include "fuzz.h"
#include "symbols/sym-cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_cache *c;
	struct sym_frame fr[64];
	size_t nsegs, total = 0;

	if (sym_cache_parse_unchecked(data, size, &c) != 0)
		return 0;
	(void)sym_cache_segments(c, &nsegs);
	/* Addresses from the input's tail: near its interval starts when it
	 * is a table at all. */
	for (size_t i = 0; i + 8 <= size && i < 64 * 8; i += 8) {
		uint64_t a;
		memcpy(&a, data + size - 8 - i, 8);
		for (uint64_t d = 0; d < 3; d++) {
			int n = sym_cache_lookup(c, a + d - 1, fr, 64);
			for (int k = 0; k < n; k++)
				total += (fr[k].function ? strlen(fr[k].function) : 0) +
					 (fr[k].system_name ? strlen(fr[k].system_name) : 0) +
					 (fr[k].file ? strlen(fr[k].file) : 0);
		}
	}
	sym_cache_free(c);
	return total == (size_t)-1;
}
