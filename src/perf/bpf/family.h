/*
 * The family map of call tracing (uprobe-bpf.h): the processes whose
 * hits are kept (tgid -> 1). User space makes it and puts it in place of
 * this definition in both programs that use it: the hit program reads
 * it, the fork follower adds to it.
 */
#ifndef RECCE_BPF_FAMILY_H
#define RECCE_BPF_FAMILY_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} family SEC(".maps");

#endif
