/*
 * The reader of librecce event files: finds a live process's file, checks
 * a file's header against its size, and drains the rings with pread().
 * ring-read.h says what it promises; ring-format.h what it reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "events/ring-read.h"
#include "proc/proc-maps.h"
#include "util/array.h"
#include "util/clock.h"

#define MAX_SLOTS 4096u
#define MAX_RING  (1u << 24)

static int pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, buf, len, (off_t)off);
	return n == (ssize_t)len ? 0 : -EBADMSG;
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Whether [off, off + len) lies inside a file of size bytes. */
static int fits(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* The checks every header passes before anything else is read. */
static int header_check(const struct recce_file_header *h, uint64_t size)
{
	if (memcmp(h->magic, RECCE_FILE_MAGIC, sizeof(h->magic)) != 0)
		return -EBADMSG;
	if (h->min_version > RECCE_FILE_VERSION)
		return -EPROTONOSUPPORT;
	if (h->header_size != RECCE_HEADER_SIZE || h->file_size != size ||
	    h->record_size != sizeof(struct recce_record))
		return -EBADMSG;
	if (h->slots == 0 || h->slots > MAX_SLOTS || !is_pow2(h->ring_records) ||
	    h->ring_records > MAX_RING)
		return -EBADMSG;
	if (h->slot_size < RECCE_SLOT_RECORDS_AT + (uint64_t)h->ring_records * h->record_size ||
	    h->slot_size % 8)
		return -EBADMSG;
	if (!fits(h->slots_offset, (uint64_t)h->slots * h->slot_size, size) ||
	    h->slots_offset < RECCE_HEADER_SIZE)
		return -EBADMSG;
	if (!is_pow2(h->name_slots) || !fits(h->index_offset, (uint64_t)h->name_slots * 4, size) ||
	    !fits(h->names_offset, h->names_size, size))
		return -EBADMSG;
	if (h->clock != RECCE_CLOCK_TSC && h->clock != RECCE_CLOCK_MONOTONIC)
		return -EBADMSG;
	return 0;
}

/* This machine's boot id, to know whether a TSC file's ticks are ours. */
static void boot_id(char *buf, size_t size)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
}

static uint64_t rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return 0;
#endif
}

/* The TSC and CLOCK_MONOTONIC read together: the closest of a few tries,
 * the TSC at their middle (a preemption between two reads puts
 * milliseconds between them on a busy machine). */
static void clock_pair(uint64_t *tsc, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 8; i++) {
		uint64_t a = rdtsc(), m = time_now_ns(CLOCK_MONOTONIC), b = rdtsc();
		if (b >= a && b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*mono = m;
		}
	}
}

/*
 * Ticks to nanoseconds. Where the file was written on this machine since
 * it booted, the rate comes from the reader's own clock readings against
 * the writer's first pair, taken at least 50 ms apart; elsewhere from the
 * rate the writer stored.
 */
static void clock_setup(struct ring_reader *r)
{
	const struct recce_file_header *h = &r->hdr;
	char mine[40];

	r->ns_per_tick = 1.0;
	if (h->clock != RECCE_CLOCK_TSC)
		return;
	boot_id(mine, sizeof(mine));
	if (mine[0] && strncmp(mine, h->boot_id, sizeof(h->boot_id)) == 0) {
		uint64_t mono = time_now_ns(CLOCK_MONOTONIC);
		if (mono >= h->mono0 && mono - h->mono0 < 50000000ULL) {
			struct timespec ts = {0, (long)(50000000ULL - (mono - h->mono0))};
			nanosleep(&ts, NULL);
		}
		uint64_t tsc = 0;
		clock_pair(&tsc, &mono);
		if (tsc > h->tsc0 && mono > h->mono0) {
			r->ns_per_tick = (double)(mono - h->mono0) / (double)(tsc - h->tsc0);
			return;
		}
	}
	if (h->tsc_hz)
		r->ns_per_tick = 1e9 / (double)h->tsc_hz;
}

/* ticks * ns_per_tick, held below 2^62 whatever a file says. */
static uint64_t ticks_ns(const struct ring_reader *r, uint64_t ticks)
{
	double ns = (double)ticks * r->ns_per_tick;
	return ns < 4.6e18 ? (uint64_t)ns : (uint64_t)1 << 62;
}

static uint64_t to_ns(const struct ring_reader *r, uint64_t t)
{
	if (r->hdr.clock != RECCE_CLOCK_TSC)
		return t;
	if (t < r->hdr.tsc0)
		return r->hdr.mono0 - ticks_ns(r, r->hdr.tsc0 - t);
	return r->hdr.mono0 + ticks_ns(r, t - r->hdr.tsc0);
}

uint64_t ring_reader_realtime(const struct ring_reader *r, uint64_t time_ns)
{
	return r->hdr.real0 + (time_ns - r->hdr.mono0);
}

int ring_reader_open_fd(struct ring_reader *r, int fd)
{
	struct stat st;
	int err;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	strpool_init(&r->names);
	u64map_init(&r->name_ids);
	if (fstat(fd, &st) != 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < RECCE_HEADER_SIZE) {
		err = -EBADMSG;
		goto out;
	}
	r->file_size = (uint64_t)st.st_size;
	err = pread_full(fd, &r->hdr, sizeof(r->hdr), 0);
	if (!err)
		err = header_check(&r->hdr, r->file_size);
	if (err)
		goto out;
	r->slot_thread = calloc(r->hdr.slots, sizeof(*r->slot_thread));
	r->buf = malloc((size_t)r->hdr.ring_records * sizeof(*r->buf));
	if (!r->slot_thread || !r->buf) {
		err = -ENOMEM;
		goto out;
	}
	clock_setup(r);
	return 0;
out:
	ring_reader_release(r);
	return err;
}

int ring_reader_open_path(struct ring_reader *r, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	return ring_reader_open_fd(r, fd);
}

int ring_reader_open_pid(struct ring_reader *r, pid_t pid, char *path, size_t len)
{
	char name[64], *line = NULL;
	size_t cap = 0;
	int err = -ENOENT;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	FILE *fp = fopen(name, "re");
	if (!fp)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &cap, fp) > 0) {
		struct proc_map m;
		uint64_t inode;
		const char *file;
		line[strcspn(line, "\n")] = '\0';
		if (!proc_maps_parse_line(line, &m, &inode, &file) || !file)
			continue;
		const char *base = strrchr(file, '/');
		char base_name[300];
		if (!base)
			continue;
		snprintf(base_name, sizeof(base_name), "%s", base + 1);
		size_t n = strlen(base_name);
		int deleted = n > 10 && strcmp(base_name + n - 10, " (deleted)") == 0;
		if (deleted)
			base_name[n - 10] = '\0';
		if (recce_events_name_pid(base_name) <= 0)
			continue;
		/* A file removed while mapped is still read through map_files. */
		char full[4200];
		if (!deleted)
			snprintf(full, sizeof(full), "/proc/%d/root%s", (int)pid, file);
		else
			snprintf(full, sizeof(full), "/proc/%d/map_files/%llx-%llx", (int)pid,
				 (unsigned long long)m.start, (unsigned long long)m.end);
		snprintf(path, len, "%.*s", (int)(base + 1 + strlen(base_name) - file), file);
		/* The very file the process maps, not one put at its name
		 * since. */
		struct stat st;
		int fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			err = -errno;
			break;
		}
		if (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != inode) {
			close(fd);
			err = -ESTALE;
			break;
		}
		/* The process maps its file (under a name of its own) before
		 * it writes the magic, last: until then there is no file yet,
		 * as before it was made, and a caller tries again. */
		char magic[sizeof(r->hdr.magic)], zero[sizeof(magic)] = {0};
		if (pread_full(fd, magic, sizeof(magic),
			       offsetof(struct recce_file_header, magic)) == 0 &&
		    memcmp(magic, zero, sizeof(magic)) == 0) {
			close(fd);
			err = -ENOENT;
			break;
		}
		err = ring_reader_open_fd(r, fd);
		break;
	}
	free(line);
	fclose(fp);
	return err;
}

void ring_reader_release(struct ring_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	free(r->threads);
	free(r->slot_thread);
	free(r->buf);
	strpool_release(&r->names);
	u64map_release(&r->name_ids);
	r->threads = NULL;
	r->slot_thread = NULL;
	r->buf = NULL;
	r->nthreads = r->cap_threads = 0;
}

/* The reader's copy of name id's string, or "?" (counted) if it is bad. */
static const char *name_of(struct ring_reader *r, uint32_t id)
{
	uint64_t v;
	struct recce_name e;
	char bytes[RECCE_NAME_MAX + 1];

	if (id == 0)
		return "";
	if (u64map_get(&r->name_ids, id, &v))
		return (const char *)(uintptr_t)v;
	const struct recce_file_header *h = &r->hdr;
	if (id % 8 || id < 8 || !fits(id, sizeof(e), h->names_size) ||
	    pread_full(r->fd, &e, sizeof(e), h->names_offset + id) != 0 || e.len > RECCE_NAME_MAX ||
	    !fits(id + sizeof(e), (uint64_t)e.len + 1, h->names_size) ||
	    pread_full(r->fd, bytes, (size_t)e.len + 1, h->names_offset + id + sizeof(e)) != 0 ||
	    bytes[e.len] != '\0' || memchr(bytes, '\0', e.len))
		return NULL;
	const char *s = strpool_intern_len(&r->names, bytes, e.len);
	if (s && u64map_put(&r->name_ids, id, (uintptr_t)s) != 0)
		return NULL;
	return s;
}

/* The thread now in slot i, starting one for a new generation. */
static struct ring_thread *slot_thread(struct ring_reader *r, unsigned i,
				       const struct recce_slot *s)
{
	size_t t = r->slot_thread[i];
	if (t && r->threads[t - 1].generation == s->generation)
		return &r->threads[t - 1];
	if (t) {
		/* A new thread took the slot: what the old one wrote after
		 * the last read and before the new one began is gone. */
		struct ring_thread *old = &r->threads[t - 1];
		if (s->first > old->next)
			old->lost += s->first - old->next;
		old->state = RECCE_SLOT_EXITED;
		if (s->first > old->first)
			r->reused_seen += s->first - old->first;
	}
	struct ring_thread *grown =
	    array_reserve(r->threads, &r->cap_threads, r->nthreads + 1, sizeof(*r->threads));
	if (!grown)
		return NULL;
	r->threads = grown;
	struct ring_thread *th = &r->threads[r->nthreads++];
	memset(th, 0, sizeof(*th));
	th->tid = s->tid;
	memcpy(th->name, s->name, sizeof(th->name));
	th->name[sizeof(th->name) - 1] = '\0';
	th->slot = i;
	th->generation = s->generation;
	th->first = s->first;
	th->next = s->first;
	th->lost = s->lost_before;
	r->slot_thread[i] = r->nthreads;
	return th;
}

/* Copies records [from, to) of a ring into buf, wrapping at the end. */
static int copy_records(struct ring_reader *r, uint64_t base, uint64_t from, uint64_t to)
{
	uint64_t cap = r->hdr.ring_records, n = to - from, at = from & (cap - 1);
	uint64_t first = n < cap - at ? n : cap - at;
	size_t rs = sizeof(struct recce_record);

	if (pread_full(r->fd, r->buf, first * rs, base + at * rs) != 0)
		return -EBADMSG;
	if (n > first && pread_full(r->fd, r->buf + first, (n - first) * rs, base) != 0)
		return -EBADMSG;
	return 0;
}

static int add_event(struct ring_reader *r, struct ring_thread *th, const struct recce_record *rec,
		     const struct recce_record *after, struct ring_event **events, size_t *n,
		     size_t *cap)
{
	if (rec->kind == RECCE_EV_SEQ_ID)
		return 0; /* read with the record before it */
	if (!recce_kind_known(rec->kind)) {
		r->bad_records++;
		return 0;
	}
	const char *name = name_of(r, rec->name);
	if (!name) {
		r->bad_records++;
		name = "?";
	}
	struct ring_event *grown = array_reserve(*events, cap, *n + 1, sizeof(**events));
	if (!grown)
		return -ENOMEM;
	*events = grown;
	struct ring_event *e = &grown[(*n)++];
	memset(e, 0, sizeof(*e));
	e->time_ns = to_ns(r, rec->time);
	e->tid = th->tid;
	e->kind = rec->kind;
	e->flags = rec->flags;
	e->thread = (uint32_t)(th - r->threads);
	e->name = name;
	e->value = rec->value;
	e->extra = rec->extra;
	e->order = r->order++;
	if (recce_kind_is_seq(rec->kind) && after && after->kind == RECCE_EV_SEQ_ID) {
		e->id_hi = (uint64_t)after->value;
		e->id_lo = after->extra;
	}
	th->read++;
	return 0;
}

/* Reads what slot i gained since the last drain. */
static int drain_slot(struct ring_reader *r, unsigned i, struct ring_event **events, size_t *n,
		      size_t *cap)
{
	const struct recce_file_header *h = &r->hdr;
	uint64_t at = h->slots_offset + (uint64_t)i * h->slot_size, ringcap = h->ring_records;
	struct recce_slot s, again;

	if (pread_full(r->fd, &s, sizeof(s), at) != 0)
		return -EBADMSG;
	if (s.generation == 0)
		return 0; /* never claimed */
	struct ring_thread *th = slot_thread(r, i, &s);
	if (!th)
		return -ENOMEM;
	th->state = s.state;
	if (s.head < th->next) {
		/* The head went back: only a hostile writer does that. */
		r->bad_records++;
		th->next = s.head;
		return 0;
	}
	uint64_t from = th->next, to = s.head;
	if (to - from > ringcap) {
		th->lost += to - ringcap - from;
		from = to - ringcap;
	}
	if (from == to)
		return 0;
	if (copy_records(r, at + RECCE_SLOT_RECORDS_AT, from, to) != 0 ||
	    pread_full(r->fd, &again, sizeof(again), at) != 0)
		return -EBADMSG;
	th->next = to;
	if (again.generation != s.generation) {
		th->lost += to - from; /* the slot changed hands while copied */
		return 0;
	}
	/* Records the writer may have overwritten during the copy. */
	uint64_t valid =
	    again.head > ringcap && again.head - ringcap > from ? again.head - ringcap : from;
	if (valid > to)
		valid = to;
	th->lost += valid - from;
	for (uint64_t k = valid; k < to; k++) {
		const struct recce_record *rec = &r->buf[k - from];
		const struct recce_record *after = k + 1 < to ? rec + 1 : NULL;
		int err = add_event(r, th, rec, after, events, n, cap);
		if (err)
			return err;
	}
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct ring_event *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int ring_reader_drain(struct ring_reader *r, struct ring_event **events, size_t *n, size_t *cap)
{
	struct recce_file_header h;
	size_t start = *n;
	int err = 0;

	/* The counters change; the layout must not. */
	if (pread_full(r->fd, &h, sizeof(h), 0) != 0 || header_check(&h, r->file_size) != 0 ||
	    h.slots != r->hdr.slots || h.ring_records != r->hdr.ring_records ||
	    h.slot_size != r->hdr.slot_size || h.slots_offset != r->hdr.slots_offset ||
	    h.names_offset != r->hdr.names_offset || h.names_size != r->hdr.names_size)
		return -EBADMSG;
	r->hdr.state = h.state;
	r->hdr.dropped_no_slot = h.dropped_no_slot;
	r->hdr.dropped_no_name = h.dropped_no_name;
	r->hdr.exit_time = h.exit_time;
	for (unsigned i = 0; i < r->hdr.slots && !err; i++)
		err = drain_slot(r, i, events, n, cap);
	/* Read after the slots: a new thread counts the ring it takes over
	 * before it shows in the slot. */
	if (!err && pread_full(r->fd, &h, sizeof(h), 0) == 0)
		r->hdr.dropped_reused =
		    h.dropped_reused > r->reused_seen ? h.dropped_reused - r->reused_seen : 0;
	/* qsort is not stable: by_time breaks ties by thread, then by the
	 * order read, which within one thread is the order written. */
	if (*n > start)
		qsort(*events + start, *n - start, sizeof(**events), by_time);
	return err;
}

uint64_t ring_reader_lost(const struct ring_reader *r)
{
	uint64_t lost = 0;

	for (size_t i = 0; i < r->nthreads; i++)
		lost += r->threads[i].lost;
	return lost;
}
