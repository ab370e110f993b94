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
 *
 * Lines (1.16+): a record holds, after its entry and name, the offsets in
 * the pc-value tables of its file numbers and lines (pcfile, pcln) and its
 * compilation unit's first entry in the CU table, which maps the unit's
 * file numbers to names in the file table. A pc-value table is a run of
 * (value delta, pc delta) varint pairs from the function's entry, the
 * value starting at -1 and a delta zigzag-coded, a pc delta counted in
 * instruction quanta (the header's byte 6).
 *
 * Frames (1.16+): a record's pcsp table gives, at each pc, how far SP is
 * below where it was at the call, the return address lying there.
 *
 * Inlined calls (1.18+): a record's pc-value table PCDATA_InlTreeIndex
 * gives, at each pc, the index of the innermost call inlined there (or
 * -1) in the function's inline tree, whose offset from moduledata.gofunc
 * is its funcdata FUNCDATA_InlTree. A tree node names the inlined
 * function and gives parentPc, an instruction of its caller at the call,
 * where the walk goes on (as the runtime's own tracebacks do). The tree
 * is outside the table (in .rodata), and gofunc is only in moduledata.
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

/* The parts of a table, from its header. */
struct layout {
	uint32_t magic;
	uint64_t nfunc, text, names, cutab, filetab, pctab, pairs, records;
	unsigned entry_size;
	unsigned quantum; /* the unit of pc steps: 1 on x86, 4 on arm64 */
};

static int layout_of(struct table *t, struct layout *l)
{
	int bad = 0;

	if (t->len < 16)
		return -EINVAL;
	l->magic = (uint32_t)word(t, 0, 4, &bad);
	t->ptr = t->data[7];
	if (t->data[4] || t->data[5] || (t->ptr != 4 && t->ptr != 8) ||
	    (l->magic != GO12 && l->magic != GO116 && l->magic != GO118 && l->magic != GO120))
		return -EINVAL;
	unsigned p = t->ptr;
	l->quantum = t->data[6] ? t->data[6] : 1;
	l->nfunc = word(t, 8, p, &bad);
	l->text = l->names = l->cutab = l->filetab = l->pctab = 0;
	if (l->magic == GO12) {
		l->records = 0;
		l->pairs = 8 + p;
		l->entry_size = p;
	} else if (l->magic == GO116) {
		l->names = word(t, 8 + 2 * p, p, &bad);
		l->cutab = word(t, 8 + 3 * p, p, &bad);
		l->filetab = word(t, 8 + 4 * p, p, &bad);
		l->pctab = word(t, 8 + 5 * p, p, &bad);
		l->pairs = l->records = word(t, 8 + 6 * p, p, &bad);
		l->entry_size = p;
	} else {
		l->text = word(t, 8 + 2 * p, p, &bad);
		l->names = word(t, 8 + 3 * p, p, &bad);
		l->cutab = word(t, 8 + 4 * p, p, &bad);
		l->filetab = word(t, 8 + 5 * p, p, &bad);
		l->pctab = word(t, 8 + 6 * p, p, &bad);
		l->pairs = l->records = word(t, 8 + 7 * p, p, &bad);
		l->entry_size = 4;
	}
	/* The pairs lie within the table (the end entry after them, the
	 * records and the names are checked as they are read). */
	if (bad || l->pairs > t->len || l->nfunc > (t->len - l->pairs) / (2 * l->entry_size))
		return -EINVAL;
	return 0;
}

static int count_one(void *arg, uint64_t lo, uint64_t hi, const char *name)
{
	(void)arg, (void)lo, (void)hi, (void)name;
	return 1; /* one is enough */
}

int64_t gopclntab_find(const uint8_t *data, size_t len)
{
	for (size_t off = 0; off + 16 <= len; off += 8) {
		const uint8_t *h = data + off;
		uint32_t magic = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 |
				 (uint32_t)h[3] << 24;
		if ((magic != GO116 && magic != GO118 && magic != GO120) || h[4] || h[5] ||
		    (h[6] != 1 && h[6] != 2 && h[6] != 4) || h[7] != 8)
			continue;
		if (gopclntab_functions(h, len - off, count_one, NULL) == 1)
			return (int64_t)off;
	}
	return -ENOENT;
}

int gopclntab_functions(const uint8_t *data, size_t len,
			int (*fn)(void *arg, uint64_t lo, uint64_t hi, const char *name), void *arg)
{
	struct table t = {data, len, 0};
	struct layout l;
	int bad = 0;

	if (layout_of(&t, &l) < 0)
		return -EINVAL;
	uint64_t pair_size = 2 * l.entry_size;
	int n = 0;
	for (uint64_t i = 0; i < l.nfunc; i++) {
		uint64_t at = l.pairs + i * pair_size;
		uint64_t lo = word(&t, at, l.entry_size, &bad);
		uint64_t rec = word(&t, at + l.entry_size, l.entry_size, &bad);
		uint64_t hi = word(&t, at + pair_size, l.entry_size, &bad);
		/* The record's name offset follows its entry (a pointer, or a
		 * 32-bit offset from 1.18). */
		uint64_t nameoff = word(&t, l.records + rec + l.entry_size, 4, &bad);
		if (bad)
			return -EINVAL;
		const char *name = name_at(&t, l.names + nameoff);
		if (!name || !*name || hi <= lo)
			continue;
		int rc = fn(arg, l.text + lo, l.text + hi, name);
		if (rc)
			return rc;
		n++;
	}
	return n;
}

/* An unsigned varint at *off, which moves past it; 0 on *bad. */
static uint64_t uvarint(const struct table *t, uint64_t *off, int *bad)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*off >= t->len) {
			*bad = 1;
			return 0;
		}
		uint8_t b = t->data[(*off)++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	*bad = 1;
	return 0;
}

/* The value the pc-value table at off gives pc, in a function whose code
 * starts at entry: 0 and *val, or -ENOENT when pc is past the table. */
static int pcvalue(const struct table *t, uint64_t off, uint64_t entry, uint64_t pc,
		   unsigned quantum, int64_t *val)
{
	uint64_t v = UINT64_MAX; /* -1, in arithmetic that wraps on a lying table */
	uint64_t at = entry;
	int bad = 0;

	for (int first = 1;; first = 0) {
		uint64_t uv = uvarint(t, &off, &bad);
		if (bad || (uv == 0 && !first))
			return bad ? -EINVAL : -ENOENT;
		v += (uv >> 1) ^ (0 - (uv & 1)); /* zigzag */
		uint64_t step = uvarint(t, &off, &bad) * quantum;
		if (bad)
			return -EINVAL;
		at += step;
		if (pc < at) {
			*val = (int64_t)v;
			return 0;
		}
	}
}

/* The function whose code holds pc: its entry and end (offsets from the
 * text) and its record's offset in the table. 0, -ENOENT, -EINVAL. */
static int func_at(const struct table *t, const struct layout *l, uint64_t pc, uint64_t *entry,
		   uint64_t *end, uint64_t *rec)
{
	int bad = 0;

	if (pc < l->text || !l->nfunc)
		return -ENOENT;
	uint64_t want = pc - l->text, pair_size = 2 * l->entry_size;
	/* The last pair whose entry is at or below pc: pairs are sorted. */
	uint64_t lo = 0, hi = l->nfunc;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (word(t, l->pairs + mid * pair_size, l->entry_size, &bad) <= want)
			lo = mid;
		else
			hi = mid;
	}
	uint64_t at = l->pairs + lo * pair_size;
	*entry = word(t, at, l->entry_size, &bad);
	*end = word(t, at + pair_size, l->entry_size, &bad);
	*rec = l->records + word(t, at + l->entry_size, l->entry_size, &bad);
	if (bad)
		return -EINVAL;
	return want < *entry || want >= *end ? -ENOENT : 0;
}

/* The layout of the table and the function at pc, for a reader of a
 * function's record (1.16+): 0, -EINVAL, -ENOTSUP or -ENOENT. */
static int record_at(struct table *t, struct layout *l, uint64_t pc, uint64_t *entry, uint64_t *end,
		     uint64_t *rec)
{
	if (layout_of(t, l) < 0)
		return -EINVAL;
	if (l->magic == GO12)
		return -ENOTSUP;
	return func_at(t, l, pc, entry, end, rec);
}

/* A record's fields after its entry: name, args, deferreturn, pcsp,
 * pcfile, pcln, npcdata, cuOffset, each 32 bits, then (1.20+) startLine;
 * then funcID, flag, a pad byte and nfuncdata; then npcdata offsets of
 * pc-value tables and (1.18+) nfuncdata offsets from moduledata.gofunc. */
enum { F_NAME = 0, F_PCSP = 12, F_PCFILE = 16, F_PCLN = 20, F_NPCDATA = 24, F_CU = 28 };
enum { PCDATA_INLTREE = 2, FUNCDATA_INLTREE = 3 };

static uint64_t fixed_end(const struct layout *l)
{
	return l->entry_size + (l->magic == GO120 ? 40 : 36);
}

/* The offset in pctab of the record's table of inlined-call indexes (0
 * when it has none), and its number of pc-value tables. */
static uint64_t inline_table(const struct table *t, const struct layout *l, uint64_t rec,
			     uint64_t *npcdata, int *bad)
{
	*npcdata = word(t, rec + l->entry_size + F_NPCDATA, 4, bad);
	return *npcdata > PCDATA_INLTREE ? word(t, rec + fixed_end(l) + 4 * PCDATA_INLTREE, 4, bad)
					 : 0;
}

/* The source file and line at pc of the function whose record is at rec,
 * entry at entry (an offset from the text). */
static int line_in(const struct table *t, const struct layout *l, uint64_t rec, uint64_t entry,
		   uint64_t pc, const char **file, int *line)
{
	int bad = 0;
	uint64_t pcfile = word(t, rec + l->entry_size + F_PCFILE, 4, &bad);
	uint64_t pcln = word(t, rec + l->entry_size + F_PCLN, 4, &bad);
	uint64_t cu = word(t, rec + l->entry_size + F_CU, 4, &bad);
	if (bad)
		return -EINVAL;
	int64_t ln, fno;
	int rc = pcvalue(t, l->pctab + pcln, l->text + entry, pc, l->quantum, &ln);
	if (rc == 0)
		rc = pcvalue(t, l->pctab + pcfile, l->text + entry, pc, l->quantum, &fno);
	if (rc < 0)
		return rc;
	if (ln <= 0 || ln > INT32_MAX || fno < 0 || fno > UINT32_MAX)
		return -ENOENT;
	uint64_t fileoff = word(t, l->cutab + (cu + (uint64_t)fno) * 4, 4, &bad);
	const char *name = bad || fileoff == UINT32_MAX ? NULL : name_at(t, l->filetab + fileoff);
	if (!name || !*name)
		return -ENOENT;
	*file = name;
	*line = (int)ln;
	return 0;
}

int gopclntab_line(const uint8_t *data, size_t len, uint64_t pc, const char **file, int *line)
{
	struct table t = {data, len, 0};
	struct layout l;
	uint64_t entry, end, rec;
	int rc = record_at(&t, &l, pc, &entry, &end, &rec);

	return rc < 0 ? rc : line_in(&t, &l, rec, entry, pc, file, line);
}

/* Whether name, or name with the ".abi0" of an assembly function's
 * wrapper, is one of the n names at list. */
static int named(const char *name, const char *const *list, size_t n)
{
	size_t len = strlen(name);

	if (len > 5 && strcmp(name + len - 5, ".abi0") == 0)
		len -= 5;
	for (size_t i = 0; i < n; i++)
		if (strlen(list[i]) == len && strncmp(name, list[i], len) == 0)
			return 1;
	return 0;
}

/* The runtime's functions a walk treats as its own traceback does
 * (runtime/traceback.go): where a goroutine's or a thread's stack
 * begins; those that move SP to another stack (the frame above is on
 * the stack they left, which the table does not say); those the signal
 * handler makes the interrupted code seem to call (the return address
 * is where that code was, not after a call). */
static const char *const outermost[] = {"runtime.goexit", "runtime.mstart", "runtime.rt0_go"};
static const char *const switching[] = {
    "runtime.systemstack",     "runtime.systemstack_switch",  "runtime.mcall",
    "runtime.morestack",       "runtime.morestack_noctxt",    "runtime.asmcgocall",
    "runtime.asmcgocall_no_g", "runtime.cgocallback",	      "runtime.gogo",
    "runtime.sigreturn",       "runtime.sigreturn__sigaction"};
static const char *const injected[] = {"runtime.asyncPreempt", "runtime.sigpanic0"};
/* A record's flag (1.17+): the function writes SP as the table does not say. */
#define FUNC_FLAG_SPWRITE 2
#define COUNT(a)	  (sizeof(a) / sizeof((a)[0]))

int gopclntab_stack_top(const char *name)
{
	static const char *const top[] = {"runtime.goexit", "runtime.mstart", "runtime.rt0_go",
					  "runtime.mcall", "runtime.morestack"};

	return named(name, top, COUNT(top));
}

int gopclntab_step(const uint8_t *data, size_t len, uint64_t pc, int64_t *sp)
{
	struct table t = {data, len, 0};
	struct layout l;
	uint64_t entry, end, rec;
	int bad = 0;
	int rc = record_at(&t, &l, pc, &entry, &end, &rec);

	if (rc < 0)
		return rc;
	uint64_t nameoff = word(&t, rec + l.entry_size + F_NAME, 4, &bad);
	uint64_t pcsp = word(&t, rec + l.entry_size + F_PCSP, 4, &bad);
	/* funcID, then the flags (a pad byte, 0, in 1.16). */
	uint64_t flag = word(&t, rec + fixed_end(&l) - 3, 1, &bad);
	const char *name = bad ? NULL : name_at(&t, l.names + nameoff);
	if (!name)
		return -EINVAL;
	if (named(name, outermost, COUNT(outermost)))
		return GOPCLNTAB_OUTERMOST;
	if ((flag & FUNC_FLAG_SPWRITE) || named(name, switching, COUNT(switching)))
		return GOPCLNTAB_SWITCH;
	int64_t v;
	rc = pcvalue(&t, l.pctab + pcsp, l.text + entry, pc, l.quantum, &v);
	if (rc < 0)
		return rc;
	/* A frame is a few KiB at most; a value outside is a lying table. */
	if (v < 0 || v > (1 << 24) || v % 8)
		return -EINVAL;
	*sp = v;
	return named(name, injected, COUNT(injected)) ? GOPCLNTAB_INJECTED : GOPCLNTAB_FRAME;
}

int gopclntab_gofunc(const uint8_t *data, size_t len, uint64_t vaddr, const uint8_t *md,
		     size_t md_len, uint64_t *gofunc)
{
	struct table t = {data, len, 0};
	struct layout l;

	if (layout_of(&t, &l) < 0 || t.ptr != 8)
		return -EINVAL;
	if (l.magic != GO118 && l.magic != GO120)
		return -ENOTSUP;
	/* moduledata: pcHeader, then the slices funcnametab, cutab, filetab,
	 * pctab, pclntable, ftab (three words each), findfunctab, minpc,
	 * maxpc, text (word 22) ... rodata, gofunc: word 38, or 40 from 1.20,
	 * which added covctrs and ecovctrs before end. */
	unsigned at = l.magic == GO120 ? 40 : 38;
	struct table m = {md, md_len, 8};
	for (uint64_t off = 0; off + 8 * (at + 1) <= md_len; off += 8) {
		int bad = 0;
		if (word(&m, off, 8, &bad) != vaddr ||
		    word(&m, off + 8, 8, &bad) != vaddr + l.names ||
		    word(&m, off + 8 * 22, 8, &bad) != l.text)
			continue;
		uint64_t v = word(&m, off + 8 * at, 8, &bad);
		uint64_t rodata = word(&m, off + 8 * (at - 1), 8, &bad);
		if (bad || !v || v < rodata)
			return -ENOENT;
		*gofunc = v;
		return 0;
	}
	return -ENOENT;
}

int gopclntab_frames(const uint8_t *data, size_t len, uint64_t gofunc,
		     int (*read)(void *arg, uint64_t vaddr, void *buf, size_t n), void *arg,
		     uint64_t pc, struct gopclntab_frame *out, int cap)
{
	struct table t = {data, len, 0};
	struct layout l;
	uint64_t entry, end, rec;
	int bad = 0, n = 0;

	if (cap < 1)
		return -EINVAL;
	int rc = record_at(&t, &l, pc, &entry, &end, &rec);
	if (rc < 0)
		return rc;
	/* The inlined calls at pc (1.18+, with the tree's base known): each
	 * names a function and, by parentPc, an instruction of its caller
	 * whose file and line are the call's. */
	uint64_t fe = fixed_end(&l), npcdata;
	uint64_t inl = inline_table(&t, &l, rec, &npcdata, &bad);
	uint64_t nfuncdata = word(&t, rec + fe - 1, 1, &bad);
	uint64_t tree = nfuncdata > FUNCDATA_INLTREE
			    ? word(&t, rec + fe + 4 * npcdata + 4 * FUNCDATA_INLTREE, 4, &bad)
			    : UINT32_MAX;
	if (bad)
		return -EINVAL;
	unsigned node = l.magic == GO120 ? 16 : 20, name_at_node = l.magic == GO120 ? 4 : 12;
	int inlined = gofunc && read && inl && tree != UINT32_MAX && l.magic != GO116;
	while (inlined && n < cap - 1) {
		int64_t ix;
		uint8_t b[20];
		if (pcvalue(&t, l.pctab + inl, l.text + entry, pc, l.quantum, &ix) < 0 || ix < 0 ||
		    ix > (1 << 20) || read(arg, gofunc + tree + (uint64_t)ix * node, b, node) < 0)
			break;
		struct table nt = {b, node, 8};
		uint64_t nameoff = word(&nt, name_at_node, 4, &bad);
		int32_t parent_pc = (int32_t)word(&nt, name_at_node + 4, 4, &bad);
		const char *name = name_at(&t, l.names + nameoff);
		if (!name || !*name || parent_pc < 0 || (uint64_t)parent_pc >= end - entry)
			break;
		out[n] = (struct gopclntab_frame){name, NULL, 0};
		line_in(&t, &l, rec, entry, pc, &out[n].file, &out[n].line);
		n++;
		pc = l.text + entry + (uint64_t)parent_pc;
	}
	uint64_t nameoff = word(&t, rec + l.entry_size + F_NAME, 4, &bad);
	const char *name = bad ? NULL : name_at(&t, l.names + nameoff);
	out[n] = (struct gopclntab_frame){name, NULL, 0};
	line_in(&t, &l, rec, entry, pc, &out[n].file, &out[n].line);
	return n + 1;
}

int gopclntab_boundaries(const uint8_t *data, size_t len, int (*fn)(void *arg, uint64_t pc),
			 void *arg)
{
	struct table t = {data, len, 0};
	struct layout l;
	int bad = 0;

	if (layout_of(&t, &l) < 0)
		return -EINVAL;
	if (l.magic == GO12)
		return -ENOTSUP;
	uint64_t pair_size = 2 * l.entry_size;
	for (uint64_t i = 0; i < l.nfunc; i++) {
		uint64_t at = l.pairs + i * pair_size;
		uint64_t entry = word(&t, at, l.entry_size, &bad);
		uint64_t end = word(&t, at + pair_size, l.entry_size, &bad);
		uint64_t rec = l.records + word(&t, at + l.entry_size, l.entry_size, &bad);
		uint64_t npcdata;
		uint64_t tabs[3] = {word(&t, rec + l.entry_size + F_PCFILE, 4, &bad),
				    word(&t, rec + l.entry_size + F_PCLN, 4, &bad),
				    inline_table(&t, &l, rec, &npcdata, &bad)};
		if (bad)
			return -EINVAL;
		if (end <= entry)
			continue;
		/* Where each table's value changes: a pc-value table is a run
		 * of (value delta, pc delta) pairs ending at a zero value delta
		 * after the first. */
		for (int k = 0; k < 3; k++) {
			uint64_t off = l.pctab + tabs[k], pc = entry;
			int cut = 0; /* a table that runs off the end: the next one's */
			if (k == 2 && !tabs[k])
				continue;
			for (int first = 1; pc < end; first = 0) {
				uint64_t uv = uvarint(&t, &off, &cut);
				if (cut || (uv == 0 && !first))
					break;
				uint64_t step = uvarint(&t, &off, &cut) * l.quantum;
				if (cut || !step)
					break;
				pc += step;
				int rc = pc < end ? fn(arg, l.text + pc) : 0;
				if (rc)
					return rc;
			}
		}
	}
	return 0;
}
