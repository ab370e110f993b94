/*
 * Trace records packed for trace files (format 2, see trace-file.h): a
 * record as a few bytes of varints instead of its 1 KiB in memory. Each
 * field is written as a difference from the record before it where that
 * is small (the time, the process and thread, the six registers), and
 * each name (a function, a caller, an argument's name) once per file: its
 * first use defines it, later ones give its number. A call with two
 * arguments packs into about 30 bytes.
 *
 * A pack is the state one file's records share, so a file is read from
 * its start with a fresh one, as it was written. The reader treats its
 * input as untrusted: every length and number is checked against the
 * record's fields.
 *
 * Ownership: the caller owns the struct (trace_pack_init/release); the
 * pack owns its copies of the names.
 */
#ifndef RECCE_TRACE_PACK_H
#define RECCE_TRACE_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace-event.h"
#include "util/htab.h"

/* The most bytes one packed record can take: its fixed fields as varints,
 * and every name and text at its field's full length. */
#define TRACE_PACK_MAX 1280

struct trace_pack {
	char **names; /* name number n (from 1) is names[n - 1]; 0 is "" */
	size_t nnames, cap;
	struct htab ids; /* the packer's: name hash -> number */
	uint64_t time_ns;
	uint32_t pid, tid;
	uint64_t regs[TRACE_MAX_ARGS];
	int alone; /* packing a record on its own (trace_pack_put_alone) */
};

void trace_pack_init(struct trace_pack *p);
void trace_pack_release(struct trace_pack *p);

/* Packs r, after the records packed before it, into out (TRACE_PACK_MAX
 * bytes of room). Returns its length, or -ENOMEM. Its seq and crc are not
 * packed. */
int trace_pack_put(struct trace_pack *p, const struct trace_record *r, uint8_t *out);

/* Unpacks the record at *at (before end) into *r (seq and crc 0),
 * advancing *at past it. Returns 0, -EBADMSG for bytes that are not a
 * record, or -ENOMEM. */
int trace_pack_get(struct trace_pack *p, const uint8_t **at, const uint8_t *end,
		   struct trace_record *r);

/*
 * A record packed on its own, to be unpacked in any order (recce replay
 * keeps the records it sorts so): no differences from the record before,
 * and names by number only, all kept in the pack, which must be the same
 * for both. Returns as trace_pack_put() and trace_pack_get() do.
 */
int trace_pack_put_alone(struct trace_pack *p, const struct trace_record *r, uint8_t *out);
int trace_pack_get_alone(struct trace_pack *p, const uint8_t *at, const uint8_t *end,
			 struct trace_record *r);

#endif
