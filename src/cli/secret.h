/*
 * Secrets read from files (a ClickHouse password), never from the
 * command line, which every user of the machine reads in ps.
 */
#ifndef RECCE_CLI_SECRET_H
#define RECCE_CLI_SECRET_H

#include <stddef.h>

/* The first line of file, without its line end, into buf (len bytes).
 * Dies with what to do when it cannot be read, is empty or too long for
 * buf; warns when users other than its owner may read it. option names
 * the option that gave file, for messages. */
void secret_read(const char *file, const char *option, char *buf, size_t len);

#endif
