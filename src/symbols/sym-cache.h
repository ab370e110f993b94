/*
 * The symbol cache: every answer the symbolizer can give for one binary,
 * as a flat table kept on disk by build-id, so that the second time a
 * binary is needed no DWARF is read at all.
 *
 * The table cuts the file's addresses into intervals at every place an
 * answer can change (a symbol, an .eh_frame entry, a unit, a function or
 * inlined call, a line-table row starts or ends; in a stripped Go binary,
 * where .gopclntab's lines and inlined calls change), and stores the frames
 * symbolizer_lookup() gives at each interval's start: so a lookup through
 * the table gives exactly what a lookup without it gives, by
 * construction. Adjacent intervals with the same frames are merged, equal
 * frame chains are stored once, and strings once.
 *
 * On disk: DIR/symbols/XX/REST.sym, for build-id XXREST, written to a
 * temporary file and renamed, so readers never see half a file, private
 * to the cache's user (directories 0700, tables 0600). A file is used
 * only when its header, build-id, size, checksum and every index in it
 * check out, and when it was built from a binary with the same bytes
 * (sym_file_source()); anything else is rebuilt, never trusted. Read
 * without the binary (symbolize, later), a table answers only if it was
 * built from a file of the reader's or root's. The directory is
 * kept under a size cap by removing the least recently used tables.
 *
 * Inside the symbolizer; the public switch is symbolizer_set_cache().
 */
#ifndef RECCE_SYM_CACHE_H
#define RECCE_SYM_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/symbolize.h"

/* Bump when the symbolizer's answers change (naming, paths, inlines):
 * tables written by an older recce are then rebuilt. */
#define SYM_CACHE_VERSION 8

/* Loadable segments kept with a table; binaries have four or five. */
#define SYM_CACHE_MAX_SEGS 16

/* Default cap of the cache directory's tables, in bytes. */
#define SYM_CACHE_DEFAULT_MAX ((uint64_t)1 << 30)

/* More intervals than this and a binary is symbolized without a table. */
#define SYM_CACHE_MAX_INTERVALS (32u << 20)

struct sym_cache;
struct load_seg;

/* Reads the table of build-id from DIR, if it was built from a binary
 * with the same bytes (source: sym_file_source(); 0 for any built from a
 * file the caller's user or root owned, -EPERM for another's). 0 and *out;
 * -ENOENT when there is none; -EBADMSG when the file is corrupt,
 * truncated, another version or from another copy of the binary (the
 * caller rebuilds it); other -errno. */
int sym_cache_load(const char *dir, const char *build_id, uint64_t source, struct sym_cache **out);

/* Checks a table image in memory as sym_cache_load() checks a file,
 * except for its checksum and build-id: for the fuzz target, whose inputs
 * would otherwise never get past the checksum to the checks of every
 * index. data is copied. 0 and *out, or -EBADMSG, -ENOMEM. */
int sym_cache_parse_unchecked(const void *data, size_t size, struct sym_cache **out);

/* Builds the table of f in memory from the symbolizer's own lookups. */
int sym_cache_build(struct symbolizer *s, struct sym_file *f, struct sym_cache **out);

/* Whether a table of build-id could be saved under DIR (making its
 * directories): 0, or -errno. A table that cannot be kept costs more to
 * build than the few lookups a run makes without it. */
int sym_cache_can_save(const char *dir, const char *build_id);

/* Writes c into DIR (creating directories), then trims DIR to max_bytes.
 * Returns 0 or -errno; a failure leaves no partial file behind. */
int sym_cache_save(const char *dir, const struct sym_cache *c, uint64_t max_bytes);

/* The loadable segments of the binary the table was built from. */
const struct load_seg *sym_cache_segments(const struct sym_cache *c, size_t *n);

/* Whether the binary had DWARF when the table was built. */
int sym_cache_has_dwarf(const struct sym_cache *c);

/* Frames of vaddr, as symbolizer_lookup() gives them: the count (0 when
 * nothing is known); the strings live as long as c. */
int sym_cache_lookup(const struct sym_cache *c, uint64_t vaddr, struct sym_frame *frames, int max);

/* Starts loading what a lookup of vaddr will read (see
 * symbolizer_prefetch()). */
void sym_cache_prefetch(const struct sym_cache *c, uint64_t vaddr);

void sym_cache_free(struct sym_cache *c);

/* The file name of build-id's table under dir, into buf. Returns 0, or
 * -ENAMETOOLONG, or -EINVAL for a build-id that is not lowercase hex. */
int sym_cache_path(const char *dir, const char *build_id, char *buf, size_t len);

#endif
