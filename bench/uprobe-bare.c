/*
 * uprobe-bare: the baseline of the trace benchmark. It opens a bare kernel
 * uprobe and uretprobe on one function of a program (perf_event_open on the
 * uprobe PMU, one sample per hit, bound to the program's process) with
 * nothing else: no registers, no stack, the kernel's default wakeups, and a
 * reader that only skips the records. recce trace, which attaches a BPF
 * program to the same breakpoints, is measured against it.
 *
 *     uprobe-bare BINARY SYMBOL -- COMMAND [ARGS...]
 *
 * COMMAND (which must execute BINARY) starts once the probes are open,
 * and uprobe-bare exits with its status after printing the hits and lost
 * records on stderr. What the target pays per call under this program is
 * the floor that recce's per-call cost is compared with.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RING_PAGES 64

static void die(const char *what)
{
	fprintf(stderr, "uprobe-bare: %s\n", what);
	exit(2);
}

/* The file offset of SYMBOL in the ELF file at path: its address in the
 * symbol table, placed in the PT_LOAD segment that holds it. */
static uint64_t symbol_offset(const char *path, const char *symbol)
{
	int fd = open(path, O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		die("cannot open the binary");
	const unsigned char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED || (size_t)st.st_size < sizeof(Elf64_Ehdr))
		die("cannot map the binary");
	const Elf64_Ehdr *eh = (const void *)m;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)st.st_size ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > (uint64_t)st.st_size)
		die("not a 64-bit ELF file");
	const Elf64_Shdr *sh = (const void *)(m + eh->e_shoff);
	uint64_t vaddr = 0;
	for (int i = 0; i < eh->e_shnum && !vaddr; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *strs = &sh[sh[i].sh_link];
		if (sh[i].sh_offset + sh[i].sh_size > (uint64_t)st.st_size ||
		    strs->sh_offset + strs->sh_size > (uint64_t)st.st_size)
			die("a section lies outside the file");
		const Elf64_Sym *sym = (const void *)(m + sh[i].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym); k++)
			if (sym[k].st_name < strs->sh_size && sym[k].st_value &&
			    strcmp((const char *)m + strs->sh_offset + sym[k].st_name, symbol) == 0) {
				vaddr = sym[k].st_value;
				break;
			}
	}
	if (!vaddr)
		die("the symbol is not in the binary's symbol table");
	const Elf64_Phdr *ph = (const void *)(m + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr < ph[i].p_vaddr + ph[i].p_filesz)
			return vaddr - ph[i].p_vaddr + ph[i].p_offset;
	die("the symbol is in no loaded segment");
	return 0;
}

static unsigned read_uint(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned v = 0;

	if (!f || fscanf(f, "%u", &v) != 1)
		die("no uprobe PMU in /sys/bus/event_source/devices");
	fclose(f);
	return v;
}

static int open_probe(unsigned type, int ret, const char *path, uint64_t offset, pid_t pid)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = ret ? 1 : 0; /* the retprobe bit, config:0 on every kernel since 4.17 */
	attr.config1 = (uint64_t)(uintptr_t)path;
	attr.config2 = offset;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	int fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		die(strerror(errno));
	return fd;
}

/* Skips every record in the ring, counting hits and lost ones. */
static void drain(struct perf_event_mmap_page *pg, unsigned long long *hits,
		  unsigned long long *lost)
{
	const unsigned char *data = (const unsigned char *)pg + pg->data_offset;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;

	while (tail < head) {
		const struct perf_event_header *h = (const void *)(data + tail % pg->data_size);
		if (h->type == PERF_RECORD_SAMPLE)
			(*hits)++;
		else if (h->type == PERF_RECORD_LOST)
			*lost += *(const uint64_t *)(data + (tail + sizeof(*h) + 8) % pg->data_size);
		if (h->size == 0)
			break;
		tail += h->size;
	}
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
}

int main(int argc, char **argv)
{
	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fprintf(stderr, "usage: uprobe-bare BINARY SYMBOL -- COMMAND [ARGS...]\n");
		return 2;
	}
	char path[4096];
	if (!realpath(argv[1], path))
		die("cannot find the binary");
	uint64_t offset = symbol_offset(path, argv[2]);
	unsigned type = read_uint("/sys/bus/event_source/devices/uprobe/type");

	int gate[2];
	if (pipe(gate) < 0)
		die("pipe");
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		char c;
		close(gate[1]);
		if (read(gate[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[4], argv + 4);
		_exit(127);
	}
	close(gate[0]);

	int fd[2];
	struct perf_event_mmap_page *ring[2];
	size_t len = (size_t)(RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < 2; i++) {
		fd[i] = open_probe(type, i, path, offset, child);
		ring[i] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd[i], 0);
		if (ring[i] == MAP_FAILED)
			die("cannot map the ring");
	}
	if (write(gate[1], "g", 1) != 1)
		die("cannot start the command");
	close(gate[1]);

	unsigned long long hits = 0, lost = 0;
	int status = 0;
	struct pollfd pfd[2] = {{fd[0], POLLIN, 0}, {fd[1], POLLIN, 0}};
	for (;;) {
		poll(pfd, 2, 100);
		for (int i = 0; i < 2; i++)
			drain(ring[i], &hits, &lost);
		if (waitpid(child, &status, WNOHANG) == child)
			break;
	}
	for (int i = 0; i < 2; i++)
		drain(ring[i], &hits, &lost);
	fprintf(stderr, "uprobe-bare: %llu hits, %llu lost\n", hits, lost);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
