/*
 * Pages of code near an address (see near-page.h).
 */
#include "inject/near-page.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "inject/target-mem.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#define PR_SET_VMA_	      0x53564d41
#define PR_SET_VMA_ANON_NAME_ 0
#define TOP		      0x7ffffffff000ull

int near_reaches(uint64_t from, uint64_t to)
{
	int64_t d = (int64_t)(to - (from + 5));
	return d >= INT32_MIN && d <= INT32_MAX;
}

/* The free place for len bytes nearest to near, or 0. */
static uint64_t nearest_gap(const struct tmaps *m, uint64_t near, uint64_t len)
{
	uint64_t best = 0, best_dist = NEAR_PAGE_REACH;

	for (size_t i = 0; i < m->n; i++) {
		const struct tmap *t = &m->v[i];
		/* The gap after this mapping, as close to near as it comes. */
		uint64_t gap = (t->end + 4095) & ~4095ull;
		uint64_t next = i + 1 < m->n ? m->v[i + 1].start : TOP;
		if (gap + len > next)
			continue;
		uint64_t c =
		    near > gap && near - gap >= len && near < next ? (near & ~4095ull) : gap;
		if (c + len > next)
			c = next - len;
		uint64_t dist = c > near ? c - near : near - c;
		if (dist < best_dist) {
			best = c;
			best_dist = dist;
		}
	}
	return best;
}

int near_page_map(struct injector *inj, uint64_t near, size_t len, const char *name, uint64_t *addr)
{
	struct tmaps m;

	int err = tmaps_read(&m, inj->pid);
	if (err)
		return err;
	uint64_t best = nearest_gap(&m, near, len);
	tmaps_release(&m);
	if (!best)
		return -ENOSPC;
	uint64_t got = 0;
	uint64_t args[6] = {best,
			    len,
			    PROT_READ | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			    (uint64_t)-1,
			    0};
	err = injector_call(inj, inj->mmap_fn, args, NULL, 0, -1, &got);
	if (err)
		return err;
	if (got != best)
		return -ENOSPC;
	/* Kernels without anonymous VMA names just leave it unnamed. */
	uint64_t name_args[6] = {PR_SET_VMA_, PR_SET_VMA_ANON_NAME_, best, len, 0, 0};
	injector_call(inj, inj->prctl_fn, name_args, name, strlen(name) + 1, 4, &got);
	*addr = best;
	return 0;
}
