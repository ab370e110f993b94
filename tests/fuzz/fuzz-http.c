/* Fuzz target: the page's HTTP request reader and its token check
 * (util/http-serve.h), over whatever a client sends before it stops: the
 * input arrives on a socket whose other end then closes, as from a
 * client on the network before any authentication. The first byte picks
 * whether a token is wanted. */
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "util/http-serve.h"

static int answer(void *ctx, const char *path, const char *query, FILE *fp, const char **type)
{
	(void)ctx;
	(void)type;
	fprintf(fp, "%s?%s\n", path, query);
	return strcmp(path, "/") == 0 ? 200 : 404;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	char sink[4096];

	if (size < 1 || size > 16384 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 0;
	const char *token = data[0] & 1 ? "a-token-of-sixteen-chars" : NULL;
	if (write(sv[1], data + 1, size - 1) < 0) {
		/* a short socket buffer: what fits is the input */
	}
	shutdown(sv[1], SHUT_WR);
	http_serve_conn(sv[0], token, answer, NULL); /* closes sv[0] */
	while (read(sv[1], sink, sizeof(sink)) > 0)
		;
	close(sv[1]);
	return 0;
}
