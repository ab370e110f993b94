/*
 * The records of the probe rings (see uprobe.h's uprobe_set_read()): a
 * hit as the perf uprobe PMU or the BPF program wrote it, parsed into a
 * struct uprobe_hit, the rings merged by time so that a call comes
 * before its return; and the task records, which start and end the
 * following of new processes and threads (uprobe-follow.c).
 */
#include "perf/uprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "perf/bpf-sys.h"
#include "perf/perf-ring.h"
#include "perf/uprobe-bpf.h"
#include "perf/uprobe-internal.h"
#include "util/clock.h"
#include "util/lines.h"

/*
 * At a function's entry its caller has no frame of its own yet: the
 * frame-pointer walk skips it, and only the return address at the stack
 * pointer names it. Inserts it as the chain's second entry unless the walk
 * already found it.
 */
static void insert_caller(struct uprobe_slot *r, uint64_t ret_addr)
{
	struct uprobe_hit *hit = &r->hit;

	if (hit->retprobe || hit->nchain < 1 || (hit->nchain >= 2 && r->chain[1] == ret_addr))
		return;
	size_t n = hit->nchain < UPROBE_MAX_CHAIN ? hit->nchain : UPROBE_MAX_CHAIN - 1;
	memmove(r->chain + 2, r->chain + 1, (n - 1) * sizeof(r->chain[0]));
	r->chain[1] = ret_addr;
	hit->nchain = n + 1;
}

/* Fills the named copies of a hit's registers (SysV argument order rdi
 * rsi rdx rcx r8 r9) from gpr. */
static void name_registers(struct uprobe_hit *hit)
{
	static const uint8_t sysv[6] = {X86_RDI, X86_RSI, X86_RDX, X86_RCX, X86_R8, X86_R9};

	for (size_t i = 0; i < 6; i++)
		hit->args[i] = hit->gpr[sysv[i]];
	hit->ret = hit->gpr[X86_RAX];
	hit->sp = hit->gpr[X86_RSP];
	hit->has_regs = 1;
}

/* The capture after a hit's registers, len bytes at p (uprobe-bpf.h):
 * the object and its string where the program could read them. */
static int parse_capture(struct uprobe_slot *r, uint64_t cookie, const unsigned char *p, size_t len)
{
	uint64_t w[UBPF_CAP_WORDS];

	if (len < sizeof(w))
		return -EBADMSG;
	memcpy(w, p, sizeof(w));
	struct uprobe_hit *hit = &r->hit;
	if ((cookie & UBPF_CAPTURE_STRS) && (cookie & UBPF_CAPTURE_COUNTED)) {
		/* Counted bytes: as many as the result word says. */
		int64_t n = (int64_t)w[UBPF_CAP_OBJ_RC];
		if (n >= 0 && n <= UBPF_CAPTURE_MAX) {
			memcpy(r->object, &w[UBPF_CAP_OBJ], (size_t)n);
			hit->object = r->object;
			hit->object_len = (size_t)n;
		}
		return 1;
	}
	if (cookie & UBPF_CAPTURE_STRS) {
		/* Two C strings: their lengths without the NUL, each kept
		 * only if read whole or cut at the capture's end. */
		int64_t n1 = (int64_t)w[UBPF_CAP_OBJ_RC], n2 = (int64_t)w[UBPF_CAP_STR_RC];
		memcpy(r->object, &w[UBPF_CAP_OBJ], sizeof(r->object));
		memcpy(r->string, &w[UBPF_CAP_STR], sizeof(r->string));
		if (n1 > 0 && n1 <= UBPF_CAPTURE_MAX) {
			r->object[n1 - 1] = 0;
			hit->object = r->object;
			hit->object_len = (size_t)n1 - 1;
		}
		if (n2 > 0 && n2 <= UBPF_CAPTURE_MAX) {
			r->string[n2 - 1] = 0;
			hit->string = r->string;
			hit->string_len = (uint64_t)n2 - 1;
		}
		return 1;
	}
	if (w[UBPF_CAP_OBJ_RC] != 0)
		return 1; /* unreadable: the hit says nothing about the object */
	memcpy(r->object, &w[UBPF_CAP_OBJ], sizeof(r->object));
	hit->object = r->object;
	hit->object_len = UBPF_CAPTURE_SIZE(cookie);
	if ((cookie & UBPF_CAPTURE_STRING) && w[UBPF_CAP_STR_RC] == 0) {
		memcpy(r->string, &w[UBPF_CAP_STR], sizeof(r->string));
		hit->string = r->string;
		hit->string_len = w[UBPF_CAP_OBJ + 1];
	}
	return 1;
}

/* The Python frames of a record of the program built for them (len
 * bytes at p, hit-format.h's UBPF_PY_*). */
static int parse_python(struct uprobe_slot *r, const unsigned char *p, size_t len)
{
	uint64_t word;

	if (len < 8)
		return -EBADMSG;
	memcpy(&word, p, 8);
	uint32_t n = (uint32_t)word, flags = (uint32_t)(word >> 32);
	if (n > UBPF_PY_FRAMES || len < 8 + n * sizeof(r->py[0]))
		return -EBADMSG;
	if (flags & UBPF_PY_NOT_ASKED)
		return 0;
	memcpy(r->py, p + 8, n * sizeof(r->py[0]));
	r->hit.py_read = 1;
	r->hit.py = (const uint64_t(*)[4])r->py;
	r->hit.npy = n;
	r->hit.py_flags = flags;
	return 0;
}

/* Link mode: the record the BPF program wrote (uprobe-bpf.h), as the raw
 * data of a sample. */
static int parse_raw(struct uprobe_set *u, struct uprobe_slot *r, const unsigned char *p,
		     const unsigned char *end)
{
	uint64_t w[UBPF_NWORDS];
	uint32_t size;

	if (end - p < 4)
		return -EBADMSG;
	memcpy(&size, p, 4);
	p += 4;
	if (size > (size_t)(end - p) || size < sizeof(w))
		return -EBADMSG;
	memcpy(w, p, sizeof(w));
	uint64_t cookie = w[UBPF_COOKIE];
	if (UBPF_COOKIE_INDEX(cookie) >= u->nprobes)
		return 0; /* not one of ours: cannot happen, skip */
	struct uprobe_hit *hit = &r->hit;
	memset(hit, 0, sizeof(*hit));
	hit->probe = (int)UBPF_COOKIE_INDEX(cookie);
	hit->retprobe = u->probes[hit->probe].retprobe;
	hit->pid = (uint32_t)(w[UBPF_PID_TGID] >> 32);
	hit->tid = (uint32_t)w[UBPF_PID_TGID];
	hit->time = w[UBPF_TIME];
	memcpy(hit->gpr, &w[UBPF_GPR], sizeof(hit->gpr));
	hit->ip = w[UBPF_IP];
	hit->flags = w[UBPF_FLAGS];
	hit->drops = w[UBPF_DROPS];
	name_registers(hit);
	hit->chain = r->chain;
	if (!u->cfg.callchain)
		return cookie & UBPF_CAPTURE
			   ? parse_capture(r, cookie, p + sizeof(w), size - sizeof(w))
			   : 1;
	uint64_t bytes = w[UBPF_CHAIN_BYTES];
	if (bytes > size - sizeof(w) || bytes > UBPF_MAX_CHAIN * 8)
		return -EBADMSG;
	for (uint64_t i = 0; i < bytes / 8 && hit->nchain < UPROBE_MAX_CHAIN; i++) {
		uint64_t ip;
		memcpy(&ip, p + sizeof(w) + i * 8, 8);
		if (ip < PERF_CONTEXT_MAX)
			r->chain[hit->nchain++] = ip;
	}
	if (bytes && w[UBPF_RET_ADDR])
		insert_caller(r, w[UBPF_RET_ADDR]);
	/* A capture after the chain's words, then the stack copy: its
	 * length, its bytes. */
	size_t head = (UBPF_NWORDS + UBPF_MAX_CHAIN) * 8;
	if (size < head)
		return -EBADMSG;
	if (cookie & UBPF_CAPTURE) {
		int err = parse_capture(r, cookie, p + head, size - head);
		if (err < 0)
			return err;
	}
	head += UBPF_CAP_WORDS * 8;
	if (u->py_layouts_fd >= 0) {
		int err = parse_python(r, p + head, size - head);
		if (err < 0)
			return err;
		head += UBPF_PY_WORDS * 8;
	}
	if (u->cfg.stack_bytes && size >= head + 8) {
		uint64_t len;
		memcpy(&len, p + head, 8);
		hit->stack_holes = (uint32_t)(len >> 32) & 0xffffu;
		hit->stack_asked = (uint32_t)(len >> 48) * 8;
		len &= 0xffffffffu;
		if (len > size - head - 8 || len > UPROBE_MAX_STACK)
			return -EBADMSG;
		memcpy(r->stack, p + head + 8, len);
		hit->stack = r->stack;
		hit->stack_len = len;
	}
	return 1;
}

/* Parses a sample of len bytes at p into r->hit; -EBADMSG if it does not
 * fit. Returns 1 for a hit, 0 for a record to skip. */
static int parse_record(struct uprobe_set *u, struct uprobe_slot *r, const unsigned char *p,
			size_t len)
{
	struct perf_event_header h;
	const unsigned char *end = p + len;
	uint64_t v[3];

	memcpy(&h, p, sizeof(h));
	p += sizeof(h);
	if (h.type == PERF_RECORD_LOST) {
		if (end - p >= 16) {
			memcpy(v, p, 16);
			u->stats.lost += v[1];
		}
		return 0;
	}
	if (h.type != PERF_RECORD_SAMPLE)
		return 0;
	if (u->bpf)
		return parse_raw(u, r, p, end);
	if (end - p < 24)
		return -EBADMSG;
	memcpy(v, p, 24); /* identifier, pid/tid, time */
	p += 24;
	struct uprobe_hit *hit = &r->hit;
	uint64_t probe;
	memset(hit, 0, sizeof(*hit));
	if (!u64map_get(&u->ids, v[0], &probe))
		return 0; /* an event of a removed probe set: cannot happen, skip */
	hit->probe = (int)(probe >> 1);
	hit->retprobe = (int)(probe & 1);
	hit->pid = (uint32_t)v[1];
	hit->tid = (uint32_t)(v[1] >> 32);
	hit->time = v[2];
	hit->chain = r->chain;
	if (u->sample_type & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr;
		if (end - p < 8)
			return -EBADMSG;
		memcpy(&nr, p, 8);
		p += 8;
		if (nr > (uint64_t)(end - p) / 8)
			return -EBADMSG;
		for (uint64_t i = 0; i < nr; i++) {
			uint64_t ip;
			memcpy(&ip, p + i * 8, 8);
			if (ip >= PERF_CONTEXT_MAX)
				continue; /* a PERF_CONTEXT_* marker */
			if (hit->nchain < UPROBE_MAX_CHAIN)
				r->chain[hit->nchain++] = ip;
		}
		p += nr * 8;
	}
	uint64_t abi;
	if (end - p < 8)
		return -EBADMSG;
	memcpy(&abi, p, 8);
	p += 8;
	if (abi) {
		/* The sample's order, by enum x86_gpr. */
		static const uint8_t gpr_of[NREGS] = {X86_RAX, X86_RBX, X86_RCX, X86_RDX,  X86_RSI,
						      X86_RDI, X86_RBP, X86_RSP, X86_NONE, X86_NONE,
						      X86_R8,  X86_R9,	X86_R10, X86_R11,  X86_R12,
						      X86_R13, X86_R14, X86_R15};
		uint64_t regs[NREGS];
		if ((size_t)(end - p) < sizeof(regs))
			return -EBADMSG;
		memcpy(regs, p, sizeof(regs));
		for (size_t i = 0; i < NREGS; i++)
			if (gpr_of[i] != X86_NONE)
				hit->gpr[gpr_of[i]] = regs[i];
		hit->ip = regs[8];
		hit->flags = regs[9];
		name_registers(hit);
		p += sizeof(regs);
	}
	if (u->sample_type & PERF_SAMPLE_STACK_USER) {
		uint64_t size, ret_addr = 0, dyn = 0;
		if (end - p < 8)
			return -EBADMSG;
		memcpy(&size, p, 8);
		p += 8;
		if (size) {
			if (size > (uint64_t)(end - p) || (uint64_t)(end - p) - size < 8)
				return -EBADMSG;
			if (size >= 8)
				memcpy(&ret_addr, p, 8);
			memcpy(&dyn, p + size, 8);
		}
		if (dyn >= 8)
			insert_caller(r, ret_addr);
		/* The copy for an unwind: the dynamic size is what the kernel
		 * could read of the size asked. */
		if (u->cfg.stack_bytes && dyn <= size && dyn <= UPROBE_MAX_STACK) {
			memcpy(r->stack, p, dyn);
			hit->stack = r->stack;
			hit->stack_len = dyn;
			hit->stack_asked = u->cfg.stack_bytes;
		}
	}
	return 1;
}

/* perf-ring's parse: a sample into the ring's slot; a thread created or
 * exited is handled here and skipped. */
static int parse_one(void *ctx, size_t ring, const unsigned char *p, size_t len, uint64_t *time)
{
	struct uprobe_set *u = ctx;
	struct uprobe_slot *s = &u->slots[ring];
	struct perf_event_header h;

	memcpy(&h, p, sizeof(h));
	if (h.type == PERF_RECORD_FORK || h.type == PERF_RECORD_EXIT) {
		uint32_t ids[4]; /* pid, ppid, tid, ptid */
		if (len < sizeof(h) + sizeof(ids))
			return -EBADMSG;
		memcpy(ids, p + sizeof(h), sizeof(ids));
		if (h.type == PERF_RECORD_FORK)
			uprobe_follow_task(u, (pid_t)ids[0], (pid_t)ids[1], (pid_t)ids[2]);
		else
			uprobe_forget_thread(u, (pid_t)ids[0], (pid_t)ids[2]);
		return 0;
	}
	int rc = parse_record(u, s, p, len);
	if (rc > 0)
		*time = s->hit.time;
	return rc;
}

static int handle_one(void *ctx, size_t ring)
{
	struct uprobe_set *u = ctx;

	u->stats.hits++;
	return u->fn(&u->slots[ring].hit, u->arg);
}

int uprobe_set_read(struct uprobe_set *u, int (*fn)(const struct uprobe_hit *hit, void *arg),
		    void *arg)
{
	static const struct perf_ring_ops ops = {parse_one, handle_one};
	struct perf_ring_counts counts = {0, 0};

	u->fn = fn;
	u->arg = arg;
	/* Hits are stamped with CLOCK_MONOTONIC, by the perf event or the
	 * BPF program; one taken now holds back what is written during the
	 * pass, so that a return is never handled before its call. */
	uint64_t until = time_now_ns(CLOCK_MONOTONIC);
	int n = perf_rings_read(u->rings, 2 * u->ncpus, until, &ops, u, &counts);
	u->stats.malformed += counts.malformed;
	return n;
}
