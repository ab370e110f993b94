/*
 * TLS for the agent (OpenSSL): TLS 1.3 only, certificates on both sides,
 * both checked against the deployment's own CA before one byte of the
 * protocol is read.
 *
 * A TLS directory holds ca.pem (the CA), and agent.pem with agent.key on
 * a node, client.pem with client.key on a client's machine. `recce certs
 * init DIR` makes the CA and one of each; `recce certs client NAME` makes
 * another client's directory (DIR/NAME: ca.pem, client.pem, client.key).
 * The CA's key stays in DIR/ca.key, mode 0600. `recce certs host NAME`
 * makes a host's own agent certificate at any time (DIR/hosts/NAME).
 * `recce certs revoke NAME` adds a client's or host's certificate to
 * DIR/crl.pem, which an agent or client whose directory holds it reads
 * at every connection.
 *
 * Once a connection is up, tls_relay() carries its bytes to and from a
 * plain socket, so the protocol's code reads and writes descriptors
 * whatever the transport.
 */
#ifndef RECCE_TLS_H
#define RECCE_TLS_H

#include <stddef.h>

/* Makes DIR (0700) with a CA, an agent certificate valid for the host
 * names and addresses hosts[] (and this machine's name, localhost,
 * 127.0.0.1 and ::1), and a client certificate "client". Refuses a DIR
 * that already has a CA. Returns 0, or -1 with a message in err. */
int tls_certs_init(const char *dir, const char *const *hosts, size_t nhosts, char *err,
		   size_t errlen);

/* Makes DIR/NAME with ca.pem and a certificate and key for client NAME,
 * signed by DIR's CA. Returns 0, or -1 with a message in err. */
int tls_certs_client(const char *dir, const char *name, char *err, size_t errlen);

/* Where a CA's directory keeps its hosts' own directories. */
#define TLS_HOSTS_DIR "hosts"

/* Makes DIR/hosts/NAME with ca.pem and an agent certificate and key of
 * its own for host NAME, valid for NAME and each of addrs[] (addresses
 * or more names), signed by DIR's CA: one key per host, made at any
 * time. Returns 0, or -1 with a message in err. */
int tls_certs_host(const char *dir, const char *name, const char *const *addrs, size_t naddrs,
		   char *err, size_t errlen);

/* The revocation list of a CA's directory, which an agent whose --tls
 * directory holds it reads at every connection. */
#define TLS_CRL_FILE "crl.pem"

/* Revokes the certificate made for client name in the CA's directory dir
 * (dir/NAME/client.pem, or dir/client.pem for "client"), or else for host
 * name (dir/hosts/NAME/agent.pem): adds it to
 * dir/crl.pem, signed by the CA, made when missing. Returns 0, 1 when it
 * was revoked already, or -1 with err saying why. */
int tls_certs_revoke(const char *dir, const char *name, char *err, size_t errlen);

struct tls_peer {
	char name[256]; /* the peer certificate's common name */
};

/* The agent's side of an accepted TCP connection fd: the handshake (at
 * most timeout_ms), then a relay. Returns a plain socket to serve, or -1
 * with a message in err (the connection is then closed). */
int tls_accept(const char *dir, int fd, int timeout_ms, struct tls_peer *peer, char *err,
	       size_t errlen);

/* The same for a client that shows no certificate (a browser, a
 * Prometheus server): TLS 1.3 with the agent's certificate, whoever the
 * peer is, for a service that authenticates its requests itself (the
 * continuous agent's page and its token). */
int tls_accept_anyone(const char *dir, int fd, int timeout_ms, char *err, size_t errlen);

/* The client's side: connects to host:port, checks the agent's
 * certificate against the CA of dir and the name host, and relays.
 * Returns a plain socket, or -1 with a message in err. */
int tls_connect(const char *dir, const char *host, const char *port, char *err, size_t errlen);

/* Waits, at most timeout_ms, for the relays of this process to end:
 * after closing its plain socket, a client lets its relay close the TLS
 * connection and free it before the process exits. */
void tls_relays_wait(int timeout_ms);

/* Why a relay of this process ended in a TLS error, such as the alert an
 * agent sends when it refuses a client's certificate ("sslv3 alert
 * certificate revoked"), into buf; "" when none did. */
const char *tls_relay_error(char *buf, size_t len);

/* Whether dir has what an agent serves TLS with (ca.pem, agent.pem,
 * agent.key): 0, or -ENOENT with the first missing file's path in
 * missing. */
int tls_agent_files(const char *dir, char *missing, size_t len);

#endif
