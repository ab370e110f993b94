/*
 * symbolize-bench: resolves addresses with recce's symbolizer
 * (src/symbols/symbolize.h) the way `addr2line -a -f -i -e BIN` does, for figure 6
 * of `make bench`.
 *
 *     symbolize-bench BIN < ADDRESSES > FRAMES
 *
 * ADDRESSES holds one hexadecimal ELF virtual address a line (as nm shows
 * them). For each, FRAMES gets the address, then a function line and a
 * file:line line per frame, innermost first ("??" and "??:?" when
 * unknown), like addr2line. Timing goes to standard error as key=value
 * fields: open_s (opening the file), lookup_s (every lookup and its
 * output), addresses and frames.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symbols/symbolize.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sym_frame frames[64];
	struct sym_file *f;
	char line[128];
	static char outbuf[1 << 16];
	long addresses = 0, nframes = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: symbolize-bench BIN < ADDRESSES\n");
		return 2;
	}
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	double t0 = now();
	struct symbolizer *s = symbolizer_new();
	if (!s || symbolizer_open(s, argv[1], -1, &f) < 0) {
		fprintf(stderr, "symbolize-bench: cannot open '%s'\n", argv[1]);
		return 1;
	}
	double t1 = now();
	while (fgets(line, sizeof(line), stdin)) {
		uint64_t vaddr = strtoull(line, NULL, 16);
		int n = symbolizer_lookup(s, f, vaddr, frames, 64);
		printf("0x%016" PRIx64 "\n", vaddr);
		if (n <= 0)
			fputs("??\n??:?\n", stdout);
		for (int i = 0; i < n; i++) {
			printf("%s\n%s:", frames[i].function ? frames[i].function : "??",
			       frames[i].file ? frames[i].file : "??");
			if (frames[i].line > 0)
				printf("%d\n", frames[i].line);
			else
				fputs("?\n", stdout);
		}
		addresses++;
		nframes += n > 0 ? n : 0;
	}
	fflush(stdout);
	double t2 = now();
	fprintf(stderr, "open_s=%.6f\tlookup_s=%.6f\taddresses=%ld\tframes=%ld\n", t1 - t0, t2 - t1,
		addresses, nframes);
	symbolizer_free(s);
	return 0;
}
