/*
 * Where recce's own files live, for every command, and how it reaches
 * other machines: decided here, from the environment and the user, and
 * handed down to the engines, which never read the environment
 * (docs/internals.md).
 */
#ifndef RECCE_CLI_DIRS_H
#define RECCE_CLI_DIRS_H

#include <stddef.h>
#include <stdint.h>

struct remote_config;
struct symbolizer;

/*
 * The cache of symbol tables, into buf: $RECCE_CACHE_DIR, else
 * $XDG_CACHE_HOME/recce, else /var/cache/recce for root and
 * ~/.cache/recce for others (perf keeps its build-id cache in a home
 * directory too). Returns 0, or -ENOENT when none applies or
 * RECCE_CACHE_DIR is set empty (caching off). *max_bytes gets
 * $RECCE_CACHE_MAX (bytes, with an optional K, M or G) or 0.
 */
int dirs_cache(char *buf, size_t len, uint64_t *max_bytes);

/* symbolizer_set_cache() on dirs_cache()'s directory, if there is one.
 * Returns 0 or -ENOMEM. */
int dirs_use_cache(struct symbolizer *s, uint64_t build_max);

/* Symbol tables are kept for binaries up to this size (the build_max of
 * the commands that name what they record); a bigger one is symbolized
 * at the addresses asked only, every time. */
#define TABLE_BUILD_MAX ((uint64_t)64 << 20)

/* recce's data: the continuous store, the agent's kept files:
 * /var/lib/recce for root, else $XDG_DATA_HOME/recce
 * (~/.local/share/recce), in buf[len]. */
void dirs_data(char *buf, size_t len);

/* The agent's files directory: "files" in dirs_data(). */
void dirs_files(char *buf, size_t len);

/* The agent's socket: /run/recce/agent.sock for root,
 * $XDG_RUNTIME_DIR/recce/agent.sock (else /tmp/recce-UID/agent.sock)
 * otherwise, in buf[len]. */
void dirs_agent_socket(char *buf, size_t len);

/* Where a client's TLS directory is: $RECCE_TLS (--tls sets it), else
 * ~/.config/recce/tls; an agent's: /etc/recce/tls as root, else that. */
void dirs_tls(int agent, char *buf, size_t len);

/* How this process reaches nodes (remote/client.h): the TLS directory,
 * $RECCE_SSH, $RECCE_REMOTE. Points into static storage. */
const struct remote_config *dirs_remote(void);

#endif
