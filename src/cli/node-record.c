/*
 * `recce --node ... record` (see node-record.h): the -o each node's
 * profile comes back to, and the merge of theirs with --merge.
 */
#include "cli/node-record.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd-record.h"
#include "cli/usage.h"
#include "profile/merge.h"
#include "profile/pprof.h"
#include "remote/args.h"

/* A new string of fmt, or NULL when out of memory. */
static char *str_of(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_of(const char *fmt, ...)
{
	char *s;
	va_list ap;

	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

char *node_record_each(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(path), ext = strlen(".pb.gz");
	const char *dot = strrchr(base, '.');
	const char *cut = n > ext && strcmp(path + n - ext, ".pb.gz") == 0 ? path + n - ext
			  : dot && dot > base				   ? dot
									   : path + n;

	return str_of("%.*s." REMOTE_NODE_MARK "%s", (int)(cut - path), path, cut);
}

int node_record_prepare(struct node_record *r, int many, int argc, char **argv)
{
	const char *path = NULL;
	int merge = 0, end = argc;

	memset(r, 0, sizeof(*r));
	r->argc = argc;
	r->argv = argv;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			end = i;
			break;
		} else if (strcmp(argv[i], "--merge") == 0) {
			merge = 1;
		}
	if (strcmp(argv[0], "record") != 0) {
		if (!merge)
			return 0;
		fprintf(stderr, "recce: usage: --merge is for record on several nodes\n");
		return RECCE_EXIT_USAGE;
	}
	for (int i = 1; i < end; i++) {
		const char *prefix, *p = remote_output_arg(argc, argv, &i, &prefix);
		if (p)
			path = p;
	}
	if (path && strcmp(path, "-") == 0) {
		if (!merge)
			return 0; /* it streams */
		fprintf(stderr, "recce: usage: --merge writes a file: give -o FILE\n");
		return RECCE_EXIT_USAGE;
	}
	size_t len = path ? strlen(path) : 0;
	int dir = len && path[len - 1] == '/';
	if (dir && mkdir(path, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr,
			"recce: cannot make the directory '%s' for the nodes' profiles: %s\n", path,
			strerror(errno));
		return RECCE_EXIT_ERROR;
	}
	if (merge) {
		r->merge = !path ? strdup(RECORD_DEFAULT_FILE)
			   : dir ? str_of("%s" RECORD_DEFAULT_FILE, path)
				 : strdup(path);
		if (r->merge && strstr(r->merge, REMOTE_NODE_MARK)) {
			fprintf(stderr, "recce: usage: with --merge, -o names the one merged "
					"profile: it takes no {node}\n");
			return RECCE_EXIT_USAGE;
		}
		r->out = r->merge ? node_record_each(r->merge) : NULL;
	} else if (dir) {
		r->out = str_of("%s" REMOTE_NODE_MARK ".pb.gz", path);
	} else if (!path) {
		r->out = strdup(many ? "recce." REMOTE_NODE_MARK ".pb.gz" : RECORD_DEFAULT_FILE);
	} else {
		return 0; /* as given: remote_outputs_collide() checks it */
	}
	/* The new vector: the command, -o OUT, then its arguments but for
	 * --merge and any -o. */
	char **v = calloc((size_t)argc + 3, sizeof(*v));
	if (!r->out || !v) {
		free(v);
		fprintf(stderr, "recce: out of memory\n");
		return RECCE_EXIT_ERROR;
	}
	int n = 0;
	v[n++] = argv[0];
	v[n++] = "-o";
	v[n++] = r->out;
	for (int i = 1; i < argc; i++) {
		int at = i;
		const char *prefix;
		if (i < end && strcmp(argv[i], "--merge") == 0)
			continue;
		if (i < end && remote_output_arg(argc, argv, &i, &prefix))
			continue;
		v[n++] = argv[at];
	}
	r->argv = v;
	r->argc = n;
	r->changed = 1;
	return 0;
}

/* The comments a merged profile takes from its first node's: what was
 * sampled, and of which processes (so every view gives each its root). */
static int keep_comments(struct profile *dst, const struct profile *src)
{
	static const char *const keys[] = {"event: ", "target: "};
	int err = 0;

	for (size_t i = 0; i < src->ncomments && !err; i++)
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && !err; k++)
			if (strncmp(src->comments[i], keys[k], strlen(keys[k])) == 0)
				err = profile_add_comment(dst, src->comments[i]);
	return err;
}

/* Adds node's profile at path to m, each sample labelled with the node.
 * Returns 0, -ENOENT when there is none, or another -errno (said). */
static int merge_one(struct profile_merger *m, const char *node, const char *path)
{
	struct profile *p = NULL;
	char why[256] = "";
	struct profile_label host = {"host", node, 0, NULL};

	int err = pprof_read_file(path, &p, why, sizeof(why));
	if (err == -ENOENT)
		return err; /* it did not come back: the caller says so */
	if (err) {
		fprintf(stderr, "recce: %s: its profile %s cannot be merged: %s\n", node, path,
			why[0] ? why : strerror(-err));
		return err;
	}
	err = m->dst->ncomments ? 0 : keep_comments(m->dst, p);
	if (!err)
		err = profile_merge(m, p, &host, 1);
	profile_free(p);
	if (err)
		fprintf(stderr, "recce: cannot merge %s: %s\n", path, strerror(-err));
	return err;
}

/* "nodes: a, b": the nodes merged (those with a path), which views give
 * each a root frame. */
static int note_nodes(struct profile *p, const char *const *nodes, size_t n, char **paths)
{
	char *line = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&line, &len);

	if (!fp)
		return -ENOMEM;
	fputs("nodes:", fp);
	for (size_t i = 0, k = 0; i < n; i++)
		if (paths[i])
			fprintf(fp, "%s %s", k++ ? "," : "", nodes[i]);
	int err = fclose(fp) ? -ENOMEM : profile_add_comment(p, line);
	free(line);
	return err;
}

int node_record_finish(const struct node_record *r, const char *const *nodes, size_t n, int status)
{
	struct profile_merger m;
	struct profile *all;
	size_t merged = 0;

	if (!r->merge)
		return status;
	char **paths = calloc(n ? n : 1, sizeof(*paths));
	if (!paths || !(all = profile_new())) {
		free(paths);
		fprintf(stderr, "recce: out of memory\n");
		return RECCE_EXIT_ERROR;
	}
	profile_merger_init(&m, all);
	int err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		if (!(paths[i] = remote_node_path(r->out, nodes[i]))) {
			err = -ENOMEM;
			fprintf(stderr, "recce: out of memory\n");
			break;
		}
		if ((err = merge_one(&m, nodes[i], paths[i])) == -ENOENT) {
			fprintf(stderr,
				"recce: %s: no profile came back: the merge holds the "
				"others\n",
				nodes[i]);
			free(paths[i]);
			paths[i] = NULL; /* not merged, nothing to remove */
			err = 0;
		} else if (!err) {
			merged++;
		}
	}
	profile_merger_release(&m);
	if (!err && merged)
		err = note_nodes(all, nodes, n, paths);
	if (!err && merged) {
		err = pprof_write_file(all, r->merge);
		if (err)
			fprintf(stderr, "recce: cannot write '%s': %s\n", r->merge, strerror(-err));
	}
	if (!err && merged) {
		for (size_t i = 0; i < n; i++)
			if (paths[i])
				unlink(paths[i]);
		fprintf(stderr,
			"recce: wrote %s: the profiles of %zu of %zu nodes in one, each sample "
			"labelled with its node (host)\n",
			r->merge, merged, n);
	} else if (!err) {
		fprintf(stderr, "recce: no node's profile came back: nothing to merge\n");
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	profile_free(all);
	return err || !merged ? RECCE_EXIT_ERROR : status;
}

void node_record_release(struct node_record *r)
{
	if (r->changed)
		free(r->argv);
	free(r->out);
	free(r->merge);
	memset(r, 0, sizeof(*r));
}
