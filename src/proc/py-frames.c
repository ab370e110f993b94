/*
 * The Python frames of a running CPython (see py-frames.h).
 */
#include "proc/py-frames.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "proc/proc-maps.h"
#include "symbols/symbolize.h"
#include "util/array.h"
#include "util/strpool.h"
#include "util/u64map.h"

#define MAX_THREADS   4096	/* thread states read; a longer list is cut */
#define MAX_STR	      1024	/* characters of a name or file read */
#define MAX_LINETABLE (1 << 20) /* bytes of a line table read */

/* Where CPython keeps what is read, by version: byte offsets into its
 * structures, from each version's DWARF (ptype/o in gdb). */
struct py_layout {
	unsigned minor;
	uint32_t rt_interp_head;      /* _PyRuntime.interpreters.head */
	uint32_t interp_threads_head; /* PyInterpreterState.threads.head */
	int32_t rt_gil;		      /* _PyRuntime.ceval.gil (3.11), else -1 */
	int32_t interp_gil_ptr;	      /* PyInterpreterState.ceval.gil, a pointer (3.12) */
	uint32_t ts_next, ts_native_tid, ts_cframe;
	uint32_t cframe_current; /* _PyCFrame.current_frame */
	uint32_t fr_code, fr_func, fr_previous, fr_prev_instr, fr_owner;
	int32_t fr_is_entry; /* 3.11; 3.12 marks an entry by a shim frame after it */
	uint32_t fr_size;
	uint32_t code_firstlineno, code_filename, code_name, code_qualname, code_linetable;
	uint32_t code_adaptive, code_firsttraceable;
	uint32_t func_module;
	uint32_t str_ascii_data, str_compact_data; /* after PyASCIIObject, PyCompactUnicodeObject */
};

/* _gil_runtime_state: last_holder, locked; a thread that waits for the
 * GIL waits on its cond or mutex, which come next. */
#define GIL_LAST_HOLDER 8
#define GIL_LOCKED	16
#define GIL_WAIT_FIRST	32
#define GIL_WAIT_END	120

/* PyObject: ob_type; PyVarObject: ob_size; PyBytesObject: ob_sval;
 * PyASCIIObject: length, then the state bits (kind 2-4, compact 5,
 * ascii 6) in every version read here. */
#define OB_TYPE	     8
#define OB_SIZE	     16
#define BYTES_SVAL   32
#define STR_LENGTH   16
#define STR_STATE    32
#define OWNER_GEN    1 /* FRAME_OWNED_BY_GENERATOR */
#define OWNER_CSTACK 3 /* FRAME_OWNED_BY_CSTACK (3.12): a C call's shim */

static const struct py_layout layouts[] = {
    {.minor = 11,
     .rt_interp_head = 0x28,
     .interp_threads_head = 0x10,
     .rt_gil = 0x168,
     .interp_gil_ptr = -1,
     .ts_next = 0x8,
     .ts_native_tid = 0xa0,
     .ts_cframe = 0x38,
     .cframe_current = 0x8,
     .fr_code = 0x20,
     .fr_func = 0x0,
     .fr_previous = 0x30,
     .fr_prev_instr = 0x38,
     .fr_owner = 0x45,
     .fr_is_entry = 0x44,
     .fr_size = 0x48,
     .code_firstlineno = 0x48,
     .code_filename = 0x70,
     .code_name = 0x78,
     .code_qualname = 0x80,
     .code_linetable = 0x88,
     .code_adaptive = 0xb8,
     .code_firsttraceable = 0xa8,
     .func_module = 0x68,
     .str_ascii_data = 48,
     .str_compact_data = 72},
    {.minor = 12,
     .rt_interp_head = 0x28,
     .interp_threads_head = 0x48,
     .rt_gil = -1,
     .interp_gil_ptr = 0x180,
     .ts_next = 0x8,
     .ts_native_tid = 0x90,
     .ts_cframe = 0x38,
     .cframe_current = 0x0,
     .fr_code = 0x0,
     .fr_func = 0x10,
     .fr_previous = 0x8,
     .fr_prev_instr = 0x38,
     .fr_owner = 0x46,
     .fr_is_entry = -1,
     .fr_size = 0x48,
     .code_firstlineno = 0x44,
     .code_filename = 0x70,
     .code_name = 0x78,
     .code_qualname = 0x80,
     .code_linetable = 0x88,
     .code_adaptive = 0xc0,
     .code_firsttraceable = 0xb0,
     .func_module = 0x68,
     .str_ascii_data = 40,
     .str_compact_data = 56},
};

/* What a code object says, read once per object. */
struct code_info {
	const char *name, *file;
	int firstline, firsttraceable;
	uint8_t *lines; /* the line table */
	size_t nlines;
};

struct py_reader {
	pid_t pid;
	uint64_t runtime; /* the address of _PyRuntime */
	const struct py_layout *lay;
	uint64_t gil; /* its state, as the last read found it; 0: not known */
	char version[32];
	struct u64map codes; /* code object address -> index + 1 into code */
	struct code_info *code;
	size_t ncode, code_cap;
	struct strpool names;
};

static int rd(const struct py_reader *r, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};

	if (!addr)
		return -EFAULT;
	ssize_t n = process_vm_readv(r->pid, &local, 1, &remote, 1, 0);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

static int rd64(const struct py_reader *r, uint64_t addr, uint64_t *v)
{
	return rd(r, addr, v, 8);
}

/* The address in pid of data symbol name of the file mapped by m: its
 * file address moved by the file's load bias, which a function symbol
 * mapped executable gives. */
static int object_addr(struct proc_registry *procs, struct symbolizer *sym, pid_t pid,
		       const struct proc_map *m, const char *name, uint64_t *addr)
{
	uint64_t vaddr, fn, fn_addr;

	if (symbolizer_find_object(m->file, name, &vaddr, NULL) != 0)
		return -ENOENT;
	if (symbolizer_find_symbol(sym, m->file, "Py_Initialize", &fn, NULL) != 0 ||
	    procs_file_addr(procs, pid, m->file, fn, &fn_addr) != 0)
		return -ENOENT;
	*addr = vaddr + (fn_addr - fn);
	return 0;
}

/* "3.X" from a file name such as libpython3.11.so.1.0 or python3.12. */
static void version_from_path(const char *path, char *out, size_t cap)
{
	const char *base = strrchr(path, '/');
	const char *p = strstr(base ? base : path, "python3.");
	unsigned minor;

	if (p && sscanf(p + 8, "%u", &minor) == 1)
		snprintf(out, cap, "3.%u", minor);
}

int py_reader_open(struct proc_registry *procs, struct symbolizer *sym, pid_t pid,
		   struct py_reader **out)
{
	const struct proc_map *maps;
	size_t n = procs_maps(procs, pid, &maps);
	struct py_reader *r;

	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct proc_map *m = &maps[i];
		uint64_t runtime, vat;
		if (!m->file || (i > 0 && maps[i - 1].file == m->file))
			continue;
		if (object_addr(procs, sym, pid, m, "_PyRuntime", &runtime) != 0)
			continue;
		if (!(r = calloc(1, sizeof(*r))))
			return -ENOMEM;
		r->pid = pid;
		r->runtime = runtime;
		u64map_init(&r->codes);
		strpool_init(&r->names);
		/* Py_Version (3.11 on): 0xMMmmppLS, the release level in L. */
		uint32_t hex;
		if (object_addr(procs, sym, pid, m, "Py_Version", &vat) == 0 &&
		    rd(r, vat, &hex, sizeof(hex)) == 0 && hex >> 24 == 3)
			snprintf(r->version, sizeof(r->version), "3.%u.%u", (hex >> 16) & 0xff,
				 (hex >> 8) & 0xff);
		else
			version_from_path(m->path, r->version, sizeof(r->version));
		unsigned minor;
		if (sscanf(r->version, "3.%u", &minor) == 1)
			for (size_t k = 0; k < sizeof(layouts) / sizeof(layouts[0]); k++)
				if (layouts[k].minor == minor)
					r->lay = &layouts[k];
		*out = r;
		return 0;
	}
	return -ENOENT;
}

const char *py_reader_version(const struct py_reader *r)
{
	return r->version;
}

/* Appends code point c as UTF-8. */
static size_t put_utf8(char *out, size_t at, size_t cap, uint32_t c)
{
	char b[4];
	size_t n;

	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 63));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | ((c >> 6) & 63));
		b[2] = (char)(0x80 | (c & 63));
		n = 3;
	} else if (c < 0x110000) {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | ((c >> 12) & 63));
		b[2] = (char)(0x80 | ((c >> 6) & 63));
		b[3] = (char)(0x80 | (c & 63));
		n = 4;
	} else {
		return at; /* not a code point: left out */
	}
	if (at + n >= cap)
		return at;
	memcpy(out + at, b, n);
	return at + n;
}

/* The text of the str object at addr, as UTF-8 into out (cap bytes, at
 * most MAX_STR characters); 0, or -EFAULT when it is not a readable
 * compact str. A str of type type_want only, when that is not 0. */
static int read_str(const struct py_reader *r, uint64_t addr, uint64_t type_want, char *out,
		    size_t cap)
{
	uint64_t type, len;
	uint32_t state;
	unsigned char buf[MAX_STR * 4];

	out[0] = 0;
	if (rd64(r, addr + OB_TYPE, &type) || (type_want && type != type_want) ||
	    rd64(r, addr + STR_LENGTH, &len) || rd(r, addr + STR_STATE, &state, sizeof(state)))
		return -EFAULT;
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4))
		return -EFAULT;
	if (len > MAX_STR)
		len = MAX_STR;
	uint64_t data = addr + (ascii ? r->lay->str_ascii_data : r->lay->str_compact_data);
	if (rd(r, data, buf, len * kind))
		return -EFAULT;
	size_t at = 0;
	for (uint64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1	 ? buf[i]
			     : kind == 2 ? (uint32_t)buf[2 * i] | (uint32_t)buf[2 * i + 1] << 8
					 : (uint32_t)buf[4 * i] | (uint32_t)buf[4 * i + 1] << 8 |
					       (uint32_t)buf[4 * i + 2] << 16 |
					       (uint32_t)buf[4 * i + 3] << 24;
		at = put_utf8(out, at, cap, c);
	}
	out[at] = 0;
	return 0;
}

/* The code object at addr, read once (func: its frame's function, for
 * the module name); NULL when it cannot be read. */
static const struct code_info *code_of(struct py_reader *r, uint64_t addr, uint64_t func)
{
	const struct py_layout *L = r->lay;
	uint64_t idx, name_at, qual_at, file_at, lt_at, str_type, module_at, size;
	char qual[MAX_STR * 4], module[MAX_STR * 4], file[MAX_STR * 4], full[MAX_STR * 8 + 2];
	int32_t firstline, firsttraceable;

	if (u64map_get(&r->codes, addr, &idx))
		return &r->code[idx - 1];
	if (rd64(r, addr + L->code_name, &name_at) || rd64(r, name_at + OB_TYPE, &str_type) ||
	    rd64(r, addr + L->code_qualname, &qual_at) ||
	    rd64(r, addr + L->code_filename, &file_at) ||
	    rd64(r, addr + L->code_linetable, &lt_at) ||
	    rd(r, addr + L->code_firstlineno, &firstline, 4) ||
	    rd(r, addr + L->code_firsttraceable, &firsttraceable, 4) ||
	    read_str(r, qual_at, str_type, qual, sizeof(qual)) ||
	    read_str(r, file_at, str_type, file, sizeof(file)))
		return NULL;
	/* The function's __module__, when it is a str. */
	module[0] = 0;
	if (func && rd64(r, func + L->func_module, &module_at) == 0)
		read_str(r, module_at, str_type, module, sizeof(module));
	snprintf(full, sizeof(full), "%s%s%s", module, module[0] ? "." : "", qual);
	struct code_info *v = array_reserve(r->code, &r->code_cap, r->ncode + 1, sizeof(*v));
	if (!v)
		return NULL;
	r->code = v;
	struct code_info *c = &r->code[r->ncode];
	memset(c, 0, sizeof(*c));
	c->name = strpool_intern(&r->names, full);
	c->file = strpool_intern(&r->names, file);
	c->firstline = firstline;
	c->firsttraceable = firsttraceable;
	if (!c->name || !c->file)
		return NULL;
	if (rd64(r, lt_at + OB_SIZE, &size) == 0 && size > 0 && size <= MAX_LINETABLE &&
	    (c->lines = malloc(size)) && rd(r, lt_at + BYTES_SVAL, c->lines, size) == 0) {
		c->nlines = size;
	} else {
		free(c->lines);
		c->lines = NULL;
	}
	if (u64map_put(&r->codes, addr, ++r->ncode) < 0)
		return NULL;
	return c;
}

static unsigned varint(const uint8_t **p, const uint8_t *end)
{
	unsigned v = 0, shift = 0;
	uint8_t b;

	do {
		if (*p >= end || shift > 30)
			return v;
		b = *(*p)++;
		v |= (unsigned)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static int svarint(const uint8_t **p, const uint8_t *end)
{
	unsigned v = varint(p, end);

	return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

/*
 * The line of code unit `at` in a 3.11/3.12 location table (CPython's
 * Objects/locations.md): entries of a first byte 1CCCCLLL (code C, L + 1
 * code units) and its operands; codes 13 and 14 start with the line's
 * change as a signed varint, 10 to 12 change it by C - 10, 15 has no
 * line, the others keep it. 0 when the table does not cover `at`.
 */
static int line_of(const struct code_info *c, uint64_t at)
{
	const uint8_t *p = c->lines, *end = c->lines + c->nlines;
	int line = c->firstline;
	uint64_t lo = 0;

	while (p < end) {
		uint8_t b = *p++;
		if (!(b & 0x80))
			continue; /* an operand byte: not where an entry starts */
		unsigned code = (b >> 3) & 15, len = (b & 7) + 1;
		if (code == 13 || code == 14)
			line += svarint(&p, end);
		else if (code >= 10 && code <= 12)
			line += (int)code - 10;
		if (at < lo + len)
			return code == 15 ? 0 : line;
		lo += len;
	}
	return 0;
}

/* Thread state ts's frames into t, innermost first. */
static void read_frames(struct py_reader *r, uint64_t ts, struct py_thread *t)
{
	const struct py_layout *L = r->lay;
	uint64_t cframe, at;
	unsigned char fr[0x80];

	if (rd64(r, ts + L->ts_cframe, &cframe) || rd64(r, cframe + L->cframe_current, &at)) {
		t->cut = 1;
		return;
	}
	for (size_t steps = 0; at; steps++) {
		uint64_t code, func, prev, instr;
		if (steps >= PY_MAX_FRAMES * 2 || t->n >= PY_MAX_FRAMES ||
		    rd(r, at, fr, L->fr_size)) {
			t->cut = 1;
			return;
		}
		memcpy(&code, fr + L->fr_code, 8);
		memcpy(&func, fr + L->fr_func, 8);
		memcpy(&prev, fr + L->fr_previous, 8);
		memcpy(&instr, fr + L->fr_prev_instr, 8);
		int owner = fr[L->fr_owner];
		at = prev;
		if (owner == OWNER_CSTACK) {
			/* 3.12: the frame before it was a C call's first. */
			if (t->n)
				t->frames[t->n - 1].entry = 1;
			continue;
		}
		const struct code_info *c = code_of(r, code, func);
		if (!c) {
			t->cut = 1;
			return;
		}
		uint64_t first = code + L->code_adaptive;
		/* A frame being set up has run nothing yet: not shown. */
		if (owner != OWNER_GEN && instr < first + 2 * (uint64_t)c->firsttraceable)
			continue;
		struct py_frame *f = &t->frames[t->n++];
		f->name = c->name;
		f->file = c->file;
		f->line = instr >= first ? line_of(c, (instr - first) / 2) : c->firstline;
		f->entry = L->fr_is_entry >= 0 ? fr[L->fr_is_entry] != 0 : 0;
	}
	if (t->n)
		t->frames[t->n - 1].entry = 1;
}

int py_reader_threads(struct py_reader *r, struct py_thread **out, size_t *n)
{
	const struct py_layout *L = r->lay;
	uint64_t interp, ts, gil = 0, holder = 0;
	int32_t locked = 0;
	struct py_thread *v = NULL;
	size_t cap = 0, count = 0;

	*out = NULL;
	*n = 0;
	if (!L)
		return -ENOTSUP;
	if (rd64(r, r->runtime + L->rt_interp_head, &interp) || !interp ||
	    rd64(r, interp + L->interp_threads_head, &ts))
		return -EFAULT;
	if (L->rt_gil >= 0)
		gil = r->runtime + (uint64_t)L->rt_gil;
	else if (rd64(r, interp + (uint64_t)L->interp_gil_ptr, &gil))
		gil = 0;
	if (gil && (rd(r, gil + GIL_LOCKED, &locked, 4) || rd64(r, gil + GIL_LAST_HOLDER, &holder)))
		locked = 0, gil = 0;
	r->gil = gil;
	for (; ts && count < MAX_THREADS; count++) {
		uint64_t tid, next;
		if (rd64(r, ts + L->ts_native_tid, &tid) || rd64(r, ts + L->ts_next, &next))
			break;
		struct py_thread *nv = array_reserve(v, &cap, count + 1, sizeof(*nv));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		struct py_thread *t = &v[count];
		memset(t, 0, sizeof(*t));
		t->tid = (pid_t)tid;
		t->holds_gil = locked && holder == ts;
		read_frames(r, ts, t);
		ts = next;
	}
	*out = v;
	*n = count;
	return 0;
}

int py_reader_gil_futex(const struct py_reader *r, uint64_t uaddr)
{
	return r && r->gil && uaddr >= r->gil + GIL_WAIT_FIRST && uaddr < r->gil + GIL_WAIT_END;
}

void py_reader_free(struct py_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ncode; i++)
		free(r->code[i].lines);
	free(r->code);
	u64map_release(&r->codes);
	strpool_release(&r->names);
	free(r);
}
