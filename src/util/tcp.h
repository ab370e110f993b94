/*
 * TCP addresses as people write them, and the sockets behind them: one
 * reading of "HOST:PORT", "[V6]:PORT", ":PORT" and a bare word for every
 * listener (tasks --serve, agent --listen) and every client (--node).
 */
#ifndef RECCE_UTIL_TCP_H
#define RECCE_UTIL_TCP_H

#include <stddef.h>

/* Splits spec into host[hlen] and port[plen]. A bare word is the port
 * when bare_is_port (a listener's "7450"), else the host (a client's
 * "web-3"); what spec leaves out is def_host or def_port. Returns 0, or
 * -EINVAL for a spec that does not fit. */
int tcp_split(const char *spec, int bare_is_port, const char *def_host, const char *def_port,
	      char *host, size_t hlen, char *port, size_t plen);

/*
 * Listens on spec, HOST defaulting to 127.0.0.1 (PORT 0 picks a free
 * one). Returns the descriptor, or -errno (-EINVAL for an address it
 * cannot read). bound (len bytes) receives "HOST:PORT" as bound.
 */
int tcp_listen(const char *spec, char *bound, size_t len);

/* Connects to host:port, trying each address it has. Returns the
 * descriptor, or -1 with a message in err. */
int tcp_connect(const char *host, const char *port, char *err, size_t errlen);

/* The same, each try and then every read and write of the socket bounded
 * by timeout_ms (SO_RCVTIMEO, SO_SNDTIMEO; 0: unbounded). A try that
 * runs out of time fails with ETIMEDOUT in errno. */
int tcp_connect_within(const char *host, const char *port, int timeout_ms, char *err,
		       size_t errlen);

#endif
