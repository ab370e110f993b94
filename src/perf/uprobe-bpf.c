/*
 * The BPF program and uprobe_multi links of call tracing (see
 * uprobe-bpf.h). The program is short enough to write as instructions,
 * which spares recce a BPF compiler and libbpf; the system's linux/bpf.h
 * gives the instruction encoding and helper numbers, and the few fields
 * of uprobe_multi links, newer than some systems' headers, are declared
 * here from the kernel's ABI.
 */
#include "perf/uprobe-bpf.h"

#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/x86-regs.h"

#define ATTACH_UPROBE_MULTI 48	      /* enum bpf_attach_type BPF_TRACE_UPROBE_MULTI (6.6) */
#define UPROBE_MULTI_RETURN (1U << 0) /* BPF_F_UPROBE_MULTI_RETURN */

/* union bpf_attr for BPF_LINK_CREATE of an uprobe_multi link, padded to
 * the size the kernel reads; unknown trailing bytes must be zero. */
struct link_create_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid, pad;
	uint64_t rest[8];
};

/* struct pt_regs offsets on x86-64, the context of a uprobe program. */
enum {
	REG_IP = 128,
	REG_FLAGS = 144,
	REG_SP = 152,
};

/* The offset in struct pt_regs of each register, by enum x86_gpr. */
static const int16_t gpr_offset[X86_NGPR] = {
    80,	 /* rax */
    88,	 /* rcx */
    96,	 /* rdx */
    40,	 /* rbx */
    152, /* rsp */
    32,	 /* rbp */
    104, /* rsi */
    112, /* rdi */
    72,	 /* r8 */
    64,	 /* r9 */
    56,	 /* r10 */
    48,	 /* r11 */
    24,	 /* r12 */
    16,	 /* r13 */
    8,	 /* r14 */
    0,	 /* r15 */
};

#define INSN(c, d, s, o, i)                                                                        \
	((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV64_REG(d, s)	  INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i)	  INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV32_IMM(d, i)	  INSN(BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i)	  INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX_DW(d, s, o)	  INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STX_DW(d, s, o)	  INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define ST_DW(d, o, i)	  INSN(BPF_ST | BPF_MEM | BPF_DW, d, 0, o, i)
#define CALL(f)		  INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define JSGT_IMM(d, i, o) INSN(BPF_JMP | BPF_JSGT | BPF_K, d, 0, o, i)
#define JSGE_IMM(d, i, o) INSN(BPF_JMP | BPF_JSGE | BPF_K, d, 0, o, i)
#define JNE_IMM(d, i, o)  INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define JEQ_IMM(d, i, o)  INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define JLE_IMM(d, i, o)  INSN(BPF_JMP | BPF_JLE | BPF_K, d, 0, o, i)
#define JA(o)		  INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define RSH64_IMM(d, i)	  INSN(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, i)
#define AND64_IMM(d, i)	  INSN(BPF_ALU64 | BPF_AND | BPF_K, d, 0, 0, i)
#define EXIT()		  INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static int sys_bpf(int cmd, void *attr, size_t size)
{
	long fd = syscall(SYS_bpf, cmd, attr, size);

	return fd < 0 ? -errno : (int)fd;
}

int ubpf_map_new(size_t n)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_PERF_EVENT_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = (uint32_t)n;
	strncpy(a.map_name, "recce_hits", sizeof(a.map_name) - 1);
	return sys_bpf(BPF_MAP_CREATE, &a, sizeof(a));
}

int ubpf_map_set(int map_fd, int cpu, int event_fd)
{
	union bpf_attr a;
	uint32_t key = (uint32_t)cpu, value = (uint32_t)event_fd;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map_fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&value;
	int rc = sys_bpf(BPF_MAP_UPDATE_ELEM, &a, sizeof(a));
	return rc < 0 ? rc : 0;
}

/* Stack offset (from r10) of record word w. */
static int16_t slot(size_t nwords, int w)
{
	return (int16_t)(-(int)(nwords * 8) + w * 8);
}

/* The jump at p[at] lands at instruction to. */
static void land(struct bpf_insn *p, size_t at, size_t to)
{
	p[at].off = (int16_t)(to - at - 1);
}

_Static_assert(UBPF_CAP_WORDS <= UBPF_MAX_CHAIN, "a capture fits where the chain goes");

int ubpf_prog_new(int map_fd, int callchain, char *log, size_t log_len)
{
	struct bpf_insn p[256];
	size_t n = 0;
	/* The record: registers, then the chain or a capture, which share
	 * their words (a hit has one or the other). */
	size_t nwords = UBPF_NWORDS + (callchain ? UBPF_MAX_CHAIN : UBPF_CAP_WORDS);
	size_t plain = callchain ? nwords : UBPF_NWORDS; /* words of a hit without capture */
	static const int16_t more[2][2] = {{REG_IP, UBPF_IP}, {REG_FLAGS, UBPF_FLAGS}};
	int16_t cap = slot(nwords, UBPF_NWORDS); /* the capture's first word */

	/* r6 = ctx (the user registers at the probe); the record is on the
	 * stack, zeroed first so that no byte of it is left uninitialised;
	 * r7 = the cookie; r9 = the bytes to send. */
	p[n++] = MOV64_REG(BPF_REG_6, BPF_REG_1);
	p[n++] = MOV64_IMM(BPF_REG_9, (int32_t)(plain * 8));
	for (size_t w = 0; w < nwords; w++)
		p[n++] = ST_DW(BPF_REG_10, slot(nwords, (int)w), 0);
	p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_6);
	p[n++] = CALL(BPF_FUNC_get_attach_cookie);
	p[n++] = MOV64_REG(BPF_REG_7, BPF_REG_0);
	p[n++] = STX_DW(BPF_REG_10, BPF_REG_0, slot(nwords, UBPF_COOKIE));
	p[n++] = CALL(BPF_FUNC_get_current_pid_tgid);
	p[n++] = STX_DW(BPF_REG_10, BPF_REG_0, slot(nwords, UBPF_PID_TGID));
	p[n++] = CALL(BPF_FUNC_ktime_get_ns);
	p[n++] = STX_DW(BPF_REG_10, BPF_REG_0, slot(nwords, UBPF_TIME));
	for (int r = 0; r < X86_NGPR; r++) {
		p[n++] = LDX_DW(BPF_REG_1, BPF_REG_6, gpr_offset[r]);
		p[n++] = STX_DW(BPF_REG_10, BPF_REG_1, slot(nwords, UBPF_GPR + r));
	}
	for (int r = 0; r < 2; r++) {
		p[n++] = LDX_DW(BPF_REG_1, BPF_REG_6, more[r][0]);
		p[n++] = STX_DW(BPF_REG_10, BPF_REG_1, slot(nwords, more[r][1]));
	}

	/* A capture (UBPF_CAPTURE, the cookie's sign bit): copy the object
	 * at rax, then, for a string, the bytes its first word points to. */
	size_t no_capture = n;
	p[n++] = JSGE_IMM(BPF_REG_7, 0, 0);
	p[n++] = MOV64_IMM(BPF_REG_9, (int32_t)(nwords * 8));
	p[n++] = MOV64_REG(BPF_REG_2, BPF_REG_7);
	p[n++] = RSH64_IMM(BPF_REG_2, 48);
	p[n++] = AND64_IMM(BPF_REG_2, 63);
	p[n++] = ADD64_IMM(BPF_REG_2, 1);
	p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_1, cap + UBPF_CAP_OBJ * 8);
	p[n++] = LDX_DW(BPF_REG_3, BPF_REG_6, gpr_offset[X86_RAX]);
	p[n++] = CALL(BPF_FUNC_probe_read_user);
	p[n++] = STX_DW(BPF_REG_10, BPF_REG_0, cap + UBPF_CAP_OBJ_RC * 8);
	size_t unread = n;
	p[n++] = JNE_IMM(BPF_REG_0, 0, 0);
	p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_7);
	p[n++] = RSH64_IMM(BPF_REG_1, 62);
	p[n++] = AND64_IMM(BPF_REG_1, 1);
	size_t no_string = n;
	p[n++] = JEQ_IMM(BPF_REG_1, 0, 0);
	p[n++] = LDX_DW(BPF_REG_2, BPF_REG_10, cap + (UBPF_CAP_OBJ + 1) * 8);
	p[n++] = JLE_IMM(BPF_REG_2, UBPF_CAPTURE_MAX, 1);
	p[n++] = MOV64_IMM(BPF_REG_2, UBPF_CAPTURE_MAX);
	p[n++] = LDX_DW(BPF_REG_3, BPF_REG_10, cap + UBPF_CAP_OBJ * 8);
	p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_1, cap + UBPF_CAP_STR * 8);
	p[n++] = CALL(BPF_FUNC_probe_read_user);
	p[n++] = STX_DW(BPF_REG_10, BPF_REG_0, cap + UBPF_CAP_STR_RC * 8);
	size_t captured = n;
	p[n++] = JA(0);
	land(p, no_capture, n);

	if (callchain) {
		/* At a function's first instruction its caller has no frame
		 * yet: the return address at the stack pointer names it. */
		p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_10);
		p[n++] = ADD64_IMM(BPF_REG_1, slot(nwords, UBPF_RET_ADDR));
		p[n++] = MOV64_IMM(BPF_REG_2, 8);
		p[n++] = LDX_DW(BPF_REG_3, BPF_REG_6, REG_SP);
		p[n++] = CALL(BPF_FUNC_probe_read_user);
		p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_6);
		p[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
		p[n++] = ADD64_IMM(BPF_REG_2, slot(nwords, UBPF_NWORDS));
		p[n++] = MOV64_IMM(BPF_REG_3, UBPF_MAX_CHAIN * 8);
		p[n++] = MOV64_IMM(BPF_REG_4, BPF_F_USER_STACK);
		p[n++] = CALL(BPF_FUNC_get_stack);
		p[n++] = JSGT_IMM(BPF_REG_0, 0, 1);
		p[n++] = MOV64_IMM(BPF_REG_0, 0);
		p[n++] = STX_DW(BPF_REG_10, BPF_REG_0, slot(nwords, UBPF_CHAIN_BYTES));
	}
	land(p, unread, n);
	land(p, no_string, n);
	land(p, captured, n);
	/* bpf_perf_event_output(ctx, map, BPF_F_CURRENT_CPU, record, size):
	 * the flags must be exactly 0xffffffff, hence a 32-bit move. */
	p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_6);
	p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, map_fd);
	p[n++] = INSN(0, 0, 0, 0, 0);
	p[n++] = MOV32_IMM(BPF_REG_3, -1);
	p[n++] = MOV64_REG(BPF_REG_4, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_4, slot(nwords, 0));
	p[n++] = MOV64_REG(BPF_REG_5, BPF_REG_9);
	p[n++] = CALL(BPF_FUNC_perf_event_output);
	p[n++] = MOV64_IMM(BPF_REG_0, 0);
	p[n++] = EXIT();

	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_KPROBE;
	a.expected_attach_type = ATTACH_UPROBE_MULTI;
	a.insn_cnt = (uint32_t)n;
	a.insns = (uint64_t)(uintptr_t)p;
	a.license = (uint64_t)(uintptr_t) "GPL"; /* the helpers used are GPL-only */
	strncpy(a.prog_name, "recce_hit", sizeof(a.prog_name) - 1);
	if (log && log_len) {
		log[0] = 0;
		a.log_buf = (uint64_t)(uintptr_t)log;
		a.log_size = (uint32_t)log_len;
		a.log_level = 1;
	}
	int fd = sys_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd == -ENOSPC && log) {
		/* The log did not fit: load again without one. */
		a.log_buf = 0;
		a.log_size = 0;
		a.log_level = 0;
		fd = sys_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	}
	return fd;
}

int ubpf_link_new(int prog_fd, const char *path, const uint64_t *offsets, const uint64_t *cookies,
		  size_t n, int retprobe, pid_t pid)
{
	struct link_create_uprobe_multi a;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = ATTACH_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offsets;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = (uint32_t)n;
	a.multi_flags = retprobe ? UPROBE_MULTI_RETURN : 0;
	a.pid = (uint32_t)pid;
	return sys_bpf(BPF_LINK_CREATE, &a, sizeof(a));
}
