/*
 * Unit tests of the symbolizer on code whose truth we know: functions of
 * this very test program (names, file:line, an inlined call expanded into
 * two frames), libstdc++ (C++ names), the vDSO, a deleted copy of this
 * program, files that are not ELF, and build-ids read from notes alone.
 * Lines are captured with __LINE__ next to the calls whose return
 * addresses are looked up, so the tests hold at any optimisation level.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/fill-names.h"
#include "profile/profile.h"
#include "symbols/eh-frame.h"
#include "symbols/elf-build-id.h"
#include "symbols/symbolize.h"

#if defined(__clang__)
#define NOIPA __attribute__((noinline, used))
#else
#define NOIPA __attribute__((noipa, used))
#endif

static volatile uintptr_t captured_ret;
static volatile int captured_line, leaf_call_line, sink;

/* Records its return address: a point inside the caller at a known line. */
NOIPA static void capture(int line)
{
	captured_ret = (uintptr_t)__builtin_return_address(0);
	captured_line = line;
}

NOIPA int recce_test_known_function(int x)
{
	capture(__LINE__);
	return x + sink;
}

static inline __attribute__((always_inline)) void recce_test_inlined_leaf(int call_line)
{
	leaf_call_line = call_line;
	capture(__LINE__);
	sink++;
}

NOIPA void recce_test_outer(void)
{
	recce_test_inlined_leaf(__LINE__);
	sink++;
}

static char self_path[4096];
static uintptr_t self_bias;

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	self_bias = info->dlpi_addr;
	return 1; /* the first object is the program itself */
}

/* Link-time address of a runtime address in this program. */
static uint64_t self_vaddr(uintptr_t addr)
{
	return addr - self_bias;
}

static int setup(void **state)
{
	if (!realpath("/proc/self/exe", self_path))
		return -1;
	dl_iterate_phdr(find_self, NULL);
	*state = symbolizer_new();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	symbolizer_free(*state);
	return 0;
}

static struct sym_file *open_self(struct symbolizer *s)
{
	struct sym_file *f = NULL;

	assert_int_equal(symbolizer_open(s, self_path, -1, &f), 0);
	assert_non_null(f);
	return f;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void test_function_and_line(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = open_self(s);
	struct sym_frame fr[8];

	recce_test_known_function(1);
	/* A return address: minus one lands inside the call instruction. */
	int n = symbolizer_lookup(s, f, self_vaddr(captured_ret) - 1, fr, 8);
	assert_int_equal(n, 1);
	assert_string_equal(fr[0].function, "recce_test_known_function");
	assert_string_equal(fr[0].system_name, "recce_test_known_function");
	assert_non_null(fr[0].file);
	assert_true(ends_with(fr[0].file, "test-symbolize.c"));
	assert_int_equal(fr[0].line, captured_line);

	/* The entry point is in the function too. */
	n = symbolizer_lookup(s, f, self_vaddr((uintptr_t)recce_test_known_function), fr, 8);
	assert_int_equal(n, 1);
	assert_string_equal(fr[0].function, "recce_test_known_function");
	assert_int_equal(sym_file_has_debuginfo(f), 1);
}

/* A profile named after the fact: a user frame under a kernel frame is
 * where its thread was (a leaf, interrupted at a function's first byte,
 * say), named at its own address; under a user frame the same address is
 * a return address, named one byte back. */
static void test_fill_leaf_under_kernel(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = open_self(s);
	uint64_t off;
	const struct profile_value_type type = {"samples", "count"};
	const int64_t one = 1;

	assert_int_equal(
	    sym_file_vaddr_to_offset(f, self_vaddr((uintptr_t)recce_test_known_function), &off), 0);
	struct profile *p = profile_new();
	assert_non_null(p);
	assert_int_equal(profile_set_sample_types(p, &type, 1), 0);
	uint64_t kmap =
	    profile_add_mapping(p, 0xffffffff80000000ull, UINT64_MAX, 0, "[kernel.kallsyms]", "");
	uint64_t umap =
	    profile_add_mapping(p, 0x10000000, 0x20000000, 0, self_path, sym_file_build_id(f));
	struct profile_line kline = {0};
	kline.function_id = profile_add_function(p, "asm_sysvec_apic_timer_interrupt",
						 "asm_sysvec_apic_timer_interrupt", "", 0);
	uint64_t kernel = profile_add_location(p, kmap, 0xffffffff81000000ull, &kline, 1);
	uint64_t entry = profile_add_location(p, umap, 0x10000000 + off, NULL, 0);
	assert_true(kernel && entry);
	const uint64_t stack[] = {kernel, entry};
	assert_int_equal(profile_add_sample(p, stack, 2, &one, NULL, 0), 0);
	struct fill_stats st;
	assert_int_equal(profile_fill_names(p, s, &st), 0);
	assert_int_equal(st.named, 1);
	const struct profile_location *l = profile_location(p, entry);
	assert_int_equal(l->nlines, 1);
	assert_string_equal(profile_function(p, l->lines[0].function_id)->name,
			    "recce_test_known_function");
	profile_free(p);
}

static void test_inlined_frames(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = open_self(s);
	struct sym_frame fr[8];

	recce_test_outer();
	int n = symbolizer_lookup(s, f, self_vaddr(captured_ret) - 1, fr, 8);
	assert_int_equal(n, 2);
	assert_string_equal(fr[0].function, "recce_test_inlined_leaf");
	assert_int_equal(fr[0].line, captured_line);
	assert_true(ends_with(fr[0].file, "test-symbolize.c"));
	assert_string_equal(fr[1].function, "recce_test_outer");
	assert_int_equal(fr[1].line, leaf_call_line);
	assert_true(ends_with(fr[1].file, "test-symbolize.c"));

	/* max bounds the frames, innermost first; 0 asks for none. */
	struct sym_frame one;
	assert_int_equal(symbolizer_lookup(s, f, self_vaddr(captured_ret) - 1, &one, 1), 1);
	assert_string_equal(one.function, "recce_test_inlined_leaf");
	assert_int_equal(symbolizer_lookup(s, f, self_vaddr(captured_ret) - 1, NULL, 0), 0);
}

static void test_cached_lookup(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = open_self(s);
	struct sym_frame a[8], b[8];
	uint64_t v;

	recce_test_outer();
	v = self_vaddr(captured_ret) - 1;
	assert_int_equal(symbolizer_lookup(s, f, v, a, 8), 2);
	assert_int_equal(symbolizer_lookup(s, f, v, b, 8), 2);
	/* Strings are interned: the second answer is the same memory. */
	assert_ptr_equal(a[0].function, b[0].function);
	assert_ptr_equal(a[1].file, b[1].file);
	assert_int_equal(a[1].line, b[1].line);
}

static void test_unknown_address(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = open_self(s);
	struct sym_frame fr[8];

	/* The ELF header and an address far past the file name no code. */
	assert_int_equal(symbolizer_lookup(s, f, 0x10, fr, 8), 0);
	assert_int_equal(symbolizer_lookup(s, f, 0x7fffffff0000ULL, fr, 8), 0);
	assert_int_equal(symbolizer_lookup(s, f, 0x10, fr, -1), -EINVAL);
}

static void test_open_cache_and_metadata(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = open_self(s), *g = NULL, *h = NULL;
	unsigned char ident[EI_NIDENT + 2];
	int fd = open(self_path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(symbolizer_open(s, self_path, -1, &g), 0);
	assert_ptr_equal(f, g);
	/* Another name for the same inode is the same file. */
	assert_int_equal(symbolizer_open(s, "/proc/self/exe", fd, &h), 0);
	assert_ptr_equal(f, h);
	assert_string_equal(sym_file_path(f), self_path);
	assert_true(sym_file_fd(f) >= 0 && sym_file_fd(f) != fd);

	assert_int_equal(pread(fd, ident, sizeof(ident), 0), (ssize_t)sizeof(ident));
	assert_int_equal(sym_file_elf_type(f), ident[EI_NIDENT] | ident[EI_NIDENT + 1] << 8);
	close(fd);

	const char *id = sym_file_build_id(f);
	assert_non_null(id);
	assert_true(strlen(id) >= 16 && strlen(id) % 2 == 0);
	assert_int_equal(strspn(id, "0123456789abcdef"), strlen(id));
}

/* The mapping of this program that holds code, from /proc/self/maps. */
static int self_text_mapping(uintptr_t addr, uint64_t *start, uint64_t *pgoff)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[4096];
	int found = 0;

	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long long lo, hi, off;
		if (sscanf(line, "%llx-%llx %*s %llx", &lo, &hi, &off) == 3 && lo <= addr &&
		    addr < hi) {
			*start = lo;
			*pgoff = off;
			found = 1;
		}
	}
	if (maps)
		fclose(maps);
	return found;
}

static void test_offset_to_vaddr(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = open_self(s);
	uintptr_t addr = (uintptr_t)recce_test_known_function;
	uint64_t start, pgoff, vaddr = 0;

	assert_true(self_text_mapping(addr, &start, &pgoff));
	assert_int_equal(sym_file_offset_to_vaddr(f, addr - start + pgoff, &vaddr), 0);
	assert_int_equal(vaddr, self_vaddr(addr));
	assert_int_equal(sym_file_offset_to_vaddr(f, 1ULL << 50, &vaddr), -ENOENT);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_not_elf(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = NULL;
	char dir[] = "/tmp/recce-test-XXXXXX", path[256];

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/text", dir);
	write_file(path, "#!/bin/sh\necho this is not ELF\n");
	assert_int_equal(symbolizer_open(s, path, -1, &f), -ENOEXEC);
	write_file(path, "");
	assert_int_equal(symbolizer_open(s, path, -1, &f), -ENOEXEC);
	/* ELF magic alone, as a relocatable object: no load addresses. */
	write_file(path, "\177ELF\2\1\1\0\0\0\0\0\0\0\0\0\1\0");
	assert_int_equal(symbolizer_open(s, path, -1, &f), -ENOEXEC);
	unlink(path);
	assert_int_equal(symbolizer_open(s, path, -1, &f), -ENOENT);
	assert_int_equal(symbolizer_open(s, dir, -1, &f), -ENOEXEC);
	rmdir(dir);
}

/* The build-id read from the notes alone is the symbolizer's; a file
 * without one, or a buffer too small for it, gives "". */
static void test_build_id_of_notes(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = open_self(s);
	char id[129], small[8], dir[] = "/tmp/recce-test-XXXXXX", path[256];
	int fd = open(self_path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(elf_build_id(fd, id, sizeof(id)), 1);
	assert_string_equal(id, sym_file_build_id(f));
	assert_int_equal(elf_build_id(fd, small, sizeof(small)), 0);
	assert_string_equal(small, "");
	close(fd);

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/text", dir);
	write_file(path, "#!/bin/sh\necho this is not ELF\n");
	fd = open(path, O_RDONLY);
	assert_int_equal(elf_build_id(fd, id, sizeof(id)), 0);
	assert_string_equal(id, "");
	close(fd);
	/* The header alone: its program headers are past the end. */
	char head[64];
	fd = open(self_path, O_RDONLY);
	assert_int_equal(read(fd, head, sizeof(head)), (ssize_t)sizeof(head));
	close(fd);
	FILE *w = fopen(path, "w");
	assert_non_null(w);
	assert_int_equal(fwrite(head, 1, sizeof(head), w), sizeof(head));
	fclose(w);
	fd = open(path, O_RDONLY);
	assert_int_equal(elf_build_id(fd, id, sizeof(id)), 0);
	assert_string_equal(id, "");
	close(fd);
	unlink(path);
	rmdir(dir);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0700);
	ssize_t n;

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

static void test_deleted_file(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = NULL;
	struct sym_frame fr[4];
	char path[] = "/tmp/recce-test-copy-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	copy_file(self_path, path);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	unlink(path);

	/* Gone by name, still readable through the descriptor. */
	assert_int_equal(symbolizer_open(s, path, -1, &f), -ENOENT);
	assert_int_equal(symbolizer_open(s, path, fd, &f), 0);
	close(fd);
	assert_int_equal(
	    symbolizer_lookup(s, f, self_vaddr((uintptr_t)recce_test_known_function), fr, 4), 1);
	assert_string_equal(fr[0].function, "recce_test_known_function");
	assert_true(ends_with(fr[0].file, "test-symbolize.c"));
}

/* Files no one marks are closed once there are more than the caller
 * keeps: their descriptors go, the marked file stays the same sym_file,
 * and a closed one opened again is a new, working one. */
static void test_sweep(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *self = open_self(s), *copies[3], *again = NULL;
	struct sym_frame fr[4];
	/* mkstemp()'s templates, each made a new file's name. */
	char paths[3][32] = {"/tmp/recce-sweep-XXXXXX", "/tmp/recce-sweep-XXXXXX",
			     "/tmp/recce-sweep-XXXXXX"};
	int fds[3];

	for (int i = 0; i < 3; i++) {
		int fd = mkstemp(paths[i]);
		assert_true(fd >= 0);
		close(fd);
		copy_file(self_path, paths[i]);
		assert_int_equal(symbolizer_open(s, paths[i], -1, &copies[i]), 0);
		assert_ptr_not_equal(copies[i], self);
		fds[i] = sym_file_fd(copies[i]);
		assert_true(fcntl(fds[i], F_GETFD) >= 0);
	}
	assert_int_equal(symbolizer_files(s), 4);
	/* Two unused, two kept: nothing closes, and the marks are cleared. */
	sym_file_mark(self);
	sym_file_mark(copies[0]);
	assert_int_equal(symbolizer_sweep(s, 2), 0);
	assert_int_equal(symbolizer_files(s), 4);
	/* Three unused now (the marks were cleared), one kept. */
	sym_file_mark(self);
	assert_int_equal(symbolizer_sweep(s, 2), 3);
	assert_int_equal(symbolizer_files(s), 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(fcntl(fds[i], F_GETFD), -1);
	struct sym_file *same = NULL;
	assert_int_equal(symbolizer_open(s, self_path, -1, &same), 0);
	assert_ptr_equal(same, self);
	assert_int_equal(symbolizer_open(s, paths[1], -1, &again), 0);
	assert_int_equal(symbolizer_files(s), 2);
	assert_int_equal(
	    symbolizer_lookup(s, again, self_vaddr((uintptr_t)recce_test_known_function), fr, 4),
	    1);
	assert_string_equal(fr[0].function, "recce_test_known_function");
	assert_string_equal(sym_file_build_id(again), sym_file_build_id(self));
	for (int i = 0; i < 3; i++)
		unlink(paths[i]);
}

/* A build-id asked for when no file had it is asked anew after a sweep
 * that closed files: the binary may be back, and a host running program
 * after program would keep an answer for each. */
static void test_sweep_forgets_misses(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *self = open_self(s), *f = NULL, *other = NULL;
	char dir[] = "/tmp/recce-miss-XXXXXX", path[64], other_path[64];
	char id[160];

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/back", dir);
	snprintf(other_path, sizeof(other_path), "%s/other", dir);
	snprintf(id, sizeof(id), "%s", sym_file_build_id(self));
	assert_int_equal(symbolizer_open_build_id(s, id, path, &f), -ENOENT);
	copy_file(self_path, path);
	/* Remembered until a sweep. */
	assert_int_equal(symbolizer_open_build_id(s, id, path, &f), -ENOENT);
	copy_file(self_path, other_path);
	assert_int_equal(symbolizer_open(s, other_path, -1, &other), 0);
	sym_file_mark(self);
	assert_int_equal(symbolizer_sweep(s, 0), 1);
	assert_int_equal(symbolizer_open_build_id(s, id, path, &f), 0);
	assert_string_equal(sym_file_build_id(f), id);
	unlink(path);
	unlink(other_path);
	rmdir(dir);
}

static void test_find_symbol(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = open_self(s);
	uint64_t vaddr = 0, size = 0;

	assert_int_equal(symbolizer_find_symbol(s, f, "recce_test_known_function", &vaddr, &size),
			 0);
	assert_int_equal(vaddr, self_vaddr((uintptr_t)recce_test_known_function));
	assert_true(size > 0);
	assert_int_equal(symbolizer_find_symbol(s, f, "recce_no_such_function", &vaddr, &size),
			 -ENOENT);
}

static int find_libstdcxx(struct dl_phdr_info *info, size_t size, void *data)
{
	if (!strstr(info->dlpi_name, "libstdc++"))
		return 0;
	snprintf(data, 4096, "%s", info->dlpi_name);
	return 1;
}

static void test_cxx_names(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = NULL;
	struct sym_frame fr[8];
	char lib[4096] = "";
	uint64_t mangled = 0, pretty = 0, bare = 0;

	/* Loaded here: the linker's --as-needed drops it from a C program. */
	void *handle = dlopen("libstdc++.so.6", RTLD_NOW);
	assert_non_null(handle);
	dl_iterate_phdr(find_libstdcxx, lib);
	assert_true(lib[0]);
	assert_int_equal(symbolizer_open(s, lib, -1, &f), 0);
	/* By mangled name, by demangled name, and without the parameters. */
	assert_int_equal(symbolizer_find_symbol(s, f, "_ZSt9terminatev", &mangled, NULL), 0);
	assert_int_equal(symbolizer_find_symbol(s, f, "std::terminate()", &pretty, NULL), 0);
	assert_int_equal(symbolizer_find_symbol(s, f, "std::terminate", &bare, NULL), 0);
	assert_true(mangled != 0);
	assert_int_equal(mangled, pretty);
	assert_int_equal(mangled, bare);

	int n = symbolizer_lookup(s, f, mangled, fr, 8);
	assert_true(n >= 1);
	assert_string_equal(fr[n - 1].function, "std::terminate()");
	assert_string_equal(fr[n - 1].system_name, "_ZSt9terminatev");
	dlclose(handle);
}

static void test_vdso(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = NULL, *g = NULL;
	struct sym_frame fr[4];
	uint64_t vaddr = 0, size = 0;

	assert_int_equal(symbolizer_open_vdso(s, &f), 0);
	assert_int_equal(symbolizer_open_vdso(s, &g), 0);
	assert_ptr_equal(f, g);
	assert_string_equal(sym_file_path(f), "[vdso]");
	assert_int_equal(symbolizer_find_symbol(s, f, "__vdso_clock_gettime", &vaddr, &size), 0);
	assert_int_equal(symbolizer_lookup(s, f, vaddr + size / 2, fr, 4), 1);
	assert_non_null(strstr(fr[0].function, "clock_gettime"));
}

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	if (!strstr(info->dlpi_name, "/libc.so"))
		return 0;
	snprintf(data, 4096, "%s", info->dlpi_name);
	return 1;
}

/* With libc6-dbg installed, libc's separate debug file is found by its
 * build-id and gives source lines; without it the test is skipped. */
static void test_separate_debuginfo(void **state)
{
	struct symbolizer *s = *state;
	struct sym_file *f = NULL;
	struct sym_frame fr[8];
	char lib[4096] = "", debug[512];
	uint64_t vaddr = 0, size = 0;

	dl_iterate_phdr(find_libc, lib);
	if (!lib[0])
		skip();
	assert_int_equal(symbolizer_open(s, lib, -1, &f), 0);
	const char *id = sym_file_build_id(f);
	snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	if (strlen(id) < 4 || access(debug, R_OK) != 0)
		skip();
	assert_int_equal(sym_file_has_debuginfo(f), 1);
	assert_int_equal(symbolizer_find_symbol(s, f, "qsort", &vaddr, &size), 0);
	int n = symbolizer_lookup(s, f, vaddr, fr, 8);
	assert_true(n >= 1);
	assert_string_equal(fr[n - 1].function, "qsort");
	assert_non_null(fr[0].file);
	assert_true(fr[0].line > 0);
}

/* Builders of .eh_frame entries for test_eh_frame: a CIE (version 1,
 * code alignment 1, data alignment -8, return address register 16) and
 * an FDE whose pc-relative sdata4 start is func and whose length is len. */
static size_t put_cie(uint8_t *b, const char *aug, const uint8_t *augdata, uint8_t auglen)
{
	size_t n = 8, alen = strlen(aug) + 1;

	b[4] = b[5] = b[6] = b[7] = 0; /* id 0: a CIE */
	b[n++] = 1;
	memcpy(b + n, aug, alen);
	n += alen;
	b[n++] = 1;
	b[n++] = 0x78;
	b[n++] = 16;
	b[n++] = auglen;
	memcpy(b + n, augdata, auglen);
	n += auglen;
	while (n % 4)
		b[n++] = 0; /* DW_CFA_nop */
	uint32_t len = (uint32_t)(n - 4);
	memcpy(b, &len, 4);
	return n;
}

static size_t put_fde(uint8_t *sec, size_t at, size_t cie, uint64_t sec_addr, uint64_t func,
		      uint32_t len)
{
	uint8_t *b = sec + at;
	uint32_t l = 12, id = (uint32_t)(at + 4 - cie);
	int32_t start = (int32_t)(func - (sec_addr + at + 8));

	memcpy(b, &l, 4);
	memcpy(b + 4, &id, 4);
	memcpy(b + 8, &start, 4);
	memcpy(b + 12, &len, 4);
	return 16;
}

static void test_eh_frame(void **state)
{
	uint8_t sec[256] = {0};
	const uint64_t addr = 0x2000;
	static const uint8_t zr[] = {0x1b};
	/* P: an indirect pc-relative personality pointer; L; R. */
	static const uint8_t zplr[] = {0x9b, 1, 2, 3, 4, 0x1b, 0x1b};
	struct ranges r;
	size_t n = 0, cie1, cie2;

	(void)state;
	cie1 = n;
	n += put_cie(sec + n, "zR", zr, sizeof(zr));
	n += put_fde(sec, n, cie1, addr, 0x1100, 0x40);
	cie2 = n;
	n += put_cie(sec + n, "zPLR", zplr, sizeof(zplr));
	n += put_fde(sec, n, cie2, addr, 0x1200, 0x80);
	/* An FDE whose CIE pointer leads before the section: skipped. */
	size_t bad = n;
	n += put_fde(sec, n, cie1, addr, 0x1300, 0x10);
	uint32_t far = 0x7fffffff;
	memcpy(sec + bad + 4, &far, 4);
	/* An empty function, then an entry longer than what is left: the
	 * first is skipped, the second ends the walk. */
	n += put_fde(sec, n, cie1, addr, 0x1400, 0);
	uint32_t huge = 1000;
	memcpy(sec + n, &huge, 4);
	n += 8;

	ranges_init(&r);
	assert_int_equal(eh_frame_ranges(sec, n, addr, &r), 2);
	assert_int_equal(ranges_finish(&r, 0), 0);
	const struct range *x = ranges_find(&r, 0x1120);
	assert_non_null(x);
	assert_int_equal(x->lo, 0x1100);
	assert_int_equal(x->hi, 0x1140);
	x = ranges_find(&r, 0x127f);
	assert_non_null(x);
	assert_int_equal(x->lo, 0x1200);
	assert_null(ranges_find(&r, 0x1140));
	assert_null(ranges_find(&r, 0x1300));
	ranges_release(&r);

	/* Every prefix of the section reads without error or overrun. */
	for (size_t cut = 0; cut <= n; cut++) {
		ranges_init(&r);
		assert_true(eh_frame_ranges(sec, cut, addr, &r) >= 0);
		ranges_release(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_function_and_line, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fill_leaf_under_kernel, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_inlined_frames, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cached_lookup, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unknown_address, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_open_cache_and_metadata, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_offset_to_vaddr, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_elf, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_build_id_of_notes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sweep_forgets_misses, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_deleted_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_find_symbol, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cxx_names, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_vdso, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_separate_debuginfo, setup, teardown),
	    cmocka_unit_test(test_eh_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
