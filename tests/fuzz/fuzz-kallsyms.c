/* Fuzz target: the /proc/kallsyms reader (symbols/kallsyms.h), then
 * lookups across the address space. */
#include <unistd.h>

#include "fuzz.h"
#include "symbols/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_file(data, size, path);

	if (fd < 0)
		return 0;
	struct kallsyms *k = kallsyms_load(path);
	if (k) {
		static const uint64_t probes[] = {0, 1, 0xffffffff81000000ull,
						  0xffffffffc0000000ull, UINT64_MAX};
		for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
			const char *module;
			uint64_t start;
			(void)kallsyms_lookup(k, probes[i], &module, &start);
		}
		kallsyms_free(k);
	}
	fuzz_file_done(fd, path);
	return 0;
}
