/*
 * A replacement whose load waits at a gate: its constructor, inside the
 * target's dlopen, creates the file named by the target's environment
 * variable GATE_FIX with ".in" added, then waits while the file GATE_FIX
 * exists, and creates GATE_FIX ".out" when it goes on. A test holds
 * recce's borrowed thread inside the call this way for as long as it
 * needs: to kill recce there, and to run another recce meanwhile. The
 * wait makes no timed sleep, which a stop could turn into the thread's
 * record of one.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void touch(const char *gate, const char *suffix)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s%s", gate, suffix);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
}

__attribute__((constructor)) static void wait_at_gate(void)
{
	const char *gate = getenv("GATE_FIX");
	if (!gate)
		return;
	touch(gate, ".in");
	while (access(gate, F_OK) == 0)
		sched_yield();
	touch(gate, ".out");
}

long gated_work(long x, long *who)
{
	*who = 2;
	return x * 3 + 1;
}
