/*
 * USDT probes (SystemTap's statically defined tracing) an ELF file
 * carries: one `.note.stapsdt` note per probe site, each with its
 * provider and name ("python", "function__entry"), the address of the
 * nop the compiler left there, an optional semaphore (a 16-bit counter
 * the program tests before it prepares a probe's arguments: a tracer
 * raises it while attached) and the arguments as the assembler wrote
 * them: "8@%rbp -4@%eax -4@112(%rsp) 4@$5". CPython, libc, PostgreSQL,
 * node and the JVM ship them.
 *
 * The notes are untrusted input: a malformed one is skipped, an argument
 * this parser cannot place (an index register, an unknown register
 * name) is kept as USDT_ARG_UNKNOWN, and no more than USDT_MAX_ARGS
 * arguments are kept.
 *
 * Ownership: usdt_probes() returns an array the caller frees with
 * free(); its strings point into the file's ELF data and live as long as
 * the symbolizer that opened it.
 */
#ifndef RECCE_SYMBOLS_USDT_H
#define RECCE_SYMBOLS_USDT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sym_file;

#define USDT_MAX_ARGS 12

enum usdt_arg_kind {
	USDT_ARG_UNKNOWN, /* an operand this parser cannot place */
	USDT_ARG_CONST,	  /* $value */
	USDT_ARG_REG,	  /* %reg */
	USDT_ARG_MEM,	  /* disp(%reg): the value at reg + disp */
};

struct usdt_arg {
	uint8_t kind;	   /* enum usdt_arg_kind */
	uint8_t size;	   /* bytes: 1, 2, 4 or 8 */
	uint8_t is_signed; /* a "-N@" size */
	uint8_t reg;	   /* enum x86_gpr (REG, MEM) */
	int64_t value;	   /* CONST: the value; MEM: the displacement */
};

struct usdt_probe {
	const char *provider, *name;
	uint64_t vaddr, offset;		  /* the probe's ELF address and file offset */
	uint64_t sema_vaddr, sema_offset; /* its semaphore, 0 when it has none */
	int nargs; /* arguments the note declares (at most USDT_MAX_ARGS kept) */
	struct usdt_arg args[USDT_MAX_ARGS];
	const char *arg_text; /* as written in the note */
};

/* Every probe of f, in note order, into *out (NULL when none). Returns
 * the count, or -ENOMEM. A file without notes, or without its ELF at
 * hand, has none. */
ssize_t usdt_probes(struct sym_file *f, struct usdt_probe **out);

/* Parses one argument ("-4@112(%rsp)") into *a. Returns 0, or -EINVAL
 * when it is not SIZE@OPERAND (a placed but unknown operand returns 0
 * with kind USDT_ARG_UNKNOWN). */
int usdt_arg_parse(const char *text, size_t len, struct usdt_arg *a);

#endif
