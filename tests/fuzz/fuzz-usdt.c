/* Fuzz target: USDT argument operands as notes write them
 * (symbols/usdt.h: "-4@112(%rsp)", one per space-separated word) and
 * trace patterns (trace/trace-pattern.h), usdt: and py: ones with their
 * argument lists included. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "symbols/usdt.h"
#include "trace/trace-pattern.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct trace_pattern p;
	struct usdt_arg a;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	for (char *w = text, *end; *w; w = end) {
		while (*w == ' ')
			w++;
		for (end = w; *end && *end != ' '; end++)
			;
		if (end > w)
			(void)usdt_arg_parse(w, (size_t)(end - w), &a);
	}
	if (trace_pattern_parse(text, &p) == 0)
		trace_pattern_release(&p);
	free(text);
	return 0;
}
