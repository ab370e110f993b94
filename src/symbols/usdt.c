/*
 * USDT probes from `.note.stapsdt` (see usdt.h). A note's description is
 * three address-sized words (the probe, the `.stapsdt.base` it was
 * linked against, the semaphore) and three strings (provider, name,
 * arguments). A file prelinked or moved since keeps `.stapsdt.base` at
 * another address: both addresses move by the difference.
 */
#include "symbols/usdt.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/sym-file.h"
#include "util/array.h"
#include "util/x86-regs.h"

#define NT_STAPSDT 3

/* The x86-64 register names an operand may use, by width, and the
 * register each names. */
/* clang-format off */
static const struct {
	const char *name;
	uint8_t reg;
} regs[] = {
    {"rax", X86_RAX},  {"eax", X86_RAX},   {"ax", X86_RAX},	 {"al", X86_RAX},
    {"rbx", X86_RBX},  {"ebx", X86_RBX},   {"bx", X86_RBX},	 {"bl", X86_RBX},
    {"rcx", X86_RCX},  {"ecx", X86_RCX},   {"cx", X86_RCX},	 {"cl", X86_RCX},
    {"rdx", X86_RDX},  {"edx", X86_RDX},   {"dx", X86_RDX},	 {"dl", X86_RDX},
    {"rsi", X86_RSI},  {"esi", X86_RSI},   {"si", X86_RSI},	 {"sil", X86_RSI},
    {"rdi", X86_RDI},  {"edi", X86_RDI},   {"di", X86_RDI},	 {"dil", X86_RDI},
    {"rbp", X86_RBP},  {"ebp", X86_RBP},   {"bp", X86_RBP},	 {"bpl", X86_RBP},
    {"rsp", X86_RSP},  {"esp", X86_RSP},   {"sp", X86_RSP},	 {"spl", X86_RSP},
    {"r8", X86_R8},    {"r8d", X86_R8},	   {"r8w", X86_R8},	 {"r8b", X86_R8},
    {"r9", X86_R9},    {"r9d", X86_R9},	   {"r9w", X86_R9},	 {"r9b", X86_R9},
    {"r10", X86_R10},  {"r10d", X86_R10},  {"r10w", X86_R10}, {"r10b", X86_R10},
    {"r11", X86_R11},  {"r11d", X86_R11},  {"r11w", X86_R11}, {"r11b", X86_R11},
    {"r12", X86_R12},  {"r12d", X86_R12},  {"r12w", X86_R12}, {"r12b", X86_R12},
    {"r13", X86_R13},  {"r13d", X86_R13},  {"r13w", X86_R13}, {"r13b", X86_R13},
    {"r14", X86_R14},  {"r14d", X86_R14},  {"r14w", X86_R14}, {"r14b", X86_R14},
    {"r15", X86_R15},  {"r15d", X86_R15},  {"r15w", X86_R15}, {"r15b", X86_R15},
};
/* clang-format on */

/* The register named by the len bytes at s ("%" already skipped), or -1. */
static int reg_named(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (strlen(regs[i].name) == len && memcmp(regs[i].name, s, len) == 0)
			return regs[i].reg;
	return -1;
}

/* A decimal or 0x integer with an optional sign at *s, advancing *s.
 * Returns 0, or -EINVAL when none is there. */
static int parse_int(const char **s, const char *end, int64_t *v)
{
	const char *p = *s;
	int neg = 0;
	uint64_t x = 0;
	int base = 10, digits = 0;

	if (p < end && (*p == '-' || *p == '+'))
		neg = *p++ == '-';
	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		base = 16, p += 2;
	for (; p < end && isxdigit((unsigned char)*p); p++, digits++) {
		int d =
		    isdigit((unsigned char)*p) ? *p - '0' : (tolower((unsigned char)*p) - 'a' + 10);
		if (d >= base)
			break;
		x = x * (uint64_t)base + (uint64_t)d;
	}
	if (!digits)
		return -EINVAL;
	*v = neg ? -(int64_t)x : (int64_t)x;
	*s = p;
	return 0;
}

int usdt_arg_parse(const char *text, size_t len, struct usdt_arg *a)
{
	const char *end = text + len, *p = text;
	int64_t size;

	memset(a, 0, sizeof(*a));
	const char *at = memchr(text, '@', len);
	if (!at || parse_int(&p, at, &size) < 0 || p != at)
		return -EINVAL;
	a->is_signed = size < 0;
	size = size < 0 ? -size : size;
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return -EINVAL;
	a->size = (uint8_t)size;
	p = at + 1;
	if (p < end && *p == '$') {
		p++;
		if (parse_int(&p, end, &a->value) == 0 && p == end)
			a->kind = USDT_ARG_CONST;
		return 0;
	}
	if (p < end && *p == '%') {
		int r = reg_named(p + 1, (size_t)(end - p - 1));
		if (r >= 0) {
			a->kind = USDT_ARG_REG;
			a->reg = (uint8_t)r;
		}
		return 0;
	}
	/* disp(%reg), (%reg); an index register is not placed. */
	int64_t disp = 0;
	if (p < end && *p != '(' && parse_int(&p, end, &disp) < 0)
		return 0;
	if (end - p < 4 || p[0] != '(' || p[1] != '%' || end[-1] != ')')
		return 0;
	int r = reg_named(p + 2, (size_t)(end - p - 3));
	if (r >= 0) {
		a->kind = USDT_ARG_MEM;
		a->reg = (uint8_t)r;
		a->value = disp;
	}
	return 0;
}

/* The arguments of text into p. */
static void parse_args(const char *text, struct usdt_probe *p)
{
	const char *s = text;

	p->arg_text = text;
	while (*s) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		const char *e = s;
		while (*e && *e != ' ')
			e++;
		if (p->nargs < USDT_MAX_ARGS &&
		    usdt_arg_parse(s, (size_t)(e - s), &p->args[p->nargs]) < 0)
			p->args[p->nargs] = (struct usdt_arg){0};
		p->nargs++;
		s = e;
	}
	if (p->nargs > USDT_MAX_ARGS)
		p->nargs = USDT_MAX_ARGS;
}

/* The NUL-terminated string at *at within [*at, end), advancing past it;
 * NULL when it is not terminated there. */
static const char *take_str(const char **at, const char *end)
{
	const char *s = *at, *nul = memchr(s, 0, (size_t)(end - s));

	if (!nul)
		return NULL;
	*at = nul + 1;
	return s;
}

ssize_t usdt_probes(struct sym_file *f, struct usdt_probe **out)
{
	GElf_Shdr sh, bsh;
	Elf_Scn *scn = sym_file_find_section(f, ".note.stapsdt", &sh);
	Elf_Scn *base_scn = sym_file_find_section(f, ".stapsdt.base", &bsh);
	Elf_Data *data = scn && sh.sh_type == SHT_NOTE ? elf_getdata(scn, NULL) : NULL;
	struct usdt_probe *v = NULL;
	size_t n = 0, cap = 0, off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	*out = NULL;
	if (!data || !data->d_buf)
		return 0;
	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;
		const char *desc = (const char *)data->d_buf + desc_off;
		if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
		    memcmp(name, "stapsdt", 8) != 0 || nh.n_descsz < 3 * 8 + 3)
			continue;
		uint64_t w[3];
		memcpy(w, desc, sizeof(w));
		const char *at = desc + sizeof(w), *end = desc + nh.n_descsz;
		const char *provider = take_str(&at, end);
		const char *pname = provider ? take_str(&at, end) : NULL;
		const char *args = pname ? take_str(&at, end) : NULL;
		if (!pname)
			continue;
		struct usdt_probe *nv = array_reserve(v, &cap, n + 1, sizeof(*nv));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		struct usdt_probe *p = &v[n];
		memset(p, 0, sizeof(*p));
		/* Moved by prelink: the base says by how much. */
		uint64_t shift = base_scn && w[1] ? bsh.sh_addr - w[1] : 0;
		p->provider = provider;
		p->name = pname;
		p->vaddr = w[0] + shift;
		p->sema_vaddr = w[2] ? w[2] + shift : 0;
		if (sym_file_vaddr_to_offset(f, p->vaddr, &p->offset) < 0)
			continue; /* outside every segment: no probe can go there */
		if (p->sema_vaddr &&
		    sym_file_vaddr_to_offset(f, p->sema_vaddr, &p->sema_offset) < 0)
			continue; /* a semaphore no tracer could raise */
		parse_args(args ? args : "", p);
		n++;
	}
	if (!n) {
		free(v);
		v = NULL;
	}
	*out = v;
	return (ssize_t)n;
}
