/*
 * The BPF program and uprobe_multi links of call tracing (see
 * uprobe-bpf.h), written as instructions (bpf-asm.h). The few fields of
 * uprobe_multi links, newer than some systems' headers, are declared here
 * from the kernel's ABI.
 */
#include "perf/uprobe-bpf.h"

#include <string.h>
#include <unistd.h>

#include "perf/bpf-asm.h"

#define UPROBE_MULTI_RETURN (1U << 0) /* BPF_F_UPROBE_MULTI_RETURN */

/* union bpf_attr for BPF_LINK_CREATE of an uprobe_multi link, padded to
 * the size the kernel reads; unknown trailing bytes must be zero. */
struct link_create_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid, pad;
	uint64_t rest[8];
};

int ubpf_map_new(size_t n)
{
	return bpf_map_new(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, (uint32_t)n, "recce_hits");
}

int ubpf_map_set(int map_fd, int cpu, int event_fd)
{
	uint32_t key = (uint32_t)cpu, value = (uint32_t)event_fd;

	return bpf_map_set(map_fd, &key, &value);
}

/* Stack offset (from r10) of record word w. */
static int16_t slot(size_t nwords, int w)
{
	return (int16_t)(-(int)(nwords * 8) + w * 8);
}

_Static_assert(UBPF_CAP_WORDS <= UBPF_MAX_CHAIN, "a capture fits where the chain goes");

/* Instructions at p[n]: r0 = the family map's entry for the current
 * process (NULL if it is not a member), its tgid left at r10-4. Returns
 * the next index. */
static size_t emit_family_lookup(struct bpf_insn *p, size_t n, int family_fd)
{
	struct bpf_insn ld[] = {LD_MAP_FD(BPF_REG_1, family_fd)};

	p[n++] = CALL(BPF_FUNC_get_current_pid_tgid);
	p[n++] = RSH64_IMM(BPF_REG_0, 32);
	p[n++] = STX_W(BPF_REG_10, BPF_REG_0, -4);
	p[n++] = ld[0];
	p[n++] = ld[1];
	p[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_2, -4);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	return n;
}

int ubpf_family_new(size_t n)
{
	return bpf_map_new(BPF_MAP_TYPE_HASH, 4, 4, (uint32_t)n, "recce_family");
}

int ubpf_drops_new(void)
{
	return bpf_map_new(BPF_MAP_TYPE_ARRAY, 4, 8, 1, "recce_drops");
}

int ubpf_prog_new(int map_fd, int drops_fd, int family_fd, int callchain, char *log, size_t log_len)
{
	struct bpf_insn p[256];
	size_t n = 0;
	/* The record: registers, then the chain or a capture, which share
	 * their words (a hit has one or the other). */
	size_t nwords = UBPF_NWORDS + (callchain ? UBPF_MAX_CHAIN : UBPF_CAP_WORDS);
	size_t plain = callchain ? nwords : UBPF_NWORDS; /* words of a hit without capture */
	static const int16_t more[2][2] = {{BPF_REGS_IP, UBPF_IP}, {BPF_REGS_FLAGS, UBPF_FLAGS}};
	int16_t cap = slot(nwords, UBPF_NWORDS); /* the capture's first word */

	/* r6 = ctx (the user registers at the probe); the record is on the
	 * stack, zeroed first so that no byte of it is left uninitialised;
	 * r7 = the cookie; r9 = the bytes to send. */
	p[n++] = MOV64_REG(BPF_REG_6, BPF_REG_1);
	if (family_fd >= 0) {
		/* Only the processes of the family: the rest return at once. */
		n = emit_family_lookup(p, n, family_fd);
		p[n++] = JNE_IMM(BPF_REG_0, 0, 2);
		p[n++] = MOV64_IMM(BPF_REG_0, 0);
		p[n++] = EXIT();
	}
	p[n++] = MOV64_IMM(BPF_REG_9, (int32_t)(plain * 8));
	for (size_t w = 0; w < nwords; w++)
		p[n++] = ST_DW(BPF_REG_10, slot(nwords, (int)w), 0);
	/* r8 = the drop counter (key 0: the slot is zero); its value now
	 * goes into the record. */
	{
		struct bpf_insn ld[] = {LD_MAP_FD(BPF_REG_1, drops_fd)};
		p[n++] = ld[0];
		p[n++] = ld[1];
	}
	p[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_2, slot(nwords, UBPF_DROPS));
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	p[n++] = MOV64_REG(BPF_REG_8, BPF_REG_0);
	p[n++] = JEQ_IMM(BPF_REG_8, 0, 2);
	p[n++] = LDX_DW(BPF_REG_1, BPF_REG_8, 0);
	p[n++] = STX_DW(BPF_REG_10, BPF_REG_1, slot(nwords, UBPF_DROPS));
	p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_6);
	p[n++] = CALL(BPF_FUNC_get_attach_cookie);
	p[n++] = MOV64_REG(BPF_REG_7, BPF_REG_0);
	p[n++] = STX_DW(BPF_REG_10, BPF_REG_0, slot(nwords, UBPF_COOKIE));
	p[n++] = CALL(BPF_FUNC_get_current_pid_tgid);
	p[n++] = STX_DW(BPF_REG_10, BPF_REG_0, slot(nwords, UBPF_PID_TGID));
	p[n++] = CALL(BPF_FUNC_ktime_get_ns);
	p[n++] = STX_DW(BPF_REG_10, BPF_REG_0, slot(nwords, UBPF_TIME));
	for (int r = 0; r < X86_NGPR; r++) {
		p[n++] = LDX_DW(BPF_REG_1, BPF_REG_6, bpf_gpr_offset[r]);
		p[n++] = STX_DW(BPF_REG_10, BPF_REG_1, slot(nwords, UBPF_GPR + r));
	}
	for (int r = 0; r < 2; r++) {
		p[n++] = LDX_DW(BPF_REG_1, BPF_REG_6, more[r][0]);
		p[n++] = STX_DW(BPF_REG_10, BPF_REG_1, slot(nwords, more[r][1]));
	}

	/* A capture (UBPF_CAPTURE, the cookie's sign bit): copy the object
	 * at a register plus a displacement (the cookie's bits 54-57 and
	 * 32-47), then, for a string, the bytes its first word points to. */
	size_t no_capture = n;
	p[n++] = JSGE_IMM(BPF_REG_7, 0, 0);
	p[n++] = MOV64_IMM(BPF_REG_9, (int32_t)(nwords * 8));
	p[n++] = MOV64_REG(BPF_REG_4, BPF_REG_7);
	p[n++] = RSH64_IMM(BPF_REG_4, 54);
	p[n++] = AND64_IMM(BPF_REG_4, 15);
	p[n++] = MOV64_IMM(BPF_REG_3, 0);
	for (int r = 0; r < X86_NGPR; r++) {
		p[n++] = JNE_IMM(BPF_REG_4, r, 1);
		p[n++] = LDX_DW(BPF_REG_3, BPF_REG_6, bpf_gpr_offset[r]);
	}
	p[n++] = MOV64_REG(BPF_REG_5, BPF_REG_7);
	p[n++] = LSH64_IMM(BPF_REG_5, 16);
	p[n++] = ARSH64_IMM(BPF_REG_5, 48);
	p[n++] = ADD64_REG(BPF_REG_3, BPF_REG_5);
	p[n++] = MOV64_REG(BPF_REG_2, BPF_REG_7);
	p[n++] = RSH64_IMM(BPF_REG_2, 48);
	p[n++] = AND64_IMM(BPF_REG_2, 63);
	p[n++] = ADD64_IMM(BPF_REG_2, 1);
	p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_1, cap + UBPF_CAP_OBJ * 8);
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
	bpf_land(p, no_capture, n);

	if (callchain) {
		/* At a function's first instruction its caller has no frame
		 * yet: the return address at the stack pointer names it. */
		p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_10);
		p[n++] = ADD64_IMM(BPF_REG_1, slot(nwords, UBPF_RET_ADDR));
		p[n++] = MOV64_IMM(BPF_REG_2, 8);
		p[n++] = LDX_DW(BPF_REG_3, BPF_REG_6, BPF_REGS_SP);
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
	bpf_land(p, unread, n);
	bpf_land(p, no_string, n);
	bpf_land(p, captured, n);
	/* bpf_perf_event_output(ctx, map, BPF_F_CURRENT_CPU, record, size):
	 * the flags must be exactly 0xffffffff, hence a 32-bit move. */
	p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_6);
	{
		struct bpf_insn ld[] = {LD_MAP_FD(BPF_REG_2, map_fd)};
		p[n++] = ld[0];
		p[n++] = ld[1];
	}
	p[n++] = MOV32_IMM(BPF_REG_3, -1);
	p[n++] = MOV64_REG(BPF_REG_4, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_4, slot(nwords, 0));
	p[n++] = MOV64_REG(BPF_REG_5, BPF_REG_9);
	p[n++] = CALL(BPF_FUNC_perf_event_output);
	/* Not written (the ring full): counted at once. */
	p[n++] = JEQ_IMM(BPF_REG_0, 0, 3);
	p[n++] = JEQ_IMM(BPF_REG_8, 0, 2);
	p[n++] = MOV64_IMM(BPF_REG_1, 1);
	p[n++] = XADD_DW(BPF_REG_8, BPF_REG_1, 0);
	p[n++] = MOV64_IMM(BPF_REG_0, 0);
	p[n++] = EXIT();

	return bpf_prog_load_uprobe(p, n, UBPF_ATTACH_MULTI, "recce_hit", log, log_len);
}

int ubpf_link_new(int prog_fd, const char *path, const uint64_t *offsets, const uint64_t *cookies,
		  size_t n, int mode, pid_t pid)
{
	struct link_create_uprobe_multi a;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = mode == UBPF_LINK_SESSION ? UBPF_ATTACH_SESSION : UBPF_ATTACH_MULTI;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offsets;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = (uint32_t)n;
	a.multi_flags = mode == UBPF_LINK_RETURN ? UPROBE_MULTI_RETURN : 0;
	a.pid = (uint32_t)pid;
	return bpf_sys(BPF_LINK_CREATE, &a, sizeof(a));
}

/*
 * At every fork on the system (the raw tracepoint sched_process_fork, run
 * by the parent before the child is first scheduled): when the parent's
 * process is in the family, the child's process joins it. A new thread
 * (the same tgid) adds nothing.
 */
int ubpf_follow_forks(int family_fd, uint32_t tgid_offset, char *log, size_t log_len)
{
	struct bpf_insn ld[] = {LD_MAP_FD(BPF_REG_1, family_fd)};
	struct bpf_insn p[40];
	size_t n = 0;

	p[n++] = MOV64_REG(BPF_REG_6, BPF_REG_1); /* u64 args[]: parent, child */
	n = emit_family_lookup(p, n, family_fd);  /* the parent's tgid at r10-4 */
	size_t outsider = n;
	p[n++] = JEQ_IMM(BPF_REG_0, 0, 0);
	p[n++] = LDX_DW(BPF_REG_3, BPF_REG_6, 8);
	p[n++] = ADD64_IMM(BPF_REG_3, (int32_t)tgid_offset);
	p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_1, -8);
	p[n++] = MOV64_IMM(BPF_REG_2, 4);
	p[n++] = CALL(BPF_FUNC_probe_read_kernel);
	size_t unread = n;
	p[n++] = JNE_IMM(BPF_REG_0, 0, 0);
	p[n++] = LDX_W(BPF_REG_1, BPF_REG_10, -8);
	p[n++] = LDX_W(BPF_REG_2, BPF_REG_10, -4);
	size_t thread = n;
	p[n++] = JEQ_REG(BPF_REG_1, BPF_REG_2, 0);
	p[n++] = ST_W(BPF_REG_10, -12, 1);
	p[n++] = ld[0];
	p[n++] = ld[1];
	p[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_2, -8);
	p[n++] = MOV64_REG(BPF_REG_3, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_3, -12);
	p[n++] = MOV64_IMM(BPF_REG_4, BPF_ANY);
	p[n++] = CALL(BPF_FUNC_map_update_elem);
	bpf_land(p, outsider, n);
	bpf_land(p, unread, n);
	bpf_land(p, thread, n);
	p[n++] = MOV64_IMM(BPF_REG_0, 0);
	p[n++] = EXIT();

	int prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, p, n, 0, "recce_fork", log, log_len);
	if (prog < 0)
		return prog;
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.raw_tracepoint.name = (uint64_t)(uintptr_t) "sched_process_fork";
	a.raw_tracepoint.prog_fd = (uint32_t)prog;
	int fd = bpf_sys(BPF_RAW_TRACEPOINT_OPEN, &a, sizeof(a));
	close(prog); /* the tracepoint holds it */
	return fd;
}
