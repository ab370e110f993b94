/*
 * The bpf(2) calls and the register table shared by recce's hand-written
 * BPF programs (see bpf-asm.h).
 */
#include "perf/bpf-asm.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

const int16_t bpf_gpr_offset[X86_NGPR] = {
    80,	 /* rax */
    88,	 /* rcx */
    96,	 /* rdx */
    40,	 /* rbx */
    152, /* rsp */
    32,	 /* rbp */
    104, /* rsi */
    112, /* rdi */
    72,	 /* r8 */
    64,	 /* r9 */
    56,	 /* r10 */
    48,	 /* r11 */
    24,	 /* r12 */
    16,	 /* r13 */
    8,	 /* r14 */
    0,	 /* r15 */
};

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

void bpf_land(struct bpf_insn *p, size_t at, size_t to)
{
	p[at].off = (int16_t)(to - at - 1);
}

int bpf_map_get(int map_fd, const void *key, void *value)
{
	return map_op(BPF_MAP_LOOKUP_ELEM, map_fd, key, value);
}

int bpf_map_delete(int map_fd, const void *key)
{
	return map_op(BPF_MAP_DELETE_ELEM, map_fd, key, NULL);
}

int bpf_prog_load_uprobe(const struct bpf_insn *p, size_t n, uint32_t attach_type, const char *name,
			 char *log, size_t log_len)
{
	return bpf_prog_load(BPF_PROG_TYPE_KPROBE, p, n, attach_type, name, log, log_len);
}

int bpf_prog_load(uint32_t type, const struct bpf_insn *p, size_t n, uint32_t attach_type,
		  const char *name, char *log, size_t log_len)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.expected_attach_type = attach_type;
	a.insn_cnt = (uint32_t)n;
	a.insns = (uint64_t)(uintptr_t)p;
	a.license = (uint64_t)(uintptr_t) "GPL"; /* the helpers used are GPL-only */
	strncpy(a.prog_name, name, sizeof(a.prog_name) - 1);
	if (log && log_len) {
		log[0] = 0;
		a.log_buf = (uint64_t)(uintptr_t)log;
		a.log_size = (uint32_t)log_len;
		a.log_level = 1;
	}
	int fd = bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd == -ENOSPC && log) {
		/* The log did not fit: load again without one. */
		a.log_buf = 0;
		a.log_size = 0;
		a.log_level = 0;
		fd = bpf_sys(BPF_PROG_LOAD, &a, sizeof(a));
	}
	return fd;
}
