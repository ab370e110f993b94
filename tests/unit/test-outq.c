/*
 * Unit tests of a command's output held for a slow client
 * (remote/outq.h) and of the progress lines commands write for it
 * (util/progress.h): over a socket nobody reads, lines past the limit are
 * dropped whole, counted, and said on the standard error; what arrives
 * plus what was dropped is every line; progress lines parse, and
 * anything else does not.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "remote/frame.h"
#include "remote/outq.h"
#include "util/progress.h"

#define LINES 20000

/* Everything written to the socket so far, decoded: stream 1's bytes
 * into out, stream 2's into err. */
static void drain(int fd, char **out, size_t *nout, char **err, size_t *nerr)
{
	struct frame_conn c;
	Envelope *e;

	frame_conn_init(&c, fd);
	for (;;) {
		int got = frame_conn_next(&c, &e);
		assert_true(got >= 0);
		if (got == 0) {
			long r = frame_conn_fill(&c);
			if (r <= 0)
				break;
			continue;
		}
		assert_int_equal(e->body_case, RECCE__AGENT__ENVELOPE__BODY_OUTPUT);
		char **to = e->output->stream == 1 ? out : err;
		size_t *n = e->output->stream == 1 ? nout : nerr;
		*to = realloc(*to, *n + e->output->data.len + 1);
		memcpy(*to + *n, e->output->data.data, e->output->data.len);
		*n += e->output->data.len;
		(*to)[*n] = 0;
		frame_free(e);
	}
	frame_conn_release(&c);
}

static void test_drops_whole_lines(void **state)
{
	(void)state;
	int sv[2];
	struct outq q;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(outq_init(&q, sv[0], 1, 16384), 0);
	/* Lines split across writes at odd places, as a pipe delivers them. */
	char *all = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&all, &len);
	for (int i = 0; i < LINES; i++)
		fprintf(f, "event %d of the trace, with some words to make it long\n", i);
	fclose(f);
	for (size_t pos = 0; pos < len;) {
		size_t n = 1 + (pos * 7919) % 997;
		if (n > len - pos)
			n = len - pos;
		assert_int_equal(outq_output(&q, 1, (const uint8_t *)all + pos, n), 0);
		assert_int_equal(outq_flush(&q), 0);
		pos += n;
	}
	assert_true(q.dropped > 0);
	assert_true(outq_pending(&q) <= 16384 + 2048);
	uint64_t dropped = q.dropped;

	/* The reader comes back: everything queued arrives. */
	char *out = NULL, *err = NULL;
	size_t nout = 0, nerr = 0;
	pid_t reader = fork();
	if (reader == 0) {
		close(sv[0]);
		drain(sv[1], &out, &nout, &err, &nerr);
		/* Every line whole and in order; kept + dropped = all. */
		int kept = 0, last = -1;
		for (char *p = out; p && *p;) {
			int i;
			if (sscanf(p, "event %d of the trace, with some words to make it long", &i) != 1 ||
			    i <= last)
				_exit(10);
			last = i;
			kept++;
			char *nl = strchr(p, '\n');
			if (!nl)
				_exit(11);
			p = nl + 1;
		}
		/* The last line that says so has the total. */
		unsigned long long said = 0;
		const char *in_all = NULL;
		for (const char *p = err; p && (p = strstr(p, " in all)")); p++)
			in_all = p;
		if (!in_all)
			_exit(12);
		const char *open = in_all;
		while (open > err && open[-1] != '(')
			open--;
		said = strtoull(open, NULL, 10);
		_exit((uint64_t)kept + said == LINES ? 0 : 13);
	}
	close(sv[1]);
	assert_int_equal(outq_finish(&q), 0);
	outq_release(&q);
	close(sv[0]);
	int status;
	assert_int_equal(waitpid(reader, &status, 0), reader);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(dropped < LINES);
	free(all);
}

static void test_stderr_never_dropped(void **state)
{
	(void)state;
	int sv[2];
	struct outq q;
	char big[4096];

	memset(big, 'x', sizeof(big));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(outq_init(&q, sv[0], 1, 4096), 0);
	for (int i = 0; i < 200; i++)
		assert_int_equal(outq_output(&q, 2, (const uint8_t *)big, sizeof(big)), 0);
	assert_int_equal(outq_flush(&q), 0);
	assert_int_equal(q.dropped, 0);
	assert_true(outq_pending(&q) > 100 * sizeof(big));
	outq_release(&q);
	close(sv[0]);
	close(sv[1]);
}

static void test_progress_parse(void **state)
{
	(void)state;
	const char *what, *unit;
	uint64_t done, total;
	char ok[] = "recording\t1500\t10000\tms";
	char unknown[] = "sending x\t12\t0\tbytes";
	char *bad[] = {"recording\t1\t2", "recording\tx\t2\tms", "a\t1\t2\tms\textra", "", "\t\t\t",
		       "recording\t-\t2\tms"};

	assert_int_equal(progress_parse(ok, &what, &done, &total, &unit), 0);
	assert_string_equal(what, "recording");
	assert_int_equal(done, 1500);
	assert_int_equal(total, 10000);
	assert_string_equal(unit, "ms");
	assert_int_equal(progress_parse(unknown, &what, &done, &total, &unit), 0);
	assert_int_equal(total, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[64];
		snprintf(line, sizeof(line), "%s", bad[i]);
		assert_int_equal(progress_parse(line, &what, &done, &total, &unit), -EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_drops_whole_lines),
	    cmocka_unit_test(test_stderr_never_dropped),
	    cmocka_unit_test(test_progress_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
