/*
 * Task metrics from task records (tasks.h): a table of live tasks by id,
 * each remembering its type, its parent's type, when it was made, when
 * it became ready and when its current run began; and one row of sums
 * per type.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "events/tasks.h"
#include "util/array.h"

const uint64_t task_bucket_ns[TASK_BUCKETS] = {
    10000, 100000, 1000000, 10000000, 100000000, 1000000000ULL, 10000000000ULL, 60000000000ULL,
};

struct live_task {
	size_t type;	    /* index into types */
	size_t parent_type; /* index + 1, 0 for none */
	uint64_t created_ns, ready_ns, start_ns;
	int running;
};

void tasks_init(struct tasks *t)
{
	memset(t, 0, sizeof(*t));
	u64map_init(&t->by_name);
	u64map_init(&t->live);
}

static void free_live(void *ctx, uint64_t key, uint64_t val)
{
	free((void *)(uintptr_t)val);
}

void tasks_release(struct tasks *t)
{
	u64map_each(&t->live, free_live, NULL);
	u64map_release(&t->live);
	u64map_release(&t->by_name);
	free(t->types);
	memset(t, 0, sizeof(*t));
}

/* The index of type name, added if new; -1 when out of memory. */
static long type_of(struct tasks *t, const char *name)
{
	uint64_t v;

	if (u64map_get(&t->by_name, (uintptr_t)name, &v))
		return (long)v - 1;
	struct task_type *grown =
	    array_reserve(t->types, &t->cap, t->ntypes + 1, sizeof(*t->types));
	if (!grown || u64map_put(&t->by_name, (uintptr_t)name, t->ntypes + 1) != 0)
		return -1;
	t->types = grown;
	memset(&t->types[t->ntypes], 0, sizeof(t->types[0]));
	t->types[t->ntypes].name = name;
	return (long)t->ntypes++;
}

static struct live_task *live_of(struct tasks *t, uint64_t id)
{
	uint64_t v;
	return u64map_get(&t->live, id, &v) ? (struct live_task *)(uintptr_t)v : NULL;
}

static int create(struct tasks *t, const struct ring_event *e)
{
	long type = type_of(t, e->name);
	struct live_task *lt = live_of(t, (uint64_t)e->value);
	if (type < 0)
		return -ENOMEM;
	if (!lt) {
		lt = malloc(sizeof(*lt));
		if (!lt || u64map_put(&t->live, (uint64_t)e->value, (uintptr_t)lt) != 0) {
			free(lt);
			return -ENOMEM;
		}
	}
	struct live_task *parent = e->extra ? live_of(t, e->extra) : NULL;
	*lt = (struct live_task){
	    (size_t)type, parent ? parent->type + 1 : 0, e->time_ns, e->time_ns, 0, 0};
	t->types[type].created++;
	return 0;
}

static void run_ends(struct tasks *t, struct live_task *lt, uint64_t now)
{
	struct task_type *ty = &t->types[lt->type];
	uint64_t run = now > lt->start_ns ? now - lt->start_ns : 0;
	int b = 0;

	while (b < TASK_BUCKETS && run > task_bucket_ns[b])
		b++;
	ty->bucket[b]++;
	ty->runs++;
	ty->exec_ns += run;
	if (run > ty->exec_max_ns)
		ty->exec_max_ns = run;
	/* The child's time counts for its parent's type, whether or not the
	 * parent is still there (chroprof's semantics). */
	if (lt->parent_type)
		t->types[lt->parent_type - 1].children_ns += run;
	lt->running = 0;
	lt->ready_ns = now;
}

struct copy {
	struct u64map map;
	int err;
};

static void copy_live(void *ctx, uint64_t key, uint64_t val)
{
	struct copy *c = ctx;
	if (val && u64map_put(&c->map, key, val) != 0)
		c->err = -ENOMEM;
}

/* The live table again, without the tasks that finished. */
static int compact(struct tasks *t)
{
	struct copy c = {.err = 0};

	u64map_init(&c.map);
	u64map_each(&t->live, copy_live, &c);
	if (c.err) {
		u64map_release(&c.map);
		return c.err;
	}
	u64map_release(&t->live);
	t->live = c.map;
	t->gone = 0;
	return 0;
}

int tasks_feed(struct tasks *t, const struct ring_event *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (e[i].kind < RECCE_EV_TASK_CREATE || e[i].kind > RECCE_EV_TASK_FINISH)
			continue;
		if (e[i].kind == RECCE_EV_TASK_CREATE) {
			if (create(t, &e[i]) != 0)
				return -ENOMEM;
			continue;
		}
		struct live_task *lt = live_of(t, (uint64_t)e[i].value);
		if (!lt) {
			t->unknown++;
			continue;
		}
		uint64_t now = e[i].time_ns;
		if (e[i].kind == RECCE_EV_TASK_START) {
			if (now > lt->ready_ns)
				t->types[lt->type].wait_ns += now - lt->ready_ns;
			lt->start_ns = now;
			lt->running = 1;
		} else if (e[i].kind == RECCE_EV_TASK_STOP) {
			if (lt->running)
				run_ends(t, lt, now);
		} else {
			if (lt->running)
				run_ends(t, lt, now);
			struct task_type *ty = &t->types[lt->type];
			ty->finished++;
			ty->wall_ns += now > lt->created_ns ? now - lt->created_ns : 0;
			free(lt);
			/* A zero value stands for "gone" (the map has no removal);
			 * the map is rebuilt without them once they pile up. */
			u64map_put(&t->live, (uint64_t)e[i].value, 0);
			if (++t->gone > 65536 && t->gone > u64map_count(&t->live) / 2 &&
			    compact(t) != 0)
				return -ENOMEM;
		}
	}
	return 0;
}

static const char *const sort_names[] = {"exec", "runs",     "max",	"avg", "wall",
					 "wait", "children", "created", "name"};

int task_sort_parse(const char *s)
{
	for (size_t i = 0; i < sizeof(sort_names) / sizeof(sort_names[0]); i++)
		if (strcmp(s, sort_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *task_sort_name(enum task_sort by)
{
	return (size_t)by < sizeof(sort_names) / sizeof(sort_names[0]) ? sort_names[by] : "?";
}

static uint64_t key(const struct task_type *ty, enum task_sort by)
{
	switch (by) {
	case TASK_SORT_RUNS:
		return ty->runs;
	case TASK_SORT_MAX:
		return ty->exec_max_ns;
	case TASK_SORT_AVG:
		return ty->runs ? ty->exec_ns / ty->runs : 0;
	case TASK_SORT_WALL:
		return ty->wall_ns;
	case TASK_SORT_WAIT:
		return ty->wait_ns;
	case TASK_SORT_CHILDREN:
		return ty->children_ns;
	case TASK_SORT_CREATED:
		return ty->created;
	default:
		return ty->exec_ns;
	}
}

struct sorting {
	const struct tasks *t;
	enum task_sort by;
};

static int cmp(const void *a, const void *b, void *arg)
{
	const struct sorting *s = arg;
	const struct task_type *x = &s->t->types[*(const size_t *)a];
	const struct task_type *y = &s->t->types[*(const size_t *)b];
	if (s->by != TASK_SORT_NAME) {
		uint64_t kx = key(x, s->by), ky = key(y, s->by);
		if (kx != ky)
			return kx > ky ? -1 : 1;
	}
	return strcmp(x->name, y->name);
}

void tasks_sorted(const struct tasks *t, enum task_sort by, size_t *order)
{
	struct sorting s = {t, by};

	for (size_t i = 0; i < t->ntypes; i++)
		order[i] = i;
	qsort_r(order, t->ntypes, sizeof(*order), cmp, &s);
}
