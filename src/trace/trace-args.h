/*
 * Arguments of a traced function: their names and base types from the
 * DWARF formal parameters of its definition, placed in the registers that
 * hold them at the function's first instruction, where the probe fires:
 * where DWARF's location says, else where the SysV x86-64 ABI (rdi rsi
 * rdx rcx r8 r9) or Go's register ABI puts them. char * arguments, Go
 * strings and Rust &str are read from the target with process_vm_readv(2),
 * with a length cap. When DWARF cannot describe the call (no debug info,
 * a compiler-made clone such as foo.isra.0 whose arguments do not follow
 * the ABI) the signature says why, and callers show raw registers
 * instead; an argument that cannot be read carries the reason
 * (enum trace_arg_why).
 *
 * Ownership: struct trace_sig is a caller-allocated value; reason points
 * to static text.
 */
#ifndef RECCE_TRACE_ARGS_H
#define RECCE_TRACE_ARGS_H

#include <stdint.h>
#include <sys/types.h>

#include "trace/trace-event.h"

struct symbolizer;
struct sym_file;

#define TRACE_OBJECT_MAX     64 /* bytes of a returned object read at its return */
#define TRACE_OBJECT_MEMBERS 8

/* What of an object returned in memory can be shown at the return: a
 * libstdc++ std::string as its text, else the members of base type (and
 * pointers, enums) in its first TRACE_OBJECT_MAX bytes. */
struct trace_ret_object {
	uint16_t size;	/* bytes to read at the return, 0: none can be shown */
	uint8_t string; /* std::string: data pointer at 0, length at 8 */
	uint8_t nmembers;
	uint8_t more; /* members not shown (nested, bit-fields, beyond size) */
	struct {
		char name[20];
		uint16_t offset;
		uint8_t kind; /* enum trace_arg_kind, or TRACE_ARG_FLOAT */
		uint8_t size;
	} m[TRACE_OBJECT_MEMBERS];
};

/* A Go result: where the ABI returns it. */
struct trace_result {
	uint8_t kind;	  /* enum trace_arg_kind */
	uint8_t size;	  /* bytes, for sign extension */
	uint8_t iface;	  /* an interface: nil, or its data word */
	int8_t reg, reg2; /* enum x86_gpr, -1 if none; reg2: a string's length, an
			   * interface's data word */
};

struct trace_sig {
	int known;   /* from DWARF */
	int arity;   /* formal parameters, -1 if unknown */
	int nparams; /* of them, those described in params[] (at most 6) */
	struct {
		char name[24];
		uint32_t kind; /* enum trace_arg_kind */
		int size;      /* bytes, for sign extension */
		int reg;       /* enum x86_gpr holding it at the call, -1 if none */
		int len_reg;   /* a string's length (Go, Rust), -1 if NUL-terminated */
		uint8_t why;   /* enum trace_arg_why when reg is -1 */
	} params[TRACE_MAX_ARGS];
	uint32_t ret_kind; /* TRACE_ARG_NONE for void */
	int ret_size;
	struct trace_ret_object ret_object; /* ret_kind TRACE_ARG_OBJECT */
	int go;				    /* Go's register ABI */
	/* Go: every result, where its ABI returns it (the first is also
	 * ret_kind); shown together as text when there are several, or one
	 * is a string or an interface. */
	int nrets;
	struct trace_result rets[TRACE_MAX_ARGS];
	const char *reason; /* when !known: why, for the user */
};

/* Describes the function at vaddr of f (named symname, which tells
 * clones apart). Always fills *sig; returns 0 if DWARF described it, else
 * -ENOENT with sig->reason set. */
int trace_args_describe(struct sym_file *f, const char *symname, uint64_t vaddr,
			struct trace_sig *sig);

/*
 * The string arguments a probe copies at the call, before the caller can
 * change or free them, or the process exit: the first one with a length
 * (Go's, Rust's &str), alone; else the first two NUL-terminated ones.
 * param[k] is the argument's index in sig->params, reg[k] its register,
 * len_reg the length's register (-1: NUL-terminated).
 */
struct trace_str_plan {
	int n;
	int param[2], reg[2];
	int len_reg;
};
void trace_args_str_plan(const struct trace_sig *sig, struct trace_str_plan *plan);

/* What the probe copied of the plan's strings: bytes and how many
 * (NULL: not copied, unreadable then). */
struct trace_copied_args {
	const uint8_t *bytes[2];
	size_t len[2];
};

/* Fills r->args from the registers at the call, gpr by enum x86_gpr, of
 * which the bits of have were recorded: named and typed when sig is
 * known, else arg0..arg5 as the raw SysV registers if raw is set (else
 * none). An argument in a register not recorded is unknown, never 0.
 * Strings are those copy holds (may be NULL) as trace_args_str_plan()
 * says, the others read from pid (0: from none, shown unreadable). */
void trace_args_fill(const struct trace_sig *sig, const uint64_t *gpr, uint32_t have, pid_t pid,
		     const struct trace_copied_args *copy, int raw, struct trace_record *r);

/* The return value rax narrowed to the declared return type. */
uint64_t trace_args_narrow_ret(const struct trace_sig *sig, uint64_t rax);

/* The text of a string result as the probe copied it at the return
 * (bytes, len of them; the result's length may be more). */
struct trace_copied_str {
	const uint8_t *bytes;
	size_t len;
};

/* Whether a return of sig is shown as trace_args_format_results() text. */
int trace_args_results_text(const struct trace_sig *sig);

/* Go's results at a return, as text into out (cap bytes): (111, true,
 * nil), a string quoted, an interface nil or non-nil(0xdata), a result in
 * no register or a register not recorded (have, as trace_args_fill) "?";
 * or Rust's &str result alone, quoted. The first string result is the
 * one copy holds when it is not NULL (copied at the return), others are
 * read from pid. */
void trace_args_format_results(const struct trace_sig *sig, const uint64_t *gpr, uint32_t have,
			       pid_t pid, const struct trace_copied_str *copy, char *out, size_t cap);

/* The first string result of sig (trace_args_results_text()), which a
 * probe at the return can copy: its index in rets, or -1. */
int trace_args_string_result(const struct trace_sig *sig);

/* The object o returned, as text into out (cap bytes): {a=1, b=2.5} or a
 * quoted string. obj holds its first len bytes as read at the return; str
 * the first min(str_len, 64) bytes of a string's text, or NULL. */
void trace_args_format_object(const struct trace_ret_object *o, const uint8_t *obj, size_t len,
			      const uint8_t *str, uint64_t str_len, char *out, size_t cap);

/* Reads a NUL-terminated string of at most cap-1 bytes at addr in pid
 * into buf. Returns 0, 1 if it was truncated, or -errno (-EFAULT; -ESRCH
 * for pid 0: no process may be read). */
int trace_read_string(pid_t pid, uint64_t addr, char *buf, size_t cap);

/* Reads the 8 bytes at addr of process pid: 0, or -errno (-ESRCH for
 * pid 0). */
int trace_read_word(pid_t pid, uint64_t addr, uint64_t *val);

#endif
