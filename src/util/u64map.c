/*
 * The 64-bit map (see u64map.h): the hash table with the keys as they
 * are, since htab spreads integers itself, and key 0 kept apart because
 * the table reserves it.
 */
#include "util/u64map.h"

#include <errno.h>
#include <string.h>

void u64map_init(struct u64map *m)
{
	memset(m, 0, sizeof(*m));
	htab_init(&m->table);
}

void u64map_release(struct u64map *m)
{
	htab_release(&m->table);
	u64map_init(m);
}

int u64map_get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	if (key == 0) {
		if (m->has_zero && val)
			*val = m->zero_val;
		return m->has_zero;
	}
	struct htab_slot *s = htab_find(&m->table, key, NULL, NULL);
	if (!s)
		return 0;
	if (val)
		*val = s->val;
	return 1;
}

int u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	if (key == 0) {
		m->has_zero = 1;
		m->zero_val = val;
		return 0;
	}
	struct htab_slot *s = htab_find(&m->table, key, NULL, NULL);
	if (!s)
		s = htab_add(&m->table, key, val);
	if (!s)
		return -ENOMEM;
	s->val = val;
	return 0;
}

size_t u64map_count(const struct u64map *m)
{
	return htab_count(&m->table) + (m->has_zero ? 1 : 0);
}

void u64map_each(const struct u64map *m, void (*fn)(void *ctx, uint64_t key, uint64_t val),
		 void *ctx)
{
	if (m->has_zero)
		fn(ctx, 0, m->zero_val);
	for (size_t i = 0; i < m->table.cap; i++)
		if (m->table.slots[i].key)
			fn(ctx, m->table.slots[i].key, m->table.slots[i].val);
}
