/*
 * Saving events in librecce's own layout: the image of the whole file is
 * built in memory (names interned afresh, one ring a thread sized to hold
 * all its events) and written in one go.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "events/ring-write.h"
#include "util/u64map.h"

struct image {
	char *mem;
	struct recce_file_header *h;
	struct u64map ids; /* the reader's string pointer -> id here */
};

static uint32_t intern(struct image *im, const char *name)
{
	uint64_t id;
	uint32_t len = (uint32_t)strnlen(name, RECCE_NAME_MAX);

	if (!*name)
		return 0;
	if (u64map_get(&im->ids, (uintptr_t)name, &id))
		return (uint32_t)id;
	uint32_t need = recce_name_size(len);
	if (im->h->names_used + need > im->h->names_size)
		return 0;
	uint32_t off = im->h->names_used;
	struct recce_name *e = (struct recce_name *)(im->mem + im->h->names_offset + off);
	e->hash = recce_name_hash(name, len);
	e->len = (uint16_t)len;
	memcpy(e->bytes, name, len);
	im->h->names_used += need;
	uint32_t *index = (uint32_t *)(im->mem + im->h->index_offset);
	for (uint32_t p = 0; p < im->h->name_slots; p++) {
		uint32_t *slot = &index[(e->hash + p) & (im->h->name_slots - 1)];
		if (*slot == 0) {
			*slot = off;
			break;
		}
	}
	u64map_put(&im->ids, (uintptr_t)name, off);
	return off;
}

int ring_save(FILE *fp, const struct ring_reader *r, const struct ring_event *events, size_t n)
{
	size_t nt = r->nthreads ? r->nthreads : 1;
	uint64_t *count = calloc(nt, sizeof(*count)), most = 16, names = 64;
	struct image im = {0};
	int err = -ENOMEM;

	if (!count)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		/* A sequence event takes two records: itself and its id. */
		uint64_t k = count[events[i].thread] += recce_kind_is_seq(events[i].kind) ? 2 : 1;
		most = k > most ? k : most;
		names += recce_name_size((uint32_t)strnlen(events[i].name, RECCE_NAME_MAX));
	}
	uint64_t ring = 16;
	while (ring < most)
		ring <<= 1;
	uint32_t name_slots = 64;
	while (name_slots < 2 * (n + 1) && name_slots < (1u << 20))
		name_slots <<= 1;
	if (names > (1u << 30))
		names = 1u << 30;
	uint64_t index_off = RECCE_HEADER_SIZE, names_off = index_off + (uint64_t)name_slots * 4;
	uint64_t slots_off = recce_align(names_off + names, 4096);
	uint64_t slot_size =
	    recce_align(RECCE_SLOT_RECORDS_AT + ring * sizeof(struct recce_record), 8);
	uint64_t size = slots_off + nt * slot_size;

	im.mem = calloc(1, size);
	if (!im.mem)
		goto out;
	u64map_init(&im.ids);
	struct recce_file_header *h = im.h = (struct recce_file_header *)im.mem;
	*h = r->hdr;
	memcpy(h->magic, RECCE_FILE_MAGIC, sizeof(h->magic));
	h->version = RECCE_FILE_VERSION;
	h->min_version = RECCE_FILE_MIN_VERSION;
	h->file_size = size;
	h->slots = (uint32_t)nt;
	h->ring_records = (uint32_t)ring;
	h->slot_size = (uint32_t)slot_size;
	h->slots_offset = slots_off;
	h->index_offset = index_off;
	h->name_slots = name_slots;
	h->names_offset = names_off;
	h->names_size = (uint32_t)names;
	h->names_used = 8;
	h->clock = RECCE_CLOCK_MONOTONIC;
	h->tsc0 = h->mono0;
	h->tsc_hz = 1000000000ULL;

	for (size_t t = 0; t < r->nthreads; t++) {
		const struct ring_thread *th = &r->threads[t];
		struct recce_slot *s = (struct recce_slot *)(im.mem + slots_off + t * slot_size);
		s->state = th->state ? th->state : RECCE_SLOT_EXITED;
		s->tid = th->tid;
		s->generation = 1;
		s->first = s->head = 0;
		s->lost_before = th->lost;
		memcpy(s->name, th->name, sizeof(s->name));
	}
	for (size_t i = 0; i < n; i++) {
		const struct ring_event *e = &events[i];
		struct recce_slot *s =
		    (struct recce_slot *)(im.mem + slots_off + e->thread * slot_size);
		struct recce_record *recs =
		    (struct recce_record *)((char *)s + RECCE_SLOT_RECORDS_AT);
		struct recce_record *rec = &recs[s->head++];
		rec->time = e->time_ns;
		rec->name = intern(&im, e->name);
		rec->kind = e->kind;
		rec->value = e->value;
		rec->extra = e->extra;
		if (recce_kind_is_seq(e->kind)) {
			rec = &recs[s->head++];
			rec->time = e->time_ns;
			rec->kind = RECCE_EV_SEQ_ID;
			rec->value = (int64_t)e->id_hi;
			rec->extra = e->id_lo;
		}
	}
	err = fwrite(im.mem, 1, size, fp) == size ? 0 : -EIO;
out:
	if (im.mem)
		u64map_release(&im.ids);
	free(im.mem);
	free(count);
	return err;
}
