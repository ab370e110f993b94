/*
 * The indirect calls of an object's code: every `call REG` and `call
 * [REG+DISP]` of its .text, and every `jmp REG` and `jmp [REG+DISP]`
 * (a tail call: a callback the function calls last, as libuv's
 * uv__fs_done does), found by a linear sweep with Zydis (compilers put no
 * data in x86-64 .text), for probes at the places a library such as
 * libuv calls the functions its users gave it. Calls through the
 * instruction pointer (the GOT, a PLT) and through an index register are
 * left out: they call other libraries, not callbacks; so is a `jmp REG`
 * right after an `add` to REG or a load through an index, the way a
 * switch jumps through its table.
 */
#ifndef RECCE_SYMBOLS_INDIRECT_CALLS_H
#define RECCE_SYMBOLS_INDIRECT_CALLS_H

#include <stddef.h>
#include <stdint.h>

struct indirect_call {
	uint64_t offset; /* the call instruction's file offset */
	uint8_t len;	 /* its length: the return lands at offset + len */
	uint8_t reg;	 /* the register (enum x86_gpr) it calls, or the base it reads */
	uint8_t mem;	 /* 1: calls the pointer at reg + disp; 0: calls reg itself */
	uint8_t tail;	 /* a jmp that leaves the function (a tail call): no return here */
	int32_t disp;
};

/* Bytes of a file: a function's code. */
struct code_range {
	uint64_t offset, len;
};

/* The indirect calls of the ELF file at fd, in *out (freed with free()),
 * *n of them. Returns 0, -ENOEXEC for a file without .text, -ENOMEM. */
int indirect_calls_find(int fd, struct indirect_call **out, size_t *n);

/* The same within ranges[0..nranges) of the file only: a library linked
 * into a program, such as the libuv Node.js carries. */
int indirect_calls_find_in(int fd, const struct code_range *ranges, size_t nranges,
			   struct indirect_call **out, size_t *n);

#endif
