/*
 * librecce's internals, shared by its files and hidden from the program
 * it lives in (built with -fvisibility=hidden: only what include/recce.h
 * declares is exported).
 *
 * The state is one struct lib: the mapped event file, the writers (one a
 * slot, private memory the file never sees, so nothing a reader or
 * another process writes into the file can steer where a writer writes)
 * and the thread-local pointer to the calling thread's writer.
 */
#ifndef LIBRECCE_INTERNAL_H
#define LIBRECCE_INTERNAL_H

#include <stdint.h>
#include <time.h>

#include "events/ring-format.h"

#define NAME_CACHE 64u

/* One slot's writer: only its thread touches it after the claim. */
struct writer {
	struct recce_slot *slot;   /* in the file */
	struct recce_record *recs; /* in the file */
	uint64_t head;		   /* the next record's index */
	uint64_t mask;		   /* ring_records - 1 */
	unsigned dropping;	   /* 0: writes; DROP_*: does not */
	uint64_t exit_seq;	   /* when its thread left, for reuse by age */
	uint32_t depth;		   /* spans open: begun and not ended */
	uint32_t token;		   /* RECCE_FLAG_TOKEN while it carries a sequence token */
	struct {
		const char *ptr;
		uint32_t id;
		uint32_t len;
	} cache[NAME_CACHE]; /* names seen by this thread, by address */
};

enum {
	DROP_COUNTED = 1, /* no slot was free: counted in the header */
	DROP_SILENT = 2,  /* no file, or the thread is exiting */
};

enum lib_state {
	LIB_NEW = 0,
	LIB_STARTING = 1,
	LIB_READY = 2,
	LIB_FAILED = 3,
};

struct lib {
	int state;  /* enum lib_state, atomic */
	int status; /* 0, or the -errno that stopped the file */
	int fd;
	struct recce_file_header *hdr;
	uint64_t map_size;
	uint32_t *index; /* the name index, in the file */
	char *names;	 /* the names area, in the file */
	struct writer *writers;
	unsigned nslots;
	int use_tsc;
	int keep; /* $RECCE_KEEP: leave the file at a clean exit */
	char path[512];
};

extern struct lib lib;
extern int recce__on; /* recce.h declares it; here for the files that need not include it */

/* event-file.c: the file's life. */
int file_create(unsigned threads, unsigned ring_events, const char *dir);
int file_slot_reserve(unsigned index);
void file_calibrate(void);
void file_exit(void);
void file_forget(void);

/* events.c: a sequence event (kind SEQ_*) and its trace id, as one. */
void lib_put_seq(uint16_t kind, const char *label, int64_t current, uint64_t last,
		 const uint64_t id[2]);

/* events.c: a task record (kind TASK_*); type only for TASK_CREATE. */
void lib_put_task(uint16_t kind, const char *type, uint64_t id, uint64_t parent);

/* names.c: the id of a name in the file's names area, 0 if it is full. */
uint32_t names_intern(const char *name);

/* The clock of the records. */
static inline uint64_t clock_read(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(lib.use_tsc, 1))
		return __builtin_ia32_rdtsc();
#endif
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
