/*
 * recce addr2line: a drop-in for GNU addr2line on recce's symbolizer and
 * its symbol cache, so that anyone can use the speed and measure it.
 * Addresses come from the command line or, one a line, from standard
 * input; the output is what `addr2line` prints for the same options
 * (-a -f -i -C -p -s -e). Output is buffered and flushed before each wait
 * for input, so it works as a co-process of a tool that writes one
 * address and reads the answer. docs/recce-addr2line.md is its --help.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/dirs.h"
#include "cli/options.h"
#include "cli/usage.h"
#include "symbols/symbolize.h"
#include "util/path.h"
#include "util/readall.h"

#define MAX_INLINE 64

struct a2l_args {
	const char *exe;
	int addresses, functions, inlines, demangle, pretty, basenames, no_cache;
};

static const struct opt a2l_options[] = {
    OPT_STRING_('e', "exe", "FILE", struct a2l_args, exe, "the binary (default a.out)"),
    OPT_FLAG_('a', "addresses", struct a2l_args, addresses, "print each address first"),
    OPT_FLAG_('f', "functions", struct a2l_args, functions, "print function names too"),
    OPT_FLAG_('i', "inlines", struct a2l_args, inlines, "print the callers of inlined code"),
    OPT_FLAG_('C', "demangle", struct a2l_args, demangle, "demangle C++ and Rust names"),
    OPT_FLAG_('p', "pretty-print", struct a2l_args, pretty, "one line an address"),
    OPT_FLAG_('s', "basenames", struct a2l_args, basenames, "file names without directories"),
    OPT_FLAG_(0, "no-cache", struct a2l_args, no_cache, "neither read nor write the symbol cache"),
    OPT_END_(),
};

/* A plain output buffer: printf per field would cost more than a lookup. */
struct out {
	char buf[1 << 18];
	size_t n;
	int failed; /* errno of a failed write */
};

static void out_flush(struct out *o)
{
	int rc = o->failed ? 0 : write_all(STDOUT_FILENO, o->buf, o->n);

	if (rc < 0)
		o->failed = -rc;
	o->n = 0;
}

/* Bytes that do not fit: flushed first, and longer than the buffer
 * written straight through. */
static void out_big(struct out *o, const char *s, size_t len)
{
	out_flush(o);
	while (len > sizeof(o->buf)) {
		memcpy(o->buf, s, sizeof(o->buf));
		o->n = sizeof(o->buf);
		out_flush(o);
		s += sizeof(o->buf);
		len -= sizeof(o->buf);
	}
	memcpy(o->buf, s, len);
	o->n = len;
}

static inline void out_bytes(struct out *o, const char *s, size_t len)
{
	if (len > sizeof(o->buf) - o->n) {
		out_big(o, s, len);
		return;
	}
	memcpy(o->buf + o->n, s, len);
	o->n += len;
}

static void out_str(struct out *o, const char *s)
{
	out_bytes(o, s, strlen(s));
}

static void out_uint(struct out *o, unsigned v)
{
	char tmp[12];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out_bytes(o, tmp + i, sizeof(tmp) - (size_t)i);
}

static void out_address(struct out *o, uint64_t a)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[18] = {'0', 'x'};

	for (int i = 0; i < 16; i++)
		tmp[2 + i] = hex[(a >> (60 - 4 * i)) & 15];
	out_bytes(o, tmp, sizeof(tmp));
}

static void out_location(struct out *o, const struct a2l_args *a, const struct sym_frame *fr)
{
	if (!fr) {
		out_str(o, "??:0");
		return;
	}
	out_str(o, fr->file ? (a->basenames ? path_base(fr->file) : fr->file) : "??");
	out_bytes(o, ":", 1);
	if (fr->line > 0)
		out_uint(o, (unsigned)fr->line);
	else
		out_bytes(o, "?", 1);
}

static void out_function(struct out *o, const struct a2l_args *a, const struct sym_frame *fr)
{
	const char *name = fr ? (a->demangle ? fr->function : fr->system_name) : NULL;

	out_str(o, name ? name : "??");
}

/* What addr2line prints for one address: frames[n], innermost first. */
static void print_address(struct out *o, const struct a2l_args *a, uint64_t addr,
			  const struct sym_frame *frames, int n)
{
	if (a->addresses) {
		out_address(o, addr);
		out_bytes(o, a->pretty ? ": " : "\n", a->pretty ? 2 : 1);
	}
	int shown = n > 0 ? (a->inlines ? n : 1) : 1;
	for (int i = 0; i < shown; i++) {
		const struct sym_frame *fr = n > 0 ? &frames[i] : NULL;
		if (a->pretty && i > 0)
			out_str(o, " (inlined by) ");
		if (a->functions) {
			out_function(o, a, fr);
			out_bytes(o, a->pretty ? " at " : "\n", a->pretty ? 4 : 1);
		}
		out_location(o, a, fr);
		out_bytes(o, "\n", 1);
	}
}

/* An address as addr2line reads it: hexadecimal, 0x optional, the digits
 * up to the first other character (none: 0). */
static uint64_t parse_address(const char *s)
{
	uint64_t v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (;; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return v;
		v = v << 4 | d;
	}
}

struct a2l {
	struct a2l_args a;
	struct symbolizer *sym;
	struct sym_file *file;
	struct out out;
};

static int translate(struct a2l *t, uint64_t addr)
{
	struct sym_frame frames[MAX_INLINE];
	int n = symbolizer_lookup(t->sym, t->file, addr, frames, MAX_INLINE);

	if (n < 0)
		return n;
	print_address(&t->out, &t->a, addr, frames, n);
	return 0;
}

/* Answers a block of addresses, announcing each a few lookups ahead. */
static int translate_block(struct a2l *t, const uint64_t *addrs, size_t n)
{
	enum { AHEAD = 8 };

	for (size_t i = 0; i < n && i < AHEAD; i++)
		symbolizer_prefetch(t->sym, t->file, addrs[i]);
	for (size_t i = 0; i < n; i++) {
		if (i + AHEAD < n)
			symbolizer_prefetch(t->sym, t->file, addrs[i + AHEAD]);
		int rc = translate(t, addrs[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Reads standard input in blocks, answers every whole line, and flushes
 * before waiting for more. */
static int translate_stdin(struct a2l *t)
{
	static char in[1 << 16];
	static uint64_t addrs[sizeof(in) / 2];
	size_t have = 0;

	for (;;) {
		out_flush(&t->out);
		ssize_t r = read(STDIN_FILENO, in + have, sizeof(in) - 1 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0 && have == 0)
			return 0;
		have += (size_t)r;
		in[have] = '\0';
		char *line = in, *nl;
		size_t n = 0;
		while ((nl = memchr(line, '\n', have - (size_t)(line - in))) != NULL) {
			*nl = '\0';
			addrs[n++] = parse_address(line);
			line = nl + 1;
		}
		have -= (size_t)(line - in);
		memmove(in, line, have);
		/* The end of input, or a line too long to be an address. */
		if ((r == 0 && have > 0) || have == sizeof(in) - 1) {
			in[have] = '\0';
			addrs[n++] = parse_address(in);
			have = 0;
		}
		int rc = translate_block(t, addrs, n);
		if (rc < 0)
			return rc;
		if (r == 0)
			return 0;
	}
}

int cmd_addr2line(int argc, char **argv)
{
	struct a2l *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		die("out of memory");
	int first = options_parse("addr2line", a2l_options, 0, argc, argv, &t->a, NULL);
	const char *exe = t->a.exe ? t->a.exe : "a.out";
	t->sym = symbolizer_new();
	if (!t->sym)
		die("out of memory");
	if (!t->a.no_cache && dirs_use_cache(t->sym, 0) < 0)
		die("out of memory");
	rc = symbolizer_open(t->sym, exe, -1, &t->file);
	if (rc == -ENOEXEC)
		die("'%s' is not an executable or shared object: give one with -e", exe);
	if (rc < 0)
		die("cannot open '%s': %s", exe, strerror(-rc));
	if (first < argc) {
		for (int i = first; i < argc && rc >= 0; i++)
			rc = translate(t, parse_address(argv[i]));
	} else {
		rc = translate_stdin(t);
	}
	out_flush(&t->out);
	if (rc < 0)
		die("cannot symbolize in '%s': %s", exe, strerror(-rc));
	if (t->out.failed)
		die("cannot write the output: %s", strerror(t->out.failed));
	symbolizer_free(t->sym);
	free(t);
	return 0;
}
