/*
 * Calls inside a live process (see inject.h).
 *
 * The frame the stub reads, at S, the stack pointer it starts with (S is
 * 64-byte aligned; S - 8 is the unused return slot of a signal frame):
 *
 *   S + 0     ucontext: flags, link (recce's mark while the stub has the
 *             thread), alternate stack (the stub fills it)
 *   S + 40    sigcontext: the thread's registers, where rt_sigreturn reads
 *             them; its fpstate field points at S + 448
 *   S + 296   signal mask (the stub fills it)
 *   S + 304   function, then its six arguments
 *   S + 360   __errno_location
 *   S + 368   result, done flag, saved errno, XSAVE component mask
 *   S + 400   a full signal set, to block every signal
 *   S + 408   recce's ack, then the stub's 1 ms timespec
 *   S + 432   whether the thread came from a timed sleep, and where
 *             its system call returns to
 *   S + 448   XSAVE area, then FP_XSTATE_MAGIC2, then the call's data
 */
#include "inject/inject.h"

#include <cpuid.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <elf.h>
#include <time.h>
#include <unistd.h>

#include "inject/seccomp-check.h"
#include "inject/stop-all.h"
#include "inject/target-mem.h"
#include "proc/proc-maps.h"
#include "proc/self.h"
#include "symbols/symbolize.h"
#include "util/clock.h"
#include "util/path.h"

/* The stub, position-independent (rsp = S on entry):
 *
 *	mov eax, 14; xor edi, edi; lea rsi, [rsp+400]; lea rdx, [rsp+296]
 *	mov r10d, 8; syscall		  rt_sigprocmask(SIG_BLOCK, all, &mask)
 *	mov eax, 131; xor edi, edi; lea rsi, [rsp+16]
 *	syscall				  sigaltstack(NULL, &uc_stack)
 *	mov eax, [rsp+392]; mov edx, [rsp+396]
 *	xsave64 [rsp+448]		  the extended state
 *	call [rsp+360]; mov ecx, [rax]; mov [rsp+384], ecx	  errno kept
 *	mov rdi..r9, [rsp+312..352]; call [rsp+304]; mov [rsp+368], rax
 *	call [rsp+360]; mov ecx, [rsp+384]; mov [rax], ecx	  errno back
 *	mov qword [rsp+376], 1		  done
 *	mov r12d, 1000
 *	cmp qword [rsp+432], 0; jne spin  a thread taken from a timed sleep
 * wait: cmp qword [rsp+408], 0; jne back   wait for recce's ack, ~1 s at most
 *	mov eax, 35; lea rdi, [rsp+416]; xor esi, esi
 *	syscall				  nanosleep(1 ms)
 *	dec r12d; jnz wait; jmp back
 * spin: mov ecx, 50000			  no system call: recce takes the
 * 1:	cmp qword [rsp+408], 0; jne sleep thread back itself, or the stub
 *	pause; dec ecx; jnz 1b		  does after a few seconds
 *	dec r12d; jnz spin; jmp sleep
 * back: mov qword [rsp+8], 0	  the frame's mark off
 *	mov eax, 15; syscall		  rt_sigreturn: back where it was
 *	ud2
 * sleep: mov qword [rsp+8], 0
 *	mov eax, 14; mov edi, 2; lea rsi, [rsp+296]; xor edx, edx
 *	mov r10d, 8; syscall		  rt_sigprocmask(SIG_SETMASK, &mask)
 *	mov eax, 131; lea rdi, [rsp+16]; xor esi, esi
 *	syscall				  sigaltstack(&uc_stack, NULL)
 *	mov eax, [rsp+392]; mov edx, [rsp+396]
 *	xrstor64 [rsp+448]		  the extended state
 *	push qword [rsp+176]; popfq	  the flags
 *	mov r8..rdx, [rsp+40..136]	  every register but rax, rcx, r11, rsp
 *	mov eax, 219; syscall		  restart_syscall: the same sleep
 *	mov rcx, [rsp+440]; mov r11, [rsp+176]	  as sysret leaves them
 *	mov rsp, [rsp+160]; jmp rcx	  back after the thread's syscall
 *
 * The frame lies in stack the thread uses again once it is back, so the
 * stub waits for recce to have read the result (the ack), or for a
 * second if recce is gone.
 *
 * rt_sigreturn cancels a timed sleep the kernel would resume (its
 * restart_syscall would end it early, with EINTR). A thread taken from
 * one waits in the stub making no system call, which could replace the
 * kernel's record of the sleep, and recce puts it back itself under
 * ptrace: its registers set to make restart_syscall, its extended state
 * and signal mask as they were. Were recce to die first (or fail to),
 * the stub puts it back into the same sleep without rt_sigreturn: it
 * restores what rt_sigreturn would, makes restart_syscall from the cave
 * and, once the sleep ends, jumps back with the result in rax and rcx
 * and r11 as the kernel's own return would leave them.
 */
static const uint8_t stub[] = {
    0xb8, 0x0e, 0x00, 0x00, 0x00, 0x31, 0xff, 0x48, 0x8d, 0xb4, 0x24, 0x90, 0x01, 0x00, 0x00, 0x48,
    0x8d, 0x94, 0x24, 0x28, 0x01, 0x00, 0x00, 0x41, 0xba, 0x08, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xb8,
    0x83, 0x00, 0x00, 0x00, 0x31, 0xff, 0x48, 0x8d, 0x74, 0x24, 0x10, 0x0f, 0x05, 0x8b, 0x84, 0x24,
    0x88, 0x01, 0x00, 0x00, 0x8b, 0x94, 0x24, 0x8c, 0x01, 0x00, 0x00, 0x48, 0x0f, 0xae, 0xa4, 0x24,
    0xc0, 0x01, 0x00, 0x00, 0xff, 0x94, 0x24, 0x68, 0x01, 0x00, 0x00, 0x8b, 0x08, 0x89, 0x8c, 0x24,
    0x80, 0x01, 0x00, 0x00, 0x48, 0x8b, 0xbc, 0x24, 0x38, 0x01, 0x00, 0x00, 0x48, 0x8b, 0xb4, 0x24,
    0x40, 0x01, 0x00, 0x00, 0x48, 0x8b, 0x94, 0x24, 0x48, 0x01, 0x00, 0x00, 0x48, 0x8b, 0x8c, 0x24,
    0x50, 0x01, 0x00, 0x00, 0x4c, 0x8b, 0x84, 0x24, 0x58, 0x01, 0x00, 0x00, 0x4c, 0x8b, 0x8c, 0x24,
    0x60, 0x01, 0x00, 0x00, 0xff, 0x94, 0x24, 0x30, 0x01, 0x00, 0x00, 0x48, 0x89, 0x84, 0x24, 0x70,
    0x01, 0x00, 0x00, 0xff, 0x94, 0x24, 0x68, 0x01, 0x00, 0x00, 0x8b, 0x8c, 0x24, 0x80, 0x01, 0x00,
    0x00, 0x89, 0x08, 0x48, 0xc7, 0x84, 0x24, 0x78, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x41,
    0xbc, 0xe8, 0x03, 0x00, 0x00, 0x48, 0x83, 0xbc, 0x24, 0xb0, 0x01, 0x00, 0x00, 0x00, 0x75, 0x23,
    0x48, 0x83, 0xbc, 0x24, 0x98, 0x01, 0x00, 0x00, 0x00, 0x75, 0x35, 0xb8, 0x23, 0x00, 0x00, 0x00,
    0x48, 0x8d, 0xbc, 0x24, 0xa0, 0x01, 0x00, 0x00, 0x31, 0xf6, 0x0f, 0x05, 0x41, 0xff, 0xcc, 0x75,
    0xdf, 0xeb, 0x1d, 0xb9, 0x50, 0xc3, 0x00, 0x00, 0x48, 0x83, 0xbc, 0x24, 0x98, 0x01, 0x00, 0x00,
    0x00, 0x75, 0x1f, 0xf3, 0x90, 0xff, 0xc9, 0x75, 0xef, 0x41, 0xff, 0xcc, 0x75, 0xe5, 0xeb, 0x12,
    0x48, 0xc7, 0x44, 0x24, 0x08, 0x00, 0x00, 0x00, 0x00, 0xb8, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05,
    0x0f, 0x0b, 0x48, 0xc7, 0x44, 0x24, 0x08, 0x00, 0x00, 0x00, 0x00, 0xb8, 0x0e, 0x00, 0x00, 0x00,
    0xbf, 0x02, 0x00, 0x00, 0x00, 0x48, 0x8d, 0xb4, 0x24, 0x28, 0x01, 0x00, 0x00, 0x31, 0xd2, 0x41,
    0xba, 0x08, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xb8, 0x83, 0x00, 0x00, 0x00, 0x48, 0x8d, 0x7c, 0x24,
    0x10, 0x31, 0xf6, 0x0f, 0x05, 0x8b, 0x84, 0x24, 0x88, 0x01, 0x00, 0x00, 0x8b, 0x94, 0x24, 0x8c,
    0x01, 0x00, 0x00, 0x48, 0x0f, 0xae, 0xac, 0x24, 0xc0, 0x01, 0x00, 0x00, 0xff, 0xb4, 0x24, 0xb0,
    0x00, 0x00, 0x00, 0x9d, 0x4c, 0x8b, 0x44, 0x24, 0x28, 0x4c, 0x8b, 0x4c, 0x24, 0x30, 0x4c, 0x8b,
    0x54, 0x24, 0x38, 0x4c, 0x8b, 0x64, 0x24, 0x48, 0x4c, 0x8b, 0x6c, 0x24, 0x50, 0x4c, 0x8b, 0x74,
    0x24, 0x58, 0x4c, 0x8b, 0x7c, 0x24, 0x60, 0x48, 0x8b, 0x7c, 0x24, 0x68, 0x48, 0x8b, 0x74, 0x24,
    0x70, 0x48, 0x8b, 0x6c, 0x24, 0x78, 0x48, 0x8b, 0x9c, 0x24, 0x80, 0x00, 0x00, 0x00, 0x48, 0x8b,
    0x94, 0x24, 0x88, 0x00, 0x00, 0x00, 0xb8, 0xdb, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x8b, 0x8c,
    0x24, 0xb8, 0x01, 0x00, 0x00, 0x4c, 0x8b, 0x9c, 0x24, 0xb0, 0x00, 0x00, 0x00, 0x48, 0x8b, 0xa4,
    0x24, 0xa0, 0x00, 0x00, 0x00, 0xff, 0xe1,
};

enum {
	F_UC_FLAGS = 0,
	F_MARK = 8,
	F_MCONTEXT = 40,
	F_FN = 304,
	F_ARGS = 312,
	F_ERRNO_FN = 360,
	F_RESULT = 368,
	F_DONE = 376,
	F_XMASK = 392,
	F_ALLSIGS = 400,
	F_ACK = 408,
	F_PAUSE = 416,
	F_SPIN = 432,
	F_RESUME = 440,
	F_FPSTATE = 448,
};

#define UC_SIGCONTEXT_SS_    0x2
#define UC_STRICT_RESTORE_SS 0x4
#define FP_XSTATE_MAGIC1_    0x46505853u
#define FP_XSTATE_MAGIC2_    0x46505845u
#define RED_ZONE	     128
#define CALL_STACK	     (128 << 10) /* stack the call may use below its frame */
#define DATA_MAX	     4096
#define PICK_TIMEOUT_MS	     3000 /* for a thread at a safe place */
#define STOP_TIMEOUT_MS	     2000
#define CLOSE_TIMEOUT_MS     5000
#define XSTATE_MAX                                                                                 \
	(16u << 10) /* a thread's XSAVE area, as ptrace gives it */ /* for the borrowed thread to  \
								       leave the stub */

/* Errors the kernel leaves in rax for a system call it restarts. */
#define ERESTARTSYS_	      512
#define ERESTARTNOINTR_	      513
#define ERESTARTNOHAND_	      514
#define ERESTART_RESTARTBLOCK 516
#define NR_RESTART_SYSCALL    219

#define STUB_BACK  0x100		 /* where the stub returns a thread with rt_sigreturn */
#define STUB_SLEEP 0x112		 /* where it puts a thread back into its sleep */
#define FRAME_MARK 0x6b72616d65636365ull /* at F_MARK while a frame is in use */
#define FRAME_MAX  (8 + F_FPSTATE + XSTATE_MAX + 4 + 15 + DATA_MAX + 15)

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

/* The extended state components the stub saves (what XCR0 enables,
 * without AMX's, which the kernel gives each process on request only)
 * and their size in the XSAVE layout. */
static int xstate_layout(uint64_t *mask, uint32_t *size)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)))
		return -ENOTSUP; /* no OSXSAVE */
	*mask = xgetbv0() & ~((1ull << 17) | (1ull << 18));
	*size = 576; /* legacy area and header */
	for (unsigned i = 2; i < 63; i++) {
		if (!(*mask >> i & 1) || !__get_cpuid_count(0xd, i, &a, &b, &c, &d))
			continue;
		if (b + a > *size)
			*size = b + a;
	}
	return 0;
}

static int is_libc(const char *path)
{
	const char *base = path_base(path);
	return strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libc-", 5) == 0;
}

/* Padding after an executable segment, room for the stub: one already
 * holding it (a thread of a killed recce may still be inside, and is
 * known by it), else one all zeros. */
static int find_cave(struct injector *inj, const struct proc_map *maps, size_t n)
{
	uint8_t buf[sizeof(stub) + 16];

	for (int want_stub = 1; want_stub >= 0; want_stub--) {
		for (size_t i = 0; i < n; i++) {
			const struct proc_map *m = &maps[i];
			uint64_t end;
			if (!m->file || !(m->prot & PROT_EXEC) ||
			    sym_file_segment_end(m->file, m->pgoff, m->pgoff + (m->end - m->start),
						 &end))
				continue;
			if (end < m->pgoff)
				end = m->pgoff;
			uint64_t at = (m->start + (end - m->pgoff) + 15) & ~15ull;
			if (at + sizeof(buf) > m->end || tmem_read(inj->pid, at, buf, sizeof(buf)))
				continue;
			int zeros = 1;
			for (size_t k = 0; k < sizeof(buf); k++)
				zeros &= buf[k] == 0;
			if (want_stub ? memcmp(buf, stub, sizeof(stub)) != 0 : !zeros)
				continue;
			inj->cave = at;
			inj->cave_len = sizeof(stub);
			inj->stub_found = want_stub;
			return 0;
		}
	}
	return -ENOSPC;
}

int injector_open(struct injector *inj, pid_t pid, struct symbolizer *sym)
{
	const struct proc_map *maps;

	memset(inj, 0, sizeof(*inj));
	inj->pid = pid;
	inj->timeout_ms = 10000;
	int err = xstate_layout(&inj->xmask, &inj->xsize);
	if (err)
		return err;
	struct proc_registry *procs = procs_new(sym);
	if (!procs)
		return -ENOMEM;
	err = procs_scan(procs, pid);
	size_t n = err ? 0 : procs_maps(procs, pid, &maps);
	for (size_t i = 0; i < n && !err; i++)
		if (maps[i].file && sym_file_is_go(maps[i].file)) {
			inj->refusal = INJECT_GO;
			err = -EPROTONOSUPPORT;
		}
	struct sym_file *libc = NULL;
	for (size_t i = 0; i < n && !libc; i++)
		if (maps[i].file && is_libc(maps[i].path))
			libc = maps[i].file;
	uint64_t v[5];
	static const char *const names[5] = {"dlopen", "dlerror", "__errno_location", "mmap",
					     "prctl"};
	for (int k = 0; k < 5 && !err; k++)
		if (!libc || symbolizer_find_symbol(sym, libc, names[k], &v[k], NULL) ||
		    procs_file_addr(procs, pid, libc, v[k], &v[k])) {
			inj->refusal = INJECT_NO_LIBC;
			err = -EPROTONOSUPPORT;
		}
	if (!err) {
		inj->dlopen_fn = v[0];
		inj->dlerror_fn = v[1];
		inj->errno_fn = v[2];
		inj->mmap_fn = v[3];
		inj->prctl_fn = v[4];
		if (find_cave(inj, maps, n)) {
			inj->refusal = INJECT_NO_ROOM;
			err = -EPROTONOSUPPORT;
		}
	}
	procs_free(procs);
	return err;
}

/* The system calls whose thread must not be borrowed: those that run
 * with a lock of the C library's allocator held (mmap, mprotect, munmap,
 * brk, mremap, madvise); fork and clone, made with every allocator lock
 * held by the C library's fork (its dlopen would wait for itself for
 * ever), and vfork, whose child runs on the parent's stack; execve and
 * exit, after which the thread has no program to return to. */
static int unborrowable_syscall(long nr)
{
	switch (nr) {
	case 9:	  /* mmap */
	case 10:  /* mprotect */
	case 11:  /* munmap */
	case 12:  /* brk */
	case 25:  /* mremap */
	case 28:  /* madvise */
	case 56:  /* clone */
	case 57:  /* fork */
	case 58:  /* vfork */
	case 59:  /* execve */
	case 60:  /* exit */
	case 231: /* exit_group */
	case 322: /* execveat */
	case 435: /* clone3 */
		return 1;
	default:
		return 0;
	}
}

/* Whether the thread sits in a timed sleep the kernel would resume with
 * restart_syscall (nanosleep, clock_nanosleep, poll with a timeout, a
 * futex wait with one). Caught again on its way back to user space,
 * after an earlier stop, it already holds restart_syscall's number. */
static int timed_sleep(const struct user_regs_struct *r)
{
	return (long)r->orig_rax >= 0 &&
	       (-(long)r->rax == ERESTART_RESTARTBLOCK || r->rax == NR_RESTART_SYSCALL);
}

/* What recce puts back itself in a thread taken from a timed sleep. */
struct sleeper {
	pid_t tid;
	struct user_regs_struct regs;
	uint64_t mask;
	uint8_t xstate[XSTATE_MAX];
	size_t xlen;
};

static int sleeper_save(pid_t tid, const struct user_regs_struct *r, struct sleeper *sl)
{
	struct iovec iov = {sl->xstate, sizeof(sl->xstate)};

	sl->tid = tid;
	sl->regs = *r;
	if (ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(sl->mask), &sl->mask) != 0 ||
	    ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) != 0)
		return -errno;
	sl->xlen = iov.iov_len;
	return 0;
}

/* Holds thread tid under ptrace while it is in the stub before offset
 * off (from there on it leaves by itself): 0, the thread stopped and
 * its registers in *now, for the caller to detach; else -errno, the
 * thread let go (-ESRCH: it left, and its frame is its stack again). */
static int hold_in_stub(const struct injector *inj, pid_t tid, uint64_t off,
			struct user_regs_struct *now)
{
	int st, err = 0;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0)
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0 || waitpid(tid, &st, __WALL) != tid)
		err = -errno;
	if (!err && ptrace(PTRACE_GETREGS, tid, 0, now) != 0)
		err = -errno;
	if (!err && now->rip - inj->cave >= off)
		err = -ESRCH;
	if (err)
		ptrace(PTRACE_DETACH, tid, 0, 0);
	return err;
}

/* Lets a thread waiting in the stub go back (the ack), written only
 * while it is held there: once gone, the frame is its stack again. */
static void ack(const struct injector *inj, pid_t tid, uint64_t s)
{
	struct user_regs_struct now;
	uint64_t one = 1;

	if (hold_in_stub(inj, tid, STUB_BACK, &now) == 0) {
		tmem_write(inj->pid, s + F_ACK, &one, sizeof(one));
		ptrace(PTRACE_DETACH, tid, 0, 0);
	}
}

/* Takes the thread back from the stub, where it waits without a system
 * call, to the sleep it was in: restart_syscall with the kernel's own
 * record of the sleep, untouched, and the mark of its frame at s off.
 * Returns 0, or -errno when the thread was not in the stub's wait any
 * more: the stub puts it back itself. */
static int sleeper_restore(const struct injector *inj, struct sleeper *sl, uint64_t s)
{
	struct user_regs_struct r = sl->regs, now;
	struct iovec iov = {sl->xstate, sl->xlen};
	uint64_t zero = 0;

	if (-(long)r.rax == ERESTART_RESTARTBLOCK) {
		r.rax = NR_RESTART_SYSCALL;
		r.rip -= 2; /* back onto the syscall instruction */
	}
	r.orig_rax = (uint64_t)-1;
	int err = hold_in_stub(inj, sl->tid, STUB_SLEEP, &now);
	if (err)
		return err;
	err = tmem_write(inj->pid, s + F_MARK, &zero, sizeof(zero));
	if (!err && (ptrace(PTRACE_SETREGSET, sl->tid, (void *)NT_X86_XSTATE, &iov) != 0 ||
		     ptrace(PTRACE_SETSIGMASK, sl->tid, (void *)sizeof(sl->mask), &sl->mask) != 0 ||
		     ptrace(PTRACE_SETREGS, sl->tid, 0, &r) != 0))
		err = -errno;
	ptrace(PTRACE_DETACH, sl->tid, 0, 0);
	return err;
}

/* Whether thread t is inside a call: in the stub, or (when the stub was
 * there before this recce came, a killed one's thread may still be in
 * its call) below a frame bearing the mark, within the stack a call may
 * use. Such a thread is neither borrowed nor has the stub taken from
 * under it; one whose stack cannot be read counts as inside. */
static int in_call(const struct injector *inj, const struct user_regs_struct *r,
		   const struct tmaps *maps)
{
	if (r->rip - inj->cave < sizeof(stub))
		return 1;
	if (!inj->stub_found)
		return 0;
	const struct tmap *stack = tmaps_find(maps, r->rsp);
	if (!stack)
		return 0;
	uint64_t at = r->rsp & ~63ull, end = r->rsp + RED_ZONE + CALL_STACK + FRAME_MAX;
	if (end > stack->end)
		end = stack->end;
	uint8_t buf[1 << 14];
	for (; at < end; at += sizeof(buf)) {
		size_t n = end - at < sizeof(buf) ? (size_t)(end - at) : sizeof(buf);
		if (tmem_read(inj->pid, at, buf, n) != 0)
			return 1;
		for (size_t k = 0; k + F_MARK + 8 <= n; k += 64) {
			uint64_t v;
			memcpy(&v, buf + k + F_MARK, 8);
			if (v == FRAME_MARK)
				return 1;
		}
	}
	return 0;
}

/* Whether thread t may be borrowed for a call needing frame bytes of
 * stack: 3 idle in a system call, 2 in its own code, 1 in a timed
 * sleep, 0 not at all. Not a thread inside the call of a killed recce:
 * the rt_sigreturn this call ends with would cancel the sleep the stub
 * of that one is to put it back into. */
static int thread_fit(const struct injector *inj, const struct stopped_thread *t,
		      const struct tmaps *maps, size_t frame)
{
	const struct user_regs_struct *r = &t->regs;

	if (t->sig)
		return 0;
	const struct tmap *code = tmaps_find(maps, r->rip);
	if (code && (tmap_is(code, "ld-linux") || tmap_is(code, "ld-")))
		return 0;
	long nr = (long)r->orig_rax;
	if (nr >= 0 && unborrowable_syscall(nr))
		return 0;
	if (nr < 0 && code && is_libc(code->path))
		return 0;
	const struct tmap *stack = tmaps_find(maps, r->rsp);
	if (!stack || !(stack->prot & PROT_WRITE))
		return 0;
	uint64_t need = RED_ZONE + frame + 64 + CALL_STACK;
	if (strcmp(stack->path, "[stack]") != 0 && r->rsp - stack->start < need)
		return 0;
	if (in_call(inj, r, maps))
		return 0;
	/* Idle in a system call is best, then its own code; a timed sleep,
	 * which recce must put back itself, last. */
	return timed_sleep(r) ? 1 : nr >= 0 ? 3 : 2;
}

/* The registers rt_sigreturn gives back: where the thread stopped, with
 * an interrupted system call set up to be made again, as the kernel
 * would have done on its way back to user space. */
static void fill_sigcontext(uint8_t *mc, const struct user_regs_struct *r, uint64_t fpstate)
{
	uint64_t g[23] = {r->r8,  r->r9,  r->r10, r->r11, r->r12, r->r13,
			  r->r14, r->r15, r->rdi, r->rsi, r->rbp, r->rbx,
			  r->rdx, r->rax, r->rcx, r->rsp, r->rip, r->eflags};
	long nr = (long)r->orig_rax;
	long err = -(long)r->rax;
	if (nr >= 0 && (err == ERESTARTSYS_ || err == ERESTARTNOINTR_ || err == ERESTARTNOHAND_)) {
		g[13] = (uint64_t)nr;
		g[16] -= 2; /* back onto the syscall instruction */
	}
	memcpy(mc, g, 18 * 8);
	uint16_t seg[4] = {(uint16_t)r->cs, 0, 0, (uint16_t)r->ss};
	memcpy(mc + 144, seg, sizeof(seg));
	memcpy(mc + 184, &fpstate, 8);
}

/* Builds the frame for a call at S into buf (size bytes). */
static void build_frame(const struct injector *inj, uint8_t *buf, uint64_t s,
			const struct user_regs_struct *r, uint64_t fn, const uint64_t args[6],
			const void *data, size_t len, int data_arg, int spin)
{
	uint64_t v = (uint64_t)spin;

	memcpy(buf + 8 + F_SPIN, &v, 8);
	/* Where the sleep's system call returns to: after the syscall
	 * instruction, where the kernel leaves rip, or two bytes on when
	 * it has moved rip back onto it to make restart_syscall. */
	v = r->rip + (r->rax == NR_RESTART_SYSCALL ? 2 : 0);
	memcpy(buf + 8 + F_RESUME, &v, 8);

	/* buf[0..8) is the return slot at S - 8; everything else from S. */
	uint8_t *f = buf + 8;
	v = UC_SIGCONTEXT_SS_ | UC_STRICT_RESTORE_SS;
	memcpy(f + F_UC_FLAGS, &v, 8);
	v = FRAME_MARK;
	memcpy(f + F_MARK, &v, 8);
	fill_sigcontext(f + F_MCONTEXT, r, s + F_FPSTATE);
	memcpy(f + F_FN, &fn, 8);
	uint64_t a[6];
	memcpy(a, args, sizeof(a));
	uint64_t data_at = s + ((F_FPSTATE + inj->xsize + 4 + 15) & ~15u);
	if (data && data_arg >= 0 && data_arg < 6) {
		a[data_arg] = data_at;
		memcpy(buf + 8 + (data_at - s), data, len);
	}
	memcpy(f + F_ARGS, a, sizeof(a));
	memcpy(f + F_ERRNO_FN, &inj->errno_fn, 8);
	memcpy(f + F_XMASK, &inj->xmask, 8);
	memset(f + F_ALLSIGS, 0xff, 8);
	int64_t pause[2] = {0, 1000000};
	memcpy(f + F_PAUSE, pause, sizeof(pause));
	/* The software-reserved bytes of the legacy area say an XSAVE
	 * layout follows, as the kernel's own signal frames do. */
	uint8_t *fp = f + F_FPSTATE;
	uint32_t sw[2] = {FP_XSTATE_MAGIC1_, inj->xsize + 4};
	memcpy(fp + 464, sw, 8);
	memcpy(fp + 472, &inj->xmask, 8);
	memcpy(fp + 480, &inj->xsize, 4);
	uint32_t magic2 = FP_XSTATE_MAGIC2_;
	memcpy(fp + inj->xsize, &magic2, 4);
}

static void pause_us(long us)
{
	struct timespec ts = {0, us * 1000};
	nanosleep(&ts, NULL);
}

/* Waits us microseconds, less if the process of pidfd exits first;
 * returns 1 when it has exited. */
static int exited_within(int pidfd, long us)
{
	struct pollfd p = {pidfd, POLLIN, 0};
	struct timespec ts = {0, us * 1000};

	return ppoll(&p, 1, &ts, NULL) > 0;
}

/* Stops the process with a thread fit to borrow: 0 with *pick its index,
 * or -errno (-ETIME when its threads would not all stop within
 * STOP_TIMEOUT_MS). Retries for PICK_TIMEOUT_MS while every thread is
 * busy. */
static int stop_for_call(struct injector *inj, struct stop_all *s, struct tmaps *maps, size_t frame,
			 size_t *pick)
{
	uint64_t deadline = time_now_ns(CLOCK_MONOTONIC) + PICK_TIMEOUT_MS * 1000000ull;

	for (;;) {
		int err = stop_all(s, inj->pid, STOP_TIMEOUT_MS, 0);
		/* A thread that would not stop stays seized until recce
		 * exits (detaching needs a stop): no second try. */
		if (err)
			return err == -ETIMEDOUT ? -ETIME : err;
		err = tmaps_read(maps, inj->pid);
		if (err) {
			stop_all_release(s);
			return err;
		}
		int best = 0;
		for (size_t i = 0; i < s->n; i++) {
			int fit = thread_fit(inj, &s->t[i], maps, frame);
			if (fit > best) {
				best = fit;
				*pick = i;
			}
		}
		if (best) {
			err = seccomp_check(inj->pid, s->t[*pick].tid, &inj->refused_call);
			if (err == 0)
				return 0;
			tmaps_release(maps);
			stop_all_release(s);
			if (err == 1 || err == -EACCES) {
				inj->refusal = err == 1 ? INJECT_SECCOMP : INJECT_SECCOMP_UNREAD;
				return -EPERM;
			}
			return err;
		}
		tmaps_release(maps);
		stop_all_release(s);
		if (time_now_ns(CLOCK_MONOTONIC) > deadline) {
			inj->refusal = INJECT_NO_THREAD;
			return -EAGAIN;
		}
		pause_us(2000);
	}
}

int injector_call(struct injector *inj, uint64_t fn, const uint64_t args[6], const void *data,
		  size_t len, int data_arg, uint64_t *ret)
{
	struct stop_all s;
	struct tmaps maps;
	size_t pick = 0;

	if (len > DATA_MAX)
		return -E2BIG;
	if (inj->pending)
		return -EBUSY;
	size_t frame = 8 + ((F_FPSTATE + inj->xsize + 4 + 15) & ~15u) + ((len + 15) & ~15u);
	uint8_t *buf = calloc(1, frame);
	if (!buf)
		return -ENOMEM;
	int err = stop_for_call(inj, &s, &maps, frame, &pick);
	if (err) {
		free(buf);
		return err;
	}
	struct stopped_thread *t = &s.t[pick];
	uint64_t sp = (t->regs.rsp - RED_ZONE - frame) & ~63ull;
	struct sleeper sl;
	int spin = timed_sleep(&t->regs);
	if (spin && (err = sleeper_save(t->tid, &t->regs, &sl)) != 0) {
		tmaps_release(&maps);
		stop_all_release(&s);
		free(buf);
		return err;
	}
	build_frame(inj, buf, sp, &t->regs, fn, args, data, len, data_arg, spin);
	uint8_t there[sizeof(stub)];
	err = tmem_read(inj->pid, inj->cave, there, sizeof(there));
	if (!err && memcmp(there, stub, sizeof(stub)) != 0) {
		err = tmem_write(inj->pid, inj->cave, stub, sizeof(stub));
		inj->stub_written |= !err;
	}
	if (!err)
		err = tmem_write(inj->pid, sp - 8, buf, frame);
	if (!err) {
		t->regs.rip = inj->cave;
		t->regs.rsp = sp;
		t->regs.orig_rax = (uint64_t)-1; /* no restart of the stopped call now */
		t->regs.rax = 0;
		t->regs_changed = 1;
	}
	inj->thread = t->tid;
	tmaps_release(&maps);
	inj->stopped_ns = stop_all_release(&s);
	free(buf);
	if (err)
		return err;

	/* The target runs on; the stub says when the call is done. */
	uint64_t start = time_now_ns(CLOCK_MONOTONIC);
	uint64_t deadline = start + (uint64_t)inj->timeout_ms * 1000000;
	inj->pending = 1;
	int pidfd = proc_pidfd_open(inj->pid);
	if (pidfd < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	for (long wait = 20;; wait = wait < 1000 ? wait * 2 : 1000) {
		uint64_t res[2];
		err = tmem_read(inj->pid, sp + F_RESULT, res, sizeof(res));
		if (!err && res[1] == 1) {
			*ret = res[0];
			inj->pending = 0;
			if (spin) {
				sleeper_restore(inj, &sl, sp);
			} else {
				ack(inj, inj->thread, sp);
			}
			break;
		}
		if (time_now_ns(CLOCK_MONOTONIC) > deadline)
			err = -ETIMEDOUT;
		else if (exited_within(pidfd, wait))
			err = -ESRCH;
		else
			continue;
		close(pidfd);
		return err;
	}
	close(pidfd);
	inj->call_ns = time_now_ns(CLOCK_MONOTONIC) - start;
	return 0;
}

int injector_dlopen(struct injector *inj, const char *path, uint64_t *handle, char *err,
		    size_t errlen)
{
	uint64_t args[6] = {0, 2 /* RTLD_NOW */, 0, 0, 0, 0};

	if (errlen)
		err[0] = 0;
	int rc = injector_call(inj, inj->dlopen_fn, args, path, strlen(path) + 1, 0, handle);
	if (rc || *handle)
		return rc;
	uint64_t msg = 0;
	uint64_t none[6] = {0};
	if (injector_call(inj, inj->dlerror_fn, none, NULL, 0, -1, &msg) == 0 && msg && errlen)
		tmem_read_string(inj->pid, msg, err, errlen);
	return -ENOEXEC;
}

int injector_where(struct symbolizer *sym, pid_t pid, struct sym_file *f, uint64_t vaddr,
		   uint64_t *addr)
{
	struct proc_registry *procs = procs_new(sym);
	if (!procs)
		return -ENOMEM;
	int err = procs_scan(procs, pid);
	if (!err && procs_file_addr(procs, pid, f, vaddr, addr) != 0)
		err = -ENOENT;
	procs_free(procs);
	return err;
}

void injector_close(struct injector *inj)
{
	if (!(inj->stub_written || inj->stub_found) || inj->pending)
		return;
	/* The stub's last instruction returns the thread to its place; a
	 * thread still inside it is let go on a little: the stub returns
	 * within a second of its call's end, later on a busy machine. A
	 * stub a killed recce left is taken away too, once no thread is in
	 * its call. */
	uint64_t deadline = time_now_ns(CLOCK_MONOTONIC) + CLOSE_TIMEOUT_MS * 1000000ull;
	for (;;) {
		struct stop_all s;
		struct tmaps maps;
		if (stop_all(&s, inj->pid, STOP_TIMEOUT_MS, STOP_ALL_TAKE_STOPPED) != 0)
			return;
		int inside = 1;
		if (tmaps_read(&maps, inj->pid) == 0) {
			inside = 0;
			for (size_t i = 0; i < s.n && !inside; i++)
				inside = in_call(inj, &s.t[i].regs, &maps);
			tmaps_release(&maps);
		}
		if (!inside) {
			uint8_t zeros[sizeof(stub)] = {0};
			if (tmem_write(inj->pid, inj->cave, zeros, sizeof(zeros)) == 0)
				inj->stub_written = inj->stub_found = 0;
		}
		stop_all_release(&s);
		if (!inside || time_now_ns(CLOCK_MONOTONIC) > deadline)
			return;
		pause_us(2000);
	}
}
