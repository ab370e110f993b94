/*
 * The allocation sampling program and its maps (see alloc-bpf.h), written
 * as instructions (bpf-asm.h).
 *
 * One program runs at the entry of every probed function and, for the
 * calls it samples, at their return (a uprobe session). It tells the two
 * apart by the instruction pointer: at a return it is the return address
 * the entry run kept for the thread.
 */
#include "perf/alloc-bpf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perf/bpf-asm.h"
#include "perf/uprobe-bpf.h"

#define TABLE_SIZE  1024 /* countdowns to draw from */
#define PENDING_MAX 4096 /* threads inside a sampled call at once */
#define MAX_INSNS   256

/* Stack slots of the program, as offsets from r10. */
enum {
	S_TID = -8,	 /* the pid_tgid key of pending */
	S_REC = -32,	 /* struct alloc_raw: event, value, caller */
	S_PEND = -48,	 /* pending's value: return address, result pointer */
	S_SCRATCH = -56, /* an address, as live's key */
	S_KEY = -64,	 /* a u32 array key */
	S_ONE = -72,	 /* live's value */
	S_FLAGS = -80,	 /* the cookie's flags */
};

struct prog {
	struct bpf_insn p[MAX_INSNS];
	size_t n;
	int overflow;
};

static size_t emit(struct prog *g, struct bpf_insn insn)
{
	if (g->n >= MAX_INSNS) {
		g->overflow = 1;
		return g->n - 1;
	}
	g->p[g->n] = insn;
	return g->n++;
}

static void emit_map(struct prog *g, int reg, int fd)
{
	struct bpf_insn ld[] = {LD_MAP_FD(reg, fd)};

	emit(g, ld[0]);
	emit(g, ld[1]);
}

/* r2 = r10 + off. */
static void emit_stack_ptr(struct prog *g, int reg, int off)
{
	emit(g, MOV64_REG(reg, BPF_REG_10));
	emit(g, ADD64_IMM(reg, off));
}

/* Sends the record at S_REC, whose value is already there. */
static void emit_output(struct prog *g, const struct alloc_bpf *b, enum alloc_event ev)
{
	emit(g, ST_DW(BPF_REG_10, S_REC, ev));
	if (ev != ALLOC_EV_SAMPLE)
		emit(g, ST_DW(BPF_REG_10, S_REC + 16, 0));
	emit(g, MOV64_REG(BPF_REG_1, BPF_REG_6));
	emit_map(g, BPF_REG_2, b->out_fd);
	emit(g, MOV32_IMM(BPF_REG_3, -1)); /* BPF_F_CURRENT_CPU, exactly 0xffffffff */
	emit_stack_ptr(g, BPF_REG_4, S_REC);
	emit(g, MOV64_IMM(BPF_REG_5, sizeof(struct alloc_raw)));
	emit(g, CALL(BPF_FUNC_perf_event_output));
}

/* The pointer in the first argument, if it is a sampled allocation, is
 * one no more: take it out of live and say so. */
static void emit_forget(struct prog *g, const struct alloc_bpf *b)
{
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_6, bpf_gpr_offset[X86_RDI]));
	size_t null = emit(g, JEQ_IMM(BPF_REG_1, 0, 0));
	emit(g, STX_DW(BPF_REG_10, BPF_REG_1, S_SCRATCH));
	emit_map(g, BPF_REG_1, b->live_fd);
	emit_stack_ptr(g, BPF_REG_2, S_SCRATCH);
	emit(g, CALL(BPF_FUNC_map_delete_elem));
	size_t absent = emit(g, JNE_IMM(BPF_REG_0, 0, 0));
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_10, S_SCRATCH));
	emit(g, STX_DW(BPF_REG_10, BPF_REG_1, S_REC + 8));
	emit_output(g, b, ALLOC_EV_FREE);
	bpf_land(g->p, null, g->n);
	bpf_land(g->p, absent, g->n);
}

/* r0 = &map[*(u32 *)S_KEY], or on to out (returns the jump's index). */
static size_t emit_lookup_key(struct prog *g, int map_fd)
{
	emit_map(g, BPF_REG_1, map_fd);
	emit_stack_ptr(g, BPF_REG_2, S_KEY);
	emit(g, CALL(BPF_FUNC_map_lookup_elem));
	return emit(g, JEQ_IMM(BPF_REG_0, 0, 0));
}

static int build(struct prog *g, const struct alloc_bpf *b)
{
	const int16_t *gpr = bpf_gpr_offset;
	size_t out1[8], nout1 = 0;

	/* r6 = ctx, r7 = the function's kind, r8 = pid_tgid. */
	emit(g, MOV64_REG(BPF_REG_6, BPF_REG_1));
	emit(g, CALL(BPF_FUNC_get_attach_cookie));
	emit(g, MOV64_REG(BPF_REG_7, BPF_REG_0));
	emit(g, RSH64_IMM(BPF_REG_0, 8));
	emit(g, STX_DW(BPF_REG_10, BPF_REG_0, S_FLAGS));
	emit(g, AND64_IMM(BPF_REG_7, 0xff));
	emit(g, CALL(BPF_FUNC_get_current_pid_tgid));
	emit(g, MOV64_REG(BPF_REG_8, BPF_REG_0));
	emit(g, STX_DW(BPF_REG_10, BPF_REG_8, S_TID));

	/* A return: the thread has a pending sampled call and the
	 * instruction pointer is that call's return address. */
	emit_map(g, BPF_REG_1, b->pending_fd);
	emit_stack_ptr(g, BPF_REG_2, S_TID);
	emit(g, CALL(BPF_FUNC_map_lookup_elem));
	size_t no_pending = emit(g, JEQ_IMM(BPF_REG_0, 0, 0));
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_0, 0));
	emit(g, LDX_DW(BPF_REG_2, BPF_REG_6, BPF_REGS_IP));
	size_t not_return = emit(g, JNE_REG(BPF_REG_1, BPF_REG_2, 0));
	emit(g, LDX_DW(BPF_REG_9, BPF_REG_0, 8)); /* posix_memalign's result pointer */
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_6, gpr[X86_RAX]));
	emit(g, STX_DW(BPF_REG_10, BPF_REG_1, S_SCRATCH));
	size_t have1 = emit(g, JEQ_IMM(BPF_REG_9, 0, 0));
	emit(g, ST_DW(BPF_REG_10, S_SCRATCH, 0));
	size_t have2 = emit(g, JNE_IMM(BPF_REG_1, 0, 0)); /* it failed */
	emit_stack_ptr(g, BPF_REG_1, S_SCRATCH);
	emit(g, MOV64_IMM(BPF_REG_2, 8));
	emit(g, MOV64_REG(BPF_REG_3, BPF_REG_9));
	emit(g, CALL(BPF_FUNC_probe_read_user));
	size_t have3 = emit(g, JEQ_IMM(BPF_REG_0, 0, 0));
	emit(g, ST_DW(BPF_REG_10, S_SCRATCH, 0));
	bpf_land(g->p, have1, g->n);
	bpf_land(g->p, have2, g->n);
	bpf_land(g->p, have3, g->n);
	emit_map(g, BPF_REG_1, b->pending_fd);
	emit_stack_ptr(g, BPF_REG_2, S_TID);
	emit(g, CALL(BPF_FUNC_map_delete_elem));
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_10, S_SCRATCH));
	size_t failed = emit(g, JEQ_IMM(BPF_REG_1, 0, 0));
	emit(g, ST_DW(BPF_REG_10, S_ONE, 1));
	emit_map(g, BPF_REG_1, b->live_fd);
	emit_stack_ptr(g, BPF_REG_2, S_SCRATCH);
	emit_stack_ptr(g, BPF_REG_3, S_ONE);
	emit(g, MOV64_IMM(BPF_REG_4, BPF_ANY));
	emit(g, CALL(BPF_FUNC_map_update_elem));
	bpf_land(g->p, failed, g->n);
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_10, S_SCRATCH));
	emit(g, STX_DW(BPF_REG_10, BPF_REG_1, S_REC + 8));
	emit_output(g, b, ALLOC_EV_RETURN);
	emit(g, MOV64_IMM(BPF_REG_0, 0));
	emit(g, EXIT());

	/* An allocator call inside a sampled one: left alone. */
	bpf_land(g->p, not_return, g->n);
	out1[nout1++] = emit(g, JA(0));

	/* An entry. A free: forget the pointer, no return probe. */
	bpf_land(g->p, no_pending, g->n);
	size_t not_free = emit(g, JNE_IMM(BPF_REG_7, ALLOC_FN_FREE, 0));
	emit_forget(g, b);
	out1[nout1++] = emit(g, JA(0));
	bpf_land(g->p, not_free, g->n);
	size_t not_realloc = emit(g, JNE_IMM(BPF_REG_7, ALLOC_FN_REALLOC, 0));
	emit_forget(g, b);
	bpf_land(g->p, not_realloc, g->n);

	/* r9 = the size asked for. */
	emit(g, LDX_DW(BPF_REG_9, BPF_REG_6, gpr[X86_RDI]));
	size_t not_calloc = emit(g, JNE_IMM(BPF_REG_7, ALLOC_FN_CALLOC, 0));
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_6, gpr[X86_RSI]));
	emit(g, MUL64_REG(BPF_REG_9, BPF_REG_1));
	size_t sized1 = emit(g, JA(0));
	bpf_land(g->p, not_calloc, g->n);
	size_t second1 = emit(g, JEQ_IMM(BPF_REG_7, ALLOC_FN_REALLOC, 0));
	size_t second2 = emit(g, JEQ_IMM(BPF_REG_7, ALLOC_FN_ALIGNED, 0));
	size_t sized2 = emit(g, JNE_IMM(BPF_REG_7, ALLOC_FN_POSIX_MEMALIGN, 0));
	emit(g, LDX_DW(BPF_REG_9, BPF_REG_6, gpr[X86_RDX]));
	size_t sized3 = emit(g, JA(0));
	bpf_land(g->p, second1, g->n);
	bpf_land(g->p, second2, g->n);
	emit(g, LDX_DW(BPF_REG_9, BPF_REG_6, gpr[X86_RSI]));
	bpf_land(g->p, sized1, g->n);
	bpf_land(g->p, sized2, g->n);
	bpf_land(g->p, sized3, g->n);

	/* glibc's calls that go on to malloc: left to malloc's probe. */
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_10, S_FLAGS));
	size_t not_glibc = emit(g, JEQ_IMM(BPF_REG_1, 0, 0));
	size_t not_re = emit(g, JNE_IMM(BPF_REG_7, ALLOC_FN_REALLOC, 0));
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_6, gpr[X86_RDI]));
	out1[nout1++] = emit(g, JEQ_IMM(BPF_REG_1, 0, 0));
	bpf_land(g->p, not_re, g->n);
	size_t not_al = emit(g, JNE_IMM(BPF_REG_7, ALLOC_FN_ALIGNED, 0));
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_6, gpr[X86_RDI]));
	out1[nout1++] = emit(g, JLE_IMM(BPF_REG_1, ALLOC_GLIBC_MALLOC_ALIGN, 0));
	bpf_land(g->p, not_al, g->n);
	size_t not_pm = emit(g, JNE_IMM(BPF_REG_7, ALLOC_FN_POSIX_MEMALIGN, 0));
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_6, gpr[X86_RSI]));
	out1[nout1++] = emit(g, JLE_IMM(BPF_REG_1, ALLOC_GLIBC_MALLOC_ALIGN, 0));
	bpf_land(g->p, not_pm, g->n);
	bpf_land(g->p, not_glibc, g->n);

	/* Count down this CPU's bytes; not yet zero: not sampled. */
	emit(g, ST_W(BPF_REG_10, S_KEY, 0));
	out1[nout1++] = emit_lookup_key(g, b->left_fd);
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_0, 0));
	emit(g, SUB64_REG(BPF_REG_1, BPF_REG_9));
	emit(g, STX_DW(BPF_REG_0, BPF_REG_1, 0));
	out1[nout1++] = emit(g, JSGT_IMM(BPF_REG_1, 0, 0));

	/* Sampled: a new countdown from the table... */
	emit(g, CALL(BPF_FUNC_get_prandom_u32));
	emit(g, AND64_IMM(BPF_REG_0, TABLE_SIZE - 1));
	emit(g, STX_W(BPF_REG_10, BPF_REG_0, S_KEY));
	size_t no_draw = emit_lookup_key(g, b->table_fd);
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_0, 0));
	emit(g, STX_DW(BPF_REG_10, BPF_REG_1, S_SCRATCH));
	emit(g, ST_W(BPF_REG_10, S_KEY, 0));
	size_t no_left = emit_lookup_key(g, b->left_fd);
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_10, S_SCRATCH));
	emit(g, STX_DW(BPF_REG_0, BPF_REG_1, 0));
	bpf_land(g->p, no_draw, g->n);
	bpf_land(g->p, no_left, g->n);

	/* ...the call's return address (and posix_memalign's result
	 * pointer) kept for its return, and the sample sent. */
	emit_stack_ptr(g, BPF_REG_1, S_PEND);
	emit(g, MOV64_IMM(BPF_REG_2, 8));
	emit(g, LDX_DW(BPF_REG_3, BPF_REG_6, BPF_REGS_SP));
	emit(g, CALL(BPF_FUNC_probe_read_user));
	emit(g, ST_DW(BPF_REG_10, S_PEND + 8, 0));
	size_t not_posix = emit(g, JNE_IMM(BPF_REG_7, ALLOC_FN_POSIX_MEMALIGN, 0));
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_6, gpr[X86_RDI]));
	emit(g, STX_DW(BPF_REG_10, BPF_REG_1, S_PEND + 8));
	bpf_land(g->p, not_posix, g->n);
	emit_map(g, BPF_REG_1, b->pending_fd);
	emit_stack_ptr(g, BPF_REG_2, S_TID);
	emit_stack_ptr(g, BPF_REG_3, S_PEND);
	emit(g, MOV64_IMM(BPF_REG_4, BPF_ANY));
	emit(g, CALL(BPF_FUNC_map_update_elem));
	emit(g, STX_DW(BPF_REG_10, BPF_REG_9, S_REC + 8));
	emit(g, LDX_DW(BPF_REG_1, BPF_REG_10, S_PEND));
	emit(g, STX_DW(BPF_REG_10, BPF_REG_1, S_REC + 16));
	emit_output(g, b, ALLOC_EV_SAMPLE);
	emit(g, MOV64_IMM(BPF_REG_0, 0)); /* 0: run at this call's return too */
	emit(g, EXIT());

	for (size_t i = 0; i < nout1; i++)
		bpf_land(g->p, out1[i], g->n);
	emit(g, MOV64_IMM(BPF_REG_0, 1));
	emit(g, EXIT());
	return g->overflow ? -E2BIG : 0;
}

/* The number of possible CPUs, which sizes per-CPU map values. */
static int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	int max = -1, a, b;
	char sep;

	if (!f)
		return -errno;
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-' && fscanf(f, "%d", &b) == 1)
			(void)fscanf(f, "%c", &sep);
		if (b > max)
			max = b;
	}
	fclose(f);
	return max >= 0 ? max + 1 : -EINVAL;
}

/* Fills the table of countdowns and starts every CPU's countdown. */
static int fill_state(struct alloc_bpf *b, uint64_t interval)
{
	uint64_t table[TABLE_SIZE];

	for (uint32_t i = 0; i < TABLE_SIZE; i++) {
		table[i] = (uint64_t)(-(double)interval * log(1.0 - (i + 0.5) / TABLE_SIZE));
		if (!table[i])
			table[i] = 1;
		int err = bpf_map_set(b->table_fd, &i, &table[i]);
		if (err)
			return err;
	}
	int ncpus = possible_cpus();
	if (ncpus < 0)
		return ncpus;
	uint64_t *left = calloc((size_t)ncpus, sizeof(*left));
	if (!left)
		return -ENOMEM;
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	for (int c = 0; c < ncpus; c++)
		left[c] = table[rand_r(&seed) % TABLE_SIZE];
	uint32_t zero = 0;
	int err = bpf_map_set(b->left_fd, &zero, left);
	free(left);
	return err;
}

int alloc_bpf_new(struct alloc_bpf *b, uint64_t interval, size_t ncpus, char *log, size_t log_len)
{
	memset(b, 0, sizeof(*b));
	b->prog_fd = b->out_fd = b->left_fd = b->table_fd = b->pending_fd = b->live_fd = -1;
	if (!interval || !ncpus)
		return -EINVAL;
	int err;
	b->out_fd = ubpf_map_new(ncpus);
	b->left_fd = bpf_map_new(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1, "recce_left");
	b->table_fd = bpf_map_new(BPF_MAP_TYPE_ARRAY, 4, 8, TABLE_SIZE, "recce_draws");
	b->pending_fd = bpf_map_new(BPF_MAP_TYPE_HASH, 8, 16, PENDING_MAX, "recce_pending");
	b->live_fd = bpf_map_new(BPF_MAP_TYPE_HASH, 8, 8, ALLOC_BPF_LIVE_MAX, "recce_live");
	int fds[] = {b->out_fd, b->left_fd, b->table_fd, b->pending_fd, b->live_fd};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] < 0) {
			err = fds[i];
			goto fail;
		}
	if ((err = fill_state(b, interval)) < 0)
		goto fail;
	struct prog *g = calloc(1, sizeof(*g));
	if (!g) {
		err = -ENOMEM;
		goto fail;
	}
	err = build(g, b);
	if (!err) {
		err = bpf_prog_load_uprobe(g->p, g->n, UBPF_ATTACH_SESSION, "recce_alloc", log,
					   log_len);
		if (err >= 0) {
			b->prog_fd = err;
			err = 0;
		}
	}
	free(g);
	if (err)
		goto fail;
	return 0;
fail:
	alloc_bpf_release(b);
	return err;
}

int alloc_bpf_set_output(struct alloc_bpf *b, int cpu, int event_fd)
{
	return ubpf_map_set(b->out_fd, cpu, event_fd);
}

int alloc_bpf_attach(struct alloc_bpf *b, const char *path, const uint64_t *offsets,
		     const uint16_t *kinds, size_t n, pid_t pid)
{
	uint64_t *cookies = calloc(n ? n : 1, sizeof(*cookies));

	if (!cookies)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		cookies[i] = kinds[i];
	int fd = ubpf_link_new(b->prog_fd, path, offsets, cookies, n, UBPF_LINK_SESSION, pid);
	free(cookies);
	return fd == -EINVAL ? -EOPNOTSUPP : fd;
}

void alloc_bpf_release(struct alloc_bpf *b)
{
	int *fds[] = {&b->prog_fd,  &b->out_fd,	    &b->left_fd,
		      &b->table_fd, &b->pending_fd, &b->live_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
