/*
 * The layout of a librecce event file: the one contract between the
 * library that writes events inside a program (lib/) and the readers in
 * recce (ring-read). docs/librecce.md describes it for other readers.
 *
 * A process that uses librecce keeps one file, named recce-PID.events in
 * /dev/shm (or $RECCE_EVENTS_DIR), mapped shared (recce-PID.events.XXXXXX
 * when another user's file held that name first):
 *
 *   [ header: one page                                      ]
 *   [ name index: name_slots u32 offsets into the names area ]
 *   [ names area: names_size bytes of name entries           ]
 *   [ slot 0: struct recce_slot, then ring_records records   ]
 *   [ slot 1 ...                                             ]
 *
 * Each thread that writes an event claims a slot and is its ring's only
 * writer: it fills the record at head % ring_records, then stores head + 1
 * with release order. A reader loads head with acquire order, copies, and
 * loads head again: whatever the writer may have overwritten meanwhile is
 * counted as lost, never shown. Overflow overwrites the oldest records.
 *
 * Everything here is written by another process and is untrusted: a
 * reader checks every offset, size and count before using it.
 * Little-endian, x86-64 alignment; sizes are fixed by the static asserts.
 */
#ifndef RECCE_EVENTS_RING_FORMAT_H
#define RECCE_EVENTS_RING_FORMAT_H

#include <stdint.h>

#define RECCE_FILE_MAGIC "RECCEVT\0"
/* A reader that knows version V reads a file whose min_version <= V. */
#define RECCE_FILE_VERSION     1
#define RECCE_FILE_MIN_VERSION 1
#define RECCE_HEADER_SIZE      4096u

/* The clock of the records' time field. */
enum recce_clock {
	RECCE_CLOCK_TSC = 1,	   /* rdtsc ticks; convert with the header's pairs */
	RECCE_CLOCK_MONOTONIC = 2, /* CLOCK_MONOTONIC nanoseconds */
};

struct recce_file_header {
	char magic[8];
	uint16_t version;
	uint16_t min_version;
	uint32_t header_size; /* RECCE_HEADER_SIZE */
	uint64_t file_size;
	int32_t pid; /* the writer's own getpid() */
	int32_t ppid;
	uint64_t start_ticks; /* /proc/PID/stat field 22: tells pid reuse apart */
	char comm[16];	      /* the program's name, NUL-padded */
	char boot_id[40];     /* /proc/sys/kernel/random/boot_id */

	uint32_t slots;	       /* thread slots in the file */
	uint32_t ring_records; /* records per slot, a power of two */
	uint32_t record_size;  /* sizeof(struct recce_record) */
	uint32_t slot_size;    /* bytes from one slot to the next */
	uint64_t slots_offset; /* of slot 0 */
	uint64_t index_offset; /* of the name index */
	uint32_t name_slots;   /* entries in the name index, a power of two */
	uint32_t names_size;   /* bytes in the names area */
	uint64_t names_offset; /* of the names area */

	/* The clock: time = mono0 + (t - tsc0) * 1e9 / tsc_hz for TSC files. */
	uint32_t clock; /* enum recce_clock */
	uint32_t pad0;
	uint64_t tsc0;	 /* the clock's reading at ... */
	uint64_t mono0;	 /* ... this CLOCK_MONOTONIC time ... */
	uint64_t real0;	 /* ... and this CLOCK_REALTIME time */
	uint64_t tsc_hz; /* 0 until calibrated: then from (tsc1, mono1) */
	uint64_t tsc1;	 /* a second pair, taken later by the writer */
	uint64_t mono1;

	/* Counters the writers update; read with relaxed loads. */
	uint32_t names_used;	  /* bytes of the names area taken */
	uint32_t state;		  /* RECCE_PROC_* */
	uint64_t dropped_no_slot; /* events of threads that found no free slot */
	uint64_t dropped_no_name; /* events whose name did not fit */
	uint64_t exit_time;	  /* clock reading at a clean exit */
	char host[64];		  /* the machine's name (uname), NUL-padded */
	/* Events of threads that had ended whose rings new threads took over
	 * (no free one left), those the rings still held and those already
	 * overwritten: gone from the file. 0 in files of older writers. */
	uint64_t dropped_reused;
	/* The file the process wrote before its last exec (the program it
	 * ran then), by its name in the same directory: its events are there.
	 * "" when none; NUL-terminated. */
	char before_exec[40];
};

enum recce_proc_state {
	RECCE_PROC_RUNNING = 1,
	RECCE_PROC_EXITED = 2, /* returned from main or called exit() */
	RECCE_PROC_EXECED = 3, /* it ran another program (exec): that program's file has the name */
};

/* A name entry in the names area, 8-byte aligned; its id is its offset. */
struct recce_name {
	uint32_t hash; /* FNV-1a of the bytes */
	uint16_t len;  /* bytes, without the NUL that follows them */
	uint16_t pad;
	char bytes[]; /* len bytes and a NUL */
};

#define RECCE_NAME_MAX 255u

enum recce_slot_state {
	RECCE_SLOT_FREE = 0,
	RECCE_SLOT_LIVE = 1,   /* its thread runs */
	RECCE_SLOT_EXITED = 2, /* its thread is gone; the ring stays readable */
};

struct recce_slot {
	uint32_t state; /* enum recce_slot_state */
	int32_t tid;
	uint64_t generation; /* bumped each time a thread claims the slot */
	uint64_t first;	     /* head when this generation began */
	uint64_t head;	     /* records ever written to this slot */
	char name[16];	     /* the thread's name when it claimed the slot */
	uint64_t claim_time;
	uint64_t lost_before; /* in a saved file: events lost before it was saved */
	uint64_t pad[2];
};

/* What a record says. */
enum recce_kind {
	RECCE_EV_EVENT = 1,	   /* recce_event(name) */
	RECCE_EV_SPAN_BEGIN = 2,   /* recce_span_begin(name) */
	RECCE_EV_SPAN_END = 3,	   /* recce_span_end(name) */
	RECCE_EV_COUNTER = 4,	   /* recce_counter(name, value) */
	RECCE_EV_VALUE = 5,	   /* recce_event_value(name, value) */
	RECCE_EV_SEQ_BEGIN = 8,	   /* a token started here */
	RECCE_EV_SEQ_SEND = 9,	   /* a token left in a message */
	RECCE_EV_SEQ_RECV = 10,	   /* a token arrived */
	RECCE_EV_SEQ_END = 11,	   /* the token was dropped */
	RECCE_EV_SEQ_ID = 12,	   /* follows each SEQ_* record: the trace id */
	RECCE_EV_TASK_CREATE = 16, /* name: the type; value: the id; extra: the parent */
	RECCE_EV_TASK_START = 17,  /* value: the id (no name) */
	RECCE_EV_TASK_STOP = 18,
	RECCE_EV_TASK_FINISH = 19,
};

/*
 * A record's flags: the writing thread's state after the record, so that
 * a reader who lost records to overwriting knows again, at the next record
 * it reads, how many spans the thread has open and whether it carries a
 * token (recce record labels samples by them). Records without
 * RECCE_FLAG_STATE (older writers) say nothing of the state.
 */
#define RECCE_FLAG_STATE 0x8000u /* the fields below are set */
#define RECCE_FLAG_TOKEN 0x4000u /* the thread carries a sequence token */
#define RECCE_FLAG_DEPTH 0x3fffu /* spans open; RECCE_FLAG_DEPTH itself: that many or more */

struct recce_record {
	uint64_t time; /* on the header's clock */
	uint32_t name; /* offset of a struct recce_name, 0 for none */
	uint16_t kind; /* enum recce_kind */
	uint16_t flags; /* RECCE_FLAG_*: the thread's state after this record */
	int64_t value;	/* a counter's value; SEQ_*: the current serial */
	uint64_t extra; /* SEQ_*: the last serial; SEQ_ID: the id's low half */
};

_Static_assert(sizeof(struct recce_file_header) <= RECCE_HEADER_SIZE, "header fits its page");
/* A slot's records begin this many bytes after the slot. */
#define RECCE_SLOT_RECORDS_AT 128u

_Static_assert(sizeof(struct recce_slot) == 80, "slot header size is part of the format");
_Static_assert(sizeof(struct recce_record) == 32, "record size is part of the format");

/* Whether a kind is a sequence event, followed by a SEQ_ID record. */
static inline int recce_kind_is_seq(unsigned kind)
{
	return kind >= RECCE_EV_SEQ_BEGIN && kind <= RECCE_EV_SEQ_END;
}

/* Whether a record of this kind is one a reader shows. */
static inline int recce_kind_known(unsigned kind)
{
	return (kind >= RECCE_EV_EVENT && kind <= RECCE_EV_VALUE) || recce_kind_is_seq(kind) ||
	       (kind >= RECCE_EV_TASK_CREATE && kind <= RECCE_EV_TASK_FINISH);
}

/* v rounded up to a multiple of a: how the layout aligns its parts. */
/* The pid of an event file's name: recce-PID.events, or, where another
 * user's file held that name when the process made its own,
 * recce-PID.events.XXXXXX (the random name only the process could make,
 * which readers find through the process's maps). 0 for another name. */
static inline int recce_events_name_pid(const char *name)
{
	static const char prefix[] = "recce-", mid[] = ".events";
	long pid = 0;

	for (unsigned i = 0; i < sizeof(prefix) - 1; i++)
		if (*name++ != prefix[i])
			return 0;
	if (*name < '1' || *name > '9')
		return 0;
	while (*name >= '0' && *name <= '9' && pid < (1L << 30))
		pid = pid * 10 + (*name++ - '0');
	for (unsigned i = 0; i < sizeof(mid) - 1; i++)
		if (*name++ != mid[i])
			return 0;
	if (*name == '\0')
		return (int)pid;
	if (*name++ != '.')
		return 0;
	for (int i = 0; i < 6; i++, name++)
		if (!((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') ||
		      (*name >= '0' && *name <= '9')))
			return 0;
	return *name == '\0' && pid < (1L << 30) ? (int)pid : 0;
}

static inline uint64_t recce_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* The bytes a name entry of len bytes takes in the names area. */
static inline uint32_t recce_name_size(uint32_t len)
{
	return (uint32_t)recce_align(sizeof(struct recce_name) + len + 1, 8);
}

/* FNV-1a, the hash of name entries. */
static inline uint32_t recce_name_hash(const char *s, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

#endif
