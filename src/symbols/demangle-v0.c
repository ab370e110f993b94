/*
 * The Rust v0 demangler (RFC 2603), printed the way rustc-demangle's
 * alternate form prints names. Hand-written because libiberty's v0
 * decoder has no bound on its output: a 150-byte name of nested
 * backreferences made it build a 5 GB string over 80 s. This one bounds
 * its depth, steps and output and gives up (NULL) rather than guess;
 * Unicode (punycode) identifiers are not decoded.
 */
#include "symbols/demangle-v0.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Output limits: a demangled name longer than this is not worth showing,
 * and v0 backreferences can otherwise expand exponentially. */
#define OUT_MAX	     4096
#define V0_MAX_DEPTH 256
#define V0_MAX_STEPS 100000

struct out {
	char buf[OUT_MAX];
	size_t len;
	int quiet; /* parse without printing (skipped paths) */
	int err;
};

static void out_mem(struct out *o, const char *s, size_t n)
{
	if (o->quiet || o->err)
		return;
	if (n >= OUT_MAX - o->len) {
		o->err = 1;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

static void out_u64(struct out *o, uint64_t v)
{
	char tmp[24];

	out_mem(o, tmp, (size_t)snprintf(tmp, sizeof(tmp), "%" PRIu64, v));
}

static void out_utf8(struct out *o, uint32_t c)
{
	char b[4];

	if (c < 0x80) {
		b[0] = (char)c;
		out_mem(o, b, 1);
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | (c >> 6));
		b[1] = (char)(0x80 | (c & 0x3f));
		out_mem(o, b, 2);
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | (c >> 12));
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		out_mem(o, b, 3);
	} else {
		b[0] = (char)(0xf0 | (c >> 18));
		b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		out_mem(o, b, 4);
	}
}

static int is_valid_char(uint64_t c)
{
	return c <= 0x10ffff && (c < 0xd800 || c > 0xdfff);
}

static char *out_finish(struct out *o)
{
	if (o->err)
		return NULL;
	char *r = malloc(o->len + 1);
	if (!r)
		return NULL;
	memcpy(r, o->buf, o->len);
	r[o->len] = '\0';
	return r;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * LLVM appends ".llvm.<hex>" (sometimes with "@@N") to names it made
 * unique across ThinLTO units; it says nothing to a person. Returns the
 * length of name without it.
 */
static size_t strip_llvm_suffix(const char *name, size_t len)
{
	const char *s = strstr(name, ".llvm.");

	if (!s)
		return len;
	for (const char *p = s + 6; *p; p++)
		if (hex_digit(*p) < 0 && *p != '@')
			return len;
	return (size_t)(s - name);
}

/* ---- Rust v0: _R <path> [<instantiating-crate>] [.suffix] ---- */

struct v0 {
	const char *s; /* the symbol after "_R" */
	size_t len, pos;
	unsigned depth, steps;
	uint64_t bound_lifetimes;
	struct out *o;
	int err;
};

static int v0_enter(struct v0 *v)
{
	if (v->err || v->o->err || v->depth >= V0_MAX_DEPTH || ++v->steps > V0_MAX_STEPS) {
		v->err = 1;
		return 0;
	}
	v->depth++;
	return 1;
}

static void v0_leave(struct v0 *v)
{
	v->depth--;
}

static int v0_peek(const struct v0 *v)
{
	return v->pos < v->len ? (unsigned char)v->s[v->pos] : -1;
}

static int v0_eat(struct v0 *v, char c)
{
	if (v0_peek(v) != (unsigned char)c)
		return 0;
	v->pos++;
	return 1;
}

static int v0_next(struct v0 *v)
{
	int c = v0_peek(v);

	if (c < 0)
		v->err = 1;
	else
		v->pos++;
	return c;
}

/* <base-62-number> = {<0-9a-zA-Z>} "_", where "_" is 0 and "x_" is x + 1. */
static uint64_t v0_integer62(struct v0 *v)
{
	uint64_t x = 0;

	if (v0_eat(v, '_'))
		return 0;
	for (;;) {
		int c = v0_next(v), d;
		if (c == '_')
			break;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'z')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'Z')
			d = c - 'A' + 36;
		else {
			v->err = 1;
			return 0;
		}
		if (x > (UINT64_MAX - 62) / 62) {
			v->err = 1;
			return 0;
		}
		x = x * 62 + (uint64_t)d;
	}
	return x + 1;
}

static uint64_t v0_opt_integer62(struct v0 *v, char tag)
{
	if (!v0_eat(v, tag))
		return 0;
	uint64_t x = v0_integer62(v);
	return v->err ? 0 : x + 1;
}

struct v0_ident {
	const char *p;
	size_t n;
};

static struct v0_ident v0_ident(struct v0 *v)
{
	struct v0_ident id = {"", 0};
	size_t n = 0;
	int c;

	/* Punycode identifiers are not decoded: give up on the name. */
	if (v0_peek(v) == 'u') {
		v->err = 1;
		return id;
	}
	c = v0_next(v);
	if (c < '0' || c > '9') {
		v->err = 1;
		return id;
	}
	n = (size_t)(c - '0');
	if (n != 0) {
		while ((c = v0_peek(v)) >= '0' && c <= '9') {
			if (n > v->len) {
				v->err = 1;
				return id;
			}
			n = n * 10 + (size_t)(c - '0');
			v->pos++;
		}
	}
	v0_eat(v, '_');
	if (n > v->len - v->pos) {
		v->err = 1;
		return id;
	}
	id.p = v->s + v->pos;
	id.n = n;
	v->pos += n;
	return id;
}

static void v0_path(struct v0 *v, int in_value);
static void v0_type(struct v0 *v);
static void v0_const(struct v0 *v);

/* Follows a backreference "B<base-62>": the target must lie before it.
 * Returns the position to resume at, or (size_t)-1 on error. */
static size_t v0_backref_enter(struct v0 *v)
{
	size_t start = v->pos - 1;
	uint64_t target = v0_integer62(v);

	if (v->err || target >= start) {
		v->err = 1;
		return (size_t)-1;
	}
	size_t resume = v->pos;
	v->pos = (size_t)target;
	return resume;
}

/* Prints what a backreference in a type or constant position points to. */
static void v0_follow(struct v0 *v, void (*print)(struct v0 *))
{
	size_t resume = v0_backref_enter(v);

	if (v->err)
		return;
	print(v);
	v->pos = resume;
}

static void v0_lifetime(struct v0 *v, uint64_t lt)
{
	out_str(v->o, "'");
	if (lt == 0) {
		out_str(v->o, "_");
		return;
	}
	if (lt > v->bound_lifetimes) {
		v->err = 1;
		return;
	}
	uint64_t depth = v->bound_lifetimes - lt;
	if (depth < 26) {
		char c = (char)('a' + depth);
		out_mem(v->o, &c, 1);
	} else {
		out_str(v->o, "_");
		out_u64(v->o, depth);
	}
}

/* A "G<n>" binder introduces n late-bound lifetimes: prints "for<'a> ". */
static uint64_t v0_binder(struct v0 *v)
{
	uint64_t n = v0_opt_integer62(v, 'G');

	if (v->err || n > 1000) {
		v->err = 1;
		return 0;
	}
	if (n == 0)
		return 0;
	out_str(v->o, "for<");
	for (uint64_t i = 0; i < n; i++) {
		if (i)
			out_str(v->o, ", ");
		v->bound_lifetimes++;
		v0_lifetime(v, 1);
	}
	out_str(v->o, "> ");
	return n;
}

static void v0_generic_arg(struct v0 *v)
{
	if (v0_eat(v, 'L'))
		v0_lifetime(v, v0_integer62(v));
	else if (v0_eat(v, 'K'))
		v0_const(v);
	else
		v0_type(v);
}

/* Generic arguments up to the closing 'E', separated by ", ". */
static size_t v0_list(struct v0 *v, void (*item)(struct v0 *), const char *sep)
{
	size_t i = 0;

	while (!v->err && !v->o->err && !v0_eat(v, 'E')) {
		if (i++)
			out_str(v->o, sep);
		item(v);
	}
	return i;
}

static void v0_path(struct v0 *v, int in_value)
{
	if (!v0_enter(v))
		return;
	int tag = v0_next(v);
	switch (tag) {
	case 'C': {
		v0_opt_integer62(v, 's');
		struct v0_ident id = v0_ident(v);
		out_mem(v->o, id.p, id.n);
		break;
	}
	case 'N': {
		int ns = v0_next(v);
		if (!((ns >= 'a' && ns <= 'z') || (ns >= 'A' && ns <= 'Z'))) {
			v->err = 1;
			break;
		}
		v0_path(v, in_value);
		uint64_t dis = v0_opt_integer62(v, 's');
		struct v0_ident id = v0_ident(v);
		if (v->err)
			break;
		if (ns >= 'A' && ns <= 'Z') {
			/* Special namespaces: closures, shims. */
			out_str(v->o, "::{");
			if (ns == 'C')
				out_str(v->o, "closure");
			else if (ns == 'S')
				out_str(v->o, "shim");
			else
				out_mem(v->o, &(char){(char)ns}, 1);
			if (id.n) {
				out_str(v->o, ":");
				out_mem(v->o, id.p, id.n);
			}
			out_str(v->o, "#");
			out_u64(v->o, dis);
			out_str(v->o, "}");
		} else if (id.n) {
			out_str(v->o, "::");
			out_mem(v->o, id.p, id.n);
		}
		break;
	}
	case 'M':
	case 'X':
	case 'Y':
		if (tag != 'Y') {
			/* The impl's own path says where it was written; the
			 * demangled name shows the type instead. */
			int quiet = v->o->quiet;
			v0_opt_integer62(v, 's');
			v->o->quiet = 1;
			v0_path(v, 0);
			v->o->quiet = quiet;
		}
		out_str(v->o, "<");
		v0_type(v);
		if (tag != 'M') {
			out_str(v->o, " as ");
			v0_path(v, 0);
		}
		out_str(v->o, ">");
		break;
	case 'I':
		v0_path(v, in_value);
		out_str(v->o, in_value ? "::<" : "<");
		v0_list(v, v0_generic_arg, ", ");
		out_str(v->o, ">");
		break;
	case 'B': {
		size_t resume = v0_backref_enter(v);
		if (v->err)
			break;
		v0_path(v, in_value);
		v->pos = resume;
		break;
	}
	default:
		v->err = 1;
	}
	v0_leave(v);
}

static const char *v0_basic_type(int tag)
{
	switch (tag) {
	case 'a':
		return "i8";
	case 'b':
		return "bool";
	case 'c':
		return "char";
	case 'd':
		return "f64";
	case 'e':
		return "str";
	case 'f':
		return "f32";
	case 'h':
		return "u8";
	case 'i':
		return "isize";
	case 'j':
		return "usize";
	case 'l':
		return "i32";
	case 'm':
		return "u32";
	case 'n':
		return "i128";
	case 'o':
		return "u128";
	case 'p':
		return "_";
	case 's':
		return "i16";
	case 't':
		return "u16";
	case 'u':
		return "()";
	case 'v':
		return "...";
	case 'x':
		return "i64";
	case 'y':
		return "u64";
	case 'z':
		return "!";
	default:
		return NULL;
	}
}

/*
 * A trait's path in a dyn type. Its generic list is left open (no ">")
 * so that associated types can follow ("dyn Fn<(), Output = ()>");
 * returns whether it is open.
 */
static int v0_trait_path(struct v0 *v)
{
	int open = 0;

	if (!v0_enter(v))
		return 0;
	if (v0_eat(v, 'B')) {
		size_t resume = v0_backref_enter(v);
		if (!v->err) {
			open = v0_trait_path(v);
			v->pos = resume;
		}
	} else if (v0_eat(v, 'I')) {
		v0_path(v, 0);
		out_str(v->o, "<");
		v0_list(v, v0_generic_arg, ", ");
		open = 1;
	} else {
		v0_path(v, 0);
	}
	v0_leave(v);
	return open;
}

static void v0_dyn_trait(struct v0 *v)
{
	int open = v0_trait_path(v);

	while (!v->err && v0_eat(v, 'p')) {
		out_str(v->o, open ? ", " : "<");
		open = 1;
		struct v0_ident id = v0_ident(v);
		out_mem(v->o, id.p, id.n);
		out_str(v->o, " = ");
		v0_type(v);
	}
	if (open)
		out_str(v->o, ">");
}

static void v0_fn_sig(struct v0 *v)
{
	int is_unsafe = v0_eat(v, 'U');
	const char *abi = NULL;
	size_t abi_len = 0;

	if (v0_eat(v, 'K')) {
		if (v0_eat(v, 'C')) {
			abi = "C";
			abi_len = 1;
		} else {
			struct v0_ident id = v0_ident(v);
			if (id.n == 0) {
				v->err = 1;
				return;
			}
			abi = id.p;
			abi_len = id.n;
		}
	}
	if (is_unsafe)
		out_str(v->o, "unsafe ");
	if (abi) {
		out_str(v->o, "extern \"");
		/* '-' in ABI names was mangled as '_'. */
		for (size_t i = 0; i < abi_len; i++)
			out_mem(v->o, abi[i] == '_' ? "-" : abi + i, 1);
		out_str(v->o, "\" ");
	}
	out_str(v->o, "fn(");
	v0_list(v, v0_type, ", ");
	out_str(v->o, ")");
	if (!v0_eat(v, 'u')) {
		out_str(v->o, " -> ");
		v0_type(v);
	}
}

static void v0_type(struct v0 *v)
{
	if (!v0_enter(v))
		return;
	int tag = v0_next(v);
	const char *basic = v0_basic_type(tag);
	uint64_t bound;

	if (basic) {
		out_str(v->o, basic);
		v0_leave(v);
		return;
	}
	switch (tag) {
	case 'R':
	case 'Q':
		out_str(v->o, "&");
		if (v0_eat(v, 'L')) {
			uint64_t lt = v0_integer62(v);
			if (lt) {
				v0_lifetime(v, lt);
				out_str(v->o, " ");
			}
		}
		if (tag == 'Q')
			out_str(v->o, "mut ");
		v0_type(v);
		break;
	case 'P':
	case 'O':
		out_str(v->o, tag == 'P' ? "*const " : "*mut ");
		v0_type(v);
		break;
	case 'A':
	case 'S':
		out_str(v->o, "[");
		v0_type(v);
		if (tag == 'A') {
			out_str(v->o, "; ");
			v0_const(v);
		}
		out_str(v->o, "]");
		break;
	case 'T':
		out_str(v->o, "(");
		if (v0_list(v, v0_type, ", ") == 1)
			out_str(v->o, ",");
		out_str(v->o, ")");
		break;
	case 'F':
		bound = v0_binder(v);
		v0_fn_sig(v);
		v->bound_lifetimes -= bound;
		break;
	case 'D':
		out_str(v->o, "dyn ");
		bound = v0_binder(v);
		v0_list(v, v0_dyn_trait, " + ");
		v->bound_lifetimes -= bound;
		if (!v0_eat(v, 'L')) {
			v->err = 1;
			break;
		}
		uint64_t lt = v0_integer62(v);
		if (lt) {
			out_str(v->o, " + ");
			v0_lifetime(v, lt);
		}
		break;
	case 'B':
		v0_follow(v, v0_type);
		break;
	default:
		if (tag < 0)
			break;
		v->pos--;
		v0_path(v, 0);
	}
	v0_leave(v);
}

/* Hex digits up to '_'; returns them (start, count). */
static struct v0_ident v0_hex(struct v0 *v)
{
	struct v0_ident h = {v->s + v->pos, 0};

	while (v->pos < v->len && hex_digit(v->s[v->pos]) >= 0 &&
	       !(v->s[v->pos] >= 'A' && v->s[v->pos] <= 'F'))
		v->pos++, h.n++;
	if (!v0_eat(v, '_'))
		v->err = 1;
	return h;
}

static void v0_const_uint(struct v0 *v)
{
	struct v0_ident h = v0_hex(v);
	uint64_t x = 0;

	if (v->err)
		return;
	if (h.n > 16) {
		out_str(v->o, "0x");
		out_mem(v->o, h.p, h.n);
		return;
	}
	for (size_t i = 0; i < h.n; i++)
		x = x << 4 | (uint64_t)hex_digit(h.p[i]);
	out_u64(v->o, x);
}

static void v0_const_char(struct v0 *v)
{
	struct v0_ident h = v0_hex(v);
	uint64_t c = 0;

	if (v->err || h.n > 8) {
		v->err = 1;
		return;
	}
	for (size_t i = 0; i < h.n; i++)
		c = c << 4 | (uint64_t)hex_digit(h.p[i]);
	if (!is_valid_char(c)) {
		v->err = 1;
		return;
	}
	/* Printed as Rust's Debug shows a char. */
	static const struct {
		char c;
		const char *text;
	} escapes[] = {{'\n', "\\n"}, {'\t', "\\t"}, {'\r', "\\r"},
		       {'\0', "\\0"}, {'\'', "\\'"}, {'\\', "\\\\"}};
	const char *text = NULL;
	for (size_t i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++)
		if (c == (unsigned char)escapes[i].c)
			text = escapes[i].text;
	out_str(v->o, "'");
	if (text) {
		out_str(v->o, text);
	} else if (c < 0x20 || c == 0x7f) {
		char tmp[16];
		snprintf(tmp, sizeof(tmp), "\\u{%x}", (unsigned)c);
		out_str(v->o, tmp);
	} else {
		out_utf8(v->o, (uint32_t)c);
	}
	out_str(v->o, "'");
}

static void v0_const(struct v0 *v)
{
	if (!v0_enter(v))
		return;
	int tag = v0_next(v);
	switch (tag) {
	case 'B':
		v0_follow(v, v0_const);
		break;
	case 'p':
		out_str(v->o, "_");
		break;
	case 'h':
	case 't':
	case 'm':
	case 'y':
	case 'o':
	case 'j':
		v0_const_uint(v);
		break;
	case 'a':
	case 's':
	case 'l':
	case 'x':
	case 'n':
	case 'i':
		if (v0_eat(v, 'n'))
			out_str(v->o, "-");
		v0_const_uint(v);
		break;
	case 'b': {
		struct v0_ident h = v0_hex(v);
		if (h.n == 1 && (h.p[0] == '0' || h.p[0] == '1'))
			out_str(v->o, h.p[0] == '1' ? "true" : "false");
		else
			v->err = 1;
		break;
	}
	case 'c':
		v0_const_char(v);
		break;
	default:
		/* Other constants (str, references, aggregates) are unstable
		 * Rust; give up on the name. */
		v->err = 1;
	}
	v0_leave(v);
}

char *demangle_rust_v0(const char *name)
{
	size_t len = strip_llvm_suffix(name, strlen(name));

	if (len < 3 || name[2] < 'A' || name[2] > 'Z')
		return NULL;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)name[i] >= 0x80)
			return NULL;

	struct out *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	struct v0 v = {.s = name + 2, .len = len - 2, .o = o};
	v0_path(&v, 1);
	/* The instantiating crate is not shown. */
	if (!v.err && v.pos < v.len && v.s[v.pos] >= 'A' && v.s[v.pos] <= 'Z') {
		o->quiet = 1;
		v0_path(&v, 0);
		o->quiet = 0;
	}
	if (!v.err && v.pos < v.len) {
		if (v.s[v.pos] == '.')
			out_mem(o, v.s + v.pos, v.len - v.pos);
		else
			v.err = 1;
	}
	char *r = v.err ? NULL : out_finish(o);
	free(o);
	return r;
}
