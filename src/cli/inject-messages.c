/*
 * Messages of injection (see inject-messages.h).
 */
#include "cli/inject-messages.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/usage.h"
#include "inject/fast-set.h"
#include "proc/family.h"

const char *inject_words(enum inject_refusal why)
{
	switch (why) {
	case INJECT_GO:
		return "it is a Go program: its threads run on goroutine stacks, and recce "
		       "loads code only into programs on the C library";
	case INJECT_NO_LIBC:
		return "it has no C library with dlopen mapped (a static program?)";
	case INJECT_NO_ROOM:
		return "no executable segment of it has padding for recce's call stub";
	case INJECT_NO_THREAD:
		return "for 3 s no thread was where recce may borrow it (each was inside the C "
		       "library or the loader); try again";
	case INJECT_SECCOMP:
		return "it runs under a seccomp filter that would kill it (or send it SIGSYS) "
		       "for a system call that loading code makes; recce leaves it alone";
	case INJECT_SECCOMP_UNREAD:
		return "it runs under seccomp filters, which only root may read to check that "
		       "loading code would not kill it; run recce as root";
	default:
		return "injection failed";
	}
}

const char *inject_holder_words(pid_t holder)
{
	static char buf[64];

	if (!holder)
		return "another recce";
	snprintf(buf, sizeof(buf), "another recce (process %d)", (int)holder);
	return buf;
}

void inject_die_errno(pid_t pid, int err)
{
	pid_t tracer = err == -EPERM || err == -EACCES ? proc_tracer(pid) : 0;
	if (tracer > 0)
		die("process %d is traced by process %d (a debugger or strace): a process has one "
		    "tracer at a time; detach it first. Nothing was changed",
		    (int)pid, (int)tracer);
	if (err == -EPERM || err == -EACCES)
		die("not allowed to ptrace process %d: run recce as its user or as root, allow "
		    "it with CAP_SYS_PTRACE, and check kernel.yama.ptrace_scope (sysctl) and "
		    "that no debugger is attached",
		    (int)pid);
	if (err == -ESRCH)
		die("process %d is gone", (int)pid);
	if (err == -EBUSY)
		die("process %d is stopped (job control); continue it first (kill -CONT %d)",
		    (int)pid, (int)pid);
	if (err == -ETIME)
		die("a thread of process %d did not stop for recce within 2 s (stuck in the "
		    "kernel, or the machine very busy): it runs on unchanged; try again",
		    (int)pid);
}

void fast_say_failed(const struct fast_set_info *fi, int err, pid_t pid, const char *cmd)
{
	switch (fi->failure) {
	case FAST_NO_LIBRARY:
		error("librecce-fast.so is not installed (looked in %s): install recce with "
		      "'make install', or set RECCE_FAST_LIB to its path",
		      fi->detail[0] ? fi->detail : "RECCE_FAST_LIB");
		return;
	case FAST_INJECT:
		error("cannot load recce's library into process %d: %s; %s without --fast",
		      (int)pid, inject_words(fi->inject_refusal), cmd);
		return;
	case FAST_LOAD:
		error("process %d could not load %s: %s", (int)pid, fi->library,
		      fi->detail[0] ? fi->detail : "dlopen failed");
		return;
	case FAST_START:
		error("recce's library could not start in process %d: %s", (int)pid,
		      strerror(-err));
		return;
	case FAST_FILE:
		error("cannot make the file recce shares with process %d in /dev/shm: %s", (int)pid,
		      strerror(-err));
		return;
	case FAST_LOCKED:
		error("%s is changing the code of process %d (tracing it with --fast, or "
		      "patching it); one at a time: try again when it is done, or %s without "
		      "--fast",
		      inject_holder_words(fi->holder), (int)pid, cmd);
		return;
	default:
		break;
	}
	inject_die_errno(pid, err);
	if (err == -ETIMEDOUT)
		error("process %d did not finish loading recce's library within 10 s; it goes on "
		      "by itself, but nothing is recorded",
		      (int)pid);
	else
		error("cannot load recce's library into process %d: %s", (int)pid, strerror(-err));
}
