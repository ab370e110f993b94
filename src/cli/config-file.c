/*
 * Options files (see config-file.h): read, checked, and turned into
 * --NAME[=VALUE] arguments.
 */
#include "cli/config-file.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/usage.h"
#include "util/array.h"
#include "util/readall.h"

#define CONFIG_MAX_BYTES (1 << 20)

/* s without the blanks around it, in place. */
static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* The file's text, once it is known to be root's own when recce is root:
 * a file another user may change would choose what recce runs as root. */
static char *read_config(const char *cmd, const char *path)
{
	struct stat st;
	char *text;
	size_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		die("cannot read the options file %s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		die("the options file %s is not a regular file", path);
	if (geteuid() == 0 && (st.st_uid != 0 || (st.st_mode & 022)))
		die("the options file %s could be changed by another user than root (owner %d, "
		    "mode %04o), and recce %s runs as root: chown root and chmod go-w it",
		    path, (int)st.st_uid, (unsigned)(st.st_mode & 07777), cmd);
	int err = read_all(fd, CONFIG_MAX_BYTES, &text, &len);
	close(fd);
	if (err)
		die("cannot read the options file %s: %s", path, strerror(-err));
	if (memchr(text, '\0', len))
		die("the options file %s is not text", path);
	return text;
}

/* Appends FILE's options to *v (of *n, cap *cap). */
static void add_file(const char *cmd, const char *path, char ***v, int *n, size_t *cap)
{
	char *text = read_config(cmd, path);
	int lineno = 0;

	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		line = trim(line);
		if (!*line || *line == '#')
			continue;
		size_t name_len = strcspn(line, " \t=");
		char *value = line + name_len;
		if (*value) {
			*value++ = '\0';
			value = trim(value);
			if (*value == '=')
				value = trim(value + 1);
		}
		if (line[0] == '-' || !name_len)
			die("%s line %d: a line is NAME [VALUE], an option of recce %s without its "
			    "dashes, not '%s'",
			    path, lineno, cmd, line);
		size_t len = strlen(line) + strlen(value) + 4;
		char *arg = malloc(len);
		char **grown = array_reserve(*v, cap, (size_t)*n + 2, sizeof(**v));
		if (!arg || !grown)
			die("out of memory");
		snprintf(arg, len, *value ? "--%s=%s" : "--%s", line, value);
		*v = grown;
		(*v)[(*n)++] = arg;
	}
}

int config_expand(const char *cmd, int argc, char **argv, char ***out)
{
	const char *path = NULL;
	int at = -1, width = 0;

	*out = argv;
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--config") == 0) {
			if (i + 1 >= argc)
				usage_die(cmd, "--config wants a file");
			path = argv[i + 1], at = i, width = 2;
		} else if (strncmp(argv[i], "--config=", 9) == 0) {
			path = argv[i] + 9, at = i, width = 1;
		}
	}
	if (!path)
		return argc;
	char **v = NULL;
	size_t cap = 0;
	int n = 0;
	if (!(v = array_reserve(v, &cap, (size_t)argc + 1, sizeof(*v))))
		die("out of memory");
	v[n++] = argv[0];
	add_file(cmd, path, &v, &n, &cap);
	for (int i = 1; i < argc; i++) {
		if (i >= at && i < at + width)
			continue;
		if (!(v = array_reserve(v, &cap, (size_t)n + 2, sizeof(*v))))
			die("out of memory");
		v[n++] = argv[i];
	}
	v[n] = NULL;
	*out = v;
	return n;
}
