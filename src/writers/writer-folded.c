/*
 * Folded stacks (see writer-folded.h). Every entry's line is built into
 * one growing buffer, the lines are sorted by text, and runs of equal text
 * are written once with the sum of their values.
 */
#include "writers/writer-folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/term-safe.h"
#include "util/sat.h"

struct folded_line {
	size_t offset, len; /* in the text buffer */
	int64_t value;
};

struct folded_text {
	char *buf;
	size_t len, cap;
};

static int text_append(struct folded_text *t, const char *s, size_t n)
{
	char *nb = array_reserve(t->buf, &t->cap, t->len + n, 1);

	if (!nb)
		return -ENOMEM;
	t->buf = nb;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	return 0;
}

/* Appends a frame name, replacing the characters the format reserves and
 * escaping terminal controls (names come from the target). */
static int text_append_name(struct folded_text *t, const char *name)
{
	size_t start = t->len;
	char *copy = NULL, *safe = NULL;

	if (!term_clean(name)) {
		/* Line breaks become '_' as always, other controls escaped:
		 * a byte takes at most 4 (\xNN), so a name of any length fits. */
		size_t len = strlen(name);
		copy = strdup(name);
		safe = malloc(4 * len + 1);
		if (!copy || !safe) {
			free(copy);
			free(safe);
			return -ENOMEM;
		}
		for (char *c = copy; *c; c++)
			if (*c == '\n' || *c == '\r')
				*c = '_';
		name = term_safe(copy, safe, 4 * len + 1);
	}
	int rc = text_append(t, name, strlen(name));
	free(copy);
	free(safe);
	if (rc < 0)
		return -ENOMEM;
	for (char *c = t->buf + start; c < t->buf + t->len; c++)
		if (*c == ';' || *c == '\n' || *c == '\r')
			*c = '_';
	return 0;
}

/* qsort_r() comparison; base is the text buffer. */
static int line_cmp(const void *a, const void *b, void *base)
{
	const struct folded_line *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp((char *)base + x->offset, (char *)base + y->offset, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int lines_build(const struct stack_set *set, struct folded_text *t,
		       struct folded_line *lines)
{
	for (size_t k = 0; k < set->n; k++) {
		const struct stack_entry *e = &set->entries[k];

		lines[k].offset = t->len;
		lines[k].value = e->value;
		if (!e->nframes && text_append_name(t, "[unknown]") < 0)
			return -ENOMEM;
		for (size_t i = 0; i < e->nframes; i++) {
			if (i && text_append(t, ";", 1) < 0)
				return -ENOMEM;
			if (text_append_name(t, e->frames[i].name) < 0)
				return -ENOMEM;
		}
		lines[k].len = t->len - lines[k].offset;
	}
	return 0;
}

int folded_write(FILE *out, const struct stack_set *set)
{
	struct folded_text t = {0};
	struct folded_line *lines = calloc(set->n ? set->n : 1, sizeof(*lines));
	int ret = lines ? lines_build(set, &t, lines) : -ENOMEM;

	if (ret)
		goto out_free;
	qsort_r(lines, set->n, sizeof(*lines), line_cmp, t.buf);
	for (size_t i = 0; i < set->n;) {
		int64_t sum = 0;
		size_t j = i;

		while (j < set->n && line_cmp(&lines[i], &lines[j], t.buf) == 0)
			sum = sat_add(sum, lines[j++].value);
		fwrite(t.buf + lines[i].offset, 1, lines[i].len, out);
		fprintf(out, " %" PRId64 "\n", sum);
		i = j;
	}
	ret = ferror(out) ? -EIO : 0;
out_free:
	free(lines);
	free(t.buf);
	return ret;
}
