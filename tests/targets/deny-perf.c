/*
 * A test helper that makes the kernel refuse perf_event_open, the way it
 * does under a strict kernel.perf_event_paranoid or without CAP_PERFMON, but
 * for this process tree only and without changing any system setting.
 *
 *   deny-perf EACCES|EPERM CMD ARGS...
 *
 * Installs a seccomp filter under which perf_event_open(2) fails with the
 * given errno, then executes CMD. recce's black-box tests run recce under it
 * to check the message a refused user sees.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: deny-perf EACCES|EPERM CMD ARGS...\n");
		return 2;
	}
	err = strcmp(argv[1], "EPERM") == 0 ? EPERM : EACCES;

	struct sock_filter filter[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
	    .len = sizeof(filter) / sizeof(filter[0]),
	    .filter = filter,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("deny-perf: seccomp");
		return 1;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "deny-perf: cannot run '%s': %s\n", argv[2], strerror(errno));
	return 127;
}
