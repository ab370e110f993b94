/*
 * Demangling of symbol names: C++ (Itanium ABI), Rust legacy names
 * (_ZN...17h<hash>E, printed without the ::h<hash> suffix) and Rust v0
 * names (_R...), printed the way rustc-demangle's alternate form prints
 * them, all through libiberty. Names come from target files: the
 * demangler bounds its work and gives up (NULL) rather than guess.
 */
#ifndef RECCE_DEMANGLE_H
#define RECCE_DEMANGLE_H

/* The demangled form of name in a new string that the caller frees, or
 * NULL if name is not mangled in a scheme we decode (or memory ran out). */
char *demangle_symbol(const char *name);

/* True if name looks mangled (C++ or Rust), i.e. is worth demangling. */
int demangle_is_mangled(const char *name);

#endif
