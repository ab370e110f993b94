/*
 * The stack of a thread blocked in a system call (see waiting.h).
 */
#include "sampling/waiting.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/perf-events.h"
#include "proc/unwind.h"

#define STACK_BYTES 16384 /* of the stack read from the stack pointer up */
#define REG_SP	    7	  /* positions in PERF_EVENTS_REGS_MASK order */
#define REG_IP	    8
#define NREGS	    17

/* Reads /proc/PID/task/TID/syscall: "NR ARG1..ARG6 SP PC" while in a
 * system call, "running" or "-1 SP PC" otherwise. Returns 1 with *sp and
 * *pc, 0 when not in a system call, or -errno. */
static int syscall_regs(pid_t pid, pid_t tid, uint64_t *sp, uint64_t *pc)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return err == ESRCH ? -ESRCH : -err;
	buf[n] = 0;
	long nr;
	uint64_t a[6];
	if (sscanf(buf,
		   "%ld %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
		   " %" SCNx64 " %" SCNx64,
		   &nr, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], sp, pc) != 9 ||
	    nr < 0)
		return 0;
	return 1;
}

int waiting_stack(struct unwinder *u, pid_t pid, pid_t tid, uint64_t *frames, size_t max)
{
	uint64_t sp, pc, regs[NREGS] = {0};

	if (max < 2)
		return 0;
	int r = syscall_regs(pid, tid, &sp, &pc);
	if (r <= 0)
		return r;
	uint8_t *stack = malloc(STACK_BYTES);
	if (!stack)
		return -ENOMEM;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(stack);
		return -errno;
	}
	/* The stack's mapping may end within STACK_BYTES: take what reads. */
	size_t len = 0;
	while (len < STACK_BYTES) {
		ssize_t n = pread(fd, stack + len, STACK_BYTES - len, (off_t)(sp + len));
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	regs[REG_SP] = sp;
	regs[REG_IP] = pc;
	frames[0] = (uint64_t)PERF_CONTEXT_USER;
	int got = unwinder_unwind(u, pid, tid, regs, stack, len, frames + 1, max - 1, NULL);
	free(stack);
	return got > 0 ? got + 1 : 0;
}
