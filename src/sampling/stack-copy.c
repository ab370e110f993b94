/*
 * The stack copy that grows while recording (see sampler-internal.h):
 * with --call-graph auto and its default copy, by -p sampled per CPU and
 * by the whole system's CPU samples (record -a, agent --continuous).
 */
#include "sampling/sampler-internal.h"

#include "perf/perf-events.h"
#include "proc/unwind.h"

/* A stack in GROW_PER cut where the copy ended, of the samples taken
 * with the copy as it is now, and GROW_MIN_CUT of them at least. A
 * backend of Debian's postgres under pgbench has 1 stack in 55 to 93
 * cut at 8 KiB, none in 2161 at 16 KiB. */
#define GROW_PER     100
#define GROW_MIN_CUT 4

void sampler_copy_check(struct sampler *s)
{
	uint32_t now = s->copy_now;
	int all = s->cfg.system_wide && s->cfg.cgroup_fd < 0;
	int whole = all && s->cfg.events == PERF_EVENTS_CPU_CLOCK;

	if (!s->cfg.copy_grows || !(s->cpu_wide || whole) || !s->cfg.dwarf || !s->pe ||
	    now >= PERF_EVENTS_MAX_STACK_BYTES)
		return;
	uint64_t cut = s->cut_at_copy;
	if (cut < GROW_MIN_CUT || cut * GROW_PER < s->samples_at_copy)
		return;
	/* Twice the copy, or more where the stacks cut needed more for their
	 * next frame, as the advice at the end says. */
	uint64_t more = (uint64_t)now * 2, wanted = unwinder_copy_wanted(s->unwinder);
	while (more < wanted)
		more *= 2;
	if (more > PERF_EVENTS_MAX_STACK_BYTES)
		more = PERF_EVENTS_MAX_STACK_BYTES;
	if (perf_events_grow_stack(s->pe, (uint32_t)more, s->cpu_wide ? sampler_cpu_prog(s) : -1) <
	    0) {
		s->cfg.copy_grows = 0; /* the events it has go on */
		return;
	}
	s->copy_was = now;
	s->copy_now = (uint32_t)more;
	s->samples_at_copy = 0;
	s->cut_at_copy = 0;
}

void sampler_copy_seen(struct sampler *s, const struct perf_record *rec, const uint64_t *frames,
		       size_t n)
{
	/* A record of the events before the copy last grew, read after,
	 * asked for no more than the copy was: it counts for the copy it
	 * had. (The kernel may copy less than asked, so that a record
	 * fits in 64 KiB: 65528 bytes asked are fewer given.) */
	s->copy_samples++;
	if (rec->sample.stack_asked <= s->copy_was)
		return;
	s->samples_at_copy++;
	if (n && frames[n - 1] == UNWIND_MARK_BASE + UNWIND_END_COPY)
		s->cut_at_copy++;
}
