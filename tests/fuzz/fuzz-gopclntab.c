/* Fuzz target: the .gopclntab reader (symbols/gopclntab.h), on a Go
 * binary's function table as the binary gives it: untrusted. */
#include <string.h>

#include "fuzz.h"
#include "symbols/gopclntab.h"

struct input {
	const uint8_t *data;
	size_t size;
};

static int check(void *arg, uint64_t lo, uint64_t hi, const char *name)
{
	const struct input *in = arg;

	/* Every name is read to its end, as the symbolizer will; and the
	 * line of the function's first, middle and last byte, with its
	 * file's name. */
	uint64_t pcs[] = {lo, lo + (hi - lo) / 2, hi - 1};
	for (size_t i = 0; i < 3; i++) {
		const char *file;
		int line;
		if (gopclntab_line(in->data, in->size, pcs[i], &file, &line) == 0 &&
		    (!strlen(file) || line <= 0))
			return 1;
	}
	return lo >= hi || strlen(name) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = {data, size};

	(void)gopclntab_functions(data, size, check, &in);
	return 0;
}
