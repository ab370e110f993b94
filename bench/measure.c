/*
 * measure: runs a command and writes what it cost, for bench/run.sh.
 *
 *     measure OUT -- COMMAND [ARGS...]
 *
 * Writes one line of tab-separated key=value fields to OUT: wall_s (fork to
 * the end of wait), user_s, sys_s and cpu_s (of the command and every
 * descendant it waited for, from wait4), maxrss_kb (the largest resident
 * set of the command or of any waited-for descendant, as the kernel
 * reports it), start_ns and end_ns (CLOCK_MONOTONIC, comparable with the
 * workloads' end_ns) and status (the exit status, or 128 + signal).
 * measure exits with the command's status.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: measure OUT -- COMMAND [ARGS...]\n");
		return 2;
	}
	FILE *out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 2;
	}

	long long start = mono_ns();
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[3], argv + 3);
		fprintf(stderr, "measure: cannot run '%s'\n", argv[3]);
		_exit(127);
	}

	int wstatus;
	struct rusage ru;
	if (wait4(pid, &wstatus, 0, &ru) < 0) {
		perror("wait4");
		return 2;
	}
	long long end = mono_ns();
	int status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	double user = seconds(ru.ru_utime), sys = seconds(ru.ru_stime);

	fprintf(out,
		"wall_s=%.6f\tuser_s=%.6f\tsys_s=%.6f\tcpu_s=%.6f\tmaxrss_kb=%ld\t"
		"start_ns=%lld\tend_ns=%lld\tstatus=%d\n",
		(double)(end - start) / 1e9, user, sys, user + sys, ru.ru_maxrss, start, end,
		status);
	fclose(out);
	return status;
}
