/*
 * Certificates, handshakes and the relay of the agent's TLS (see tls.h).
 */
#include "remote/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "util/evloop.h"
#include "util/readall.h"
#include "util/tcp.h"

#define DAYS_CA	  3650
#define DAYS_LEAF 825

static void say(char *err, size_t len, const char *what, const char *path)
{
	unsigned long e = ERR_get_error();
	char reason[256] = "";

	if (e)
		ERR_error_string_n(e, reason, sizeof(reason));
	snprintf(err, len, "%s%s%s%s%s", what, path ? " " : "", path ? path : "",
		 *reason ? ": " : "", reason);
	ERR_clear_error();
}

static EVP_PKEY *new_key(void)
{
	return EVP_EC_gen("P-256");
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return -1;
	int ok = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -1;
}

/* A certificate for key named cn, signed by issuer (itself when NULL). */
static X509 *new_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key, int days,
		      const char *kind, const char *san)
{
	X509 *c = X509_new();
	unsigned char serial[16];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (!c || fd < 0 || read(fd, serial, sizeof(serial)) != (ssize_t)sizeof(serial)) {
		if (fd >= 0)
			close(fd);
		X509_free(c);
		return NULL;
	}
	close(fd);
	serial[0] &= 0x7f;
	BIGNUM *bn = BN_bin2bn(serial, sizeof(serial), NULL);
	X509_set_version(c, 2);
	BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(c));
	BN_free(bn);
	X509_gmtime_adj(X509_getm_notBefore(c), -3600);
	X509_gmtime_adj(X509_getm_notAfter(c), (long)days * 86400);
	X509_set_pubkey(c, key);
	X509_NAME *name = X509_get_subject_name(c);
	X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"recce", -1, -1,
				   0);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(c, issuer ? X509_get_subject_name(issuer) : name);
	X509 *by = issuer ? issuer : c;
	int bad = 0;
	if (strcmp(kind, "ca") == 0) {
		bad |= add_ext(c, by, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
		bad |= add_ext(c, by, NID_key_usage, "critical,keyCertSign,cRLSign");
	} else {
		bad |= add_ext(c, by, NID_basic_constraints, "critical,CA:FALSE");
		bad |= add_ext(c, by, NID_key_usage, "critical,digitalSignature");
		bad |= add_ext(c, by, NID_ext_key_usage,
			       strcmp(kind, "agent") == 0 ? "serverAuth" : "clientAuth");
		if (san)
			bad |= add_ext(c, by, NID_subject_alt_name, san);
	}
	bad |= add_ext(c, by, NID_subject_key_identifier, "hash");
	if (bad || !X509_sign(c, issuer_key ? issuer_key : key, EVP_sha256())) {
		X509_free(c);
		return NULL;
	}
	return c;
}

static int write_pem(const char *dir, const char *file, X509 *cert, EVP_PKEY *key, char *err,
		     size_t errlen)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, key ? 0600 : 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	int ok =
	    key ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) : PEM_write_X509(f, cert);
	if (fclose(f) != 0 || !ok) {
		say(err, errlen, "cannot write", path);
		return -1;
	}
	return 0;
}

/* A leaf of kind (agent, client) named cn into dir/prefix.pem and .key. */
static int make_leaf(const char *dir, const char *prefix, const char *kind, const char *cn,
		     const char *san, X509 *ca, EVP_PKEY *ca_key, char *err, size_t errlen)
{
	EVP_PKEY *key = new_key();
	X509 *cert = key ? new_cert(key, cn, ca, ca_key, DAYS_LEAF, kind, san) : NULL;
	char pem[64], keyf[64];
	int rc = -1;

	snprintf(pem, sizeof(pem), "%s.pem", prefix);
	snprintf(keyf, sizeof(keyf), "%s.key", prefix);
	if (!cert)
		say(err, errlen, "cannot make the certificate of", cn);
	else if (write_pem(dir, keyf, NULL, key, err, errlen) == 0 &&
		 write_pem(dir, pem, cert, NULL, err, errlen) == 0)
		rc = 0;
	X509_free(cert);
	EVP_PKEY_free(key);
	return rc;
}

/* "DNS:a,IP:b,...": a certificate's names, first (with a comma when
 * both), then each of names[] as an address or a host name. Returns 0,
 * or -1 when they do not fit. */
static int san_list(char *san, size_t cap, const char *first, const char *const *names, size_t n)
{
	size_t len = (size_t)snprintf(san, cap, "%s", first);

	for (size_t i = 0; i < n && len < cap; i++) {
		struct in6_addr a6;
		struct in_addr a4;
		int ip = inet_pton(AF_INET, names[i], &a4) == 1 ||
			 inet_pton(AF_INET6, names[i], &a6) == 1;
		len += (size_t)snprintf(san + len, cap - len, "%s%s:%s", len ? "," : "",
					ip ? "IP" : "DNS", names[i]);
	}
	return len < cap ? 0 : -1;
}

int tls_certs_init(const char *dir, const char *const *hosts, size_t nhosts, char *err,
		   size_t errlen)
{
	char path[4096], host[256] = "localhost", first[512], san[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/ca.key", dir);
	if (stat(path, &st) == 0) {
		snprintf(err, errlen, "%s already has a CA (ca.key): give another directory", dir);
		return -1;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot make %s: %s", dir, strerror(errno));
		return -1;
	}
	gethostname(host, sizeof(host) - 1);
	snprintf(first, sizeof(first), "DNS:%s,DNS:localhost,IP:127.0.0.1,IP:0:0:0:0:0:0:0:1",
		 host);
	if (san_list(san, sizeof(san), first, hosts, nhosts) < 0) {
		snprintf(err, errlen, "too many --host names");
		return -1;
	}
	EVP_PKEY *ca_key = new_key();
	X509 *ca = ca_key ? new_cert(ca_key, "recce CA", NULL, NULL, DAYS_CA, "ca", NULL) : NULL;
	int rc = -1;
	if (!ca)
		say(err, errlen, "cannot make the CA", NULL);
	else if (write_pem(dir, "ca.key", NULL, ca_key, err, errlen) == 0 &&
		 write_pem(dir, "ca.pem", ca, NULL, err, errlen) == 0 &&
		 make_leaf(dir, "agent", "agent", host, san, ca, ca_key, err, errlen) == 0 &&
		 make_leaf(dir, "client", "client", "client", NULL, ca, ca_key, err, errlen) == 0)
		rc = 0;
	X509_free(ca);
	EVP_PKEY_free(ca_key);
	return rc;
}

static X509 *read_cert(const char *path)
{
	FILE *f = fopen(path, "re");
	X509 *c = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;

	if (f)
		fclose(f);
	return c;
}

static EVP_PKEY *read_key(const char *path)
{
	FILE *f = fopen(path, "re");
	EVP_PKEY *k = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;

	if (f)
		fclose(f);
	return k;
}

/* Whether name cannot be a client's (a directory of the CA's); err says
 * why. */
static int client_name_bad(const char *name, char *err, size_t errlen)
{
	if (*name && !strchr(name, '/') && name[0] != '.')
		return 0;
	snprintf(err, errlen, "a client's name is a plain word, not '%s'", name);
	return 1;
}

/* The CA of dir and, when it reads, its key in *key (else NULL). */
static X509 *read_ca(const char *dir, EVP_PKEY **key)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/ca.pem", dir);
	X509 *ca = read_cert(path);
	snprintf(path, sizeof(path), "%s/ca.key", dir);
	*key = ca ? read_key(path) : NULL;
	return ca;
}

/* Makes sub (in parent, made first when not NULL) with dir's CA and a
 * certificate and key of kind (agent, client) for name, valid for san;
 * a sub that exists is refused, with exists_hint after the reason.
 * Returns 0, or -1 with a message in err. */
static int make_member(const char *dir, const char *parent, const char *sub, const char *kind,
		       const char *name, const char *san, const char *exists_hint, char *err,
		       size_t errlen)
{
	EVP_PKEY *ca_key;
	X509 *ca = read_ca(dir, &ca_key);
	int rc = -1;

	if (!ca || !ca_key)
		snprintf(err, errlen,
			 "%s has no CA (ca.pem and ca.key): run recce certs init first", dir);
	else if (parent && mkdir(parent, 0700) < 0 && errno != EEXIST)
		snprintf(err, errlen, "cannot make %s: %s", parent, strerror(errno));
	else if (mkdir(sub, 0700) < 0)
		snprintf(err, errlen, "cannot make %s: %s%s", sub, strerror(errno),
			 errno == EEXIST ? exists_hint : "");
	else if (write_pem(sub, "ca.pem", ca, NULL, err, errlen) == 0 &&
		 make_leaf(sub, kind, kind, name, san, ca, ca_key, err, errlen) == 0)
		rc = 0;
	X509_free(ca);
	EVP_PKEY_free(ca_key);
	return rc;
}

int tls_certs_client(const char *dir, const char *name, char *err, size_t errlen)
{
	char sub[4096];

	if (client_name_bad(name, err, errlen))
		return -1;
	snprintf(sub, sizeof(sub), "%s/%s", dir, name);
	return make_member(dir, NULL, sub, "client", name, NULL, "", err, errlen);
}

int tls_certs_host(const char *dir, const char *name, const char *const *addrs, size_t naddrs,
		   char *err, size_t errlen)
{
	char hosts[4096], sub[4096 + 256], first[512], san[4096];

	if (client_name_bad(name, err, errlen))
		return -1;
	snprintf(first, sizeof(first), "DNS:%s", name);
	if (san_list(san, sizeof(san), first, addrs, naddrs) < 0) {
		snprintf(err, errlen, "too many --ip addresses");
		return -1;
	}
	snprintf(hosts, sizeof(hosts), "%s/" TLS_HOSTS_DIR, dir);
	snprintf(sub, sizeof(sub), "%s/%s", hosts, name);
	return make_member(dir, hosts, sub, "agent", name, san,
			   " (revoke the host and remove it to make it again)", err, errlen);
}

/* The revocation list of dir, or a new empty one of ca; NULL when the
 * file is there but does not read (*bad then set). */
static X509_CRL *read_crl(const char *dir, X509 *ca, int *bad)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/" TLS_CRL_FILE, dir);
	*bad = 0;
	FILE *f = fopen(path, "re");
	if (f) {
		X509_CRL *crl = PEM_read_X509_CRL(f, NULL, NULL, NULL);
		fclose(f);
		*bad = !crl;
		return crl;
	}
	if (errno != ENOENT) {
		*bad = 1;
		return NULL;
	}
	if (!ca)
		return NULL; /* none, and none to be made */
	X509_CRL *crl = X509_CRL_new();
	if (crl && (!X509_CRL_set_version(crl, 1) ||
		    !X509_CRL_set_issuer_name(crl, X509_get_subject_name(ca)))) {
		X509_CRL_free(crl);
		crl = NULL;
	}
	return crl;
}

int tls_certs_revoke(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[4096], tmp[4096 + 8];
	int bad, rc = -1;

	if (client_name_bad(name, err, errlen))
		return -1;
	EVP_PKEY *ca_key;
	X509 *ca = read_ca(dir, &ca_key);
	/* The certificate certs made for name: NAME/client.pem, the first
	 * client's client.pem for "client", else host NAME's agent.pem. */
	if (strcmp(name, "client") == 0)
		snprintf(path, sizeof(path), "%s/client.pem", dir);
	else
		snprintf(path, sizeof(path), "%s/%s/client.pem", dir, name);
	X509 *cert = ca_key ? read_cert(path) : NULL;
	if (ca_key && !cert && strcmp(name, "client") != 0) {
		snprintf(path, sizeof(path), "%s/" TLS_HOSTS_DIR "/%s/agent.pem", dir, name);
		cert = read_cert(path);
	}
	X509_CRL *crl = cert ? read_crl(dir, ca, &bad) : NULL;
	X509_REVOKED *r = NULL;
	ASN1_TIME *now = NULL, *next = NULL;
	if (!ca || !ca_key) {
		snprintf(err, errlen,
			 "%s has no CA (ca.pem and ca.key): revoke where the "
			 "certificate was made",
			 dir);
		goto out;
	}
	if (!cert) {
		snprintf(err, errlen,
			 "cannot read %s: revoke a client or host certs made in %s by its name",
			 path, dir);
		goto out;
	}
	if (!crl) {
		snprintf(err, errlen, "%s/" TLS_CRL_FILE " does not read as a revocation list",
			 dir);
		goto out;
	}
	X509_REVOKED *old = NULL;
	if (X509_CRL_get0_by_serial(crl, &old, X509_get_serialNumber(cert)) == 1) {
		rc = 1; /* revoked already */
		goto out;
	}
	now = X509_gmtime_adj(NULL, 0);
	/* An agent refuses every client once its list has expired: it is
	 * renewed by each revocation, and lasts as long as the CA. */
	next = X509_gmtime_adj(NULL, (long)DAYS_CA * 86400);
	r = X509_REVOKED_new();
	if (!now || !next || !r || !X509_REVOKED_set_serialNumber(r, X509_get_serialNumber(cert)) ||
	    !X509_REVOKED_set_revocationDate(r, now) || !X509_CRL_add0_revoked(crl, r)) {
		X509_REVOKED_free(r);
		say(err, errlen, "cannot revoke", name);
		goto out;
	}
	if (!X509_CRL_set1_lastUpdate(crl, now) || !X509_CRL_set1_nextUpdate(crl, next) ||
	    !X509_CRL_sort(crl) || !X509_CRL_sign(crl, ca_key, EVP_sha256())) {
		say(err, errlen, "cannot sign the revocation list of", dir);
		goto out;
	}
	/* Whole or not at all: an agent may read it at any moment. */
	snprintf(path, sizeof(path), "%s/" TLS_CRL_FILE, dir);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	int ok = PEM_write_X509_CRL(f, crl);
	if (fclose(f) != 0 || !ok || rename(tmp, path) < 0) {
		say(err, errlen, "cannot write", path);
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	ASN1_TIME_free(now);
	ASN1_TIME_free(next);
	X509_CRL_free(crl);
	X509_free(cert);
	X509_free(ca);
	EVP_PKEY_free(ca_key);
	return rc;
}

int tls_agent_files(const char *dir, char *missing, size_t len)
{
	static const char *const need[] = {"ca.pem", "agent.pem", "agent.key"};

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		snprintf(missing, len, "%s/%s", dir, need[i]);
		if (access(missing, R_OK) < 0)
			return -ENOENT;
	}
	return 0;
}

/* The revocation list of dir, when there is one, read at every
 * connection, so that a revocation holds from the next one: an agent
 * refuses a revoked client, a client a revoked agent. */
static int load_crl(SSL_CTX *ctx, const char *dir, char *err, size_t errlen)
{
	char path[4096];
	int bad;
	X509_CRL *crl = read_crl(dir, NULL, &bad);

	if (!crl && !bad)
		return 0;
	snprintf(path, sizeof(path), "%s/" TLS_CRL_FILE, dir);
	X509_STORE *store = SSL_CTX_get_cert_store(ctx);
	if (!crl || !X509_STORE_add_crl(store, crl)) {
		X509_CRL_free(crl);
		say(err, errlen, "cannot read the revocation list", path);
		return -1;
	}
	X509_CRL_free(crl);
	X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
	return 0;
}

/* A TLS 1.3 context with dir's CA and the certificate prefix.pem/.key,
 * requiring the peer's certificate unless anyone (a browser's page). */
static SSL_CTX *context(const char *dir, const char *prefix, int server, int anyone, char *err,
			size_t errlen)
{
	char cert[4096], key[4096], ca[4096];
	SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());

	snprintf(cert, sizeof(cert), "%s/%s.pem", dir, prefix);
	snprintf(key, sizeof(key), "%s/%s.key", dir, prefix);
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION)) {
		say(err, errlen, "cannot set TLS 1.3 up", NULL);
	} else if (SSL_CTX_use_certificate_file(ctx, cert, SSL_FILETYPE_PEM) != 1) {
		say(err, errlen, "cannot read the certificate", cert);
	} else if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		say(err, errlen, "cannot read the key", key);
	} else if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		say(err, errlen, "cannot read the CA", ca);
	} else if (!anyone && load_crl(ctx, dir, err, errlen) < 0) {
		/* A list that does not read refuses everyone, not no one. */
	} else {
		if (!anyone)
			SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
					   NULL);
		return ctx;
	}
	SSL_CTX_free(ctx);
	return NULL;
}

struct relay {
	SSL *ssl;
	int net, plain;
};

/* Relays still running, so that a process may wait for them to close
 * their connections before it exits. */
static pthread_mutex_t relays_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t relays_done = PTHREAD_COND_INITIALIZER;
static int relays;

/* Carries bytes between the TLS connection and the plain socket until
 * either side ends. */
/* Why the TLS side of a relay of this process ended in an error (an
 * alert of the peer's), or "". */
static char relay_error[256];

/* A side of a relay is ready: revents[0] the TLS side's, [1] the plain. */
static void on_side(void *arg, int fd, short revents)
{
	short *ready = arg;

	(void)fd;
	*ready = revents;
}

static void *relay_run(void *arg)
{
	struct relay *r = arg;
	char buf[16384];
	short ready[2];
	struct evloop loop;

	evloop_init(&loop);
	if (evloop_add(&loop, r->net, 0, on_side, &ready[0]) < 0 ||
	    evloop_add(&loop, r->plain, 0, on_side, &ready[1]) < 0)
		goto out;
	for (;;) {
		ready[0] = ready[1] = 0;
		/* Bytes TLS has decrypted already wake no descriptor. */
		int w = evloop_wait(&loop, SSL_pending(r->ssl) ? 0 : INT64_MAX, -1);
		if (w == -EINTR)
			continue;
		if (w < 0)
			break;
		if (SSL_pending(r->ssl) || ready[0]) {
			int n = SSL_read(r->ssl, buf, sizeof(buf));
			if (n <= 0) {
				int e = SSL_get_error(r->ssl, n);
				if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
					continue;
				unsigned long why = e == SSL_ERROR_SSL ? ERR_peek_error() : 0;
				if (why) {
					pthread_mutex_lock(&relays_lock);
					snprintf(relay_error, sizeof(relay_error), "%s",
						 ERR_reason_error_string(why)
						     ? ERR_reason_error_string(why)
						     : "a TLS error");
					pthread_mutex_unlock(&relays_lock);
				}
				ERR_clear_error();
				break;
			}
			if (write_all(r->plain, buf, (size_t)n) < 0)
				break;
		}
		if (ready[1]) {
			ssize_t got = read(r->plain, buf, sizeof(buf));
			if (got <= 0 || SSL_write(r->ssl, buf, (int)got) <= 0)
				break;
		}
	}
out:
	evloop_release(&loop);
	SSL_shutdown(r->ssl);
	SSL_free(r->ssl);
	close(r->net);
	shutdown(r->plain, SHUT_RDWR);
	close(r->plain);
	free(r);
	OPENSSL_thread_stop();
	pthread_mutex_lock(&relays_lock);
	relays--;
	pthread_cond_broadcast(&relays_done);
	pthread_mutex_unlock(&relays_lock);
	return NULL;
}

void tls_relays_wait(int timeout_ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&relays_lock);
	while (relays > 0 && pthread_cond_timedwait(&relays_done, &relays_lock, &until) == 0)
		;
	pthread_mutex_unlock(&relays_lock);
}

/* Starts the relay of ssl over net; returns the caller's plain end. */
const char *tls_relay_error(char *buf, size_t len)
{
	pthread_mutex_lock(&relays_lock);
	snprintf(buf, len, "%s", relay_error);
	pthread_mutex_unlock(&relays_lock);
	return buf;
}

static int relay_start(SSL *ssl, int net, char *err, size_t errlen)
{
	int pair[2];
	struct relay *r = malloc(sizeof(*r));
	pthread_t t;

	if (!r || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
		snprintf(err, errlen, "cannot relay the connection: %s", strerror(errno));
		free(r);
		return -1;
	}
	*r = (struct relay){ssl, net, pair[1]};
	pthread_mutex_lock(&relays_lock);
	relays++;
	pthread_mutex_unlock(&relays_lock);
	if (pthread_create(&t, NULL, relay_run, r) != 0) {
		pthread_mutex_lock(&relays_lock);
		relays--;
		pthread_mutex_unlock(&relays_lock);
		snprintf(err, errlen, "cannot start the relay");
		close(pair[0]);
		close(pair[1]);
		free(r);
		return -1;
	}
	pthread_detach(t);
	return pair[0];
}

static void set_timeout(int fd, int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* The server's side of fd, with a client certificate or (anyone) none. */
static int accept_tls(const char *dir, int fd, int timeout_ms, int anyone, struct tls_peer *peer,
		      char *err, size_t errlen)
{
	SSL_CTX *ctx = context(dir, "agent", 1, anyone, err, errlen);
	SSL *ssl = ctx ? SSL_new(ctx) : NULL;

	SSL_CTX_free(ctx); /* the connection keeps its reference */
	if (!ssl) {
		close(fd);
		return -1;
	}
	set_timeout(fd, timeout_ms);
	SSL_set_fd(ssl, fd);
	if (SSL_accept(ssl) != 1) {
		long v = SSL_get_verify_result(ssl);
		if (v != X509_V_OK) {
			snprintf(err, errlen, "its certificate: %s",
				 X509_verify_cert_error_string(v));
			ERR_clear_error();
		} else {
			say(err, errlen, "TLS handshake refused", NULL);
		}
		SSL_free(ssl);
		close(fd);
		return -1;
	}
	set_timeout(fd, 0);
	X509 *cert = SSL_get1_peer_certificate(ssl);
	peer->name[0] = 0;
	if (cert) {
		X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, peer->name,
					  sizeof(peer->name));
		X509_free(cert);
	}
	return relay_start(ssl, fd, err, errlen);
}

int tls_accept(const char *dir, int fd, int timeout_ms, struct tls_peer *peer, char *err,
	       size_t errlen)
{
	return accept_tls(dir, fd, timeout_ms, 0, peer, err, errlen);
}

int tls_accept_anyone(const char *dir, int fd, int timeout_ms, char *err, size_t errlen)
{
	struct tls_peer peer;

	return accept_tls(dir, fd, timeout_ms, 1, &peer, err, errlen);
}

int tls_connect(const char *dir, const char *host, const char *port, char *err, size_t errlen)
{
	int fd = tcp_connect(host, port, err, errlen);

	if (fd < 0)
		return -1;
	SSL_CTX *ctx = context(dir, "client", 0, 0, err, errlen);
	SSL *ssl = ctx ? SSL_new(ctx) : NULL;
	SSL_CTX_free(ctx);
	if (!ssl) {
		close(fd);
		return -1;
	}
	struct in6_addr a6;
	struct in_addr a4;
	int ip = inet_pton(AF_INET, host, &a4) == 1 || inet_pton(AF_INET6, host, &a6) == 1;
	X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
	if (ip)
		X509_VERIFY_PARAM_set1_ip_asc(param, host);
	else
		SSL_set1_host(ssl, host);
	SSL_set_tlsext_host_name(ssl, host);
	SSL_set_fd(ssl, fd);
	if (SSL_connect(ssl) != 1) {
		long v = SSL_get_verify_result(ssl);
		if (v != X509_V_OK)
			snprintf(err, errlen, "the agent's certificate: %s",
				 X509_verify_cert_error_string(v));
		else
			say(err, errlen, "TLS handshake refused", NULL);
		SSL_free(ssl);
		close(fd);
		return -1;
	}
	return relay_start(ssl, fd, err, errlen);
}
