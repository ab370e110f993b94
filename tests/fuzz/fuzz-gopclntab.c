/* Fuzz target: the .gopclntab reader (symbols/gopclntab.h), on a Go
 * binary's function table as the binary gives it: untrusted. */
#include <string.h>

#include "fuzz.h"
#include "symbols/gopclntab.h"

static int check(void *arg, uint64_t lo, uint64_t hi, const char *name)
{
	(void)arg;
	/* Every name is read to its end, as the symbolizer will. */
	return lo >= hi || strlen(name) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)gopclntab_functions(data, size, check, NULL);
	return 0;
}
