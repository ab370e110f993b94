/*
 * Unit tests of the process registry: scanning this test process (an
 * address of one of its functions maps back to the function), its uid
 * and comm, the vDSO, a process noted without its maps, fork and exec,
 * and how a new mapping cuts the parts of older ones that it overlaps.
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
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/proc-maps.h"
#include "symbols/symbolize.h"

/* Pids no process can have: above the kernel's PID_MAX_LIMIT. */
#define FAKE_PID   5000001
#define FAKE_CHILD 5000002

__attribute__((noinline, used)) int recce_test_maps_function(int x)
{
	return x * 3 + 1;
}

struct fixture {
	struct symbolizer *sym;
	struct proc_registry *procs;
};

static int setup(void **state)
{
	static struct fixture fx;

	fx.sym = symbolizer_new();
	fx.procs = fx.sym ? procs_new(fx.sym) : NULL;
	*state = &fx;
	return fx.procs ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	procs_free(fx->procs);
	symbolizer_free(fx->sym);
	return 0;
}

static void test_scan_self(void **state)
{
	struct fixture *fx = *state;
	pid_t pid = getpid();
	uintptr_t addr = (uintptr_t)recce_test_maps_function;
	char exe[4096], comm[64] = "";
	struct sym_frame fr[4];
	uint64_t vaddr;

	assert_int_equal(procs_scan(fx->procs, pid), 0);
	const struct proc_map *m = procs_find(fx->procs, pid, addr);
	assert_non_null(m);
	assert_true(m->start <= addr && addr < m->end);
	assert_true(m->prot & PROT_EXEC);
	assert_non_null(realpath("/proc/self/exe", exe));
	assert_string_equal(m->path, exe);
	assert_non_null(m->file);
	assert_string_equal(sym_file_path(m->file), exe);

	/* The mapping's file symbolizes the address back to the function. */
	assert_int_equal(sym_file_offset_to_vaddr(m->file, addr - m->start + m->pgoff, &vaddr), 0);
	assert_true(symbolizer_lookup(fx->sym, m->file, vaddr, fr, 4) >= 1);
	assert_string_equal(fr[0].function, "recce_test_maps_function");

	assert_int_equal(procs_uid(fx->procs, pid), geteuid());
	FILE *f = fopen("/proc/self/comm", "r");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	assert_string_equal(procs_comm(fx->procs, pid), comm);

	/* Unmapped memory and unknown processes have no mapping. */
	assert_null(procs_find(fx->procs, pid, 0x1000));
	assert_null(procs_find(fx->procs, FAKE_PID, addr));
	assert_int_equal(procs_uid(fx->procs, FAKE_PID), (uid_t)-1);
	assert_null(procs_comm(fx->procs, FAKE_PID));
}

static void test_scan_lists_executable_mappings(void **state)
{
	struct fixture *fx = *state;
	const struct proc_map *maps;
	struct sym_file *vdso = NULL;
	int saw_vdso = 0;

	assert_int_equal(procs_scan(fx->procs, getpid()), 0);
	size_t n = procs_maps(fx->procs, getpid(), &maps);
	assert_true(n >= 3); /* this program, libc, the vDSO at least */
	for (size_t i = 0; i < n; i++) {
		assert_true(maps[i].prot & PROT_EXEC);
		assert_true(maps[i].start < maps[i].end);
		if (i > 0)
			assert_true(maps[i - 1].end <= maps[i].start);
		if (strcmp(maps[i].path, "[vdso]") == 0) {
			assert_int_equal(symbolizer_open_vdso(fx->sym, &vdso), 0);
			assert_ptr_equal(maps[i].file, vdso);
			saw_vdso = 1;
		}
	}
	assert_true(saw_vdso);
}

static void test_scan_missing_process(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(procs_scan(fx->procs, FAKE_PID), -ESRCH);
	assert_int_equal(procs_scan(fx->procs, 0), -EINVAL);
}

/* A child of this process that waits to be killed. */
static pid_t paused_child(void)
{
	pid_t child = fork();

	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	return child;
}

/* The program of a process is its lowest file mapping; a process that
 * exited keeps its mappings until the second look finds it gone. */
static void test_exe_and_forget(void **state)
{
	struct fixture *fx = *state;
	const struct proc_map *maps;

	pid_t child = paused_child();
	assert_int_equal(procs_scan(fx->procs, child), 0);
	const struct proc_map *exe = procs_exe(fx->procs, child);
	assert_non_null(exe);
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = 0;
	assert_string_equal(exe->path, self);
	assert_int_equal(procs_forget_dead(fx->procs), 0);
	/* A process registered after it, and one known by its name alone. */
	assert_int_equal(procs_scan(fx->procs, getpid()), 0);
	assert_int_equal(procs_set_comm(fx->procs, (pid_t)0x7ffffff0, "nameonly"), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(procs_forget_dead(fx->procs), 0);
	assert_true(procs_maps(fx->procs, child, &maps) > 0);
	assert_int_equal(procs_forget_dead(fx->procs), 1);
	assert_int_equal(procs_maps(fx->procs, child, &maps), 0);
	assert_null(procs_exe(fx->procs, child));
	/* Gone from the registry, name and all, as is the one never mapped;
	 * the process after them is found where it was. */
	assert_null(procs_comm(fx->procs, child));
	assert_null(procs_comm(fx->procs, (pid_t)0x7ffffff0));
	assert_true(procs_maps(fx->procs, getpid(), &maps) > 0);
	assert_non_null(procs_comm(fx->procs, getpid()));
	/* The living stay. */
	assert_int_equal(procs_scan(fx->procs, getpid()), 0);
	assert_int_equal(procs_forget_dead(fx->procs), 0);
	assert_true(procs_maps(fx->procs, getpid(), &maps) > 0);
}

static void test_fork_and_exec(void **state)
{
	struct fixture *fx = *state;
	pid_t pid = getpid();
	uintptr_t addr = (uintptr_t)recce_test_maps_function;
	const struct proc_map *maps;

	assert_int_equal(procs_scan(fx->procs, pid), 0);
	assert_int_equal(procs_fork(fx->procs, pid, FAKE_CHILD), 0);
	assert_int_equal(procs_maps(fx->procs, FAKE_CHILD, &maps),
			 procs_maps(fx->procs, pid, &maps));
	const struct proc_map *pm = procs_find(fx->procs, pid, addr);
	const struct proc_map *cm = procs_find(fx->procs, FAKE_CHILD, addr);
	assert_non_null(cm);
	assert_ptr_not_equal(pm, cm);
	assert_ptr_equal(pm->file, cm->file);
	assert_string_equal(procs_comm(fx->procs, FAKE_CHILD), procs_comm(fx->procs, pid));
	assert_int_equal(procs_uid(fx->procs, FAKE_CHILD), procs_uid(fx->procs, pid));

	/* exec empties the child only; the name can change with it. */
	procs_exec(fx->procs, FAKE_CHILD);
	assert_null(procs_find(fx->procs, FAKE_CHILD, addr));
	assert_int_equal(procs_maps(fx->procs, FAKE_CHILD, &maps), 0);
	assert_non_null(procs_find(fx->procs, pid, addr));
	assert_int_equal(procs_set_comm(fx->procs, FAKE_CHILD, "newname"), 0);
	assert_string_equal(procs_comm(fx->procs, FAKE_CHILD), "newname");

	assert_int_equal(procs_fork(fx->procs, FAKE_PID, FAKE_CHILD + 1), -ESRCH);
}

/* A process noted, not scanned: its name, program and build-id, the
 * same as a scan of it gives; a fork keeps them, an exec drops them. */
static void test_note(void **state)
{
	struct fixture *fx = *state;
	const char *path, *id, *scanned_path, *scanned_id;
	const struct proc_map *maps;

	pid_t child = paused_child();
	assert_int_equal(procs_program(fx->procs, child, &path, &id), 0);
	assert_string_equal(path, "");
	assert_int_equal(procs_note(fx->procs, child), 0);
	assert_int_equal(procs_maps(fx->procs, child, &maps), 0);
	assert_non_null(procs_comm(fx->procs, child));
	assert_int_equal(procs_program(fx->procs, child, &path, &id), 1);
	assert_int_equal(procs_scan(fx->procs, getpid()), 0);
	assert_int_equal(procs_program(fx->procs, getpid(), &scanned_path, &scanned_id), 1);
	assert_string_equal(path, scanned_path);
	assert_string_equal(id, scanned_id);
	assert_int_equal(strlen(id), 40);
	/* Noting a process known already changes nothing. */
	assert_int_equal(procs_note(fx->procs, getpid()), 0);
	assert_true(procs_maps(fx->procs, getpid(), &maps) > 0);

	assert_int_equal(procs_fork(fx->procs, child, FAKE_CHILD), 0);
	assert_int_equal(procs_program(fx->procs, FAKE_CHILD, &path, &id), 1);
	assert_string_equal(id, scanned_id);
	procs_exec(fx->procs, FAKE_CHILD);
	assert_int_equal(procs_program(fx->procs, FAKE_CHILD, &path, &id), 0);
	assert_string_equal(id, "");

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(procs_note(fx->procs, FAKE_PID), -ESRCH);
}

static void expect_map(const struct proc_map *m, uint64_t start, uint64_t end, uint64_t pgoff,
		       const char *path)
{
	assert_int_equal(m->start, start);
	assert_int_equal(m->end, end);
	assert_int_equal(m->pgoff, pgoff);
	assert_string_equal(m->path, path);
}

static void test_mmap_overlap(void **state)
{
	struct fixture *fx = *state;
	const struct proc_map *maps;
	const int rx = PROT_READ | PROT_EXEC;

	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0x10000, 0x4000, 0x100000, "/a", rx, NULL),
			 0);
	/* Non-executable mappings are not ours to track. */
	assert_int_equal(
	    procs_mmap(fx->procs, FAKE_PID, 0x10000, 0x4000, 0, "/data", PROT_READ, NULL), 0);
	assert_int_equal(procs_maps(fx->procs, FAKE_PID, &maps), 1);

	/* In the middle: the old mapping splits around it. */
	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0x11000, 0x1000, 0, "//anon", rx, NULL),
			 0);
	assert_int_equal(procs_maps(fx->procs, FAKE_PID, &maps), 3);
	expect_map(&maps[0], 0x10000, 0x11000, 0x100000, "/a");
	expect_map(&maps[1], 0x11000, 0x12000, 0, "//anon");
	expect_map(&maps[2], 0x12000, 0x14000, 0x102000, "/a");

	/* Over the start of one and the end of another. */
	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0xf000, 0x1800, 0, "/b", rx, NULL), 0);
	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0x11800, 0x1000, 0, "/c", rx, NULL), 0);
	assert_int_equal(procs_maps(fx->procs, FAKE_PID, &maps), 5);
	expect_map(&maps[0], 0xf000, 0x10800, 0, "/b");
	expect_map(&maps[1], 0x10800, 0x11000, 0x100800, "/a");
	expect_map(&maps[2], 0x11000, 0x11800, 0, "//anon");
	expect_map(&maps[3], 0x11800, 0x12800, 0, "/c");
	expect_map(&maps[4], 0x12800, 0x14000, 0x102800, "/a");
	assert_string_equal(procs_find(fx->procs, FAKE_PID, 0x12000)->path, "/c");

	/* Covering several at once leaves only the new one there. */
	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0x20000, 0x1000, 0, "/far", rx, NULL), 0);
	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0xf000, 0x6000, 0, "/all", rx, NULL), 0);
	assert_int_equal(procs_maps(fx->procs, FAKE_PID, &maps), 2);
	expect_map(&maps[0], 0xf000, 0x15000, 0, "/all");
	expect_map(&maps[1], 0x20000, 0x21000, 0, "/far");

	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0x30000, 0, 0, "/empty", rx, NULL),
			 -EINVAL);
	assert_int_equal(
	    procs_mmap(fx->procs, FAKE_PID, UINT64_MAX - 0xfff, 0x2000, 0, "/wrap", rx, NULL),
	    -EINVAL);
}

static void test_mmap_files(void **state)
{
	struct fixture *fx = *state;
	struct sym_file *exe_file = NULL, *vdso = NULL;
	char exe[4096];

	assert_non_null(realpath("/proc/self/exe", exe));
	assert_int_equal(symbolizer_open(fx->sym, exe, -1, &exe_file), 0);
	assert_int_equal(symbolizer_open_vdso(fx->sym, &vdso), 0);

	/* The process is gone (never was): the path is opened instead. */
	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0x40000, 0x1000, 0, exe, PROT_EXEC, NULL),
			 0);
	assert_ptr_equal(procs_find(fx->procs, FAKE_PID, 0x40000)->file, exe_file);
	/* ... but not for a deleted file: the path may name another file. */
	snprintf(exe + strlen(exe), sizeof(exe) - strlen(exe), " (deleted)");
	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0x50000, 0x1000, 0, exe, PROT_EXEC, NULL),
			 0);
	assert_null(procs_find(fx->procs, FAKE_PID, 0x50000)->file);
	assert_string_equal(procs_find(fx->procs, FAKE_PID, 0x50000)->path, exe);
	assert_int_equal(
	    procs_mmap(fx->procs, FAKE_PID, 0x60000, 0x2000, 0, "[vdso]", PROT_EXEC, NULL), 0);
	assert_ptr_equal(procs_find(fx->procs, FAKE_PID, 0x61000)->file, vdso);
	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0x70000, 0x1000, 0, "", PROT_EXEC, NULL),
			 0);
	assert_string_equal(procs_find(fx->procs, FAKE_PID, 0x70000)->path, "//anon");
	assert_null(procs_find(fx->procs, FAKE_PID, 0x70000)->file);
}

/* With the build-id the kernel gave for a mapping: a file gone (the
 * process and its path) is the file open with that build-id; a path
 * holding another file by now is not taken for it; a build-id found
 * nowhere is kept on the mapping, for naming later. */
static void test_mmap_build_ids(void **state)
{
	struct fixture *fx = *state;
	struct sym_file *exe_file = NULL;
	char exe[4096], deleted[4200];
	const char *other = "0123456789abcdef0123456789abcdef01234567";

	assert_non_null(realpath("/proc/self/exe", exe));
	assert_int_equal(symbolizer_open(fx->sym, exe, -1, &exe_file), 0);
	const char *id = sym_file_build_id(exe_file);
	assert_true(strlen(id) >= 16);

	snprintf(deleted, sizeof(deleted), "/tmp/recce-gone-%d/prog (deleted)", (int)getpid());
	assert_int_equal(
	    procs_mmap(fx->procs, FAKE_PID, 0x40000, 0x1000, 0, deleted, PROT_EXEC, id), 0);
	const struct proc_map *m = procs_find(fx->procs, FAKE_PID, 0x40000);
	assert_ptr_equal(m->file, exe_file);
	assert_null(m->build_id);

	/* The path is there, but with another build-id: not that file. */
	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0x50000, 0x1000, 0, exe, PROT_EXEC, other),
			 0);
	m = procs_find(fx->procs, FAKE_PID, 0x50000);
	assert_null(m->file);
	assert_string_equal(m->build_id, other);
	/* The right one at the path is taken as before. */
	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0x60000, 0x1000, 0, exe, PROT_EXEC, id),
			 0);
	assert_ptr_equal(procs_find(fx->procs, FAKE_PID, 0x60000)->file, exe_file);
}

/* A copy of the file from at to (a new file, the same build-id). */
static void copy_to(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[65536];
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* Anyone can make a file claim a build-id: one another user owns is
 * never taken for a file gone, which is kept unnamed, with its id. */
static void test_mmap_build_id_owner(void **state)
{
	struct fixture *fx = *state;
	struct sym_file *copy = NULL, *exe_file = NULL;
	char exe[4096], path[64], deleted[128];

	if (geteuid() != 0)
		skip(); /* chown to another user needs root */
	assert_non_null(realpath("/proc/self/exe", exe));
	snprintf(path, sizeof(path), "/tmp/recce-owned-%d", (int)getpid());
	copy_to(exe, path);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(symbolizer_open(fx->sym, path, -1, &copy), 0);
	unlink(path);
	const char *id = sym_file_build_id(copy);
	snprintf(deleted, sizeof(deleted), "/tmp/recce-gone-%d/prog (deleted)", (int)getpid());
	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0x40000, 0x1000, 0, deleted, PROT_EXEC, id),
			 0);
	const struct proc_map *m = procs_find(fx->procs, FAKE_PID, 0x40000);
	assert_null(m->file);
	assert_string_equal(m->build_id, id);
	/* Root's own copy is. */
	assert_int_equal(symbolizer_open(fx->sym, exe, -1, &exe_file), 0);
	assert_int_equal(procs_mmap(fx->procs, FAKE_PID, 0x50000, 0x1000, 0, deleted, PROT_EXEC, id),
			 0);
	assert_ptr_equal(procs_find(fx->procs, FAKE_PID, 0x50000)->file, exe_file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_scan_self, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_scan_lists_executable_mappings, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_scan_missing_process, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fork_and_exec, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exe_and_forget, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_note, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mmap_overlap, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mmap_files, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mmap_build_ids, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mmap_build_id_owner, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
