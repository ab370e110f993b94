/*
 * The trace event: one call or return of a traced function, as `recce
 * trace` shows it, as trace files store it (the struct is the on-disk
 * record, little-endian as written on x86-64) and as `recce replay` reads
 * it back. Fixed size, no pointers, strings truncated to their arrays and
 * always NUL-terminated, so a record can be copied, written and checked
 * as a block.
 *
 * A return record repeats the arguments of its call, so that an --if
 * condition on arguments selects a call and its return together.
 */
#ifndef RECCE_TRACE_EVENT_H
#define RECCE_TRACE_EVENT_H

#include <stdint.h>
#include <stdio.h>

#include "trace/trace-cond.h"

#define TRACE_RECORD_SIZE 1024
#define TRACE_MAX_ARGS	  6
#define TRACE_FUNCTION_LEN 96 /* a record's function name, its NUL included */

enum trace_kind { TRACE_CALL = 1, TRACE_RETURN = 2 };

enum trace_arg_kind {
	TRACE_ARG_NONE = 0,
	TRACE_ARG_INT,	/* signed integer */
	TRACE_ARG_UINT, /* unsigned integer */
	TRACE_ARG_BOOL,
	TRACE_ARG_CHAR,
	TRACE_ARG_HEX,	   /* a pointer or a raw register */
	TRACE_ARG_STR,	   /* char *: str holds the text read from the target */
	TRACE_ARG_UNKNOWN, /* not in an integer register (float, struct): not shown */
	TRACE_ARG_OBJECT,  /* a return in memory: the value is the object's address */
	TRACE_ARG_FLOAT,   /* a float or double member of a returned object */
	TRACE_ARG_RESULTS, /* Go's results, several: ret_text holds them all */
};

/* Flags of a return record: how the call ended when not by a return. */
#define TRACE_RECORD_UNWOUND 1u /* an exception, longjmp or stack switch left it */
#define TRACE_RECORD_TAIL    2u /* it jumped to another function (a tail call) */
/* Its return was not seen while the kernel dropped events (a full ring):
 * how it ended is not known. */
#define TRACE_RECORD_LOST 4u
/* Still in flight when the trace ended, its thread still there: the
 * duration is how long it had run so far. */
#define TRACE_RECORD_OPEN 8u

/* Flags of a string argument. */
#define TRACE_STR_TRUNCATED  1u /* longer than the cap */
#define TRACE_STR_UNREADABLE 2u /* the pointer could not be read (NULL, unmapped) */

/* Why a TRACE_ARG_UNKNOWN argument was not read, in bits 8-15 of its
 * flags: shown as "?" in text and as null with this reason in JSON. */
enum trace_arg_why {
	TRACE_WHY_NONE = 0,
	TRACE_WHY_FLOAT,     /* in an xmm register, which a uprobe does not see */
	TRACE_WHY_AGGREGATE, /* a struct, union, slice or interface by value */
	TRACE_WHY_WIDE,	     /* wider than a register (__int128, long double) */
	TRACE_WHY_PLACE,     /* after an argument whose registers are not known */
	TRACE_WHY_STACK,     /* past the argument registers, on the stack */
	TRACE_WHY_OPTIMIZED, /* DWARF: the compiler kept no value at the call */
	TRACE_WHY_UNSEEN,    /* in a register this kind of probe does not record */
	TRACE_WHY_MEMORY,    /* USDT: in memory the probe did not copy at the hit */
	TRACE_WHY_OPERAND,   /* USDT: an operand recce cannot place (an index register) */
};
#define TRACE_ARG_WHY(flags) (((flags) >> 8) & 0xffu)
#define TRACE_ARG_WHY_SET(w) ((uint32_t)(w) << 8)

/* The reason of a TRACE_ARG_WHY as a few words ("passed in a floating-point
 * register"), "" for TRACE_WHY_NONE. */
const char *trace_arg_why_text(unsigned why);

struct trace_arg {
	char name[24];
	uint32_t kind; /* enum trace_arg_kind */
	uint32_t flags;
	uint64_t value; /* the register */
	char str[48];
};

struct trace_record {
	uint32_t crc;  /* trace files: crc32 of the bytes after this field */
	uint16_t kind; /* enum trace_kind */
	uint8_t nargs;
	uint8_t ret_kind;     /* enum trace_arg_kind of the return value */
	uint64_t seq;	      /* trace files: 1, 2, ... in writing order */
	uint64_t time_ns;     /* CLOCK_REALTIME nanoseconds */
	uint64_t duration_ns; /* TRACE_RETURN: since the call */
	uint64_t ret;
	uint64_t regs[TRACE_MAX_ARGS]; /* rdi rsi rdx rcx r8 r9 at the call */
	uint32_t pid, tid;
	int32_t arity;	   /* parameters from DWARF, -1 if unknown */
	uint32_t flags;	   /* TRACE_RECORD_* */
	char function[TRACE_FUNCTION_LEN]; /* "object:function", "py:module.function" */
	char caller[120];  /* "function+0xoff" with --caller, else "" */
	struct trace_arg args[TRACE_MAX_ARGS];
	/* A TRACE_ARG_OBJECT return as read when it returned ("" when it
	 * could not be): {a=1, b=2} or a quoted string, target text escaped. */
	char ret_text[160];
	uint8_t reserved[TRACE_RECORD_SIZE - 1008];
};

_Static_assert(sizeof(struct trace_record) == TRACE_RECORD_SIZE, "trace record size");

enum trace_format { TRACE_FORMAT_TEXT, TRACE_FORMAT_JSON, TRACE_FORMAT_CHROME };

/* Copies src into a fixed array, truncating, always NUL-terminated. */
void trace_copy_str(char *dst, size_t cap, const char *src);

/* A Python call's file ("py:..." records: its argument named file, read):
 * the argument's text, *cut set when it was truncated; NULL for another
 * record, or a file that could not be read. A Python function is known
 * by its file and its last name (a C function's argument named file is
 * no such thing). */
const char *trace_record_py_file(const struct trace_record *r, int *cut);

/* The --if lookup over a record (a trace_cond_lookup_fn): argument names,
 * arg0..arg5 (the raw registers), "function" (the name without its
 * object: "app.handle" of a Python call "py:app.handle") and, on a
 * return, "ret". */
int trace_record_lookup(const char *name, struct trace_value *v, void *record);

/* A value of a kind as text: 55, -3, true, 'a', 0x7ffd1234. */
void trace_format_value(char *buf, size_t len, uint32_t kind, uint64_t v);

/* How a return record's call ended, as text shows it after "-->": its
 * value (in buf, of len bytes) or what became of it, "(unwound)". */
const char *trace_record_ending(const struct trace_record *r, char *buf, size_t len);

/* A call record's "function(name=value, ...)", target text escaped. */
void trace_record_print_call(const struct trace_record *r, FILE *out);

/* Prints a record: text lines, one JSON object per line, or one Chrome
 * trace event ("B" for a call, "E" for a return) preceded by a comma unless
 * first. */
void trace_record_print(const struct trace_record *r, enum trace_format f, int first, FILE *out);

/* The same, of a record from host (NULL: not said): JSON gives it as
 * "host"; text and Chrome leave it to the caller (a line's prefix, a
 * process of its own). */
void trace_record_print_host(const struct trace_record *r, enum trace_format f, int first,
			     const char *host, FILE *out);

/* A Chrome trace metadata event naming process pid (name: bytes, each
 * one code point), preceded by a comma unless first. */
void trace_chrome_process_name(uint32_t pid, const char *name, int first, FILE *out);

#endif
