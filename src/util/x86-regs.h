/*
 * The x86-64 general-purpose registers, numbered as the instruction set
 * encodes them (ModRM/REX: rax 0, rcx 1, ... r15 15). A probe hit carries
 * them in this order, and the instruction decoder names the registers an
 * exit jump reads by these numbers, so that the tracer can evaluate a
 * jump where the target stopped.
 */
#ifndef RECCE_UTIL_X86_REGS_H
#define RECCE_UTIL_X86_REGS_H

enum x86_gpr {
	X86_RAX,
	X86_RCX,
	X86_RDX,
	X86_RBX,
	X86_RSP,
	X86_RBP,
	X86_RSI,
	X86_RDI,
	X86_R8,
	X86_R9,
	X86_R10,
	X86_R11,
	X86_R12,
	X86_R13,
	X86_R14,
	X86_R15,
	X86_NGPR,
	X86_NONE = 255, /* no register (an operand without a base or index) */
};

/* Bits of rflags that conditional jumps test. */
#define X86_CF (1u << 0)
#define X86_PF (1u << 2)
#define X86_ZF (1u << 6)
#define X86_SF (1u << 7)
#define X86_OF (1u << 11)

#endif
