/* Fuzz target: the perf-map parser (symbols/perfmap.h), then a lookup of
 * every function's start and a search by name, as the symbolizer and
 * trace's JIT message do. */
#include <unistd.h>

#include "fuzz.h"
#include "symbols/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	struct perfmap *m = NULL;
	int fd = fuzz_file(data, size, path);

	if (fd < 0)
		return 0;
	if (perfmap_load(getpid(), getuid(), path, &m) == 0) {
		const char *name;
		for (size_t i = 0; (name = perfmap_name(m, i)) != NULL; i++) {
			uint64_t start;
			(void)perfmap_lookup(m, (uint64_t)i * 4096 + 1, &start);
		}
		perfmap_free(m);
	}
	fuzz_file_done(fd, path);
	return 0;
}
