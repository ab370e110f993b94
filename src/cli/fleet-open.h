/*
 * The fleet store a command reads (`--clickhouse URL` with
 * `--clickhouse-password FILE`), for `recce query` and `recce view`.
 */
#ifndef RECCE_CLI_FLEET_OPEN_H
#define RECCE_CLI_FLEET_OPEN_H

#include "store/clickhouse.h"

/* The fleet store at url, with the password of password_file (NULL:
 * the URL's, warned of, or none). Dies with what to do when url is not
 * one (a usage error of cmd) or the password cannot be read. */
struct clickhouse *fleet_open(const char *cmd, const char *url, const char *password_file);

#endif
