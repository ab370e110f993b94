/*
 * perf_event_open(2) ring buffers and their time-ordered merge (see
 * perf-ring.h). The kernel writes records at data_head and we release them
 * by advancing data_tail; both are read and written with acquire/release
 * ordering, as the perf_event_mmap_page documentation asks.
 */
#include "perf/perf-ring.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BOUNCE_BYTES 65536 /* a record's size is a u16 */

void perf_ring_init(struct perf_ring *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

void perf_ring_release(struct perf_ring *r)
{
	if (r->meta)
		munmap(r->meta, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
	free(r->bounce);
	perf_ring_init(r);
}

int perf_ring_map(struct perf_ring *r, int fd, size_t pages, size_t min_pages)
{
	long page = sysconf(_SC_PAGESIZE);

	perf_ring_init(r);
	r->fd = fd;
	r->bounce = malloc(BOUNCE_BYTES);
	if (!r->bounce) {
		perf_ring_release(r);
		return -ENOMEM;
	}
	for (;;) {
		r->map_len = (pages + 1) * (size_t)page;
		void *m = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			r->meta = m;
			break;
		}
		int err = -errno;
		if ((err != -EPERM && err != -ENOMEM) || pages <= min_pages) {
			perf_ring_release(r);
			return err;
		}
		pages /= 2;
	}
	uint64_t off = r->meta->data_offset ? r->meta->data_offset : (uint64_t)page;
	uint64_t size = r->meta->data_size ? r->meta->data_size : pages * (uint64_t)page;
	if (off + size > r->map_len || (size & (size - 1))) {
		perf_ring_release(r);
		return -EINVAL;
	}
	r->data = (const unsigned char *)r->meta + off;
	r->size = size;
	r->tail = __atomic_load_n(&r->meta->data_tail, __ATOMIC_ACQUIRE);
	return 0;
}

/*
 * Makes ring i's next record available in the caller's slot, or returns 0
 * when the ring has nothing more in this pass. A record that wraps around
 * the end of the buffer is copied into the bounce buffer first.
 */
static int ring_peek(struct perf_ring *r, size_t i, const struct perf_ring_ops *ops, void *ctx,
		     struct perf_ring_counts *counts)
{
	while (!r->peeked) {
		uint64_t avail = r->head - r->tail;
		if (avail == 0)
			return 0;
		struct perf_event_header h;
		uint64_t off = r->tail & (r->size - 1);
		if (avail < sizeof(h) || off + sizeof(h) > r->size)
			goto corrupt;
		memcpy(&h, r->data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > avail || h.size % 8)
			goto corrupt;
		const unsigned char *p = r->data + off;
		if (off + h.size > r->size) {
			size_t first = (size_t)(r->size - off);
			memcpy(r->bounce, r->data + off, first);
			memcpy(r->bounce + first, r->data, h.size - first);
			p = r->bounce;
			counts->wraps++;
		}
		int rc = ops->parse(ctx, i, p, h.size, &r->time);
		if (rc < 0)
			counts->malformed++;
		if (rc <= 0) {
			r->tail += h.size;
			continue;
		}
		r->next = r->tail + h.size;
		r->peeked = 1;
	}
	return 1;
corrupt:
	/* The kernel never writes such a header: give up on what is left. */
	counts->malformed++;
	r->tail = r->head;
	return 0;
}

int perf_rings_read(struct perf_ring *rings, size_t n, uint64_t until,
		    const struct perf_ring_ops *ops, void *ctx, struct perf_ring_counts *counts)
{
	int count = 0;

	for (size_t i = 0; i < n; i++) {
		struct perf_ring *r = &rings[i];
		r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		/* A head behind the tail or more than a ring ahead of it is
		 * not something the kernel writes; resynchronize. */
		if (r->head - r->tail > r->size) {
			counts->malformed++;
			r->tail = r->head;
		}
		r->peeked = 0;
	}
	for (;;) {
		size_t best = n;
		for (size_t i = 0; i < n; i++) {
			if (!ring_peek(&rings[i], i, ops, ctx, counts))
				continue;
			if (best == n || rings[i].time < rings[best].time)
				best = i;
		}
		if (best == n || rings[best].time > until)
			break;
		rings[best].peeked = 0;
		rings[best].tail = rings[best].next;
		count++;
		if (ops->handle(ctx, best))
			break;
	}
	/* A record peeked but not handled stays in the ring (the tail still
	 * points at it) and is read again next pass. */
	for (size_t i = 0; i < n; i++) {
		rings[i].peeked = 0;
		__atomic_store_n(&rings[i].meta->data_tail, rings[i].tail, __ATOMIC_RELEASE);
	}
	return count;
}
