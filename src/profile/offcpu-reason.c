/*
 * Why a thread was off its CPU (see offcpu-reason.h): a table of the
 * kernel functions a blocked thread waits in, and of the C library and
 * Go runtime calls that lead there, matched leaf first.
 */
#include "profile/offcpu-reason.h"

#include <string.h>

/* A name matches an entry that is its prefix (kernel functions come in
 * variants: futex_wait_queue, futex_wait_multiple) or, for the short
 * C library names, only the whole name. */
struct reason_rule {
	const char *name;
	int whole;
	const char *reason;
};

static const struct reason_rule rules[] = {
    /* The kernel, where the thread sleeps. */
    {"do_nanosleep", 0, "sleep"},
    {"hrtimer_nanosleep", 0, "sleep"},
    {"msleep", 0, "sleep"},
    {"futex_wait", 0, "lock"},
    {"mutex_lock", 0, "lock"},
    {"rwsem_down", 0, "lock"},
    {"down_read", 0, "lock"},
    {"down_write", 0, "lock"},
    {"ep_poll", 0, "io"},
    {"do_epoll_wait", 0, "io"},
    {"do_sys_poll", 0, "io"},
    {"do_select", 0, "io"},
    {"core_sys_select", 0, "io"},
    {"pipe_read", 0, "io"},
    {"anon_pipe_", 0, "io"},
    {"pipe_write", 0, "io"},
    {"wait_woken", 0, "io"},
    {"sk_wait_data", 0, "io"},
    {"sk_stream_wait", 0, "io"},
    {"unix_stream_", 0, "io"},
    {"unix_dgram_recvmsg", 0, "io"},
    {"inet_csk_accept", 0, "io"},
    {"tcp_recvmsg", 0, "io"},
    {"n_tty_read", 0, "io"},
    {"io_schedule", 0, "io"},
    {"folio_wait", 0, "io"},
    {"wait_on_page", 0, "io"},
    {"blk_", 0, "io"},
    {"do_wait", 0, "wait"},
    {"kernel_wait", 0, "wait"},
    {"do_sigtimedwait", 0, "wait"},
    {"sigsuspend", 0, "wait"},
    /* The C library (names without their __GI_, __libc_ and _ prefixes). */
    {"nanosleep", 1, "sleep"},
    {"clock_nanosleep", 1, "sleep"},
    {"usleep", 1, "sleep"},
    {"sleep", 1, "sleep"},
    {"lll_lock_wait", 0, "lock"},
    {"futex_", 0, "lock"},
    {"pthread_mutex_", 0, "lock"},
    {"pthread_rwlock_", 0, "lock"},
    {"pthread_cond_", 0, "lock"},
    {"pthread_barrier_wait", 0, "lock"},
    {"sem_wait", 0, "lock"},
    {"sem_timedwait", 0, "lock"},
    {"read", 1, "io"},
    {"readv", 1, "io"},
    {"pread64", 1, "io"},
    {"write", 1, "io"},
    {"writev", 1, "io"},
    {"pwrite64", 1, "io"},
    {"recv", 1, "io"},
    {"recvfrom", 1, "io"},
    {"recvmsg", 1, "io"},
    {"send", 1, "io"},
    {"sendto", 1, "io"},
    {"sendmsg", 1, "io"},
    {"accept", 1, "io"},
    {"accept4", 1, "io"},
    {"connect", 1, "io"},
    {"poll", 1, "io"},
    {"ppoll", 1, "io"},
    {"select", 1, "io"},
    {"pselect", 1, "io"},
    {"epoll_wait", 1, "io"},
    {"epoll_pwait", 1, "io"},
    {"fsync", 1, "io"},
    {"fdatasync", 1, "io"},
    {"wait4", 1, "wait"},
    {"waitpid", 1, "wait"},
    {"waitid", 1, "wait"},
    {"sigwait", 1, "wait"},
    {"sigwaitinfo", 1, "wait"},
    {"sigtimedwait", 1, "wait"},
    {"sigsuspend", 1, "wait"},
    {"pause", 1, "wait"},
    /* Go: the runtime, whose threads park on futexes and epoll, and the
     * system calls of package syscall. */
    {"runtime.futex", 0, "lock"},
    {"runtime.usleep", 1, "sleep"},
    {"runtime.epollwait", 1, "io"},
    {"runtime.netpoll", 1, "io"},
    {"syscall.Nanosleep", 1, "sleep"},
    {"syscall.Read", 1, "io"},
    {"syscall.read", 1, "io"},
    {"syscall.Write", 1, "io"},
    {"syscall.write", 1, "io"},
    {"syscall.Recvfrom", 1, "io"},
    {"syscall.Accept", 0, "io"},
    {"syscall.EpollWait", 1, "io"},
    {"syscall.Wait4", 1, "wait"},
};

int offcpu_is_mark(uint64_t addr)
{
	return addr == OFFCPU_MARK_WAIT || addr == OFFCPU_MARK_RUNNABLE ||
	       addr == OFFCPU_MARK_BEFORE;
}

/* The name without the prefixes the C library puts on its internal
 * aliases: "__GI___libc_read" and "__libc_read" are "read". */
static const char *bare_name(const char *name)
{
	for (;;) {
		while (*name == '_')
			name++;
		if (strncmp(name, "GI_", 3) == 0)
			name += 3;
		else if (strncmp(name, "libc_", 5) == 0)
			name += 5;
		else
			return name;
	}
}

static const char *rule_of(const char *name)
{
	const char *bare = bare_name(name);

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct reason_rule *r = &rules[i];
		size_t len = strlen(r->name);
		if (strncmp(bare, r->name, len) == 0 && (!r->whole || bare[len] == 0))
			return r->reason;
	}
	return NULL;
}

const char *offcpu_reason(const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *reason = names[i] ? rule_of(names[i]) : NULL;
		if (reason)
			return reason;
	}
	return "other";
}

const char *offcpu_frame_name(uint64_t mark, const char *reason)
{
	static const struct {
		const char *reason, *frame;
	} frames[] = {
	    {"sleep", "[off-CPU: sleep]"},
	    {"lock", "[off-CPU: lock]"},
	    {"io", "[off-CPU: io]"},
	    {"wait", "[off-CPU: wait]"},
	};

	if (mark == OFFCPU_MARK_RUNNABLE)
		return "[off-CPU: runnable]";
	if (mark == OFFCPU_MARK_BEFORE)
		return "[off-CPU: before the recording]";
	for (size_t i = 0; reason && i < sizeof(frames) / sizeof(frames[0]); i++)
		if (strcmp(reason, frames[i].reason) == 0)
			return frames[i].frame;
	return "[off-CPU: other]";
}
