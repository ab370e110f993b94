/*
 * The table of Python frames named in sampled stacks (see py-names.h):
 * one entry per distinct (function, file, line), found again through
 * the interned text of the three.
 */
#include "proc/py-names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/strpool.h"
#include "util/u64map.h"

struct py_name {
	const char *name, *file;
	int line;
};

struct py_names {
	struct strpool strings;
	struct u64map by_key; /* interned "line\tfile\tname" -> id */
	struct py_name *v;
	size_t n, cap;
};

struct py_names *py_names_new(void)
{
	struct py_names *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	strpool_init(&t->strings);
	u64map_init(&t->by_key);
	return t;
}

void py_names_free(struct py_names *t)
{
	if (!t)
		return;
	strpool_release(&t->strings);
	u64map_release(&t->by_key);
	free(t->v);
	free(t);
}

uint64_t py_names_id(struct py_names *t, const char *name, const char *file, int line)
{
	size_t len = strlen(name) + strlen(file) + 16;
	char *key = malloc(len);
	uint64_t id;

	if (!key)
		return 0;
	snprintf(key, len, "%d\t%s\t%s", line, file, name);
	const char *k = strpool_intern(&t->strings, key);
	free(key);
	if (!k)
		return 0;
	if (u64map_get(&t->by_key, (uint64_t)(uintptr_t)k, &id))
		return id;
	if (t->n >= PY_STACK_ID)
		return 0;
	struct py_name *v = array_reserve(t->v, &t->cap, t->n + 1, sizeof(*v));
	if (!v)
		return 0;
	t->v = v;
	struct py_name *e = &t->v[t->n];
	e->name = strpool_intern(&t->strings, name);
	e->file = strpool_intern(&t->strings, file);
	e->line = line;
	if (!e->name || !e->file ||
	    u64map_put(&t->by_key, (uint64_t)(uintptr_t)k, (uint64_t)t->n + 1) < 0)
		return 0;
	return ++t->n;
}

int py_names_get(const struct py_names *t, uint64_t id, const char **name, const char **file,
		 int *line)
{
	if (!t || !id || id > t->n)
		return -ENOENT;
	const struct py_name *e = &t->v[id - 1];
	*name = e->name;
	*file = e->file;
	*line = e->line;
	return 0;
}
