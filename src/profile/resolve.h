/*
 * Turns aggregated raw stacks into the profile model: addresses become
 * locations with function names and file:line (inlined frames as extra
 * lines), through the process registry and the symbolizer for user code,
 * /proc/kallsyms for kernel code, and /tmp/perf-PID.map for JIT code.
 *
 * Model choices:
 *  - One mapping per (process, address-space generation, mapping) that a
 *    sample actually uses: pprof addresses are runtime addresses, and two
 *    processes load one file at different places. The kernel is one
 *    mapping, "[kernel.kallsyms]", shared by every process.
 *  - One location per distinct (process, generation, address, leaf or
 *    not). A return address (every frame but the first of each context) is
 *    looked up at address - 1, so the line is the call's.
 *  - Unknown code is named, never dropped: "MODULE+0xOFFSET" (base name of
 *    the file, file offset) inside a file without a covering symbol,
 *    "[kernel]" for a kernel address kallsyms cannot name, "[unknown]" for
 *    an address in no mapping or in anonymous memory without a perf map.
 *  - Samples carry two values, samples/count and cpu/nanoseconds (other
 *    names with resolver_name_values()), and three labels: numeric "pid"
 *    and "tid" and the string "thread" (and "comm", "image" when asked).
 *  - An off-CPU marker frame (offcpu-reason.h) becomes a location of its
 *    own, "[off-CPU: REASON]", at the leaf of its stack.
 *
 * Resolution can happen in steps: resolver_add() turns every entry of the
 * aggregate not resolved yet (of one process, or all) into a profile
 * sample and marks it resolved. The recorder resolves a process's stacks
 * just before an exec replaces its mappings, and everything else at the end.
 *
 * Ownership: resolver_new() returns a heap object freed by resolver_free();
 * it borrows the registry and the symbolizer. The profile it builds is
 * handed over by resolver_take_profile().
 */
#ifndef RECCE_RESOLVE_H
#define RECCE_RESOLVE_H

#include <stdint.h>
#include <sys/types.h>

struct aggregate;
struct proc_registry;
struct profile;
struct profile_line;
struct sym_frame;
struct symbolizer;
struct resolver;

/* period_ns is the profile's period (1e9 / sampling frequency). */
struct resolver *resolver_new(struct proc_registry *procs, struct symbolizer *sym,
			      int64_t period_ns);
void resolver_free(struct resolver *r);

/* Names the two values of every sample: count (a count, "samples" by
 * default) and time (nanoseconds, "cpu" by default; also the period's
 * type). Returns 0 or -ENOMEM. */
int resolver_name_values(struct resolver *r, const char *count, const char *time);

/* Names the values as in an allocation profile, the way Go's heap profile
 * does (alloc_objects, alloc_space, inuse_objects, inuse_space), sampled
 * every interval bytes; with growing, two more (growing_objects,
 * growing_space: what the stacks whose use only grew added). Returns 0 or
 * -ENOMEM. */
int resolver_name_allocations(struct resolver *r, int64_t interval, int growing);

/* Where the next resolver_add() puts an entry's count and period: at
 * values column and column + 1 (0 by default; 2 for the in-use pair of an
 * allocation profile), the other values 0. */
void resolver_set_column(struct resolver *r, size_t column);

/* With on, every sample also carries its process's command name as the
 * "comm" label (a recording of many processes: the views give each a
 * root frame of its own, and report --comm picks by it). */
void resolver_label_comm(struct resolver *r, int on);

/* With on, every sample also carries the numeric "image" label: its
 * process's address-space generation (0 until its first exec seen). And
 * each resolver_add() for one process, made before its exec, keeps what
 * that image was (resolver_image()): a caller that labels a process's
 * samples by the program it runs, such as the continuous agent, labels
 * those of the program before an exec by it, not by the one after. */
void resolver_label_images(struct resolver *r, int on);

/* A process's image before an exec, as resolver_add() for it found it. */
struct resolver_image {
	pid_t pid;
	uint32_t gen;
	char comm[64];
	char *exe;	   /* "" when unknown */
	char build_id[65]; /* lowercase hex, "" if none */
};

/* The image pid ran as generation gen, if an exec ended it while this
 * resolver named its stacks; NULL otherwise (the image it runs now). */
const struct resolver_image *resolver_image(const struct resolver *r, pid_t pid, uint32_t gen);

/* Names kernel code with k (kept by the caller, who frees it after the
 * resolver) rather than reading /proc/kallsyms again: for a caller that
 * resolves often, such as the continuous agent every window. */
struct kallsyms;
void resolver_use_kallsyms(struct resolver *r, const struct kallsyms *k);
/* Resolves the unresolved entries of process pid (or of all processes
 * when pid is 0). Returns 0 or -ENOMEM. */
int resolver_add(struct resolver *r, struct aggregate *a, pid_t pid);

/* Turns the aggregate's timeline (if it kept one) into the profile's,
 * with sample indexes in place of stack indexes; call it after the last
 * resolver_add(). Returns 0 or -ENOMEM. */
int resolver_add_timeline(struct resolver *r, struct aggregate *a);

/* From now on, code in an ELF file with a build-id gets a location with
 * its address and mapping only, no lines (`record --no-symbolize`): names
 * come later, from the table of each such binary, which is kept in the
 * symbol cache now (profile/fill-names.h). Kernel, JIT and files without
 * a build-id are still named at once: nothing later could name them. */
void resolver_keep_addresses(struct resolver *r);

/* The lines of a location from named frames (frame_name_symbols()): each
 * frame's function added to p, lines[i] for frames[i]. Returns 0 or
 * -ENOMEM. Recording and naming later (fill-names.h) both use it. */
int resolve_lines(struct profile *p, const struct sym_frame *frames, int n,
		  struct profile_line *lines);

/* The profile built so far; it stays owned by the resolver. */
struct profile *resolver_profile(struct resolver *r);

/* What the caps on the targets' perf maps left out (frame_namer_jit_losses()). */
void resolver_jit_losses(const struct resolver *r, size_t *dropped, size_t *cut);

/* Samples whose stack ended at code without unwind information, other
 * than an outermost function, and so ends with "[no unwind info: ...]"
 * (proc/unwind.h). */
uint64_t resolver_no_unwind_info(const struct resolver *r);

/* Samples of Python processes whose Python frames did not fit their whole
 * native stack (more C calls of the interpreter than it holds: read while
 * a call began or ended), shown with their native frames only. */
uint64_t resolver_python_unplaced(const struct resolver *r);

/* The processes whose JIT code had no perf map entry and is named
 * "[JIT: comm]" (frame_namer_jit_unnamed()). */
size_t resolver_jit_unnamed(const struct resolver *r, pid_t *pids, size_t max);

/* Hands the profile over to the caller (who frees it with profile_free());
 * the resolver must not be used to add more afterwards. */
struct profile *resolver_take_profile(struct resolver *r);

#endif
