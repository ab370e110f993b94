/*
 * Running a thread's seccomp filters on the calls injection makes (see
 * seccomp-check.h). Classic BPF over struct seccomp_data, as the kernel's
 * own checker accepts it.
 */
#include "inject/seccomp-check.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>

#include "util/lines.h"

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif

#define FILTERS_MAX 64 /* a thread's stack of filters read at most */

/* A call and the arguments recce's code (or the C library's, for dlopen)
 * passes; strict: the stub cannot do without it, so an error number is
 * as bad as a kill. */
struct call {
	const char *name;
	int nr;
	uint64_t args[6];
	int strict;
};

static const struct call calls[] = {
    {"rt_sigprocmask", 14, {0 /* SIG_BLOCK */, 0, 0, 8, 0, 0}, 1},
    {"sigaltstack", 131, {0}, 1},
    {"nanosleep", 35, {0}, 1},
    {"rt_sigreturn", 15, {0}, 1},
    {"openat", 257, {(uint64_t)-100, 0, 0x80000 /* O_CLOEXEC */, 0, 0, 0}, 0},
    {"read", 0, {0}, 0},
    {"pread64", 17, {0}, 0},
    {"fstat", 5, {0}, 0},
    {"newfstatat", 262, {0, 0, 0, 0x1000 /* AT_EMPTY_PATH */, 0, 0}, 0},
    {"close", 3, {0}, 0},
    {"mmap", 9, {0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0}, 0},
    {"mmap", 9, {0, 4096, PROT_READ, MAP_PRIVATE | MAP_DENYWRITE, 3, 0}, 0},
    {"mmap", 9, {0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED | MAP_DENYWRITE, 3, 0}, 0},
    {"mmap", 9, {0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, 3, 0}, 0},
    {"mmap", 9, {0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0}, 0},
    {"mprotect", 10, {0, 4096, PROT_READ, 0, 0, 0}, 0},
    {"mprotect", 10, {0, 4096, PROT_NONE, 0, 0, 0}, 0},
    {"munmap", 11, {0}, 0},
    {"brk", 12, {0}, 0},
    {"futex", 202, {0}, 0},
    {"prctl", 157, {0x53564d41 /* PR_SET_VMA */, 0, 0, 0, 0, 0}, 0},
    {"getrandom", 318, {0}, 0},
    {"gettid", 186, {0}, 0},
    {"clock_gettime", 228, {0}, 0},
};

/* Runs one filter on d. Returns its action, or SECCOMP_RET_KILL_PROCESS
 * for a program the kernel would not have accepted. */
static uint32_t run(const struct sock_filter *f, size_t n, const uint8_t *d, size_t dlen)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};

	for (size_t pc = 0; pc < n; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t src = BPF_SRC(i->code) == BPF_X ? x : i->k;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
		case BPF_LDX: {
			uint32_t v;
			if (BPF_MODE(i->code) == BPF_ABS && BPF_SIZE(i->code) == BPF_W &&
			    i->k + 4 <= dlen && i->k % 4 == 0)
				memcpy(&v, d + i->k, 4);
			else if (BPF_MODE(i->code) == BPF_IMM)
				v = i->k;
			else if (BPF_MODE(i->code) == BPF_MEM && i->k < BPF_MEMWORDS)
				v = mem[i->k];
			else if (BPF_MODE(i->code) == BPF_LEN)
				v = (uint32_t)dlen;
			else
				return SECCOMP_RET_KILL_PROCESS;
			if (BPF_CLASS(i->code) == BPF_LD)
				a = v;
			else
				x = v;
			break;
		}
		case BPF_ST:
		case BPF_STX:
			if (i->k >= BPF_MEMWORDS)
				return SECCOMP_RET_KILL_PROCESS;
			mem[i->k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			switch (BPF_OP(i->code)) {
			case BPF_ADD:
				a += src;
				break;
			case BPF_SUB:
				a -= src;
				break;
			case BPF_MUL:
				a *= src;
				break;
			case BPF_DIV:
				a = src ? a / src : 0;
				break;
			case BPF_MOD:
				a = src ? a % src : 0;
				break;
			case BPF_OR:
				a |= src;
				break;
			case BPF_AND:
				a &= src;
				break;
			case BPF_XOR:
				a ^= src;
				break;
			case BPF_LSH:
				a = src < 32 ? a << src : 0;
				break;
			case BPF_RSH:
				a = src < 32 ? a >> src : 0;
				break;
			case BPF_NEG:
				a = -a;
				break;
			default:
				return SECCOMP_RET_KILL_PROCESS;
			}
			break;
		case BPF_JMP: {
			int take;
			switch (BPF_OP(i->code)) {
			case BPF_JA:
				pc += i->k;
				continue;
			case BPF_JEQ:
				take = a == src;
				break;
			case BPF_JGT:
				take = a > src;
				break;
			case BPF_JGE:
				take = a >= src;
				break;
			case BPF_JSET:
				take = (a & src) != 0;
				break;
			default:
				return SECCOMP_RET_KILL_PROCESS;
			}
			pc += take ? i->jt : i->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(i->code) == BPF_A ? a : i->k;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return SECCOMP_RET_KILL_PROCESS;
		}
	}
	return SECCOMP_RET_KILL_PROCESS; /* fell off the end */
}

/* The most restrictive action of all filters for the call, as the kernel
 * takes it: the lowest action value wins. */
static uint32_t verdict(struct sock_filter *const *fs, const size_t *ns, size_t nf,
			const struct call *c)
{
	struct seccomp_data d;
	uint32_t worst = SECCOMP_RET_ALLOW;

	memset(&d, 0, sizeof(d));
	d.nr = c->nr;
	d.arch = AUDIT_ARCH_X86_64;
	memcpy(d.args, c->args, sizeof(d.args));
	for (size_t i = 0; i < nf; i++) {
		uint32_t r = run(fs[i], ns[i], (const uint8_t *)&d, sizeof(d));
		if ((int32_t)(r & SECCOMP_RET_ACTION_FULL) <
		    (int32_t)(worst & SECCOMP_RET_ACTION_FULL))
			worst = r;
	}
	return worst & SECCOMP_RET_ACTION_FULL;
}

/* Whether the thread's status says it runs under a filter. */
static int filtered(pid_t pid, pid_t tid)
{
	char path[64];
	uint64_t mode;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	int n = lines_key_numbers(path, "Seccomp", &mode, 1);
	if (n < 0)
		return n;
	return n == 1 && mode <= 2 ? (int)mode : 0;
}

int seccomp_check(pid_t pid, pid_t tid, const char **what)
{
	struct sock_filter *fs[FILTERS_MAX];
	size_t ns[FILTERS_MAX], nf = 0;
	int err = 0;

	int mode = filtered(pid, tid);
	if (mode <= 0)
		return mode;
	if (mode == 1) { /* strict mode: read, write, exit and sigreturn only */
		*what = "mmap";
		return 1;
	}
	for (; nf < FILTERS_MAX; nf++) {
		long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)nf, NULL);
		if (n < 0 && errno == ENOENT)
			break;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		fs[nf] = calloc((size_t)n, sizeof(struct sock_filter));
		if (!fs[nf]) {
			err = -ENOMEM;
			break;
		}
		ns[nf] = (size_t)n;
		if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)nf, fs[nf]) != n) {
			err = errno ? -errno : -EIO;
			free(fs[nf]);
			break;
		}
	}
	if (err == -EPERM)
		err = -EACCES;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]) && !err; i++) {
		uint32_t v = verdict(fs, ns, nf, &calls[i]);
		int kills = v == SECCOMP_RET_KILL_PROCESS || v == SECCOMP_RET_KILL_THREAD ||
			    v == SECCOMP_RET_TRAP;
		int allows = v == SECCOMP_RET_ALLOW || v == SECCOMP_RET_LOG;
		if (kills || (calls[i].strict && !allows)) {
			*what = calls[i].name;
			err = 1;
		}
	}
	for (size_t i = 0; i < nf; i++)
		free(fs[i]);
	return err;
}
