/*
 * The perf system call and its text files (see perf-sys.h).
 */
#include "perf/perf-sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/array.h"

int perf_event_open_fd(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return perf_event_open_flags(attr, pid, cpu, 0);
}

int perf_event_open_flags(struct perf_event_attr *attr, pid_t pid, int cpu, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC | flags);
}

int perf_read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = 0;
	return 0;
}

int perf_sysctl_read(const char *path, long long *out)
{
	char buf[64];
	int err = perf_read_text(path, buf, sizeof(buf));

	if (err)
		return err;
	char *end;
	errno = 0;
	long long v = strtoll(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	*out = v;
	return 0;
}

int perf_cpus_online(int **out, size_t *n)
{
	char buf[4096];
	int err = perf_read_text("/sys/devices/system/cpu/online", buf, sizeof(buf));

	if (err)
		return err;

	int *cpus = NULL;
	size_t count = 0, cap = 0;
	char *p = buf;
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b;
		if (end == p || a < 0)
			goto bad;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b > 65535)
				goto bad;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			int *ncpus = array_reserve(cpus, &cap, count + 1, sizeof(*ncpus));
			if (!ncpus) {
				free(cpus);
				return -ENOMEM;
			}
			cpus = ncpus;
			cpus[count++] = (int)c;
		}
		if (*p == ',')
			p++;
	}
	if (!count)
		goto bad;
	*out = cpus;
	*n = count;
	return 0;
bad:
	free(cpus);
	return -EINVAL;
}

int perf_uprobe_pmu(uint32_t *type, int *retprobe_bit)
{
	char buf[64];
	int err = perf_read_text("/sys/bus/event_source/devices/uprobe/type", buf, sizeof(buf));

	if (err)
		return -ENOENT;
	*type = (uint32_t)strtoul(buf, NULL, 10);
	/* The file reads "config:0"; without it, bit 0 is what every kernel
	 * since 4.17 uses. */
	*retprobe_bit = 0;
	if (perf_read_text("/sys/bus/event_source/devices/uprobe/format/retprobe", buf,
			   sizeof(buf)) == 0 &&
	    strncmp(buf, "config:", 7) == 0) {
		int bit = atoi(buf + 7);
		if (bit >= 0 && bit < 64)
			*retprobe_bit = bit;
	}
	return 0;
}
