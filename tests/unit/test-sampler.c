/*
 * Unit tests of the recording engines on real processes: the sampler
 * attached to a spinning child stops at its duration with samples whose
 * leaf is the function the child spins in, and leaves the child running;
 * it stops when its target exits, when its stop descriptor is readable,
 * and when a launched command ends (with that command's status); it
 * refuses a pid that is gone and a command that cannot be run. The
 * resolver names addresses of this process (the leaf as is, a return
 * address by its call) and calls an address in no mapping "[unknown]";
 * it puts Python frames in place of the interpreter's frame, or counts
 * them when a whole native stack has no place for them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/proc-maps.h"
#include "proc/py-names.h"
#include "profile/aggregate.h"
#include "profile/profile.h"
#include "profile/resolve.h"
#include "profile/stacks.h"
#include "sampling/sampler.h"
#include "symbols/symbolize.h"
#include "util/clock.h"

static __attribute__((noinline)) void spin_victim(double seconds)
{
	volatile uint64_t x = 0;
	uint64_t end = time_now_ns(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9);

	while (seconds <= 0 || time_now_ns(CLOCK_MONOTONIC) < end)
		for (int i = 0; i < 100000; i++)
			x++;
}

/* A child of this process that spins for seconds (0: until killed). */
static pid_t spawn_spinner(double seconds)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		spin_victim(seconds);
		_exit(0);
	}
	return pid;
}

/* The engines a recording needs, as `recce record` wires them. */
struct rig {
	struct symbolizer *sym;
	struct proc_registry *procs;
	struct aggregate *agg;
	struct resolver *res;
	struct sampler_config cfg;
	struct sampler *s;
	struct sampler_stats st;
};

static void rig_init(struct rig *r, const pid_t *pids, size_t npids, char *const *argv,
		     double duration, int stop_fd)
{
	memset(r, 0, sizeof(*r));
	r->sym = symbolizer_new();
	r->procs = procs_new(r->sym);
	r->agg = aggregate_new();
	r->res = resolver_new(r->procs, r->sym, 1000000);
	assert_non_null(r->res);
	r->cfg.pids = pids;
	r->cfg.npids = npids;
	r->cfg.argv = argv;
	r->cfg.freq = 1000;
	r->cfg.duration = duration;
	r->cfg.stop_fd = stop_fd;
	r->cfg.procs = r->procs;
	r->cfg.agg = r->agg;
	r->cfg.resolver = r->res;
	assert_int_equal(sampler_new(&r->cfg, &r->s), 0);
}

static void rig_run(struct rig *r)
{
	assert_int_equal(sampler_start(r->s), 0);
	assert_int_equal(sampler_run(r->s), 0);
	sampler_get_stats(r->s, &r->st);
}

static void rig_release(struct rig *r)
{
	sampler_free(r->s);
	resolver_free(r->res);
	aggregate_free(r->agg);
	procs_free(r->procs);
	symbolizer_free(r->sym);
}

/* The state letter of pid in /proc/PID/stat ('R', 'S', 'T', ...). */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *close_paren;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	close_paren = strrchr(buf, ')');
	return close_paren && close_paren[1] ? close_paren[2] : '?';
}

/* The share of the profile's CPU time whose leaf is the function name. */
static double leaf_share(struct profile *p, const char *name)
{
	struct stack_filter none = {0};
	struct stack_set set;
	int64_t hit = 0;

	assert_int_equal(stacks_from_profile(p, 1, &none, &set), 0);
	for (size_t i = 0; i < set.n; i++) {
		const struct stack_entry *e = &set.entries[i];
		if (e->nframes && strcmp(e->frames[e->nframes - 1].name, name) == 0)
			hit += e->value;
	}
	double share = set.total ? (double)hit / (double)set.total : 0;
	stacks_release(&set);
	return share;
}

static void test_attach_duration(void **state)
{
	pid_t child = spawn_spinner(0);
	struct rig r;

	(void)state;
	rig_init(&r, &child, 1, NULL, 0.4, -1);
	rig_run(&r);
	assert_int_equal(r.st.stop, SAMPLER_STOP_DURATION);
	assert_true(r.st.samples > 0);
	assert_int_equal(r.st.lost, 0);
	assert_int_equal(resolver_add(r.res, r.agg, 0), 0);
	assert_true(leaf_share(resolver_profile(r.res), "spin_victim") > 0.5);
	rig_release(&r);
	/* The target comes first: still running, not stopped. */
	assert_int_equal(kill(child, 0), 0);
	assert_int_equal(proc_state(child), 'R');
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

static void test_target_exits(void **state)
{
	pid_t child = spawn_spinner(0.3);
	struct rig r;

	(void)state;
	rig_init(&r, &child, 1, NULL, 0, -1);
	rig_run(&r);
	assert_int_equal(r.st.stop, SAMPLER_STOP_EXITED);
	assert_true(r.st.samples > 0);
	rig_release(&r);
	int st;
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_stop_fd(void **state)
{
	pid_t child = spawn_spinner(0);
	int p[2];
	struct rig r;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	rig_init(&r, &child, 1, NULL, 60, p[0]);
	rig_run(&r);
	assert_int_equal(r.st.stop, SAMPLER_STOP_SIGNAL);
	rig_release(&r);
	assert_int_equal(kill(child, 0), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(p[0]), close(p[1]);
}

static void test_launch(void **state)
{
	char *const argv[] = {"sh", "-c", "exit 3", NULL};
	char *const missing[] = {"/nonexistent/recce-test", NULL};
	struct rig r;

	(void)state;
	rig_init(&r, NULL, 0, argv, 0, -1);
	rig_run(&r);
	assert_int_equal(r.st.stop, SAMPLER_STOP_EXITED);
	assert_true(r.st.child_exited);
	assert_true(WIFEXITED(r.st.child_status) && WEXITSTATUS(r.st.child_status) == 3);
	rig_release(&r);

	rig_init(&r, NULL, 0, missing, 0, -1);
	assert_int_equal(sampler_start(r.s), -ENOENT);
	assert_int_equal(sampler_exec_failed(r.s), 1);
	rig_release(&r);
}

static void test_gone_pid(void **state)
{
	pid_t child = fork();
	struct rig r;

	(void)state;
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	rig_init(&r, &child, 1, NULL, 1, -1);
	assert_int_equal(sampler_start(r.s), -ESRCH);
	const struct sampler_target *t;
	assert_int_equal(sampler_targets(r.s, &t), 1);
	assert_int_equal(t[0].err, -ESRCH);
	rig_release(&r);
}

static __attribute__((noinline)) uint64_t resolve_leaf(uint64_t x)
{
	return x * 2654435761u + 7;
}

static __attribute__((noinline)) uint64_t resolve_caller(uint64_t x)
{
	return resolve_leaf(x) ^ resolve_leaf(x + 1);
}

static void test_resolve_self(void **state)
{
	struct rig r;
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	/* The leaf exactly at its function's start; a "return address" just
	 * past the caller's start, named by the byte before it. */
	uint64_t frames[] = {(uint64_t)(uintptr_t)resolve_leaf,
			     (uint64_t)(uintptr_t)resolve_caller + 1};
	uint64_t nowhere[] = {0x10};

	(void)state;
	assert_true(resolve_caller(3) != 0);
	rig_init(&r, &pid, 1, NULL, 1, -1);
	assert_int_equal(procs_scan(r.procs, pid), 0);
	assert_int_equal(aggregate_add(r.agg, pid, tid, frames, 2, 1000000), 0);
	assert_int_equal(aggregate_add(r.agg, pid, tid, nowhere, 1, 1000000), 0);
	assert_int_equal(resolver_add(r.res, r.agg, 0), 0);
	struct profile *p = resolver_profile(r.res);
	struct stack_filter none = {0};
	struct stack_set set;
	assert_int_equal(stacks_from_profile(p, 0, &none, &set), 0);
	assert_int_equal(set.n, 2);
	const struct stack_entry *named =
	    set.entries[0].nframes == 2 ? &set.entries[0] : &set.entries[1];
	const struct stack_entry *unknown =
	    named == &set.entries[0] ? &set.entries[1] : &set.entries[0];
	assert_int_equal(named->nframes, 2);
	assert_string_equal(named->frames[0].name, "resolve_caller"); /* root first */
	assert_string_equal(named->frames[1].name, "resolve_leaf");
	assert_non_null(strstr(named->frames[1].file, "test-sampler.c"));
	assert_int_equal(unknown->nframes, 1);
	assert_string_equal(unknown->frames[0].name, "[unknown]");
	assert_int_equal(stacks_entry_num(named, "pid", -1), pid);
	stacks_release(&set);
	rig_release(&r);
}

/* Named as CPython's interpreter loop, for the resolver's placing of
 * Python frames. */
__attribute__((noinline)) uint64_t _PyEval_EvalFrameDefault(uint64_t x)
{
	return resolve_leaf(x) + 1;
}

extern char _start[];

/* The names of stack k of set, root first, "a;b;c", into out. */
static void stack_names(const struct stack_set *set, size_t k, char *out, size_t cap)
{
	const struct stack_entry *e = &set->entries[k];
	size_t len = 0;

	out[0] = 0;
	for (size_t i = 0; i < e->nframes && len < cap; i++)
		len +=
		    (size_t)snprintf(out + len, cap - len, "%s%s", i ? ";" : "", e->frames[i].name);
}

/* Python frames go in place of the interpreter's native frame; where the
 * native walk stops short of the root, at its root end; where the walk is
 * whole and has no frame for them, nowhere: native frames only, counted. */
static void test_resolve_python(void **state)
{
	struct rig r;
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);

	(void)state;
	assert_true(_PyEval_EvalFrameDefault(1) != 0);
	rig_init(&r, &pid, 1, NULL, 1, -1);
	assert_int_equal(procs_scan(r.procs, pid), 0);
	uint64_t py = py_names_id(procs_py_names(r.procs), "app.handle", "app.py", 7);
	assert_true(py != 0);
	uint64_t leaf = (uint64_t)(uintptr_t)resolve_leaf;
	uint64_t eval = (uint64_t)(uintptr_t)_PyEval_EvalFrameDefault + 1;
	uint64_t root = (uint64_t)(uintptr_t)_start + 1;
	uint64_t caller = (uint64_t)(uintptr_t)resolve_caller + 1;
	uint64_t placed[] = {leaf, eval, root, PY_STACK_MARK, py | PY_STACK_ENTRY};
	uint64_t whole[] = {leaf, caller, root, PY_STACK_MARK, py | PY_STACK_ENTRY};
	uint64_t cut[] = {leaf, caller, PY_STACK_MARK, py | PY_STACK_ENTRY};
	assert_int_equal(aggregate_add(r.agg, pid, tid, placed, 5, 1000000), 0);
	assert_int_equal(aggregate_add(r.agg, pid, tid, whole, 5, 1000000), 0);
	assert_int_equal(aggregate_add(r.agg, pid, tid, whole, 5, 1000000), 0);
	assert_int_equal(aggregate_add(r.agg, pid, tid, cut, 4, 1000000), 0);
	assert_int_equal(resolver_add(r.res, r.agg, 0), 0);
	assert_int_equal(resolver_python_unplaced(r.res), 2);
	struct stack_filter none = {0};
	struct stack_set set;
	assert_int_equal(stacks_from_profile(resolver_profile(r.res), 0, &none, &set), 0);
	assert_int_equal(set.n, 3);
	int seen = 0;
	for (size_t k = 0; k < set.n; k++) {
		char names[512];
		stack_names(&set, k, names, sizeof(names));
		if (strcmp(names, "_start;app.handle;resolve_leaf") == 0)
			seen |= 1;
		else if (strcmp(names, "_start;resolve_caller;resolve_leaf") == 0)
			seen |= 2;
		else if (strcmp(names, "app.handle;resolve_caller;resolve_leaf") == 0)
			seen |= 4;
		else
			fail_msg("a stack of no expected kind: %s", names);
	}
	assert_int_equal(seen, 7);
	stacks_release(&set);
	rig_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_attach_duration), cmocka_unit_test(test_target_exits),
	    cmocka_unit_test(test_stop_fd),	    cmocka_unit_test(test_launch),
	    cmocka_unit_test(test_gone_pid),	    cmocka_unit_test(test_resolve_self),
	    cmocka_unit_test(test_resolve_python),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
