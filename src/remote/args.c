/*
 * The arguments a command takes to a node (see args.h): its -o files
 * found, checked, and made each node's own.
 */
#include "remote/args.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/path.h"

int remote_keeps_outputs(int argc, char **argv)
{
	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--wrap") == 0 || strncmp(argv[i], "--wrap=", 7) == 0)
			return 1;
	return 0;
}

const char *remote_output_arg(int argc, char **argv, int *i, const char **prefix)
{
	const char *a = argv[*i];

	*prefix = "";
	if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && *i + 1 < argc)
		return argv[++*i];
	if (strncmp(a, "--output=", 9) == 0) {
		*prefix = "--output=";
		return a + 9;
	}
	if (strncmp(a, "-o", 2) == 0 && a[2]) {
		*prefix = "-o";
		return a + 2;
	}
	return NULL;
}

/* Whether two -o files of argv (before "--"; "-" aside) have one base
 * name, which would be one file on the node. A --wrap set stays there
 * under the names its trace gives it. */
static int outputs_clash(int argc, char **argv)
{
	if (remote_keeps_outputs(argc, argv))
		return 0;
	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		int at = i;
		const char *prefix, *path = remote_output_arg(argc, argv, &i, &prefix);
		if (!path || strcmp(path, "-") == 0)
			continue;
		for (int j = 0; j < at; j++) {
			const char *earlier = remote_output_arg(argc, argv, &j, &prefix);
			if (earlier && strcmp(earlier, "-") != 0 &&
			    strcmp(path_base(earlier), path_base(path)) == 0)
				return 1;
		}
	}
	return 0;
}

int remote_check_args(int argc, char **argv)
{
	int is_files = strcmp(argv[0], "files") == 0, is_fetch = strcmp(argv[0], "fetch") == 0;
	int names = 0;

	for (int i = 1; i < argc; i++)
		names += strcmp(argv[i], "--remove") != 0;
	if ((is_files && argc > 1) || (is_fetch && !names))
		return REMOTE_ARGS_FILES;
	return outputs_clash(argc, argv) ? REMOTE_ARGS_SAME_NAME : 0;
}

const char *remote_outputs_collide(int argc, char **argv)
{
	if (remote_keeps_outputs(argc, argv))
		return NULL;
	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *prefix;
		const char *path = remote_output_arg(argc, argv, &i, &prefix);
		if (path && strcmp(path, "-") != 0 && !strstr(path, REMOTE_NODE_MARK))
			return path;
	}
	return NULL;
}

void remote_node_label(const char *node, char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return;
	if (strncmp(node, "unix:", 5) == 0)
		node += 5;
	else if (strncmp(node, "ssh://", 6) == 0)
		node += 6;
	for (const char *c = node; *c && n + 1 < len; c++) {
		int keep = isalnum((unsigned char)*c) || *c == '.' || *c == '-';
		if (!keep && (n == 0 || buf[n - 1] == '_'))
			continue; /* no leading or doubled '_' */
		buf[n++] = keep ? *c : '_';
	}
	while (n && buf[n - 1] == '_')
		n--;
	buf[n] = '\0';
	if (!n)
		snprintf(buf, len, "node");
}

char *remote_node_path(const char *s, const char *node)
{
	char label[256], *out = NULL;
	size_t len = 0, mark = strlen(REMOTE_NODE_MARK);
	FILE *fp = open_memstream(&out, &len);

	if (!fp)
		return NULL;
	remote_node_label(node, label, sizeof(label));
	for (const char *m; (m = strstr(s, REMOTE_NODE_MARK)); s = m + mark)
		fprintf(fp, "%.*s%s", (int)(m - s), s, label);
	fputs(s, fp);
	if (fclose(fp) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

char **remote_argv_for_node(const char *node, int argc, char **argv)
{
	char **v = calloc((size_t)argc + 1, sizeof(*v));

	if (!v)
		return NULL;
	memcpy(v, argv, (size_t)argc * sizeof(*v));
	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *prefix;
		const char *path = remote_output_arg(argc, argv, &i, &prefix);
		if (!path || !strstr(argv[i], REMOTE_NODE_MARK))
			continue;
		if (!(v[i] = remote_node_path(argv[i], node))) {
			v[i] = argv[i];
			remote_argv_free(argc, v, argv);
			return NULL;
		}
	}
	return v;
}

void remote_argv_free(int argc, char **v, char **argv)
{
	for (int i = 0; v && i < argc; i++)
		if (v[i] != argv[i])
			free(v[i]);
	free(v);
}
