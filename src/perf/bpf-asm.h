/*
 * Writing BPF programs by hand: the instruction macros, the offsets of
 * the user registers in a uprobe program's context (struct pt_regs on
 * x86-64), and the bpf(2) system call. The programs recce loads are short
 * enough to write as instructions (uprobe-bpf.c, alloc-bpf.c), which spares
 * it a BPF compiler and libbpf; the system's linux/bpf.h gives the
 * encoding and the helper numbers.
 */
#ifndef RECCE_BPF_ASM_H
#define RECCE_BPF_ASM_H

#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>

#include "util/x86-regs.h"

/* struct pt_regs offsets on x86-64 beyond the general registers. */
enum {
	BPF_REGS_IP = 128,
	BPF_REGS_FLAGS = 144,
	BPF_REGS_SP = 152,
};

/* The offset in struct pt_regs of each register, by enum x86_gpr. */
extern const int16_t bpf_gpr_offset[X86_NGPR];

#define INSN(c, d, s, o, i)                                                                        \
	((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV64_REG(d, s)	  INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i)	  INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV32_IMM(d, i)	  INSN(BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i)	  INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define SUB64_REG(d, s)	  INSN(BPF_ALU64 | BPF_SUB | BPF_X, d, s, 0, 0)
#define ADD64_REG(d, s)	  INSN(BPF_ALU64 | BPF_ADD | BPF_X, d, s, 0, 0)
#define ARSH64_IMM(d, i)  INSN(BPF_ALU64 | BPF_ARSH | BPF_K, d, 0, 0, i)
#define MUL64_REG(d, s)	  INSN(BPF_ALU64 | BPF_MUL | BPF_X, d, s, 0, 0)
#define LSH64_IMM(d, i)	  INSN(BPF_ALU64 | BPF_LSH | BPF_K, d, 0, 0, i)
#define RSH64_IMM(d, i)	  INSN(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, i)
#define AND64_IMM(d, i)	  INSN(BPF_ALU64 | BPF_AND | BPF_K, d, 0, 0, i)
#define LDX_DW(d, s, o)	  INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STX_DW(d, s, o)	  INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define ST_DW(d, o, i)	  INSN(BPF_ST | BPF_MEM | BPF_DW, d, 0, o, i)
#define ST_W(d, o, i)	  INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define STX_W(d, s, o)	  INSN(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define LDX_W(d, s, o)	  INSN(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define CALL(f)		  INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define XADD_DW(d, s, o)  INSN(BPF_STX | BPF_ATOMIC | BPF_DW, d, s, o, BPF_ADD)
#define JSGT_IMM(d, i, o) INSN(BPF_JMP | BPF_JSGT | BPF_K, d, 0, o, i)
#define JSGE_IMM(d, i, o) INSN(BPF_JMP | BPF_JSGE | BPF_K, d, 0, o, i)
#define JNE_IMM(d, i, o)  INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define JNE_REG(d, s, o)  INSN(BPF_JMP | BPF_JNE | BPF_X, d, s, o, 0)
#define JEQ_REG(d, s, o)  INSN(BPF_JMP | BPF_JEQ | BPF_X, d, s, o, 0)
#define JEQ_IMM(d, i, o)  INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define JLE_IMM(d, i, o)  INSN(BPF_JMP | BPF_JLE | BPF_K, d, 0, o, i)
#define JA(o)		  INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define EXIT()		  INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* Two instructions: dst = the map whose descriptor is fd. */
#define LD_MAP_FD(d, fd)                                                                           \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)

/* bpf(2): a descriptor or 0 on success, -errno on failure. */
int bpf_sys(int cmd, void *attr, size_t size);

/* A map of n entries; returns its descriptor or -errno. */
int bpf_map_new(uint32_t type, uint32_t key_size, uint32_t value_size, uint32_t n,
		const char *name);

/* Sets, reads or deletes one entry of a map. Return 0 or -errno
 * (-ENOENT: no such key). */
int bpf_map_set(int map_fd, const void *key, const void *value);
int bpf_map_get(int map_fd, const void *key, void *value);
int bpf_map_delete(int map_fd, const void *key);

/* The jump at p[at] lands at instruction to. */
void bpf_land(struct bpf_insn *p, size_t at, size_t to);

/* Loads a uprobe program (a BPF_PROG_TYPE_KPROBE) of n instructions for
 * links of attach_type; on failure a verifier log, if any, is left in log.
 * Returns its descriptor or -errno. */
int bpf_prog_load_uprobe(const struct bpf_insn *p, size_t n, uint32_t attach_type, const char *name,
			 char *log, size_t log_len);
/* The same for a program of any type (enum bpf_prog_type). */
int bpf_prog_load(uint32_t type, const struct bpf_insn *p, size_t n, uint32_t attach_type,
		  const char *name, char *log, size_t log_len);

#endif
