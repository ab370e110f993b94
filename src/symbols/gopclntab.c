/*
 * Go's function table (see gopclntab.h). Its header, then a table of
 * (entry, offset of the function's record) pairs sorted by entry with one
 * more entry for the end of the text; a function's record starts with its
 * entry and the offset of its name. What changed between versions:
 *
 *   1.2-1.15 (0xfffffffb): pairs of pointers right after the header;
 *            names and records at offsets from the table's start.
 *   1.16-1.17 (0xfffffffa): the header gives the offsets of the name
 *            table and of the pairs; records at offsets from the pairs.
 *   1.18+ (0xfffffff0, 0xfffffff1 from 1.20): as 1.16, but entries are
 *            32-bit offsets from the text's start, which the header gives.
 */
#include "symbols/gopclntab.h"

#include <errno.h>
#include <string.h>

enum { GO12 = 0xfffffffb, GO116 = 0xfffffffa, GO118 = 0xfffffff0, GO120 = 0xfffffff1 };

struct table {
	const uint8_t *data;
	size_t len;
	unsigned ptr; /* pointer size: 4 or 8 */
};

/* The unsigned word of size bytes at off, little-endian; 0 on *bad. */
static uint64_t word(const struct table *t, uint64_t off, unsigned size, int *bad)
{
	uint64_t v = 0;

	if (off > t->len || t->len - off < size) {
		*bad = 1;
		return 0;
	}
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)t->data[off + i] << (8 * i);
	return v;
}

/* The NUL-terminated name at off, or NULL. */
static const char *name_at(const struct table *t, uint64_t off)
{
	if (off >= t->len || !memchr(t->data + off, 0, t->len - off))
		return NULL;
	return (const char *)t->data + off;
}

int gopclntab_functions(const uint8_t *data, size_t len,
			int (*fn)(void *arg, uint64_t lo, uint64_t hi, const char *name), void *arg)
{
	struct table t = {data, len, 0};
	int bad = 0;

	if (len < 16)
		return -EINVAL;
	uint32_t magic = (uint32_t)word(&t, 0, 4, &bad);
	t.ptr = data[7];
	if (data[4] || data[5] || (t.ptr != 4 && t.ptr != 8) ||
	    (magic != GO12 && magic != GO116 && magic != GO118 && magic != GO120))
		return -EINVAL;
	unsigned p = t.ptr;
	uint64_t nfunc = word(&t, 8, p, &bad);
	uint64_t text = 0, names = 0, pairs, records, pair_size, entry_size;
	if (magic == GO12) {
		names = records = 0;
		pairs = 8 + p;
		entry_size = p;
	} else if (magic == GO116) {
		names = word(&t, 8 + 2 * p, p, &bad);
		pairs = records = word(&t, 8 + 6 * p, p, &bad);
		entry_size = p;
	} else {
		text = word(&t, 8 + 2 * p, p, &bad);
		names = word(&t, 8 + 3 * p, p, &bad);
		pairs = records = word(&t, 8 + 7 * p, p, &bad);
		entry_size = 4;
	}
	pair_size = 2 * entry_size;
	/* The pairs lie within the table (the end entry after them, the
	 * records and the names are checked as they are read). */
	if (bad || pairs > len || nfunc > (len - pairs) / pair_size)
		return -EINVAL;
	int n = 0;
	for (uint64_t i = 0; i < nfunc; i++) {
		uint64_t at = pairs + i * pair_size;
		uint64_t lo = word(&t, at, entry_size, &bad);
		uint64_t rec = word(&t, at + entry_size, entry_size, &bad);
		uint64_t hi = word(&t, at + pair_size, entry_size, &bad);
		/* The record's name offset follows its entry (a pointer, or a
		 * 32-bit offset from 1.18). */
		uint64_t nameoff = word(&t, records + rec + entry_size, 4, &bad);
		if (bad)
			return -EINVAL;
		const char *name = name_at(&t, names + nameoff);
		if (!name || !*name || hi <= lo)
			continue;
		int rc = fn(arg, text + lo, text + hi, name);
		if (rc)
			return rc;
		n++;
	}
	return n;
}
