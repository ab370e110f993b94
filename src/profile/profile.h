/*
 * The in-memory profile: recce's core model, shaped like pprof's
 * profile.proto so that encoding and decoding are direct.
 *
 * Invariants:
 *  - Every string in a profile is interned in the profile's own pool and
 *    lives as long as the profile. Callers pass any string; the profile
 *    copies it. NULL is stored as "".
 *  - Ids of mappings, functions and locations are dense: the n-th added
 *    object has id n (1-based), so profile_location(p, id) is an array index.
 *    A decoder of foreign files renumbers to keep this true.
 *  - A sample's location_ids run leaf first, caller last (pprof order).
 *  - A location's lines run innermost first: lines[0] is the inlined leaf,
 *    the last line is the function the code was inlined into (pprof order).
 *  - Every sample has exactly nsample_types values.
 *
 * Ownership: profile_new() returns a heap object the caller frees with
 * profile_free(). Pointers returned by lookups stay valid until the next
 * profile_add_*() call of the same kind (arrays may move) or profile_free().
 */
#ifndef RECCE_PROFILE_H
#define RECCE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

struct profile_value_type {
	const char *type; /* "samples", "cpu" */
	const char *unit; /* "count", "nanoseconds" */
};

struct profile_mapping {
	uint64_t id;
	uint64_t start, limit, offset;
	const char *file;
	const char *build_id; /* lowercase hex, "" if unknown */
	int has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct profile_function {
	uint64_t id;
	const char *name;	 /* demangled, human-readable */
	const char *system_name; /* as in the symbol table (mangled) */
	const char *file;	 /* source file, "" if unknown */
	int64_t start_line;
};

struct profile_line {
	uint64_t function_id;
	int64_t line; /* 0 if unknown */
};

struct profile_location {
	uint64_t id;
	uint64_t mapping_id; /* 0 if none */
	uint64_t address;
	size_t nlines;
	struct profile_line *lines; /* innermost first */
};

/* A label: either a string (str != NULL) or a number (str == NULL). */
struct profile_label {
	const char *key;
	const char *str;
	int64_t num;
	const char *num_unit; /* NULL or "" if none */
};

struct profile_sample {
	size_t nlocations;
	uint64_t *location_ids; /* leaf first */
	int64_t *values;	/* nsample_types entries */
	size_t nlabels;
	struct profile_label *labels;
};

struct profile {
	struct profile_value_type *sample_types;
	size_t nsample_types;
	size_t default_sample_type; /* index into sample_types */

	struct profile_sample *samples;
	size_t nsamples, samples_cap;
	struct profile_location *locations;
	size_t nlocations, locations_cap;
	struct profile_function *functions;
	size_t nfunctions, functions_cap;
	struct profile_mapping *mappings;
	size_t nmappings, mappings_cap;

	const char **comments;
	size_t ncomments, comments_cap;

	int64_t time_nanos;	/* wall-clock start of the recording */
	int64_t duration_nanos; /* length of the recording */
	struct profile_value_type period_type;
	int64_t period;

	const char *drop_frames, *keep_frames; /* regexes, may be "" */

	/* The encoded sample timeline (see timeline.h), indexes into
	 * samples[]; NULL when the recording kept none. */
	const unsigned char *timeline;
	size_t timeline_len;

	struct profile_pool *pool; /* private: interned strings and arrays */
};

struct profile *profile_new(void);
void profile_free(struct profile *p);

/* Interns s in p's pool; returns the pooled copy, NULL on allocation failure. */
const char *profile_intern(struct profile *p, const char *s);

/* Sets the sample types (copied). Returns 0 or -ENOMEM. */
int profile_set_sample_types(struct profile *p, const struct profile_value_type *types, size_t n);

/* The add functions return the new id (>= 1), or 0 on allocation failure. */
uint64_t profile_add_mapping(struct profile *p, uint64_t start, uint64_t limit, uint64_t offset,
			     const char *file, const char *build_id);
/* Returns the id of an existing function with the same name, system name
 * and file, or adds one. */
uint64_t profile_add_function(struct profile *p, const char *name, const char *system_name,
			      const char *file, int64_t start_line);
uint64_t profile_add_location(struct profile *p, uint64_t mapping_id, uint64_t address,
			      const struct profile_line *lines, size_t nlines);

/* Replaces the lines of location id (copied), for naming a location
 * after the fact. Returns 0, -ENOMEM, or -EINVAL for an unknown id. */
int profile_set_location_lines(struct profile *p, uint64_t id, const struct profile_line *lines,
			       size_t nlines);
/* Makes room for n samples in all, so that adding them does not grow the
 * array by doubling: 0 or -ENOMEM. */
int profile_reserve_samples(struct profile *p, size_t n);

/* Adds a sample; location ids, values (nsample_types of them) and labels
 * are copied. Returns 0 or -ENOMEM, -EINVAL for an unknown location id. */
int profile_add_sample(struct profile *p, const uint64_t *location_ids, size_t nlocations,
		       const int64_t *values, const struct profile_label *labels, size_t nlabels);

/* Sets the encoded timeline (copied). Returns 0 or -ENOMEM. */
int profile_set_timeline(struct profile *p, const unsigned char *buf, size_t len);

/* Appends a comment line. Returns 0 or -ENOMEM. */
int profile_add_comment(struct profile *p, const char *comment);

/* Lookups by id; NULL when the id is out of range. */
const struct profile_mapping *profile_mapping(const struct profile *p, uint64_t id);
const struct profile_function *profile_function(const struct profile *p, uint64_t id);
const struct profile_location *profile_location(const struct profile *p, uint64_t id);

/* Finds a label on a sample by key; NULL if absent. */
const struct profile_label *profile_sample_label(const struct profile_sample *s, const char *key);

/* Index of the sample type with this type name, or -1. */
int profile_sample_type_index(const struct profile *p, const char *type);

/* The value of a "key: value" comment, such as recce's "command: ...";
 * NULL if there is none. */
const char *profile_comment(const struct profile *p, const char *key);

#endif
