/*
 * Runs a fuzz target on inputs without libFuzzer: every file named, and
 * every file of every directory named, once each, in name order. `make
 * check` links each target with this under ASan and UBSan and replays its
 * corpus, so that an input that once crashed recce stays fixed.
 *
 *   fuzz-NAME-replay FILE|DIR...
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "util/readall.h"

static int run_file(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read_all(fd, 64u << 20, &buf, &len) < 0) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	close(fd);
	LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
	free(buf);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	size_t runs = 0;
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad |= run_file(argv[i]);
			runs++;
			continue;
		}
		struct dirent **names;
		int n = scandir(argv[i], &names, NULL, by_name);
		for (int j = 0; j < n; j++) {
			char path[4096];
			if (names[j]->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", argv[i], names[j]->d_name);
				bad |= run_file(path);
				runs++;
			}
			free(names[j]);
		}
		free(names);
	}
	printf("%s: %zu inputs replayed\n", argv[0], runs);
	return bad;
}
