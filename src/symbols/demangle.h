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

/*
 * The name a person writes for the function symbol sym: demangled without
 * its parameter list and qualifiers ("shop::fill_map" for
 * _ZN4shop8fill_mapEll, "hot::engine::rank" for a Rust path), a compiler
 * clone's suffix kept as the symbol spells it (".constprop.0"), and sym
 * itself when it is not mangled. A new string, or NULL out of memory.
 */
char *demangle_function(const char *sym);

/* Whether sym is a fragment of a function the compiler split off (".cold",
 * ".part.N"), which is not a function a caller calls by name. */
int demangle_is_fragment(const char *sym);

#endif
