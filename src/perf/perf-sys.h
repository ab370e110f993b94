/*
 * The kernel's perf interface at its lowest: the perf_event_open system
 * call, and the small text files of /proc/sys and /sys that describe it
 * (limits, online CPUs, PMU types). Shared by the sampling events and the
 * uprobes.
 */
#ifndef RECCE_PERF_SYS_H
#define RECCE_PERF_SYS_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* perf_event_open(attr, pid, cpu, no group, close-on-exec): the new
 * descriptor, or -1 with errno set. */
int perf_event_open_fd(struct perf_event_attr *attr, pid_t pid, int cpu);

/* The same with more flags (PERF_FLAG_PID_CGROUP: pid is a cgroup's
 * directory descriptor). */
int perf_event_open_flags(struct perf_event_attr *attr, pid_t pid, int cpu, unsigned long flags);

/* Reads a small text file whole into buf (at most size - 1 bytes, then a
 * NUL). Returns 0 or -errno. */
int perf_read_text(const char *path, char *buf, size_t size);

/* Reads an integer from a /proc/sys file, such as
 * /proc/sys/kernel/perf_event_max_sample_rate. Returns 0 or -errno. */
int perf_sysctl_read(const char *path, long long *out);

/* The online CPUs from /sys/devices/system/cpu/online ("0-3,5,7-8"): a
 * heap array in *out (the caller frees it). Returns 0 or -errno. */
int perf_cpus_online(int **out, size_t *n);

/* The uprobe PMU's type and the config bit that makes a uretprobe.
 * Returns 0, or -ENOENT when the kernel has no uprobe PMU. */
int perf_uprobe_pmu(uint32_t *type, int *retprobe_bit);

#endif
