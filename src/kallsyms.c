/*
 * Kernel symbols (see kallsyms.h). /proc/kallsyms gives start addresses
 * only, so a symbol reaches to the next higher one; the last symbol has no
 * known end and is left out rather than stretched over whatever follows.
 * Only text symbols are kept: kernel stacks hold code addresses, and a
 * data symbol in between would cut a function short.
 */
#include "kallsyms.h"

#include "array.h"
#include "lines.h"
#include "ranges.h"
#include "strpool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kernel symbol names are at most 512 bytes (KSYM_NAME_LEN), module
 * names 56; longer lines are not kallsyms lines. */
#define KALLSYMS_LINE_MAX    1024
#define KALLSYMS_MAX_SYMBOLS (10 * 1000 * 1000)

struct ksym {
	uint64_t addr;
	const char *name, *module;
	uint32_t rank;
};

struct kallsyms {
	struct ranges ranges; /* idx: syms[] */
	struct ksym *syms;
	size_t n, cap;
	struct strpool strings;
};

/* Parses "ADDR TYPE NAME[\t[MODULE]]"; returns 1 for a text symbol. */
static int parse_line(const char *line, uint64_t *addr, char *type, const char **name,
		      size_t *name_len, const char **module, size_t *module_len)
{
	const char *p = line;

	if (lines_parse_hex(&p, addr) < 0 || lines_skip_blanks(&p) == 0 || !*p)
		return 0;
	*type = *p++;
	if (lines_skip_blanks(&p) == 0 || !*p)
		return 0;
	*name = p;
	*name_len = strcspn(p, " \t");
	p += *name_len;
	lines_skip_blanks(&p);
	*module = "";
	*module_len = 0;
	if (*p == '[') {
		const char *end = strchr(p, ']');
		if (!end)
			return 0;
		*module = p + 1;
		*module_len = (size_t)(end - p - 1);
	}
	return strchr("tTwW", *type) != NULL && *type != '\0';
}

static int add_symbol(struct kallsyms *k, uint64_t addr, char type, const char *name,
		      size_t name_len, const char *module, size_t module_len)
{
	struct ksym *v = array_reserve(k->syms, &k->cap, k->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	k->syms = v;
	struct ksym *s = &k->syms[k->n];
	s->addr = addr;
	s->name = strpool_intern_len(&k->strings, name, name_len);
	s->module = strpool_intern_len(&k->strings, module, module_len);
	if (!s->name || !s->module)
		return -ENOMEM;
	/* Of aliases at one address, a global name wins over a local one,
	 * then the later line. */
	s->rank = (uint32_t)(type == 'T' || type == 'W') << 31 | (uint32_t)k->n;
	k->n++;
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int build_ranges(struct kallsyms *k)
{
	size_t next = k->n; /* first index with a higher address */
	int rc;

	if (k->n == 0)
		return 0;
	qsort(k->syms, k->n, sizeof(*k->syms), ksym_cmp);
	for (size_t i = k->n; i-- > 0;) {
		if (i + 1 < k->n && k->syms[i + 1].addr != k->syms[i].addr)
			next = i + 1;
		if (next == k->n)
			continue;
		rc = ranges_add(&k->ranges, k->syms[i].addr, k->syms[next].addr, (uint32_t)i,
				k->syms[i].rank);
		if (rc < 0)
			return rc;
	}
	return ranges_finish(&k->ranges, 0);
}

static int load_file(struct kallsyms *k, FILE *f)
{
	char line[KALLSYMS_LINE_MAX];
	int r, rc;

	while ((r = lines_read(f, line, sizeof(line))) != 0) {
		uint64_t addr;
		char type;
		const char *name, *module;
		size_t name_len, module_len;

		if (r < 0 ||
		    !parse_line(line, &addr, &type, &name, &name_len, &module, &module_len))
			continue;
		/* kptr_restrict shows every address as zero: nothing to use. */
		if (addr == 0 || name_len == 0)
			continue;
		if (k->n >= KALLSYMS_MAX_SYMBOLS)
			break;
		rc = add_symbol(k, addr, type, name, name_len, module, module_len);
		if (rc < 0)
			return rc;
	}
	if (ferror(f))
		return -EIO;
	return build_ranges(k);
}

struct kallsyms *kallsyms_load(const char *path)
{
	struct kallsyms *k;
	FILE *f = fopen(path ? path : "/proc/kallsyms", "re");
	int rc;

	if (!f)
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k) {
		fclose(f);
		errno = ENOMEM;
		return NULL;
	}
	ranges_init(&k->ranges);
	strpool_init(&k->strings);
	rc = load_file(k, f);
	fclose(f);
	if (rc < 0) {
		kallsyms_free(k);
		errno = -rc;
		return NULL;
	}
	return k;
}

void kallsyms_free(struct kallsyms *k)
{
	if (!k)
		return;
	ranges_release(&k->ranges);
	strpool_release(&k->strings);
	free(k->syms);
	free(k);
}

size_t kallsyms_count(const struct kallsyms *k)
{
	return k ? k->ranges.n : 0;
}

const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr, const char **module,
			    uint64_t *sym_start)
{
	const struct range *r = k ? ranges_find(&k->ranges, addr) : NULL;

	if (!r)
		return NULL;
	const struct ksym *s = &k->syms[r->idx];
	if (module)
		*module = s->module;
	if (sym_start)
		*sym_start = s->addr;
	return s->name;
}
