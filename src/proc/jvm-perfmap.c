/*
 * A running JVM asked to write its perf map now (see jvm-perfmap.h).
 */
#include "proc/jvm-perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/launch.h"
#include "util/clock.h"
#include "util/lines.h"

#define JCMD_MS 30000 /* how long jcmd may take: a JVM itself, slow to start on a busy machine */

int jvm_is(pid_t pid)
{
	char path[64], line[4096];
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	while (!found && lines_read(f, line, sizeof(line)) > 0)
		found = strstr(line, "/libjvm.so") != NULL;
	fclose(f);
	return found;
}

/* The jcmd beside the JVM's own java, when root or the JVM's user owns it
 * and no one else may write it, else the one on PATH; malloc'ed. */
static char *find_jcmd(pid_t pid, uid_t uid)
{
	char link[64], exe[4096];

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash && (size_t)(slash + 1 - exe) + sizeof("jcmd") <= sizeof(exe)) {
			memcpy(slash + 1, "jcmd", sizeof("jcmd"));
			struct stat st;
			if (access(exe, X_OK) == 0 && stat(exe, &st) == 0 &&
			    (st.st_uid == 0 || st.st_uid == uid) && !(st.st_mode & 022))
				return strdup(exe);
		}
	}
	return launch_which("jcmd");
}

/* The first line of what jcmd said that is not its "PID:" header. */
static void complaint(int fd, char *why, size_t cap)
{
	char buf[2048];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	if (!cap)
		return;
	why[0] = 0;
	if (n <= 0)
		return;
	buf[n] = 0;
	char *save = NULL;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *end;
		strtol(l, &end, 10);
		if (end != l && *end == ':' && !end[1])
			continue; /* "12345:" */
		snprintf(why, cap, "%s", l);
		return;
	}
}

int jvm_write_perfmap(pid_t pid, char *why, size_t cap)
{
	uint64_t uid[2], gid[2];
	char path[64], arg[16];
	int out[2];

	if (cap)
		why[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (lines_key_numbers(path, "Uid", uid, 2) != 2 ||
	    lines_key_numbers(path, "Gid", gid, 2) != 2)
		return -ESRCH;
	char *jcmd = find_jcmd(pid, (uid_t)uid[1]);
	if (!jcmd)
		return -ENOENT;
	if (pipe2(out, O_CLOEXEC) < 0) {
		free(jcmd);
		return -errno;
	}
	snprintf(arg, sizeof(arg), "%d", (int)pid);
	pid_t child = fork();
	if (child == 0) {
		/* As the JVM's effective user: HotSpot's attach answers no
		 * other, and the map it writes is then that user's. */
		int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out[1], 1) < 0 ||
		    dup2(out[1], 2) < 0 ||
		    (getuid() == 0 && uid[1] != 0 &&
		     (setgroups(0, NULL) < 0 || setgid((gid_t)gid[1]) < 0 ||
		      setuid((uid_t)uid[1]) < 0)))
			_exit(126);
		execl(jcmd, "jcmd", arg, "Compiler.perfmap", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	free(jcmd);
	if (child < 0) {
		close(out[0]);
		return -errno;
	}
	int status = 0;
	pid_t got = 0;
	/* By the clock: on a loaded machine each nap lasts longer than
	 * asked, and a count of naps would wait many times JCMD_MS. */
	uint64_t deadline = time_now_ns(CLOCK_MONOTONIC) + (uint64_t)JCMD_MS * 1000000;
	while ((got = waitpid(child, &status, WNOHANG)) == 0 &&
	       time_now_ns(CLOCK_MONOTONIC) < deadline)
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	if (got == 0) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		close(out[0]);
		return -ETIMEDOUT;
	}
	complaint(out[0], why, cap);
	close(out[0]);
	if (got < 0)
		return -ECHILD;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOENT : -EIO;
	/* jcmd says "Command executed successfully" even when the JVM
	 * could not write: the map must be there. */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	struct stat st;
	if (stat(path, &st) < 0) {
		if (cap && !why[0])
			snprintf(why, cap, "the JVM wrote no %s", path);
		return -EIO;
	}
	return 0;
}
