/*
 * Naming a profile after the fact (see fill-names.h).
 */
#include "profile/fill-names.h"

#include "proc/frame-name.h"
#include "profile/profile.h"
#include "profile/resolve.h"
#include "symbols/symbolize.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int needs_name(const struct profile *p, const struct profile_location *l)
{
	const struct profile_mapping *m = profile_mapping(p, l->mapping_id);

	return l->nlines == 0 && m && m->build_id[0] && l->address >= m->start;
}

size_t profile_unnamed_locations(const struct profile *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nlocations; i++)
		n += (size_t)needs_name(p, &p->locations[i]);
	return n;
}

/* Names location l from f; 1 when it got lines, 0 when f knows nothing
 * there, -ENOMEM. */
static int name_location(struct profile *p, struct symbolizer *s, struct sym_file *f,
			 struct profile_location *l, int caller)
{
	const struct profile_mapping *m = profile_mapping(p, l->mapping_id);
	uint64_t off = l->address - m->start + m->offset;
	struct sym_frame frames[FRAME_MAX_INLINE];
	struct profile_line lines[FRAME_MAX_INLINE];

	if (caller && off > 0)
		off--;
	int n = frame_name_symbols(s, f, off, frames);
	if (n == 0)
		return 0;
	if (resolve_lines(p, frames, n, lines) < 0 ||
	    profile_set_location_lines(p, l->id, lines, (size_t)n) < 0)
		return -ENOMEM;
	return 1;
}

/* Whether location id is above a user leaf, not its caller: a kernel
 * frame (the user frame below it is where the thread entered the kernel,
 * or was interrupted) or an off-CPU marker. */
static int above_leaf(const struct profile *p, uint64_t id)
{
	const struct profile_location *l = profile_location(p, id);
	if (!l)
		return 0;
	const struct profile_mapping *m = profile_mapping(p, l->mapping_id);
	if (m && m->file && strcmp(m->file, "[kernel.kallsyms]") == 0)
		return 1;
	const struct profile_function *f =
	    l->nlines ? profile_function(p, l->lines[0].function_id) : NULL;
	return f && f->name && strncmp(f->name, "[off-CPU", 8) == 0;
}

int profile_fill_names(struct profile *p, struct symbolizer *s, struct fill_stats *st)
{
	unsigned char *caller = calloc(p->nlocations + 1, 1);
	unsigned char *above = calloc(p->nlocations + 1, 1); /* above_leaf(), by id */
	/* Per mapping: 0 not looked for yet, 1 found (files[]), 2 missing. */
	unsigned char *state = calloc(p->nmappings + 1, 1);
	struct sym_file **files = calloc(p->nmappings + 1, sizeof(*files));
	int rc = 0;

	memset(st, 0, sizeof(*st));
	if (!caller || !above || !state || !files) {
		rc = -ENOMEM;
		goto out;
	}
	/* A location is named at its address minus one where some stack
	 * has it as a caller (the call is before the return address). */
	for (uint64_t id = 1; id <= p->nlocations; id++)
		above[id] = (unsigned char)above_leaf(p, id);
	for (size_t i = 0; i < p->nsamples; i++)
		for (size_t j = 1; j < p->samples[i].nlocations; j++) {
			uint64_t id = p->samples[i].location_ids[j];
			uint64_t below = p->samples[i].location_ids[j - 1];
			if (id <= p->nlocations && !(below <= p->nlocations && above[below]))
				caller[id] = 1;
		}
	for (size_t i = 0; i < p->nlocations && rc >= 0; i++) {
		struct profile_location *l = &p->locations[i];
		if (!needs_name(p, l))
			continue;
		st->unnamed++;
		uint64_t mid = l->mapping_id;
		const struct profile_mapping *m = profile_mapping(p, mid);
		if (state[mid] == 0) {
			int r = symbolizer_open_build_id(s, m->build_id, m->file, &files[mid]);
			if (r < 0 && r != -ENOENT) {
				rc = r;
				break;
			}
			state[mid] = r == 0 ? 1 : 2;
			if (r < 0 && st->missing++ == 0)
				snprintf(st->missing_example, sizeof(st->missing_example),
					 "%s (build-id %s)", m->file[0] ? m->file : "?",
					 m->build_id);
		}
		if (state[mid] != 1)
			continue;
		rc = name_location(p, s, files[mid], l, caller[l->id]);
		if (rc > 0) {
			st->named++;
			struct profile_mapping *pm = &p->mappings[mid - 1];
			pm->has_functions = 1;
		}
	}
out:
	free(caller);
	free(above);
	free(state);
	free(files);
	return rc < 0 ? rc : 0;
}
