/* Fuzz target: the .gopclntab reader (symbols/gopclntab.h), on a Go
 * binary's function table as the binary gives it, and on a section that
 * may hold one: untrusted. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "symbols/gopclntab.h"

struct input {
	const uint8_t *data;
	size_t size;
};

static int read_input(void *arg, uint64_t vaddr, void *buf, size_t n)
{
	const struct input *in = arg;

	if (vaddr > in->size || in->size - vaddr < n)
		return -1;
	memcpy(buf, in->data + vaddr, n);
	return 0;
}

static int boundary(void *arg, uint64_t pc)
{
	(void)pc;
	return ++*(int *)arg > 100000; /* a bound on a lying table's work */
}

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
		/* And its frames, the inline trees read from the input too
		 * (its bytes as the binary's memory from address 0). */
		struct gopclntab_frame fr[8];
		int n =
		    gopclntab_frames(in->data, in->size, 1, read_input, (void *)in, pcs[i], fr, 8);
		for (int k = 0; k < n; k++)
			if ((fr[k].function && !strlen(fr[k].function)) ||
			    (fr[k].file && (!strlen(fr[k].file) || fr[k].line <= 0)))
				return 1;
	}
	return lo >= hi || strlen(name) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = {data, size};

	int boundaries = 0;

	(void)gopclntab_functions(data, size, check, &in);
	(void)gopclntab_boundaries(data, size, boundary, &boundaries);
	/* And the header looked for inside a section of data, as in an
	 * externally linked executable: a table found is one the readers
	 * take. */
	int64_t at = gopclntab_find(data, size);
	if (at >= 0 && (at % 8 || (uint64_t)at >= size ||
			gopclntab_functions(data + at, size - (size_t)at, check, &in) <= 0))
		abort();
	return 0;
}
