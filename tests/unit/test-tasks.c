/*
 * Unit tests of the task metrics (events/tasks.h) on task records made
 * by hand, with times chosen so every sum is known: runs and waits, a
 * child whose runs count for its parent's type after the parent finished,
 * runs of tasks created before the reader came, ids used again, the live
 * table compacted after many tasks finished, and the sort orders.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "events/tasks.h"

static struct ring_event ev(uint16_t kind, uint64_t t, uint64_t id, const char *type,
			    uint64_t parent)
{
	struct ring_event e;

	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.time_ns = t;
	e.value = (int64_t)id;
	e.name = type ? type : "";
	e.extra = parent;
	return e;
}

static const struct task_type *type_named(const struct tasks *t, const char *name)
{
	for (size_t i = 0; i < t->ntypes; i++)
		if (strcmp(t->types[i].name, name) == 0)
			return &t->types[i];
	return NULL;
}

static void test_runs_waits_children(void **state)
{
	/* Type names as the reader interns them: one pointer a name. */
	static const char parse[] = "parse", child[] = "child";
	struct ring_event e[] = {
	    ev(RECCE_EV_TASK_CREATE, 100, 1, parse, 0),
	    ev(RECCE_EV_TASK_START, 130, 1, NULL, 0),	/* waited 30 */
	    ev(RECCE_EV_TASK_CREATE, 140, 2, child, 1), /* a child of task 1 */
	    ev(RECCE_EV_TASK_STOP, 150, 1, NULL, 0),	/* ran 20 */
	    ev(RECCE_EV_TASK_START, 160, 1, NULL, 0),	/* waited 10 */
	    ev(RECCE_EV_TASK_STOP, 200, 1, NULL, 0),	/* ran 40 */
	    ev(RECCE_EV_TASK_FINISH, 210, 1, NULL, 0),	/* wall 110 */
	    /* The child runs after its parent finished. */
	    ev(RECCE_EV_TASK_START, 300, 2, NULL, 0),
	    ev(RECCE_EV_TASK_FINISH, 370, 2, NULL, 0), /* a finish ends the run: 70 */
	    ev(RECCE_EV_TASK_START, 400, 99, NULL, 0), /* created before the reader came */
	    ev(RECCE_EV_TASK_STOP, 410, 99, NULL, 0),
	};
	struct tasks t;

	tasks_init(&t);
	assert_int_equal(tasks_feed(&t, e, sizeof(e) / sizeof(e[0])), 0);
	const struct task_type *p = type_named(&t, "parse"), *c = type_named(&t, "child");
	assert_non_null(p);
	assert_non_null(c);
	assert_int_equal(p->created, 1);
	assert_int_equal(p->finished, 1);
	assert_int_equal(p->runs, 2);
	assert_int_equal(p->exec_ns, 60);
	assert_int_equal(p->exec_max_ns, 40);
	assert_int_equal(p->wait_ns, 40);
	assert_int_equal(p->wall_ns, 110);
	assert_int_equal(p->children_ns, 70);
	assert_int_equal(c->runs, 1);
	assert_int_equal(c->exec_ns, 70);
	assert_int_equal(c->wait_ns, 160);
	assert_int_equal(c->children_ns, 0);
	assert_int_equal(t.unknown, 2);
	/* Runs of 20 and 40 ns land in the first bucket (up to 10 us). */
	assert_int_equal(p->bucket[0], 2);
	tasks_release(&t);
}

static void test_ids_used_again_and_compaction(void **state)
{
	static const char loop[] = "loop";
	struct tasks t;
	uint64_t now = 0;

	tasks_init(&t);
	/* 100,000 tasks, each id made, run and finished, then id 7 again. */
	for (uint64_t id = 1; id <= 100000; id++) {
		struct ring_event e[] = {
		    ev(RECCE_EV_TASK_CREATE, now, id, loop, 0),
		    ev(RECCE_EV_TASK_START, now + 1, id, NULL, 0),
		    ev(RECCE_EV_TASK_STOP, now + 3, id, NULL, 0),
		    ev(RECCE_EV_TASK_FINISH, now + 4, id, NULL, 0),
		};
		now += 10;
		assert_int_equal(tasks_feed(&t, e, 4), 0);
	}
	const struct task_type *l = type_named(&t, "loop");
	assert_int_equal(l->created, 100000);
	assert_int_equal(l->runs, 100000);
	assert_int_equal(l->exec_ns, 200000);
	/* Finished tasks do not pile up in the live table. */
	assert_true(u64map_count(&t.live) < 70000);
	struct ring_event again[] = {
	    ev(RECCE_EV_TASK_CREATE, now, 7, loop, 0),
	    ev(RECCE_EV_TASK_START, now + 5, 7, NULL, 0),
	    ev(RECCE_EV_TASK_STOP, now + 10, 7, NULL, 0),
	};
	assert_int_equal(tasks_feed(&t, again, 3), 0);
	assert_int_equal(l->runs, 100001);
	assert_int_equal(l->exec_max_ns, 5);
	assert_int_equal(t.unknown, 0);
	tasks_release(&t);
}

static void test_sorting(void **state)
{
	static const char a[] = "a", b[] = "b";
	struct ring_event e[] = {
	    ev(RECCE_EV_TASK_CREATE, 0, 1, a, 0),    ev(RECCE_EV_TASK_START, 0, 1, NULL, 0),
	    ev(RECCE_EV_TASK_STOP, 100, 1, NULL, 0), /* a: one run of 100 */
	    ev(RECCE_EV_TASK_CREATE, 0, 2, b, 0),    ev(RECCE_EV_TASK_START, 0, 2, NULL, 0),
	    ev(RECCE_EV_TASK_STOP, 10, 2, NULL, 0),  ev(RECCE_EV_TASK_START, 20, 2, NULL, 0),
	    ev(RECCE_EV_TASK_STOP, 30, 2, NULL, 0), /* b: two runs of 10 */
	};
	struct tasks t;
	size_t order[2];

	tasks_init(&t);
	assert_int_equal(tasks_feed(&t, e, sizeof(e) / sizeof(e[0])), 0);
	tasks_sorted(&t, TASK_SORT_EXEC, order);
	assert_string_equal(t.types[order[0]].name, "a");
	tasks_sorted(&t, TASK_SORT_RUNS, order);
	assert_string_equal(t.types[order[0]].name, "b");
	tasks_sorted(&t, TASK_SORT_NAME, order);
	assert_string_equal(t.types[order[0]].name, "a");
	assert_int_equal(task_sort_parse("children"), TASK_SORT_CHILDREN);
	assert_int_equal(task_sort_parse("nothing"), -1);
	assert_string_equal(task_sort_name(TASK_SORT_WAIT), "wait");
	tasks_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_runs_waits_children),
	    cmocka_unit_test(test_ids_used_again_and_compaction),
	    cmocka_unit_test(test_sorting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
