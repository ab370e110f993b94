/* Fuzz target: the .eh_frame reader (symbols/eh-frame.h), then a lookup
 * in the ranges it found, as the symbolizer does for stripped code. The
 * section is placed at an address taken from the input's first bytes, so
 * that pc-relative pointers wrap too. */
#include <string.h>

#include "fuzz.h"
#include "symbols/eh-frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ranges r;
	uint64_t addr = 0x1000;

	if (size >= 8) {
		memcpy(&addr, data, 8);
		data += 8;
		size -= 8;
	}
	ranges_init(&r);
	if (eh_frame_ranges(data, size, addr, &r) > 0 && ranges_finish(&r, 0) == 0)
		for (size_t i = 0; i < r.n && i < 64; i++)
			(void)ranges_find(&r, r.v[i].lo + (r.v[i].hi - r.v[i].lo) / 2);
	ranges_release(&r);
	return 0;
}
