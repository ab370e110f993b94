/*
 * Starting a command held at a gate (see launch.h).
 */
#include "proc/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

char *launch_which(const char *argv0)
{
	if (strchr(argv0, '/'))
		return strdup(argv0);
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		const char *colon = strchrnul(p, ':');
		char buf[4096];
		int n = snprintf(buf, sizeof(buf), "%.*s/%s", (int)(colon - p), p, argv0);
		if (n > 0 && (size_t)n < sizeof(buf) && access(buf, X_OK) == 0)
			return strdup(buf);
		p = *colon ? colon + 1 : colon;
	}
	return NULL;
}

static int forbidden;

void launch_forbid(void)
{
	forbidden = 1;
}

int launch_held(struct launch *l, char *const *argv, const sigset_t *mask)
{
	int go[2], status[2];

	l->pid = 0;
	l->gate = l->status = -1;
	if (forbidden)
		return -EPERM;
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(status, O_CLOEXEC) < 0) {
		int err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int err = -errno;
		close(go[0]);
		close(go[1]);
		close(status[0]);
		close(status[1]);
		return err;
	}
	if (pid == 0) {
		char c;
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, mask ? mask : &none, NULL);
		close(go[1]);
		close(status[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* recce went away: do not run unobserved */
		execvp(argv[0], argv);
		int err = errno;
		if (write(status[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(status[1]);
	l->pid = pid;
	l->gate = go[1];
	l->status = status[0];
	return 0;
}

int launch_go(struct launch *l)
{
	int ret = 0, err = 0;
	ssize_t n;

	if (write(l->gate, "g", 1) != 1)
		ret = -errno;
	close(l->gate);
	l->gate = -1;
	do
		n = read(l->status, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(l->status);
	l->status = -1;
	if (n == (ssize_t)sizeof(err)) {
		waitpid(l->pid, NULL, 0);
		l->pid = 0;
		return err ? -err : -ENOEXEC;
	}
	return ret;
}

void launch_cancel(struct launch *l)
{
	if (l->gate >= 0)
		close(l->gate);
	if (l->status >= 0)
		close(l->status);
	l->gate = l->status = -1;
	if (l->pid > 0)
		waitpid(l->pid, NULL, 0);
	l->pid = 0;
}
