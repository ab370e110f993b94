/* Fuzz target: the /proc/PID/maps line parser (proc/proc-maps.h), line by
 * line as the registry reads the file. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "proc/proc-maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	for (char *line = text, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		struct proc_map m;
		uint64_t inode;
		const char *path;
		if (proc_maps_parse_line(line, &m, &inode, &path))
			(void)strlen(path);
	}
	free(text);
	return 0;
}
