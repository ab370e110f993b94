/*
 * A hostile program, for tests/cli/attack-shm.t. It waits for a line on
 * its standard input before its first event (so that a test knows its
 * pid before librecce makes its file), then names its thread with a
 * newline and a forged recce line, writes an event "hostile" every
 * millisecond, calls hostile_work() in a loop for `trace --fast`, and,
 * once recce's --fast file is in its maps, keeps rewriting that file's
 * header: its slot size, slot count and claimed slots, to steer recce's
 * reads outside the file; and lies about who it is: every entry of the
 * children's table, and the first records of each ring, give pid 1, to
 * have recce read, or change the code of, a process that is not its.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../../src/inject/fast-format.h"
#include "recce.h"

volatile uint64_t sink;

__attribute__((noinline)) uint64_t hostile_work(uint64_t a, uint64_t b)
{
	for (int i = 0; i < 100; i++)
		a = a * 6364136223846793005ULL + b;
	return a;
}

/* recce's --fast file in our maps, or NULL. */
static struct recce_fast_header *fast_file(void)
{
	char line[512];
	unsigned long lo, hi;
	FILE *f = fopen("/proc/self/maps", "r");
	struct recce_fast_header *h = NULL;

	while (f && !h && fgets(line, sizeof(line), f))
		if (strstr(line, "/recce-fast-") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
		    strstr(line, "rw-s"))
			h = (struct recce_fast_header *)lo;
	if (f)
		fclose(f);
	return h;
}

/* Every child entry, and the first records of each ring (by the geometry
 * as recce wrote it), say pid 1. */
static void lie(struct recce_fast_header *h, uint64_t slot_size, uint32_t slots)
{
	for (uint32_t i = 0; i < RECCE_FAST_CHILDREN; i++)
		__atomic_store_n(&h->children[i].owner,
				 RECCE_FAST_OWNER(1, RECCE_FAST_CHILD_TRACED), __ATOMIC_RELAXED);
	for (uint32_t s = 0; s < slots; s++) {
		struct recce_fast_record *r =
		    (void *)((char *)h + RECCE_FAST_HEADER_SIZE + s * slot_size +
			     sizeof(struct recce_fast_slot));
		for (int j = 0; j < 64; j++)
			__atomic_store_n(&r[j].pid, 1, __ATOMIC_RELAXED);
	}
}

static void *rewriter(void *arg)
{
	uint64_t slot_size = 0;
	uint32_t slots = 0;

	(void)arg;
	for (;;) {
		struct recce_fast_header *h = fast_file();
		if (h && memcmp(h->magic, RECCE_FAST_MAGIC, 8) == 0) {
			if (!slot_size) {
				slot_size = h->slot_size;
				slots = h->slots < 64 ? h->slots : 64;
			}
			lie(h, slot_size, slots);
			h->slot_size = 1ULL << 40;
			h->slots = 0xffffffffu;
			__atomic_store_n(&h->claimed, 0xffffffffu, __ATOMIC_RELEASE);
		}
		usleep(1000);
	}
	return NULL;
}

int main(void)
{
	char line[64];
	pthread_t t;

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	prctl(PR_SET_NAME, "evil\nrecce: x");
	pthread_create(&t, NULL, rewriter, NULL);
	for (uint64_t i = 0;; i++) {
		recce_event("hostile");
		sink += hostile_work(i, sink);
		usleep(1000);
	}
}
