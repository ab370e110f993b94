/*
 * Kernel symbols (see kallsyms.h). /proc/kallsyms gives start addresses
 * only, so a symbol reaches to the next higher one; the last symbol has no
 * known end and is left out rather than stretched over whatever follows.
 * Only text symbols are kept: kernel stacks hold code addresses, and a
 * data symbol in between would cut a function short.
 *
 * The file has over 100,000 lines and a recording that saw one kernel
 * frame waits for it at exit, so loading is one pass over the whole file
 * read in a buffer: names are cut out in place and copied once into a
 * compact block; the table is sorted only where the file is not (module
 * symbols), and a lookup is a binary search over distinct start addresses.
 */
#include "symbols/kallsyms.h"

#include "util/array.h"
#include "util/lines.h"
#include "util/readall.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Kernel symbol names are at most 512 bytes (KSYM_NAME_LEN), module
 * names 56; longer lines are not kallsyms lines. */
#define KALLSYMS_LINE_MAX    1024
#define KALLSYMS_MAX_SYMBOLS (10 * 1000 * 1000)
#define KALLSYMS_MAX_BYTES   ((size_t)1 << 30)

struct ksym {
	uint64_t addr;
	const char *name, *module;
	uint32_t rank; /* among aliases at one address the highest wins */
};

struct kallsyms {
	struct ksym *syms; /* distinct addresses, ascending */
	size_t n;	   /* syms[n - 1] has no end and is never found */
	char *names;	   /* every name and module, NUL-terminated */
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

/* Cuts the text symbols out of buf (names NUL-terminated in place). */
static int parse_all(char *buf, size_t len, struct ksym **out, size_t *count)
{
	struct ksym *v = NULL;
	size_t n = 0, cap = 0;
	char *end = buf + len;

	for (char *line = buf; line < end;) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		char *next = nl ? nl + 1 : end;
		uint64_t addr;
		char type;
		const char *name, *module;
		size_t name_len, module_len;

		if (nl)
			*nl = '\0';
		int text = (size_t)(next - line) <= KALLSYMS_LINE_MAX &&
			   parse_line(line, &addr, &type, &name, &name_len, &module, &module_len);
		line = next;
		/* kptr_restrict shows every address as zero: nothing to use. */
		if (!text || addr == 0 || name_len == 0)
			continue;
		if (n >= KALLSYMS_MAX_SYMBOLS)
			break;
		struct ksym *grown = array_reserve(v, &cap, n + 1, sizeof(*v));
		if (!grown) {
			free(v);
			return -ENOMEM;
		}
		v = grown;
		((char *)name)[name_len] = '\0';
		if (module_len)
			((char *)module)[module_len] = '\0';
		/* Of aliases at one address, a global name wins over a local
		 * one, then the later line. */
		v[n] = (struct ksym){addr, name, module,
				     (uint32_t)(type == 'T' || type == 'W') << 31 | (uint32_t)n};
		n++;
	}
	*out = v;
	*count = n;
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* vmlinux's symbols come sorted and modules' follow in load order: sort
 * the tail after the sorted prefix and merge the two. */
static int sort_syms(struct ksym *v, size_t n)
{
	size_t p = 1;

	while (p < n && v[p - 1].addr <= v[p].addr)
		p++;
	if (p >= n)
		return 0;
	qsort(v + p, n - p, sizeof(*v), ksym_cmp);
	struct ksym *head = malloc(p * sizeof(*v));
	if (!head)
		return -ENOMEM;
	memcpy(head, v, p * sizeof(*v));
	size_t i = 0, j = p, k = 0;
	while (i < p && j < n)
		v[k++] = v[j].addr < head[i].addr ? v[j++] : head[i++];
	while (i < p)
		v[k++] = head[i++];
	free(head);
	return 0;
}

/* One entry per address, the alias of highest rank. */
static size_t dedupe(struct ksym *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (k > 0 && v[k - 1].addr == v[i].addr) {
			if (v[i].rank > v[k - 1].rank)
				v[k - 1] = v[i];
		} else {
			v[k++] = v[i];
		}
	}
	return k;
}

/* Copies the names the table keeps into one block, so that the file's
 * buffer can go. Consecutive symbols of one module share its string. */
static int compact_names(struct kallsyms *k)
{
	size_t total = 1;

	for (size_t i = 0; i < k->n; i++) {
		total += strlen(k->syms[i].name) + 1;
		if (i == 0 || strcmp(k->syms[i].module, k->syms[i - 1].module) != 0)
			total += strlen(k->syms[i].module) + 1;
	}
	char *block = malloc(total), *w = block;
	if (!block)
		return -ENOMEM;
	const char *prev_in = NULL, *prev_out = NULL;
	*w++ = '\0'; /* "" for vmlinux */
	for (size_t i = 0; i < k->n; i++) {
		struct ksym *s = &k->syms[i];
		size_t len = strlen(s->name) + 1;
		memcpy(w, s->name, len);
		s->name = w;
		w += len;
		if (!*s->module) {
			s->module = block;
		} else if (prev_in && strcmp(s->module, prev_in) == 0) {
			s->module = prev_out;
		} else {
			len = strlen(s->module) + 1;
			memcpy(w, s->module, len);
			prev_in = s->module;
			prev_out = s->module = w;
			w += len;
		}
	}
	k->names = block;
	return 0;
}

static int load_fd(struct kallsyms *k, int fd)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = read_all(fd, KALLSYMS_MAX_BYTES, &buf, &len);

	if (rc < 0)
		return rc;
	rc = parse_all(buf, len, &k->syms, &k->n);
	if (rc == 0)
		rc = sort_syms(k->syms, k->n);
	if (rc == 0) {
		k->n = dedupe(k->syms, k->n);
		rc = compact_names(k);
	}
	free(buf);
	return rc;
}

struct kallsyms *kallsyms_load(const char *path)
{
	int fd = open(path ? path : "/proc/kallsyms", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	struct kallsyms *k = calloc(1, sizeof(*k));
	int rc = k ? load_fd(k, fd) : -ENOMEM;
	close(fd);
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
	free(k->syms);
	free(k->names);
	free(k);
}

size_t kallsyms_count(const struct kallsyms *k)
{
	return k && k->n > 0 ? k->n - 1 : 0;
}

const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr, const char **module,
			    uint64_t *sym_start)
{
	if (!k || k->n < 2 || addr < k->syms[0].addr || addr >= k->syms[k->n - 1].addr)
		return NULL;
	/* The last start <= addr; the one after it ends the symbol. */
	size_t lo = 0, hi = k->n - 1;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	const struct ksym *s = &k->syms[lo];
	if (module)
		*module = s->module;
	if (sym_start)
		*sym_start = s->addr;
	return s->name;
}
