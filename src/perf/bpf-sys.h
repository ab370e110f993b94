/*
 * The bpf(2) system call and the few map operations recce makes itself,
 * and the loading of its BPF programs, written in BPF C (src/perf/bpf/)
 * and embedded as libbpf skeletons at build time: libbpf's messages, the
 * verifier's log among them, go to the caller's buffer and never to the
 * terminal.
 */
#ifndef RECCE_BPF_SYS_H
#define RECCE_BPF_SYS_H

#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_map;
struct bpf_object;
struct bpf_program;

/* bpf(2): a descriptor or 0 on success, -errno on failure. */
int bpf_sys(int cmd, void *attr, size_t size);

/* A map of n entries; returns its descriptor or -errno. */
int bpf_map_new(uint32_t type, uint32_t key_size, uint32_t value_size, uint32_t n,
		const char *name);

/* Sets, reads or deletes one entry of a map. Return 0 or -errno
 * (-ENOENT: no such key). */
int bpf_map_set(int map_fd, const void *key, const void *value);
int bpf_map_get(int map_fd, const void *key, void *value);
int bpf_map_delete(int map_fd, const void *key);

/* A map of a skeleton's object, and the descriptor of the map made by
 * recce that takes its place (so that the caller keeps owning it). */
struct bpf_map_fd {
	struct bpf_map *map;
	int fd;
};

/* Loads obj (a skeleton's object, opened, its settings in place) with
 * the n maps given in place of its own and prog loaded for links of
 * attach_type (enum bpf_attach_type, 0 to keep the section's); on
 * failure libbpf's messages, the verifier's log among them, are left in
 * log (of log_len bytes, which may be 0). Returns 0 or -errno. */
int bpf_object_load_quietly(struct bpf_object *obj, const struct bpf_map_fd *maps, size_t n,
			    struct bpf_program *prog, uint32_t attach_type, char *log,
			    size_t log_len);

/* A descriptor of prog's program that the caller owns (and that outlives
 * its object), or -errno. */
int bpf_program_dup(const struct bpf_program *prog);

#endif
