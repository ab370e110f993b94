/*
 * DWARF signatures and argument values of traced functions (see
 * trace-args.h). Only the integer-class registers are modelled: a float
 * travels in an xmm register and is shown as "?", and after a struct
 * passed by value the register assignment is no longer certain, so the
 * remaining parameters are shown as "?" too, never as a wrong value.
 */
#include "trace/trace-args.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "symbols/symbolize.h"

/* Follows typedefs and qualifiers to the type that decides the class. */
static int peel_type(Dwarf_Die *type)
{
	for (int depth = 0; depth < 16; depth++) {
		int tag = dwarf_tag(type);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type &&
		    tag != DW_TAG_atomic_type)
			return tag;
		Dwarf_Attribute at;
		if (!dwarf_attr(type, DW_AT_type, &at) || !dwarf_formref_die(&at, type))
			return -1; /* const void */
	}
	return -1;
}

/* Whether a class or struct type is passed and returned by invisible
 * reference (DW_AT_calling_convention DW_CC_pass_by_reference, which GCC
 * and Clang write for C++ types with a non-trivial copy or destructor). */
static int by_reference(Dwarf_Die *type)
{
	Dwarf_Attribute at;
	Dwarf_Word cc;

	return dwarf_attr_integrate(type, DW_AT_calling_convention, &at) &&
	       dwarf_formudata(&at, &cc) == 0 && cc == DW_CC_pass_by_reference;
}

/* Whether a function returning the type of die returns it in memory: the
 * caller passes where in rdi (the hidden first argument) and gets the same
 * address back in rax. Under the SysV ABI: a struct, class or union over
 * 16 bytes, or one passed by invisible reference. */
static int returns_in_memory(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	Dwarf_Die type;

	if (!dwarf_attr_integrate(die, DW_AT_type, &at) || !dwarf_formref_die(&at, &type))
		return 0;
	int tag = peel_type(&type);
	if (tag != DW_TAG_structure_type && tag != DW_TAG_class_type && tag != DW_TAG_union_type)
		return 0;
	return dwarf_bytesize(&type) > 16 || by_reference(&type);
}

/* Classifies the type referred to by die's DW_AT_type. */
static uint32_t classify(Dwarf_Die *die, int *size)
{
	Dwarf_Attribute at;
	Dwarf_Die type;
	Dwarf_Word enc;

	*size = 8;
	/* Through DW_AT_specification: a C++ definition outside its class or
	 * namespace keeps its return type on the declaration. */
	if (!dwarf_attr_integrate(die, DW_AT_type, &at) || !dwarf_formref_die(&at, &type))
		return TRACE_ARG_NONE; /* void */
	int tag = peel_type(&type);
	switch (tag) {
	case DW_TAG_pointer_type: {
		Dwarf_Die to;
		if (dwarf_attr(&type, DW_AT_type, &at) && dwarf_formref_die(&at, &to) &&
		    peel_type(&to) == DW_TAG_base_type && dwarf_attr(&to, DW_AT_encoding, &at) &&
		    dwarf_formudata(&at, &enc) == 0 &&
		    (enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char))
			return TRACE_ARG_STR;
		return TRACE_ARG_HEX;
	}
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		return TRACE_ARG_HEX;
	case DW_TAG_enumeration_type:
		*size = dwarf_bytesize(&type) > 0 ? dwarf_bytesize(&type) : 4;
		return TRACE_ARG_INT;
	case DW_TAG_base_type:
		break;
	default:
		/* A C++ object the ABI passes by invisible reference (it has a
		 * non-trivial copy or destructor): its address, in one integer
		 * register. */
		if (by_reference(&type))
			return TRACE_ARG_HEX;
		return TRACE_ARG_UNKNOWN; /* struct, union, array */
	}
	int bytes = dwarf_bytesize(&type);
	*size = bytes > 0 && bytes <= 8 ? bytes : 8;
	if (!dwarf_attr(&type, DW_AT_encoding, &at) || dwarf_formudata(&at, &enc) != 0)
		return TRACE_ARG_HEX;
	if (bytes > 8)
		return TRACE_ARG_UNKNOWN; /* __int128, long double */
	switch (enc) {
	case DW_ATE_signed:
		return TRACE_ARG_INT;
	case DW_ATE_unsigned:
		return TRACE_ARG_UINT;
	case DW_ATE_boolean:
		return TRACE_ARG_BOOL;
	case DW_ATE_signed_char:
	case DW_ATE_unsigned_char:
		return TRACE_ARG_CHAR;
	case DW_ATE_float:
		return TRACE_ARG_UNKNOWN;
	default:
		return TRACE_ARG_HEX;
	}
}

/* Whether die's type is a floating-point base type (passed in xmm). */
static int is_float(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	Dwarf_Die type;
	Dwarf_Word enc;

	return dwarf_attr(die, DW_AT_type, &at) && dwarf_formref_die(&at, &type) &&
	       peel_type(&type) == DW_TAG_base_type && dwarf_attr(&type, DW_AT_encoding, &at) &&
	       dwarf_formudata(&at, &enc) == 0 && enc == DW_ATE_float;
}

/* Finds the DW_TAG_subprogram whose entry is pc, under die (depth-bounded). */
/* Whether a subprogram's code starts at pc: its low_pc, or for a function
 * the compiler split into hot and cold parts (DW_AT_ranges), the start of
 * one of its ranges (the entry's, since the .cold part is never probed). */
static int starts_at(Dwarf_Die *die, Dwarf_Addr pc)
{
	Dwarf_Addr low, base, start, end;
	ptrdiff_t off = 0;

	if (dwarf_lowpc(die, &low) == 0)
		return low == pc;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0)
		if (start == pc)
			return 1;
	return 0;
}

static int find_subprogram(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *out, int depth)
{
	Dwarf_Die child;

	if (depth > 8 || dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram && starts_at(&child, pc)) {
			*out = child;
			return 1;
		}
		/* C++ namespaces and classes hold definitions too. */
		if ((tag == DW_TAG_namespace || tag == DW_TAG_structure_type ||
		     tag == DW_TAG_class_type) &&
		    find_subprogram(&child, pc, out, depth + 1))
			return 1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The unit whose ranges hold vaddr, found by walking the units: for files
 * without .debug_aranges, such as Go's, where dwfl_module_addrdie fails. */
static Dwarf_Die *cu_covering(Dwfl_Module *mod, uint64_t vaddr, Dwarf_Die *out, Dwarf_Addr *bias)
{
	Dwarf *dw = dwfl_module_getdwarf(mod, bias);
	Dwarf_Off off = 0, next;
	size_t hsize;

	for (int n = 0;
	     dw && n < 100000 && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0;
	     n++, off = next)
		if (dwarf_offdie(dw, off + hsize, out) && dwarf_haspc(out, vaddr - *bias) > 0)
			return out;
	return NULL;
}

/* A compiler's clone or fragment (".constprop.0", ".isra.0", ".part.0",
 * ".cold"): not Go's "main.f", whose dot is the package's. */
static int is_clone(const char *symname)
{
	return strstr(symname, ".constprop.") || strstr(symname, ".isra.") ||
	       strstr(symname, ".part.") || strstr(symname, ".cold") ||
	       strstr(symname, ".lto_priv.");
}

/* The next register of an argument assignment (SysV or Go's). */
struct reg_assign {
	int next, nregs;
	int certain; /* no argument of unknown width came before */
};

/* Records parameter n (param, classified as kind and size) in sig, with
 * the next free register when its place is certain. A float goes to an
 * xmm register and leaves the integer ones alone; a struct or anything
 * wider makes the rest of the assignment uncertain. */
static void add_param(struct trace_sig *sig, int n, Dwarf_Die *param, uint32_t kind, int size,
		      struct reg_assign *ra)
{
	int reg = -1;

	if (kind != TRACE_ARG_UNKNOWN && ra->certain && ra->next < ra->nregs)
		reg = ra->next++;
	if (kind == TRACE_ARG_UNKNOWN && !is_float(param))
		ra->certain = 0;
	if (reg < 0)
		kind = TRACE_ARG_UNKNOWN;
	if (n >= TRACE_MAX_ARGS)
		return;
	const char *name = dwarf_diename(param);
	if (name)
		trace_copy_str(sig->params[n].name, sizeof(sig->params[n].name), name);
	else
		snprintf(sig->params[n].name, sizeof(sig->params[n].name), "arg%d", n);
	sig->params[n].kind = kind;
	sig->params[n].size = size;
	sig->params[n].reg = reg;
}

/* Whether a Go parameter DIE is a result (DW_AT_variable_parameter). */
static int is_go_result(Dwarf_Die *param)
{
	Dwarf_Attribute at;
	bool flag = false;

	return dwarf_attr(param, DW_AT_variable_parameter, &at) &&
	       dwarf_formflag(&at, &flag) == 0 && flag;
}

/*
 * Go's register ABI (ABIInternal, amd64): integer arguments in RAX, RBX,
 * RCX, RDI, RSI, R8, R9, R10, R11, in order, results from RAX; floats in
 * X0-X14 leave those alone. A string, slice, interface or struct takes
 * several registers or the stack, so the ones after it are not shown.
 */
static void describe_go(Dwarf_Die *sub, struct trace_sig *sig)
{
	Dwarf_Die child;
	struct reg_assign ra = {0, TRACE_GO_REGS, 1};
	int n = 0, have_ret = 0;

	sig->ret_kind = TRACE_ARG_NONE;
	if (dwarf_child(sub, &child) != 0)
		goto done;
	do {
		if (dwarf_tag(&child) != DW_TAG_formal_parameter)
			continue;
		int size;
		uint32_t kind = classify(&child, &size);
		if (is_go_result(&child)) {
			if (!have_ret++) {
				sig->ret_kind = kind == TRACE_ARG_STR ? TRACE_ARG_HEX : kind;
				sig->ret_size = size;
			}
			continue;
		}
		if (kind == TRACE_ARG_STR)
			kind = TRACE_ARG_HEX; /* a *byte, not a NUL-terminated string */
		add_param(sig, n, &child, kind, size, &ra);
		n++;
	} while (dwarf_siblingof(&child, &child) == 0);
done:
	sig->arity = n;
	sig->nparams = n < TRACE_MAX_ARGS ? n : TRACE_MAX_ARGS;
	sig->go = 1;
	sig->known = 1;
}

int trace_args_describe(struct sym_file *f, const char *symname, uint64_t vaddr,
			struct trace_sig *sig)
{
	Dwfl_Module *mod = sym_file_module(f);
	Dwarf_Addr bias;
	Dwarf_Die sub;

	memset(sig, 0, sizeof(*sig));
	sig->arity = -1;
	if (symname && is_clone(symname)) {
		sig->reason = "a compiler-made clone, whose arguments need not follow the ABI";
		return -ENOENT;
	}
	Dwarf_Die cu_die;
	Dwarf_Die *cu = mod ? dwfl_module_addrdie(mod, vaddr, &bias) : NULL;
	if (!cu && mod)
		cu = cu_covering(mod, vaddr, &cu_die, &bias);
	if (!cu) {
		sig->reason = "no DWARF debug info for it";
		return -ENOENT;
	}
	if (!find_subprogram(cu, vaddr - bias, &sub, 0)) {
		sig->reason = "its DWARF does not describe this entry point";
		return -ENOENT;
	}
	if (sym_file_is_go(f)) {
		describe_go(&sub, sig);
		return 0;
	}
	/* An out-of-line definition points at its declaration for the
	 * parameters only through DW_AT_specification; the children of the
	 * definition are what the compiler emitted for this body. */
	Dwarf_Die child;
	int in_memory = returns_in_memory(&sub);
	struct reg_assign ra = {in_memory, 6, 1};
	int n = 0;
	if (dwarf_child(&sub, &child) == 0) {
		do {
			if (dwarf_tag(&child) != DW_TAG_formal_parameter)
				continue;
			int size;
			uint32_t kind = classify(&child, &size);
			add_param(sig, n, &child, kind, size, &ra);
			n++;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	sig->arity = n;
	sig->nparams = n < TRACE_MAX_ARGS ? n : TRACE_MAX_ARGS;
	sig->ret_size = 8;
	sig->ret_kind = in_memory ? TRACE_ARG_OBJECT : classify(&sub, &sig->ret_size);
	sig->known = 1;
	return 0;
}

int trace_read_string(pid_t pid, uint64_t addr, char *buf, size_t cap)
{
	size_t got = 0;

	if (!addr || cap < 2)
		return -EFAULT;
	/* Read page by page: one unmapped page after a short string must not
	 * fail the whole read. */
	while (got < cap - 1) {
		uint64_t at = addr + got;
		size_t want = 4096 - (size_t)(at & 4095);
		if (want > cap - 1 - got)
			want = cap - 1 - got;
		struct iovec local = {buf + got, want};
		struct iovec remote = {(void *)(uintptr_t)at, want};
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n <= 0) {
			if (got == 0)
				return n < 0 ? -errno : -EFAULT;
			break;
		}
		void *nul = memchr(buf + got, 0, (size_t)n);
		if (nul)
			return 0;
		got += (size_t)n;
	}
	buf[got] = 0;
	return got >= cap - 1 ? 1 : 0;
}

int trace_read_word(pid_t pid, uint64_t addr, uint64_t *val)
{
	struct iovec local = {val, sizeof(*val)};
	struct iovec remote = {(void *)(uintptr_t)addr, sizeof(*val)};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)sizeof(*val))
		return 0;
	return n < 0 ? -errno : -EFAULT;
}

/* The register narrowed to its declared size, sign-extended for signed. */
static uint64_t narrow(uint64_t v, uint32_t kind, int size)
{
	if (size >= 8)
		return v;
	uint64_t mask = (1ULL << (size * 8)) - 1;
	v &= mask;
	if (kind == TRACE_ARG_INT && (v >> (size * 8 - 1)) & 1)
		v |= ~mask;
	return v;
}

void trace_args_fill(const struct trace_sig *sig, const uint64_t *regs, pid_t pid, int raw,
		     struct trace_record *r)
{
	int nregs = sig->go ? TRACE_GO_REGS : TRACE_MAX_ARGS;

	memcpy(r->regs, regs, sizeof(r->regs));
	r->arity = sig->arity;
	r->ret_kind = (uint8_t)(sig->known ? sig->ret_kind : TRACE_ARG_HEX);
	r->nargs = 0;
	if (!sig->known) {
		if (!raw)
			return;
		for (int i = 0; i < TRACE_MAX_ARGS; i++) {
			struct trace_arg *a = &r->args[i];
			memset(a, 0, sizeof(*a));
			snprintf(a->name, sizeof(a->name), "arg%d", i);
			a->kind = TRACE_ARG_HEX;
			a->value = regs[i];
		}
		r->nargs = TRACE_MAX_ARGS;
		return;
	}
	for (int i = 0; i < sig->nparams; i++) {
		struct trace_arg *a = &r->args[i];
		memset(a, 0, sizeof(*a));
		memcpy(a->name, sig->params[i].name, sizeof(a->name));
		a->kind = sig->params[i].kind;
		int reg = sig->params[i].reg;
		if (reg < 0 || reg >= nregs)
			continue; /* shown as "?" */
		a->value = narrow(regs[reg], a->kind, sig->params[i].size);
		if (a->kind == TRACE_ARG_STR) {
			int rc = trace_read_string(pid, regs[reg], a->str, sizeof(a->str));
			if (rc < 0)
				a->flags |= TRACE_STR_UNREADABLE;
			else if (rc > 0)
				a->flags |= TRACE_STR_TRUNCATED;
		}
	}
	r->nargs = (uint8_t)sig->nparams;
}

/* The return value narrowed like an argument (used by cmd-trace). */
uint64_t trace_args_narrow_ret(const struct trace_sig *sig, uint64_t rax)
{
	return sig->known ? narrow(rax, sig->ret_kind, sig->ret_size) : rax;
}
