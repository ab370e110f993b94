/* Fuzz target: the pprof reader, gzip-compressed and raw (profile/pprof.h). */
#include "fuzz.h"
#include "profile/pprof.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = NULL;
	char why[256];

	if (pprof_decode(data, size, &p, why, sizeof(why)) == 0)
		profile_free(p);
	return 0;
}
