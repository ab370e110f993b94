/*
 * Unit tests of the proc layer's shared engines: the task lister (this
 * process's threads, a gone process), the launcher (a held command does
 * not run before its gate opens, runs after, never runs when cancelled,
 * and an exec failure comes back as an error), and the frame namer (a
 * function of this binary by leaf and by return address, code outside
 * any mapping, an offset in a file without a symbol there).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/frame-name.h"
#include "proc/launch.h"
#include "proc/proc-maps.h"
#include "proc/tasks.h"
#include "symbols/symbolize.h"

/* A pid no process can have: above the kernel's PID_MAX_LIMIT. */
#define FAKE_PID 5000001

static pthread_mutex_t hold = PTHREAD_MUTEX_INITIALIZER;

static void *held_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&hold);
	pthread_mutex_unlock(&hold);
	return NULL;
}

static void test_tasks_of_self(void **state)
{
	struct proc_ids l;
	pthread_t th;

	(void)state;
	proc_ids_init(&l);
	pthread_mutex_lock(&hold);
	assert_int_equal(pthread_create(&th, NULL, held_thread, NULL), 0);
	ssize_t n = proc_ids_list_tasks(&l, NULL, getpid(), SIZE_MAX);
	pthread_mutex_unlock(&hold);
	pthread_join(th, NULL);
	assert_int_equal(n, 2);
	/* Sorted, and the main thread's id is the pid. */
	assert_true(l.ids[0] < l.ids[1]);
	assert_int_equal(l.ids[0], getpid());
	/* The cap is honoured. */
	assert_int_equal(proc_ids_list_tasks(&l, NULL, getpid(), 1), 1);
	assert_int_equal(proc_ids_list_tasks(&l, NULL, FAKE_PID, SIZE_MAX), -ESRCH);
	proc_ids_release(&l);
}

static void test_tasks_of_fake_root(void **state)
{
	char root[] = "/tmp/recce-tasks-XXXXXX", path[128];
	struct proc_ids l;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/42", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/42/task", root);
	assert_int_equal(mkdir(path, 0700), 0);
	proc_ids_init(&l);
	/* An empty task directory is a zombie: gone. */
	assert_int_equal(proc_ids_list_tasks(&l, root, 42, SIZE_MAX), -ESRCH);
	const char *names[] = {"45", "43", "self", "0", "44x"};
	for (size_t i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/42/task/%s", root, names[i]);
		assert_int_equal(mkdir(path, 0700), 0);
	}
	assert_int_equal(proc_ids_list_tasks(&l, root, 42, SIZE_MAX), 2);
	assert_int_equal(l.ids[0], 43);
	assert_int_equal(l.ids[1], 45);
	for (size_t i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/42/task/%s", root, names[i]);
		rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/42/task", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/42", root);
	rmdir(path);
	rmdir(root);
	proc_ids_release(&l);
}

/* Whether path exists after the child had time to run. */
static int exists_after(const char *path, pid_t pid)
{
	int status;

	if (pid > 0)
		waitpid(pid, &status, 0);
	return access(path, F_OK) == 0;
}

static void test_launch_gate(void **state)
{
	char dir[] = "/tmp/recce-launch-XXXXXX", mark[128];
	struct launch l;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(mark, sizeof(mark), "%s/ran", dir);
	char *argv[] = {"touch", mark, NULL};

	/* Held, then cancelled: the command never runs. */
	assert_int_equal(launch_held(&l, argv, NULL), 0);
	assert_true(l.pid > 0);
	usleep(50000);
	assert_int_equal(access(mark, F_OK), -1);
	launch_cancel(&l);
	assert_int_equal(l.pid, 0);
	assert_false(exists_after(mark, 0));

	/* Held, then let go: it runs. */
	assert_int_equal(launch_held(&l, argv, NULL), 0);
	usleep(50000);
	assert_int_equal(access(mark, F_OK), -1);
	assert_int_equal(launch_go(&l), 0);
	assert_true(exists_after(mark, l.pid));
	unlink(mark);
	rmdir(dir);
}

static void test_launch_exec_failure(void **state)
{
	char *argv[] = {"/nonexistent/recce-no-such-program", NULL};
	struct launch l;

	(void)state;
	assert_int_equal(launch_held(&l, argv, NULL), 0);
	assert_int_equal(launch_go(&l), -ENOENT);
	assert_int_equal(l.pid, 0); /* reaped */
}

__attribute__((noinline, used)) int recce_test_named_function(int x)
{
	return x * 7 + 3;
}

static void test_frame_names(void **state)
{
	struct symbolizer *sym = symbolizer_new();
	struct proc_registry *procs = sym ? procs_new(sym) : NULL;
	struct frame_namer *n = procs ? frame_namer_new(sym, procs) : NULL;
	struct frame_name f;
	char buf[256];

	(void)state;
	assert_non_null(n);
	assert_int_equal(procs_scan(procs, getpid()), 0);
	uint64_t addr = (uint64_t)(uintptr_t)&recce_test_named_function;

	/* A leaf address at the function's entry. */
	frame_namer_user(n, getpid(), addr, 0, &f);
	assert_int_equal(f.kind, FRAME_SYMBOL);
	frame_name_format(&f, buf, sizeof(buf));
	assert_string_equal(buf, "recce_test_named_function");
	assert_non_null(f.map);

	/* A return address just past the entry is looked up one byte back:
	 * still this function. Its entry as a return address is not. */
	frame_namer_user(n, getpid(), addr + 1, 1, &f);
	frame_name_format(&f, buf, sizeof(buf));
	assert_string_equal(buf, "recce_test_named_function");
	frame_namer_user(n, getpid(), addr, 1, &f);
	frame_name_format(&f, buf, sizeof(buf));
	assert_string_not_equal(buf, "recce_test_named_function");

	/* Outside every mapping. */
	frame_namer_user(n, getpid(), 8, 0, &f);
	assert_int_equal(f.kind, FRAME_UNKNOWN);
	assert_null(f.map);
	frame_name_format(&f, buf, sizeof(buf));
	assert_string_equal(buf, "[unknown]");

	/* The last byte of the executable mapping lies past every
	 * function (the page's padding): object+0xoffset. */
	const struct proc_map *m = procs_find(procs, getpid(), addr);
	assert_non_null(m);
	frame_namer_user(n, getpid(), m->end - 1, 0, &f);
	assert_int_equal(f.kind, FRAME_OFFSET);
	assert_int_equal(f.offset, m->end - 1 - m->start + m->pgoff);
	frame_name_format(&f, buf, sizeof(buf));
	char want[64];
	snprintf(want, sizeof(want), "test-proc-engines+0x%llx", (unsigned long long)f.offset);
	assert_string_equal(buf, want);
	frame_namer_forget(n, getpid());
	frame_namer_free(n);
	procs_free(procs);
	symbolizer_free(sym);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tasks_of_self),
	    cmocka_unit_test(test_tasks_of_fake_root),
	    cmocka_unit_test(test_launch_gate),
	    cmocka_unit_test(test_launch_exec_failure),
	    cmocka_unit_test(test_frame_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
