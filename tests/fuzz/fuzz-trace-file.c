/* Fuzz target: the trace-file reader (trace/trace-file.h), every record
 * it accepts printed in each format, as replay would. */
#include <stdio.h>

#include "fuzz.h"
#include "trace/trace-event.h"
#include "trace/trace-file.h"

static int show(const struct trace_record *r, void *ctx)
{
	FILE *out = ctx;

	for (int f = TRACE_FORMAT_TEXT; f <= TRACE_FORMAT_CHROME; f++)
		trace_record_print(r, (enum trace_format)f, 0, out);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	struct trace_file_info info;
	FILE *out = fopen("/dev/null", "w");
	int fd = fuzz_file(data, size, path);

	if (fd >= 0 && out)
		trace_file_read(path, show, out, &info);
	if (out)
		fclose(out);
	if (fd >= 0)
		fuzz_file_done(fd, path);
	return 0;
}
