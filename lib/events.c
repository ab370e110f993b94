/*
 * librecce's event calls and the per-thread rings behind them.
 *
 * The hot path (put) is: test the switch, find the thread's writer in a
 * thread-local pointer, find the name's id in the writer's cache of name
 * addresses, read the clock, fill 32 bytes, store the new head with
 * release order. Everything that may take a lock, make a system call or
 * allocate happens once: the process's first event creates the file
 * (file_create), a thread's first event claims a slot (writer_attach), a
 * name's first use by a thread interns it (names_intern, lock-free).
 *
 * A thread that exits leaves its slot EXITED: its ring stays readable
 * until a new thread needs the slot and every slot is taken, and then the
 * one that left first is reused. fork() gives the child a file of its
 * own (the atfork handler forgets the parent's); a clean exit marks the
 * file and removes it (file_exit).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "recce.h"

#include "internal.h"

struct lib lib = {.status = -EAGAIN, .fd = -1};
RECCE_API int recce__on = 1;

static __thread struct writer *tls_writer __attribute__((tls_model("initial-exec")));
static struct writer sink_counted = {.dropping = DROP_COUNTED};
static struct writer sink_silent = {.dropping = DROP_SILENT};
static pthread_key_t exit_key;
static uint64_t exit_seq; /* atomic: orders exited slots by age */
static int hooks_done;
static int env_read; /* $RECCE_EVENTS was looked at (by the thread that starts) */

/* Whether the CPU's time-stamp counter runs at one rate on every CPU,
 * through sleep states (CPUID's invariant TSC bit). */
static int tsc_is_invariant(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;
	if (__get_cpuid(0x80000007, &a, &b, &c, &d))
		return (d >> 8) & 1;
#endif
	return 0;
}

static unsigned env_number(const char *name, unsigned dflt, unsigned lo, unsigned hi)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return dflt;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || v < lo)
		return dflt;
	return v > hi ? hi : (unsigned)v;
}

static unsigned round_pow2(unsigned v)
{
	unsigned p = 16;
	while (p < v && p < (1u << 24))
		p <<= 1;
	return p;
}

static void thread_exit(void *arg);
static void child_after_fork(void);

/* Creates the file; the caller won the race from LIB_NEW to LIB_STARTING. */
static int start(const struct recce_config *cfg)
{
	unsigned threads = cfg && cfg->threads ? cfg->threads : 0;
	unsigned events = cfg && cfg->ring_events ? cfg->ring_events : 0;
	const char *dir = cfg && cfg->dir ? cfg->dir : getenv("RECCE_EVENTS_DIR");

	if (!threads)
		threads = env_number("RECCE_THREADS", 64, 1, 4096);
	if (!events)
		events = env_number("RECCE_RING_EVENTS", 8192, 16, 1u << 24);
	if (threads > 4096)
		threads = 4096;
	if (!dir || !*dir)
		dir = "/dev/shm";
	lib.keep = getenv("RECCE_KEEP") != NULL;
	lib.use_tsc = tsc_is_invariant();
	if (!hooks_done) {
		if (pthread_key_create(&exit_key, thread_exit) != 0)
			return -EAGAIN;
		pthread_atfork(NULL, NULL, child_after_fork);
		atexit(file_exit);
		hooks_done = 1;
	}
	return file_create(threads, round_pow2(events), dir);
}

/* Makes the file once. by_event: called by a thread's first event, not
 * by recce_init. */
static int start_once(const struct recce_config *cfg, int by_event)
{
	int state = LIB_NEW;

	if (!__atomic_compare_exchange_n(&lib.state, &state, LIB_STARTING, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_ACQUIRE))
		return state == LIB_STARTING ? -EAGAIN : -EALREADY;
	/* $RECCE_EVENTS=off switches events off before the file is made, so
	 * that a program run so leaves nothing behind; recce_enable(1) later
	 * makes it at the next event. Only the first start looks. Another
	 * thread's first event may have seen events on just before that, and
	 * come here after: it must not make the file (the release of the
	 * state below makes it see them off). */
	if (!env_read) {
		const char *on = getenv("RECCE_EVENTS");
		env_read = 1;
		if (on && strcmp(on, "off") == 0) {
			__atomic_store_n(&recce__on, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&lib.state, LIB_NEW, __ATOMIC_RELEASE);
			return 0;
		}
	} else if (by_event && !__atomic_load_n(&recce__on, __ATOMIC_RELAXED)) {
		__atomic_store_n(&lib.state, LIB_NEW, __ATOMIC_RELEASE);
		return 0;
	}
	int err = start(cfg);
	lib.status = err;
	__atomic_store_n(&lib.state, err ? LIB_FAILED : LIB_READY, __ATOMIC_RELEASE);
	return err;
}

static struct recce_slot *slot_at(unsigned i)
{
	return (struct recce_slot *)((char *)lib.hdr + lib.hdr->slots_offset +
				     (uint64_t)i * lib.hdr->slot_size);
}

/* A free slot, else the one whose thread left first; -1 if none. */
static int slot_claim(void)
{
	for (int tries = 0; tries < 4; tries++) {
		int best = -1;
		uint64_t best_seq = UINT64_MAX;
		for (unsigned i = 0; i < lib.nslots; i++) {
			struct recce_slot *s = slot_at(i);
			uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
			if (st == RECCE_SLOT_FREE) {
				if (__atomic_compare_exchange_n(&s->state, &st, RECCE_SLOT_LIVE, 0,
								__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
					return (int)i;
			} else if (st == RECCE_SLOT_EXITED &&
				   __atomic_load_n(&lib.writers[i].exit_seq, __ATOMIC_RELAXED) <
				       best_seq) {
				best = (int)i;
				best_seq =
				    __atomic_load_n(&lib.writers[i].exit_seq, __ATOMIC_RELAXED);
			}
		}
		if (best < 0)
			return -1;
		struct recce_slot *s = slot_at((unsigned)best);
		uint32_t st = RECCE_SLOT_EXITED;
		if (__atomic_compare_exchange_n(&s->state, &st, RECCE_SLOT_LIVE, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return best;
	}
	return -1;
}

/* The calling thread's first event: the file if need be, then a slot. */
static struct writer *writer_attach(void)
{
	int state = __atomic_load_n(&lib.state, __ATOMIC_ACQUIRE);

	if (state == LIB_NEW)
		start_once(NULL, 1);
	/* Another thread is making the file: this thread's first event waits
	 * for it (a millisecond or so, once), rather than be lost. */
	for (int i = 0; i < 2000; i++) {
		state = __atomic_load_n(&lib.state, __ATOMIC_ACQUIRE);
		if (state != LIB_STARTING)
			break;
		struct timespec ts = {0, 500000};
		nanosleep(&ts, NULL);
	}
	if (state == LIB_STARTING || state == LIB_NEW)
		return NULL; /* still starting, or switched off before the start */
	if (state != LIB_READY) {
		tls_writer = &sink_silent;
		return NULL;
	}
	int i = slot_claim();
	if (i < 0 || file_slot_reserve((unsigned)i) != 0) {
		if (i >= 0)
			__atomic_store_n(&slot_at((unsigned)i)->state, RECCE_SLOT_FREE,
					 __ATOMIC_RELEASE);
		tls_writer = &sink_counted;
		return &sink_counted;
	}
	struct writer *w = &lib.writers[i];
	struct recce_slot *s = slot_at((unsigned)i);
	memset(w, 0, sizeof(*w));
	w->slot = s;
	w->recs = (struct recce_record *)((char *)s + RECCE_SLOT_RECORDS_AT);
	w->mask = lib.hdr->ring_records - 1;
	w->head = __atomic_load_n(&s->head, __ATOMIC_RELAXED);
	/* A ring an ended thread left: its events, those it still held and
	 * those it had overwritten (which the reader counted as its thread's
	 * losses), are gone from the file from here, and counted. */
	uint64_t held = w->head - s->first;
	if (held)
		__atomic_add_fetch(&lib.hdr->dropped_reused, held, __ATOMIC_RELAXED);
	s->tid = (int32_t)gettid();
	memset(s->name, 0, sizeof(s->name));
	prctl(PR_GET_NAME, s->name);
	s->first = w->head;
	s->claim_time = clock_read();
	__atomic_store_n(&s->generation, s->generation + 1, __ATOMIC_RELEASE);
	file_calibrate();
	tls_writer = w;
	pthread_setspecific(exit_key, w);
	return w;
}

static void thread_exit(void *arg)
{
	struct writer *w = arg;

	tls_writer = &sink_silent;
	if (!w || !lib.hdr || w->slot == NULL)
		return;
	__atomic_store_n(&w->exit_seq, __atomic_add_fetch(&exit_seq, 1, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&w->slot->state, RECCE_SLOT_EXITED, __ATOMIC_RELEASE);
}

static void child_after_fork(void)
{
	tls_writer = NULL;
	file_forget();
}

/* Whether the name a cache entry interned (id, len bytes) is name: the
 * address is only a hint, the bytes decide, for a caller may build names
 * at run time in a buffer it reuses (Python's ctypes, a formatted name). */
static inline int cached_is(uint32_t id, uint32_t len, const char *name)
{
	const struct recce_name *e = (const struct recce_name *)(lib.names + id);

	return memcmp(e->bytes, name, len) == 0 && (len == RECCE_NAME_MAX || name[len] == '\0');
}

static inline uint32_t name_id(struct writer *w, const char *name)
{
	unsigned h = (unsigned)((uintptr_t)name >> 3) & (NAME_CACHE - 1);

	if (__builtin_expect(w->cache[h].ptr == name, 1) &&
	    __builtin_expect(cached_is(w->cache[h].id, w->cache[h].len, name), 1))
		return w->cache[h].id;
	uint32_t id = names_intern(name);
	if (id) {
		w->cache[h].ptr = name;
		w->cache[h].id = id;
		w->cache[h].len = (uint32_t)strnlen(name, RECCE_NAME_MAX);
	}
	return id;
}

/*
 * Writes one record, and with id (a sequence event) a second record
 * holding the trace id; the head moves past both at once, so a reader
 * sees both or neither.
 */
static inline void put_full(uint16_t kind, const char *name, int64_t value, uint64_t extra,
			    const uint64_t *id)
{
	if (!__atomic_load_n(&recce__on, __ATOMIC_RELAXED))
		return;
	struct writer *w = tls_writer;
	if (__builtin_expect(w == NULL, 0)) {
		w = writer_attach();
		if (!w)
			return;
	}
	if (__builtin_expect(w->dropping != 0, 0)) {
		if (w->dropping == DROP_COUNTED)
			__atomic_add_fetch(&lib.hdr->dropped_no_slot, 1, __ATOMIC_RELAXED);
		return;
	}
	/* Task records but create carry no name. */
	uint32_t nid = name ? name_id(w, name) : 0;
	if (__builtin_expect(name && nid == 0, 0)) {
		__atomic_add_fetch(&lib.hdr->dropped_no_name, 1, __ATOMIC_RELAXED);
		return;
	}
	/* The thread's state after this record, in its flags. */
	if (kind == RECCE_EV_SPAN_BEGIN)
		w->depth++;
	else if (kind == RECCE_EV_SPAN_END && w->depth)
		w->depth--;
	else if (kind == RECCE_EV_SEQ_BEGIN || kind == RECCE_EV_SEQ_RECV)
		w->token = RECCE_FLAG_TOKEN;
	else if (kind == RECCE_EV_SEQ_END)
		w->token = 0;
	uint16_t flags = (uint16_t)(RECCE_FLAG_STATE | w->token |
				    (w->depth < RECCE_FLAG_DEPTH ? w->depth : RECCE_FLAG_DEPTH));
	uint64_t i = w->head;
	struct recce_record *r = &w->recs[i & w->mask];
	r->time = clock_read();
	r->name = nid;
	r->kind = kind;
	r->flags = flags;
	r->value = value;
	r->extra = extra;
	if (id) {
		struct recce_record *r2 = &w->recs[++i & w->mask];
		r2->time = r->time;
		r2->name = 0;
		r2->kind = RECCE_EV_SEQ_ID;
		r2->flags = flags;
		r2->value = (int64_t)id[0];
		r2->extra = id[1];
	}
	w->head = i + 1;
	__atomic_store_n(&w->slot->head, i + 1, __ATOMIC_RELEASE);
}

static inline void put(uint16_t kind, const char *name, int64_t value)
{
	put_full(kind, name, value, 0, NULL);
}

void lib_put_task(uint16_t kind, const char *type, uint64_t id, uint64_t parent)
{
	put_full(kind, type, (int64_t)id, parent, NULL);
}

void lib_put_seq(uint16_t kind, const char *label, int64_t current, uint64_t last,
		 const uint64_t id[2])
{
	put_full(kind, label, current, last, id);
}

void recce_event(const char *name)
{
	put(RECCE_EV_EVENT, name, 0);
}

void recce_event_value(const char *name, int64_t value)
{
	put(RECCE_EV_VALUE, name, value);
}

void recce_span_begin(const char *name)
{
	put(RECCE_EV_SPAN_BEGIN, name, 0);
}

void recce_span_end(const char *name)
{
	put(RECCE_EV_SPAN_END, name, 0);
}

void recce_counter(const char *name, int64_t value)
{
	put(RECCE_EV_COUNTER, name, value);
}

int recce_init(const struct recce_config *cfg)
{
	int err = start_once(cfg, 0);
	return err == -EAGAIN ? -EALREADY : err;
}

void recce_enable(int on)
{
	__atomic_store_n(&recce__on, on ? 1 : 0, __ATOMIC_RELAXED);
}

int recce_enabled(void)
{
	return __atomic_load_n(&recce__on, __ATOMIC_RELAXED);
}

int recce_status(void)
{
	return __atomic_load_n(&lib.state, __ATOMIC_ACQUIRE) == LIB_READY ? 0 : lib.status;
}

const char *recce_file_path(void)
{
	return __atomic_load_n(&lib.state, __ATOMIC_ACQUIRE) == LIB_READY ? lib.path : NULL;
}
