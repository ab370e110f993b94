/*
 * Reading another process's memory (see mem-read.h).
 */
#include "proc/mem-read.h"

#include <errno.h>
#include <sys/uio.h>

ssize_t proc_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};

	if (pid <= 0)
		return -ESRCH; /* no process whose memory may be read */
	if (!addr)
		return -EFAULT;
	if (!len)
		return 0;
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return n ? n : -EFAULT;
}

int proc_mem_read_all(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = proc_mem_read(pid, addr, buf, len);

	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EFAULT;
}
