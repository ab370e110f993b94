/*
 * Stop signals on a signalfd (see signals.h), shared by `recce record`,
 * `recce trace` and `recce top`.
 */
#include "util/signals.h"

#include <sys/signalfd.h>
#include <unistd.h>

int block_stop_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, old) < 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

void unblock_stop_signals(int sfd, const sigset_t *old)
{
	struct signalfd_siginfo si;

	if (sfd >= 0) {
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
		close(sfd);
	}
	sigprocmask(SIG_SETMASK, old, NULL);
}
