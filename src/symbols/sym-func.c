/*
 * A function's DWARF from its entry address (see sym-func.h). The unit is
 * found through .debug_aranges when the file has them, else by walking
 * the units' own ranges (Go's files have none); the subprogram is the one
 * whose code starts at the address, also inside C++ namespaces and
 * classes. Type names are built from the DIEs: base types by name,
 * pointers and references with their pointee, structs, unions, enums and
 * classes by tag and name.
 */
#include "symbols/sym-func.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "symbols/sym-file.h"
#include "symbols/symbolize.h"

/* Whether a subprogram's code starts at pc: its low_pc, or for a function
 * the compiler split into hot and cold parts (DW_AT_ranges), the start of
 * one of its ranges (the entry's, since the .cold part is never called). */
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

/* Finds the DW_TAG_subprogram whose entry is pc, under die (depth-bounded). */
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
 * without .debug_aranges for it, such as Go's, where sym_aranges_unit
 * finds none. */
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

int sym_func_die(struct sym_file *f, uint64_t vaddr, Dwarf_Die *sub)
{
	Dwfl_Module *mod = sym_file_module(f);
	Dwarf_Addr bias = 0;
	Dwarf_Die cu_die;

	Dwarf_Die *cu = mod ? sym_aranges_unit(mod, vaddr, &bias) : NULL;
	if (!cu && mod)
		cu = cu_covering(mod, vaddr, &cu_die, &bias);
	if (!cu)
		return -ENODATA;
	return find_subprogram(cu, vaddr - bias, sub, 0) ? 0 : -ENOENT;
}

/* Appends text to buf (len bytes, *used of them taken), cutting at the end. */
static void put(char *buf, size_t len, size_t *used, const char *text)
{
	size_t n = strlen(text);

	if (*used + 1 >= len)
		return;
	if (n > len - 1 - *used)
		n = len - 1 - *used;
	memcpy(buf + *used, text, n);
	*used += n;
	buf[*used] = 0;
}

/* Writes the name of the type die's DW_AT_type refers to ("void" for
 * none), looking through typedefs, const, volatile and restrict. */
static void type_name(Dwarf_Die *die, char *buf, size_t len, size_t *used, int depth)
{
	Dwarf_Attribute at;
	Dwarf_Die type;

	if (depth > 16 || !dwarf_attr_integrate(die, DW_AT_type, &at) ||
	    !dwarf_formref_die(&at, &type)) {
		put(buf, len, used, "void");
		return;
	}
	int tag = dwarf_tag(&type);
	const char *name = dwarf_diename(&type);
	switch (tag) {
	case DW_TAG_typedef:
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type:
		type_name(&type, buf, len, used, depth + 1);
		return;
	case DW_TAG_pointer_type:
		type_name(&type, buf, len, used, depth + 1);
		put(buf, len, used, " *");
		return;
	case DW_TAG_reference_type:
		type_name(&type, buf, len, used, depth + 1);
		put(buf, len, used, " &");
		return;
	case DW_TAG_rvalue_reference_type:
		type_name(&type, buf, len, used, depth + 1);
		put(buf, len, used, " &&");
		return;
	case DW_TAG_structure_type:
		put(buf, len, used, "struct ");
		break;
	case DW_TAG_class_type:
		put(buf, len, used, "class ");
		break;
	case DW_TAG_union_type:
		put(buf, len, used, "union ");
		break;
	case DW_TAG_enumeration_type:
		put(buf, len, used, "enum ");
		break;
	case DW_TAG_array_type:
		type_name(&type, buf, len, used, depth + 1);
		put(buf, len, used, "[]");
		return;
	case DW_TAG_subroutine_type:
		put(buf, len, used, "function");
		return;
	default:
		break;
	}
	put(buf, len, used, name ? name : "?");
}

int sym_func_signature(struct sym_file *f, uint64_t vaddr, char *buf, size_t len)
{
	Dwarf_Die sub, child;
	size_t used = 0;

	if (len)
		buf[0] = 0;
	int err = sym_func_die(f, vaddr, &sub);
	if (err)
		return err;
	type_name(&sub, buf, len, &used, 0);
	put(buf, len, &used, " (");
	int n = 0;
	if (dwarf_child(&sub, &child) == 0) {
		do {
			int tag = dwarf_tag(&child);
			if (tag == DW_TAG_unspecified_parameters) {
				put(buf, len, &used, n++ ? ", ..." : "...");
				continue;
			}
			if (tag != DW_TAG_formal_parameter)
				continue;
			if (n++)
				put(buf, len, &used, ", ");
			type_name(&child, buf, len, &used, 0);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	put(buf, len, &used, ")");
	return 0;
}

/* The type die refers to, typedefs and qualifiers looked through; 0 when
 * it has none (void). */
static int plain_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute at;

	if (!dwarf_attr_integrate(die, DW_AT_type, &at) || !dwarf_formref_die(&at, type))
		return 0;
	for (int depth = 0; depth < 16; depth++) {
		int tag = dwarf_tag(type);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type &&
		    tag != DW_TAG_atomic_type)
			return 1;
		if (!dwarf_attr_integrate(type, DW_AT_type, &at) || !dwarf_formref_die(&at, type))
			return 0;
	}
	return 1;
}

static enum sym_ret_kind ret_kind(Dwarf_Die *type, int bytes)
{
	Dwarf_Attribute at;
	Dwarf_Word enc;
	int tag = dwarf_tag(type);

	if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type ||
	    tag == DW_TAG_array_type)
		return dwarf_hasattr_integrate(type, DW_AT_GNU_vector) ? SYM_RET_VECTOR
								       : SYM_RET_AGGREGATE;
	if (tag != DW_TAG_base_type || !dwarf_attr(type, DW_AT_encoding, &at) ||
	    dwarf_formudata(&at, &enc) != 0)
		return SYM_RET_INT;
	if (enc == DW_ATE_float && bytes > 8)
		return SYM_RET_LONG_FLOAT;
	if (enc == DW_ATE_complex_float && bytes > 16)
		return SYM_RET_LONG_FLOAT;
	return enc == DW_ATE_float || enc == DW_ATE_complex_float ? SYM_RET_FLOAT : SYM_RET_INT;
}

int sym_func_shape(struct sym_file *f, uint64_t vaddr, struct sym_func_shape *out)
{
	Dwarf_Die sub, type, child;

	memset(out, 0, sizeof(*out));
	int err = sym_func_die(f, vaddr, &sub);
	if (err)
		return err;
	if (plain_type(&sub, &type)) {
		int size = dwarf_bytesize(&type);
		out->ret_bytes = size > 0 ? size : 8;
		out->ret = ret_kind(&type, out->ret_bytes);
	}
	if (dwarf_child(&sub, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_unspecified_parameters)
			out->variadic = 1;
		if (tag != DW_TAG_formal_parameter)
			continue;
		int size = plain_type(&child, &type) ? dwarf_bytesize(&type) : 8;
		if (size <= 0)
			size = 8; /* a pointer, a reference, or a size DWARF leaves out */
		out->arg_bytes += ((uint32_t)size + 7) & ~7u;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}
