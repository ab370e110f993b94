/*
 * The bpf(2) calls recce makes itself and the quiet loading of its BPF
 * programs through libbpf (see bpf-sys.h).
 */
#include "perf/bpf-sys.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int bpf_sys(int cmd, void *attr, size_t size)
{
	long fd = syscall(SYS_bpf, cmd, attr, size);

	return fd < 0 ? -errno : (int)fd;
}

int bpf_map_new(uint32_t type, uint32_t key_size, uint32_t value_size, uint32_t n, const char *name)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key_size;
	a.value_size = value_size;
	a.max_entries = n;
	strncpy(a.map_name, name, sizeof(a.map_name) - 1);
	return bpf_sys(BPF_MAP_CREATE, &a, sizeof(a));
}

/* A map operation on one key (and value): 0 or -errno. */
static int map_op(int cmd, int map_fd, const void *key, const void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map_fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)value;
	int rc = bpf_sys(cmd, &a, sizeof(a));
	return rc < 0 ? rc : 0;
}

int bpf_map_set(int map_fd, const void *key, const void *value)
{
	return map_op(BPF_MAP_UPDATE_ELEM, map_fd, key, value);
}

int bpf_map_get(int map_fd, const void *key, void *value)
{
	return map_op(BPF_MAP_LOOKUP_ELEM, map_fd, key, value);
}

int bpf_map_delete(int map_fd, const void *key)
{
	return map_op(BPF_MAP_DELETE_ELEM, map_fd, key, NULL);
}

/* Where libbpf's messages go while a program loads: the caller's log. */
static char *log_buf;
static size_t log_size, log_used;

static int print_to_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || !log_buf || log_used + 1 >= log_size)
		return 0;
	int n = vsnprintf(log_buf + log_used, log_size - log_used, fmt, ap);
	if (n > 0)
		log_used += (size_t)n < log_size - log_used ? (size_t)n : log_size - log_used - 1;
	return n;
}

int bpf_object_load_quietly(struct bpf_object *obj, const struct bpf_map_fd *maps, size_t n,
			    struct bpf_program *prog, uint32_t attach_type, char *log,
			    size_t log_len)
{
	for (size_t i = 0; i < n; i++) {
		int err = bpf_map__reuse_fd(maps[i].map, maps[i].fd);
		if (err)
			return err;
	}
	if (attach_type)
		bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)attach_type);
	if (log && log_len)
		log[0] = 0;
	log_buf = log;
	log_size = log_len;
	log_used = 0;
	libbpf_print_fn_t was = libbpf_set_print(print_to_log);
	int err = bpf_object__load(obj);
	libbpf_set_print(was);
	log_buf = NULL;
	return err < 0 ? err : err > 0 ? -err : 0;
}

int bpf_program_dup(const struct bpf_program *prog)
{
	int fd = bpf_program__fd(prog);

	if (fd < 0)
		return fd;
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? -errno : fd;
}
