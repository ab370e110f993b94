/*
 * The record of a probe hit, as the BPF program of call tracing
 * (bpf/hits.bpf.c) writes it and uprobe.c reads it, and the cookie bits
 * that ask the program for more. Shared by both sides, so this header
 * includes nothing a BPF compilation lacks.
 */
#ifndef RECCE_PERF_HIT_FORMAT_H
#define RECCE_PERF_HIT_FORMAT_H

#include "util/x86-regs.h"

#define UBPF_MAX_CHAIN 40    /* call chain entries a hit carries */
/* Bytes of user stack a hit can carry (whole pages): the record, with a
 * page more for the copy's last read, is a per-CPU map's value, which
 * the kernel keeps under 32 KiB. */
#define UBPF_MAX_STACK 24576

/*
 * The record the program writes, as the raw data of a PERF_RECORD_SAMPLE:
 * 64-bit words, UBPF_NWORDS of them plus UBPF_MAX_CHAIN chain entries when
 * the program was built with a call chain, then a capture's UBPF_CAP_WORDS
 * (below) for a hit that asks for one. Built with a stack copy as well,
 * the capture's words (there, zero without a capture) are followed by one
 * word, the bytes of user stack copied from the stack pointer up (at most
 * UBPF_MAX_STACK) with the copy's holes from bit 32 (bit i: page i of it,
 * the stack pointer's being 0, could not be read and is zeros) and the
 * copy asked for, in words, from bit 48; and those bytes.
 */
enum {
	UBPF_COOKIE,	  /* the link's cookie for the offset hit */
	UBPF_PID_TGID,	  /* tgid << 32 | tid */
	UBPF_TIME,	  /* CLOCK_MONOTONIC ns */
	UBPF_RET_ADDR,	  /* the word at the stack pointer (a call's return address) */
	UBPF_CHAIN_BYTES, /* bytes of chain that follow, 0 without a chain */
	UBPF_IP,	  /* rip */
	UBPF_FLAGS,	  /* rflags */
	UBPF_DROPS,	  /* hits dropped (their ring full) before this one, of all */
	UBPF_GPR,	  /* then the 16 registers, in enum x86_gpr order */
	UBPF_NWORDS = UBPF_GPR + 16,
};

/*
 * A cookie with UBPF_CAPTURE set asks the program to copy, at that offset,
 * the object whose address is in a register plus a displacement (rax and
 * 0: a function returns its in-memory result's address there; rbx and
 * 0x60: a function pointer an indirect call is about to take),
 * UBPF_CAPTURE_SIZE(cookie) bytes of it (1 to 64), and with UBPF_CAPTURE_STRING also up to 64 bytes
 * at the pointer in the object's first word, as many as its second word says (libstdc++'s
 * std::string: data pointer, length). UBPF_CAP_WORDS words in the order
 * below hold it, after the chain's words (or the registers, built without
 * a chain), the results of the two reads (0 or -errno) first. The low 32 bits of a
 * cookie are the probe's index.
 */
/*
 * A cookie with UBPF_CAPTURE_STRS (and UBPF_CAPTURE) asks instead for two
 * NUL-terminated strings, up to UBPF_CAPTURE_MAX bytes each with their
 * NUL: at the address in register UBPF_CAPTURE_REG_BITS into the
 * object's words, and at the address in register UBPF_CAPTURE_REG2_BITS
 * into the string's; each read's result word is then the bytes read,
 * NUL included, or -errno (a USDT probe's char * arguments, read at the
 * hit: CPython's function name and file).
 */
#define UBPF_CAPTURE_STRS	  (1ULL << 61)
/* With UBPF_CAPTURE_STRS: instead, the bytes at the address in register
 * UBPF_CAPTURE_REG_BITS, as many as register UBPF_CAPTURE_REG2_BITS
 * holds (at most UBPF_CAPTURE_MAX), into the object's words, the result
 * word the count copied or -errno (a string result given as a pointer
 * and a length: Go's string, Rust's &str). */
#define UBPF_CAPTURE_COUNTED	  (1ULL << 60)
#define UBPF_CAPTURE_REG2_BITS(r) ((uint64_t)((r)&15) << 32)
#define UBPF_CAPTURE		  (1ULL << 63)
#define UBPF_CAPTURE_STRING	  (1ULL << 62)
#define UBPF_CAPTURE_MAX	  64
#define UBPF_CAPTURE_BITS(size)	  ((uint64_t)((size)-1) << 48)
#define UBPF_CAPTURE_SIZE(c)	  ((size_t)(((c) >> 48) & 63) + 1)
#define UBPF_CAPTURE_REG_BITS(r)  ((uint64_t)((r)&15) << 54) /* enum x86_gpr */
#define UBPF_CAPTURE_DISP_BITS(d) ((uint64_t)(uint16_t)(int16_t)(d) << 32)
#define UBPF_COOKIE_INDEX(c)	  ((c)&0xffffffffULL)
enum {
	UBPF_CAP_OBJ_RC,
	UBPF_CAP_STR_RC,
	UBPF_CAP_OBJ,
	UBPF_CAP_STR = UBPF_CAP_OBJ + UBPF_CAPTURE_MAX / 8,
	UBPF_CAP_WORDS = UBPF_CAP_STR + UBPF_CAPTURE_MAX / 8,
};

/*
 * The program built for Python frames (hits.bpf.c with HITS_PY, loaded
 * with a map of CPython layouts, py-format.h) puts UBPF_PY_WORDS words
 * between the capture's and the stack copy's in every record with a call
 * chain: a word of the frames read and the PY_REC_* flags (n | flags <<
 * 32), then UBPF_PY_FRAMES frames of four words as py_bpf_record's, the
 * thread's innermost first (a record without a stack copy ends after the
 * frames read). It reads them at a hit whose cookie has
 * UBPF_PY_WALK (a Python call's entry); at others n is 0 and the flags
 * are UBPF_PY_NOT_ASKED. A process without a layout gets PY_REC_NO_THREAD.
 * With UBPF_PY_FEW too, the walk takes UBPF_PY_FEW_STEPS steps only, as
 * many as the call's own frame and its caller's need with shims and
 * frames not yet run between them (--caller without --stack).
 */
#define UBPF_PY_WALK	  (1ULL << 59)
#define UBPF_PY_FEW	  (1ULL << 58)
#define UBPF_PY_FEW_STEPS 8
#define UBPF_PY_FRAMES	  32 /* frames a hit carries (a power of two); deeper is cut */
#define UBPF_PY_WORDS	  (1 + 4 * UBPF_PY_FRAMES)
#define UBPF_PY_NOT_ASKED 0x100

#endif
