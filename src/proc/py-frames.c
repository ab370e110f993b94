/*
 * The Python frames of a running CPython (see py-frames.h).
 */
#include "proc/py-frames.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/mem-read.h"
#include "proc/proc-maps.h"
#include "symbols/symbolize.h"
#include "util/array.h"
#include "util/strpool.h"
#include "util/u64map.h"

#define MAX_THREADS   4096	/* thread states read; a longer list is cut */
#define MAX_STR	      1024	/* characters of a name or file read */
#define MAX_LINETABLE (1 << 20) /* bytes of a line table read */
#define FRAME_BYTES   0x80	/* of an _PyInterpreterFrame, its fields read */
#define MAX_OFFSET    0x10000	/* a published offset beyond is not believed */

/* Where CPython keeps what is read: byte offsets into its structures,
 * for 3.11 and 3.12 from their DWARF (ptype/o in gdb), for 3.13 from the
 * _Py_DebugOffsets it publishes at the start of _PyRuntime. */
struct py_layout {
	unsigned minor;
	uint32_t rt_interp_head;      /* _PyRuntime.interpreters.head */
	uint32_t interp_threads_head; /* PyInterpreterState.threads.head */
	int32_t rt_gil;		      /* _PyRuntime.ceval.gil (3.11), else -1 */
	int32_t interp_gil_ptr;	      /* PyInterpreterState.ceval.gil, a pointer (3.12 on) */
	uint32_t ts_next, ts_native_tid;
	int32_t ts_cframe; /* PyThreadState.cframe; -1: the frame is in ts_frame */
	uint32_t ts_frame; /* _PyCFrame.current_frame, or PyThreadState's (3.13) */
	uint32_t fr_code, fr_func, fr_previous, fr_instr, fr_owner;
	uint32_t fr_globals; /* 0: not known */
	int32_t fr_is_entry; /* 3.11; later ones mark an entry by a shim frame after it */
	uint32_t fr_size;
	uint32_t code_firstlineno, code_filename, code_name, code_qualname, code_linetable;
	uint32_t code_adaptive;
	int32_t code_firsttraceable; /* -1: not known (3.13) */
	uint32_t func_module;
	uint32_t ob_type, ob_size, bytes_sval;
	uint32_t str_length, str_state;
	uint32_t str_ascii_data, str_compact_data; /* after PyASCIIObject, PyCompactUnicodeObject */
	uint32_t fr_localsplus; /* a frame's locals, self first */
	uint32_t ht_cached_keys; /* a heap type's keys shared by its instances' attributes */
	uint32_t interp_modules; /* PyInterpreterState's sys.modules (3.12 on: imports.modules) */
};

/* What reading an object's attributes needs, the same in 3.11 to 3.13:
 * a type's flags and instance size, a dict's keys and values, a keys
 * object's header. Before the object (3.11): its attribute values,
 * then its dict; 3.12: its dict or values tagged by the low bit; 3.13:
 * its dict, the values inline after the instance. */
#define TP_BASICSIZE	      32
#define TP_FLAGS	      168
#define TPF_MANAGED_DICT      (1u << 4)
#define TPF_INLINE_VALUES     (1u << 2) /* 3.13 */
#define DICT_KEYS	      32
#define DICT_VALUES	      40
#define KEYS_LOG2_INDEX_BYTES 9
#define KEYS_KIND	      10
#define KEYS_NENTRIES	      24
#define KEYS_INDICES	      32
#define MAX_ATTRS	      64   /* entries of a keys object searched */
#define MAX_MODULES	      4096 /* entries of sys.modules or a module's dict searched */
#define MODULE_DICT	      16   /* PyModuleObject.md_dict */

/* _gil_runtime_state: last_holder, locked; a thread that waits for the
 * GIL waits on its cond or mutex, which come next. */
#define GIL_LAST_HOLDER 8
#define GIL_LOCKED	16
#define GIL_WAIT_FIRST	32
#define GIL_WAIT_END	120

/* A str's state bits, in every version read here: kind 2-4, compact 5,
 * ascii 6. */
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
     .ts_frame = 0x8,
     .fr_code = 0x20,
     .fr_func = 0x0,
     .fr_globals = 0x8,
     .fr_previous = 0x30,
     .fr_instr = 0x38,
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
     .ob_type = 8,
     .ob_size = 16,
     .bytes_sval = 32,
     .str_length = 16,
     .str_state = 32,
     .str_ascii_data = 48,
     .str_compact_data = 72,
     .fr_localsplus = 0x48,
     .ht_cached_keys = 0x368,
     .interp_modules = 0x378},
    {.minor = 12,
     .rt_interp_head = 0x28,
     .interp_threads_head = 0x48,
     .rt_gil = -1,
     .interp_gil_ptr = 0x180,
     .ts_next = 0x8,
     .ts_native_tid = 0x90,
     .ts_cframe = 0x38,
     .ts_frame = 0x0,
     .fr_code = 0x0,
     .fr_func = 0x10,
     .fr_globals = 0x18,
     .fr_previous = 0x8,
     .fr_instr = 0x38,
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
     .ob_type = 8,
     .ob_size = 16,
     .bytes_sval = 32,
     .str_length = 16,
     .str_state = 32,
     .str_ascii_data = 40,
     .str_compact_data = 56,
     .fr_localsplus = 0x48,
     .ht_cached_keys = 0x370,
     .interp_modules = 0x3b0},
};

/* What a code object says, read once per object. */
struct code_info {
	/* Its co_qualname, and the __module__ or globals it was named by, as
	 * a sample read them: where one differs, the code object was freed
	 * and another made there (module code's "<module>" is one interned
	 * string: a script's own code can take the place of an imported
	 * module's, and only its globals tell them apart). */
	uint64_t qual_at, module_at, globals;
	const char *name, *file;
	int firstline, firsttraceable;
	uint8_t *lines; /* the line table */
	size_t nlines;
};

struct py_reader {
	pid_t pid;
	uint64_t runtime; /* the address of _PyRuntime */
	struct py_layout layout;
	const struct py_layout *lay; /* &layout, or NULL: a version not read */
	uint64_t gil;		     /* its state, as the last read found it; 0: not known */
	char version[32];
	struct u64map codes; /* code object address -> index + 1 into code */
	struct code_info *code;
	size_t ncode, code_cap;
	struct strpool names;
	uint64_t attr_keys; /* the keys object where key_index() last found a name */
	int64_t attr_index; /* ... at this entry */
};

static int rd(const struct py_reader *r, uint64_t addr, void *buf, size_t len)
{
	return proc_mem_read_all(r->pid, addr, buf, len) ? -EFAULT : 0;
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

/*
 * 3.13's _Py_DebugOffsets, at the start of _PyRuntime: the cookie
 * "xdebugpy", the version, then one struct per kind of object, each a
 * size and the offsets of its fields, in this order (CPython's
 * Include/internal/pycore_runtime.h of 3.13; a later version adds fields
 * within them). What it does not publish and is the same in 3.11 to 3.13
 * is filled in: a frame's function, a function's __module__.
 */
enum {
	DO_VERSION = 1,
	DO_FREE_THREADED,
	DO_RT_INTERP_HEAD = 5,
	DO_IS_THREADS_HEAD = 9,
	DO_IS_IMPORTS_MODULES = 11,
	DO_IS_CEVAL_GIL = 14,
	DO_TS_NEXT = 21,
	DO_TS_CURRENT_FRAME = 23,
	DO_TS_NATIVE_TID = 25,
	DO_FR_PREVIOUS = 29,
	DO_FR_EXECUTABLE,
	DO_FR_INSTR_PTR,
	DO_FR_LOCALSPLUS,
	DO_FR_OWNER,
	DO_CO_FILENAME = 35,
	DO_CO_NAME,
	DO_CO_QUALNAME,
	DO_CO_LINETABLE,
	DO_CO_FIRSTLINENO,
	DO_CO_CODE_ADAPTIVE = 43,
	DO_OB_TYPE = 45,
	DO_BYTES_OB_SIZE = 65,
	DO_BYTES_OB_SVAL,
	DO_STR_STATE = 68,
	DO_STR_LENGTH,
	DO_STR_ASCII_SIZE,
	DO_WORDS = 73
};

static int debug_offsets(const struct py_reader *r, struct py_layout *L)
{
	uint64_t w[DO_WORDS];

	if (rd(r, r->runtime, w, sizeof(w)) || memcmp(w, "xdebugpy", 8) != 0 ||
	    (w[DO_VERSION] >> 16) != 0x030d || w[DO_FREE_THREADED])
		return -ENOTSUP;
	static const uint8_t used[] = {DO_RT_INTERP_HEAD, DO_IS_THREADS_HEAD, DO_IS_IMPORTS_MODULES,
				       DO_IS_CEVAL_GIL,	  DO_TS_NEXT,	      DO_TS_CURRENT_FRAME,
				       DO_TS_NATIVE_TID,  DO_FR_PREVIOUS,     DO_FR_EXECUTABLE,
				       DO_FR_INSTR_PTR,	  DO_FR_LOCALSPLUS,   DO_FR_OWNER,
				       DO_CO_FILENAME,	  DO_CO_NAME,	      DO_CO_QUALNAME,
				       DO_CO_LINETABLE,	  DO_CO_FIRSTLINENO,  DO_CO_CODE_ADAPTIVE,
				       DO_OB_TYPE,	  DO_BYTES_OB_SIZE,   DO_BYTES_OB_SVAL,
				       DO_STR_STATE,	  DO_STR_LENGTH,      DO_STR_ASCII_SIZE};
	for (size_t i = 0; i < sizeof(used); i++)
		if (w[used[i]] >= MAX_OFFSET)
			return -ENOTSUP;
	memset(L, 0, sizeof(*L));
	L->minor = 13;
	L->rt_interp_head = (uint32_t)w[DO_RT_INTERP_HEAD];
	L->interp_threads_head = (uint32_t)w[DO_IS_THREADS_HEAD];
	L->interp_modules = (uint32_t)w[DO_IS_IMPORTS_MODULES];
	L->rt_gil = -1;
	L->interp_gil_ptr = (int32_t)w[DO_IS_CEVAL_GIL];
	L->ts_next = (uint32_t)w[DO_TS_NEXT];
	L->ts_native_tid = (uint32_t)w[DO_TS_NATIVE_TID];
	L->ts_cframe = -1;
	L->ts_frame = (uint32_t)w[DO_TS_CURRENT_FRAME];
	L->fr_code = (uint32_t)w[DO_FR_EXECUTABLE];
	L->fr_func = 0x10;    /* f_funcobj */
	L->fr_globals = 0x18; /* not published; as in 3.12 */
	L->fr_previous = (uint32_t)w[DO_FR_PREVIOUS];
	L->fr_instr = (uint32_t)w[DO_FR_INSTR_PTR];
	L->fr_owner = (uint32_t)w[DO_FR_OWNER];
	L->fr_localsplus = (uint32_t)w[DO_FR_LOCALSPLUS];
	L->ht_cached_keys = 0x370; /* not published; as in 3.12 */
	L->fr_is_entry = -1;
	L->code_filename = (uint32_t)w[DO_CO_FILENAME];
	L->code_name = (uint32_t)w[DO_CO_NAME];
	L->code_qualname = (uint32_t)w[DO_CO_QUALNAME];
	L->code_linetable = (uint32_t)w[DO_CO_LINETABLE];
	L->code_firstlineno = (uint32_t)w[DO_CO_FIRSTLINENO];
	L->code_adaptive = (uint32_t)w[DO_CO_CODE_ADAPTIVE];
	L->code_firsttraceable = -1;
	L->func_module = 0x68;
	L->ob_type = (uint32_t)w[DO_OB_TYPE];
	L->ob_size = (uint32_t)w[DO_BYTES_OB_SIZE];
	L->bytes_sval = (uint32_t)w[DO_BYTES_OB_SVAL];
	L->str_state = (uint32_t)w[DO_STR_STATE];
	L->str_length = (uint32_t)w[DO_STR_LENGTH];
	L->str_ascii_data = (uint32_t)w[DO_STR_ASCII_SIZE];
	L->str_compact_data = L->str_ascii_data + 16; /* utf8_length, utf8 */
	/* The bytes of a frame read: to its last field used. */
	const uint32_t fr[] = {L->fr_code + 8,	L->fr_func + 8,	 L->fr_previous + 8,
			       L->fr_instr + 8, L->fr_owner + 1, L->fr_globals + 8};
	for (size_t i = 0; i < sizeof(fr) / sizeof(fr[0]); i++)
		L->fr_size = fr[i] > L->fr_size ? fr[i] : L->fr_size;
	return L->fr_size <= FRAME_BYTES ? 0 : -ENOTSUP;
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

/* A reader of the CPython whose runtime is at runtime (0: not found),
 * its version from Py_Version where m's file has it, else its name. */
static struct py_reader *reader_new(struct proc_registry *procs, struct symbolizer *sym, pid_t pid,
				    const struct proc_map *m, uint64_t runtime)
{
	struct py_reader *r = calloc(1, sizeof(*r));
	uint64_t vat;
	uint32_t hex;
	unsigned minor = 0;

	if (!r)
		return NULL;
	r->pid = pid;
	r->runtime = runtime;
	u64map_init(&r->codes);
	strpool_init(&r->names);
	/* Py_Version (3.11 on): 0xMMmmppLS, the release level in L. */
	if (object_addr(procs, sym, pid, m, "Py_Version", &vat) == 0 &&
	    rd(r, vat, &hex, sizeof(hex)) == 0 && hex >> 24 == 3)
		snprintf(r->version, sizeof(r->version), "3.%u.%u", (hex >> 16) & 0xff,
			 (hex >> 8) & 0xff);
	else
		version_from_path(m->path, r->version, sizeof(r->version));
	if (!runtime || sscanf(r->version, "3.%u", &minor) != 1)
		return r;
	for (size_t k = 0; k < sizeof(layouts) / sizeof(layouts[0]); k++)
		if (layouts[k].minor == minor) {
			r->layout = layouts[k];
			r->lay = &r->layout;
		}
	if (minor == 13 && debug_offsets(r, &r->layout) == 0)
		r->lay = &r->layout;
	return r;
}

int py_reader_open(struct proc_registry *procs, struct symbolizer *sym, pid_t pid,
		   struct py_reader **out)
{
	const struct proc_map *maps, *old = NULL;
	size_t n = procs_maps(procs, pid, &maps);
	uint64_t runtime, fn;

	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct proc_map *m = &maps[i];
		if (!m->file || (i > 0 && maps[i - 1].file == m->file))
			continue;
		if (object_addr(procs, sym, pid, m, "_PyRuntime", &runtime) == 0)
			return (*out = reader_new(procs, sym, pid, m, runtime)) ? 0 : -ENOMEM;
		/* Before 3.7 there is no _PyRuntime: named by its file. */
		if (!old && strstr(m->path, "python") &&
		    symbolizer_find_symbol(sym, m->file, "Py_Initialize", &fn, NULL) == 0)
			old = m;
	}
	if (!old)
		return -ENOENT;
	return (*out = reader_new(procs, sym, pid, old, 0)) ? 0 : -ENOMEM;
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
	if (rd64(r, addr + r->lay->ob_type, &type) || (type_want && type != type_want) ||
	    rd64(r, addr + r->lay->str_length, &len) ||
	    rd(r, addr + r->lay->str_state, &state, sizeof(state)))
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
		uint32_t c = 0;
		for (unsigned b = 0; b < kind; b++)
			c |= (uint32_t)buf[kind * i + b] << (8 * b); /* little-endian */
		at = put_utf8(out, at, cap, c);
	}
	out[at] = 0;
	return 0;
}

static int dict_get(struct py_reader *r, uint64_t dict, const char *name, uint64_t *value);

/* The code object at addr, read once (module: its function's __module__,
 * 0 when not known, else the __name__ of globals, its frame's globals, 0
 * when not known; qual: its co_qualname as read at a sample, 0 when
 * not, which when it differs from the one read before says the object
 * there is another); NULL when it cannot be read. */
static const struct code_info *code_of(struct py_reader *r, uint64_t addr, uint64_t module_at,
				       uint64_t globals, uint64_t qual)
{
	const struct py_layout *L = r->lay;
	uint64_t idx, name_at, qual_at, file_at, lt_at, str_type, size;
	char qual_s[MAX_STR * 4], module[MAX_STR * 4], file[MAX_STR * 4], full[MAX_STR * 8 + 2];
	int32_t firstline, firsttraceable = 0;
	struct code_info *c;

	int known = u64map_get(&r->codes, addr, &idx);
	if (known && (!qual || r->code[idx - 1].qual_at == qual) &&
	    (!module_at || r->code[idx - 1].module_at == module_at) &&
	    (!globals || r->code[idx - 1].globals == globals))
		return &r->code[idx - 1];
	if (rd64(r, addr + L->code_name, &name_at) || rd64(r, name_at + L->ob_type, &str_type) ||
	    rd64(r, addr + L->code_qualname, &qual_at) ||
	    rd64(r, addr + L->code_filename, &file_at) ||
	    rd64(r, addr + L->code_linetable, &lt_at) ||
	    rd(r, addr + L->code_firstlineno, &firstline, 4) ||
	    (L->code_firsttraceable >= 0 &&
	     rd(r, addr + (uint64_t)L->code_firsttraceable, &firsttraceable, 4)) ||
	    read_str(r, qual_at, str_type, qual_s, sizeof(qual_s)) ||
	    read_str(r, file_at, str_type, file, sizeof(file)))
		return NULL;
	/* The function's __module__, when it is a str; else (module code
	 * of 3.11, whose function has none) its globals' __name__. */
	uint64_t module_from = module_at;
	module[0] = 0;
	if (!module_at && globals && dict_get(r, globals, "__name__", &module_at) < 0)
		module_at = 0;
	if (module_at && read_str(r, module_at, str_type, module, sizeof(module)) < 0)
		module[0] = 0;
	snprintf(full, sizeof(full), "%s%s%s", module, module[0] ? "." : "", qual_s);
	if (known) {
		/* Another code object where one was: read again in place. */
		c = &r->code[idx - 1];
		free(c->lines);
	} else {
		struct code_info *v =
		    array_reserve(r->code, &r->code_cap, r->ncode + 1, sizeof(*v));
		if (!v)
			return NULL;
		r->code = v;
		c = &r->code[r->ncode];
	}
	memset(c, 0, sizeof(*c));
	c->qual_at = qual_at;
	c->module_at = module_from;
	c->globals = globals;
	c->name = strpool_intern(&r->names, full);
	c->file = strpool_intern(&r->names, file);
	c->firstline = firstline;
	c->firsttraceable = firsttraceable;
	if (!c->name || !c->file)
		return NULL;
	if (rd64(r, lt_at + L->ob_size, &size) == 0 && size > 0 && size <= MAX_LINETABLE &&
	    (c->lines = malloc(size)) && rd(r, lt_at + L->bytes_sval, c->lines, size) == 0) {
		c->nlines = size;
	} else {
		free(c->lines);
		c->lines = NULL;
	}
	if (!known && u64map_put(&r->codes, addr, ++r->ncode) < 0)
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

/* Where among the first max entries of the keys object at keys is the
 * str key name: its index, and in *value_at where a combined dict keeps
 * its value; -1 when it is not there or does not read. */
static int key_index(struct py_reader *r, uint64_t keys, const char *name, int64_t max,
		     uint64_t *value_at)
{
	uint8_t hdr[KEYS_INDICES];
	int64_t n;
	char text[64];

	if (!keys || rd(r, keys, hdr, sizeof(hdr)))
		return -1;
	memcpy(&n, hdr + KEYS_NENTRIES, sizeof(n));
	if (hdr[KEYS_LOG2_INDEX_BYTES] > 24 || n < 0)
		return -1;
	/* Entries: (hash, key, value) in a general dict, (key, value) in
	 * one whose keys are all str. */
	int general = hdr[KEYS_KIND] == 0;
	uint64_t esz = general ? 24 : 16, koff = general ? 8 : 0;
	uint64_t entries = keys + KEYS_INDICES + (1ULL << hdr[KEYS_LOG2_INDEX_BYTES]);
	/* The keys every Thread shares: where the name was last time is
	 * tried first (and checked: keys freed and made again there may
	 * hold another order). */
	int64_t first = keys == r->attr_keys && r->attr_index < n ? r->attr_index : 0;
	for (int64_t k = 0; k < n && k < max; k++) {
		int64_t i = (first + k) % n;
		uint64_t key, at = entries + (uint64_t)i * esz + koff;
		if (rd64(r, at, &key))
			return -1;
		if (key && read_str(r, key, 0, text, sizeof(text)) == 0 && strcmp(text, name) == 0) {
			r->attr_keys = keys;
			r->attr_index = i;
			*value_at = at + 8;
			return (int)i;
		}
	}
	return -1;
}

/* The str attribute name of the object at obj, an instance of a class
 * written in Python (its attributes managed by the interpreter), into
 * out: 0, or -ENOENT / -EFAULT. */
static int attr_str(struct py_reader *r, uint64_t obj, const char *name, char *out, size_t cap)
{
	const struct py_layout *L = r->lay;
	uint64_t type, flags, values = 0, dict = 0, keys, dvalues = 0, value_at, v;
	int idx;

	if (rd64(r, obj + L->ob_type, &type) || rd64(r, type + TP_FLAGS, &flags))
		return -EFAULT;
	if (!(flags & TPF_MANAGED_DICT))
		return -ENOENT;
	if (L->minor == 11) {
		if (rd64(r, obj - 32, &values) || (!values && rd64(r, obj - 24, &dict)))
			return -EFAULT;
	} else if (L->minor == 12) {
		uint64_t dorv;
		if (rd64(r, obj - 24, &dorv))
			return -EFAULT;
		if (dorv & 1)
			values = dorv + 1;
		else
			dict = dorv;
	} else {
		uint64_t size;
		uint8_t hdr[8];
		if ((flags & TPF_INLINE_VALUES) &&
		    (rd64(r, type + TP_BASICSIZE, &size) || size > MAX_OFFSET ||
		     rd(r, obj + size, hdr, sizeof(hdr))))
			return -EFAULT;
		if ((flags & TPF_INLINE_VALUES) && hdr[3]) /* valid */
			values = obj + size + 8;
		else if (rd64(r, obj - 24, &dict))
			return -EFAULT;
	}
	if (values) {
		/* The values of the keys the class shares among its instances. */
		if (rd64(r, type + L->ht_cached_keys, &keys) ||
		    (idx = key_index(r, keys, name, MAX_ATTRS, &value_at)) < 0)
			return -ENOENT;
		value_at = values + 8 * (uint64_t)idx;
	} else {
		if (!dict || rd64(r, dict + DICT_KEYS, &keys) ||
		    rd64(r, dict + DICT_VALUES, &dvalues) ||
		    (idx = key_index(r, keys, name, MAX_ATTRS, &value_at)) < 0)
			return -ENOENT;
		if (dvalues) /* split: the values apart, after 3.13's header */
			value_at = dvalues + (L->minor >= 13 ? 8 : 0) + 8 * (uint64_t)idx;
	}
	if (rd64(r, value_at, &v) || !v)
		return -EFAULT;
	return read_str(r, v, 0, out, cap);
}

/* The value of the str key name in the dict at dict, one that keeps its
 * values in its entries (sys.modules, a module's globals): 0 and *value,
 * or -ENOENT. */
static int dict_get(struct py_reader *r, uint64_t dict, const char *name, uint64_t *value)
{
	uint64_t keys, values, value_at;

	if (!dict || rd64(r, dict + DICT_KEYS, &keys) || rd64(r, dict + DICT_VALUES, &values) ||
	    values || key_index(r, keys, name, MAX_MODULES, &value_at) < 0 ||
	    rd64(r, value_at, value) || !*value)
		return -ENOENT;
	return 0;
}

/* The name of the main thread's threading.Thread (threading's
 * _main_thread, "MainThread" unless the program renamed it), into out;
 * -ENOENT where threading was never imported or does not read. */
static int main_thread_name(struct py_reader *r, uint64_t interp, char *out, size_t cap)
{
	uint64_t modules, threading, globals, thread;

	if (!r->lay->interp_modules || rd64(r, interp + r->lay->interp_modules, &modules) ||
	    dict_get(r, modules, "threading", &threading) ||
	    rd64(r, threading + MODULE_DICT, &globals) ||
	    dict_get(r, globals, "_main_thread", &thread))
		return -ENOENT;
	return attr_str(r, thread, "_name", out, cap) == 0 ? 0 : -ENOENT;
}

/* Thread state ts's frames into t, innermost first. */
static void read_frames(struct py_reader *r, uint64_t ts, struct py_thread *t)
{
	const struct py_layout *L = r->lay;
	uint64_t frames = ts, at, visited[PY_MAX_FRAMES * 2];
	unsigned char fr[FRAME_BYTES];

	if ((L->ts_cframe >= 0 && rd64(r, ts + (uint64_t)L->ts_cframe, &frames)) ||
	    rd64(r, frames + L->ts_frame, &at)) {
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
		memcpy(&instr, fr + L->fr_instr, 8);
		int owner = fr[L->fr_owner];
		/* A chain that comes back on itself is the target's memory
		 * lying: it ends where it would repeat. */
		visited[steps] = at;
		for (size_t k = 0; k <= steps; k++)
			if (visited[k] == prev) {
				t->cut = 1;
				prev = 0;
				break;
			}
		uint64_t here = at;
		at = prev;
		if (owner == OWNER_CSTACK) {
			/* 3.12: the frame before it was a C call's first. */
			if (t->n)
				t->frames[t->n - 1].entry = 1;
			continue;
		}
		struct py_frame *f = &t->frames[t->n];
		uint64_t module_at = 0, globals = 0;
		if (func && rd64(r, func + L->func_module, &module_at))
			module_at = 0;
		if (L->fr_globals)
			memcpy(&globals, fr + L->fr_globals, 8);
		int rc =
		    py_reader_frame(r, code, instr, module_at, globals, 0, owner == OWNER_GEN, f);
		if (rc < 0) {
			t->cut = 1;
			return;
		}
		if (rc > 0)
			continue;
		/* A threading.Thread's thread: its name, from the Thread
		 * that runs (self, the frame's first local). */
		uint64_t self;
		if (!t->name[0] && strcmp(f->name, "threading.Thread._bootstrap_inner") == 0 &&
		    rd64(r, here + L->fr_localsplus, &self) == 0 && self &&
		    attr_str(r, self, "_name", t->name, sizeof(t->name)) < 0)
			t->name[0] = 0;
		t->n++;
		f->entry = L->fr_is_entry >= 0 ? fr[L->fr_is_entry] != 0 : 0;
	}
	if (t->n)
		t->frames[t->n - 1].entry = 1;
}

int py_reader_frame(struct py_reader *r, uint64_t code, uint64_t instr, uint64_t module,
		    uint64_t globals, uint64_t qualname, int gen, struct py_frame *f)
{
	if (!r->lay)
		return -ENOTSUP;
	const struct code_info *c = code_of(r, code, module, globals, qualname);
	if (!c)
		return -EFAULT;
	uint64_t first = code + r->lay->code_adaptive;
	/* A frame being set up has run nothing yet: not shown. */
	if (!gen && instr < first + 2 * (uint64_t)c->firsttraceable)
		return 1;
	f->name = c->name;
	f->file = c->file;
	f->line = instr >= first ? line_of(c, (instr - first) / 2) : c->firstline;
	f->entry = 0;
	return 0;
}

int py_reader_chain(const struct py_reader *r, struct py_chain *out)
{
	const struct py_layout *L = r->lay;

	if (!L)
		return -ENOTSUP;
	memset(out, 0, sizeof(*out));
	out->runtime = r->runtime;
	out->rt_interp_head = L->rt_interp_head;
	out->interp_threads_head = L->interp_threads_head;
	out->ts_next = L->ts_next;
	out->ts_native_tid = L->ts_native_tid;
	out->ts_cframe = L->ts_cframe;
	out->ts_frame = L->ts_frame;
	out->fr_code = L->fr_code;
	out->fr_func = L->fr_func;
	out->fr_globals = L->fr_globals;
	out->fr_previous = L->fr_previous;
	out->fr_instr = L->fr_instr;
	out->fr_owner = L->fr_owner;
	out->fr_is_entry = L->fr_is_entry;
	out->fr_size = L->fr_size;
	out->func_module = L->func_module;
	out->code_qualname = L->code_qualname;
	return 0;
}

int py_reader_threads(struct py_reader *r, size_t max, struct py_thread **out, size_t *n)
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
	if (max > MAX_THREADS)
		max = MAX_THREADS;
	for (; ts && count < max; count++) {
		uint64_t tid, next;
		if (rd64(r, ts + L->ts_native_tid, &tid) || rd64(r, ts + L->ts_next, &next))
			break;
		struct py_thread *nv = array_reserve(v, &cap, count + 1, sizeof(*nv));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		/* A list that comes back on itself ends at the first repeat. */
		int seen = 0;
		for (size_t k = 0; k < count && !seen; k++)
			seen = v[k].ts == ts;
		if (seen)
			break;
		struct py_thread *t = &v[count];
		memset(t, 0, sizeof(*t));
		t->ts = ts;
		t->tid = (pid_t)tid;
		t->holds_gil = locked && holder == ts;
		read_frames(r, ts, t);
		/* The main thread runs no Thread's frames: its name is
		 * threading's. */
		if (t->tid == r->pid && !t->name[0] &&
		    main_thread_name(r, interp, t->name, sizeof(t->name)) < 0)
			t->name[0] = 0;
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
