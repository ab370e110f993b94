/*
 * Rust v0 names (_R...), decoded by hand (see demangle-v0.c for why);
 * demangle_symbol() is the entry point for everyone else.
 */
#ifndef RECCE_DEMANGLE_V0_H
#define RECCE_DEMANGLE_V0_H

/* The demangled form of a v0 name in a new string, or NULL. */
char *demangle_rust_v0(const char *name);

#endif
