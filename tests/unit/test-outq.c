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

/* The number said in the last "(N in all)" of err, or -1. */
static long long said_in_all(const char *err)
{
	const char *in_all = NULL;

	for (const char *p = err; p && (p = strstr(p, " in all)")); p++)
		in_all = p;
	if (!in_all)
		return -1;
	const char *open = in_all;
	while (open > err && open[-1] != '(')
		open--;
	return (long long)strtoull(open, NULL, 10);
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
		long long said = said_in_all(err);
		if (said < 0)
			_exit(12);
		_exit(kept + said == LINES ? 0 : 13);
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

/* One random case: the reader's checks, as its exit status (0: held). */
static int model_reader(int fd, int nlines, const int *len, int nerr, unsigned seed)
{
	char *out = NULL, *err = NULL;
	size_t nout = 0, nerr_bytes = 0;

	/* Late, and slow for a while, as a client on a bad link. */
	if (seed % 3 == 0)
		usleep(2000 + seed % 5000);
	drain(fd, &out, &nout, &err, &nerr_bytes);
	int kept = 0;
	long last = -1;
	for (char *p = out; p && *p;) {
		char *end;
		if (*p != 'L')
			return 20;
		long i = strtol(p + 1, &end, 10);
		if (end == p + 1 || *end != ' ' || i <= last || i >= nlines)
			return 20;
		char *nl = strchr(p, '\n');
		if (!nl || nl - (end + 1) != len[i] || (len[i] && end[1] != 'a' + i % 26))
			return 21;
		last = i;
		kept++;
		p = nl + 1;
	}
	int errs = 0;
	for (const char *p = err; p && (p = strstr(p, "E-line\n")); p++)
		errs++;
	if (errs != nerr)
		return 22;
	long long said = said_in_all(err);
	if (said < 0)
		said = 0;
	return kept + said == nlines ? 0 : 23;
}

static void test_model(void **state)
{
	(void)state;
	unsigned seed = (unsigned)getpid();
	int failures = 0, cases = 100;

	print_message("outq model seed %u\n", seed);
	for (int c = 0; c < cases; c++) {
		srand(seed + (unsigned)c);
		size_t limit = 512 + (size_t)(rand() % 32768);
		int nlines = rand() % 1000, nerr = 0;
		int *len = malloc(sizeof(int) * (size_t)(nlines + 1));
		char *text = NULL;
		size_t tlen = 0;
		FILE *f = open_memstream(&text, &tlen);
		char pad[2 * 33280];
		for (int i = 0; i < nlines; i++) {
			len[i] = rand() % 32 == 0 ? rand() % (int)(2 * limit) : rand() % 200;
			memset(pad, 'a' + i % 26, (size_t)len[i]);
			fprintf(f, "L%d %.*s\n", i, len[i], pad);
		}
		fclose(f);
		int sv[2];
		struct outq q;
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		assert_int_equal(outq_init(&q, sv[0], 1, limit), 0);
		int reader_seed = rand();
		/* The error lines are made before the fork, for the reader. */
		int *err_at = calloc((size_t)tlen + 1, sizeof(int));
		for (size_t pos = 0; pos < tlen; pos += 97)
			if (rand() % 50 == 0)
				err_at[pos] = 1, nerr++;
		pid_t reader = fork();
		if (reader == 0) {
			close(sv[0]);
			_exit(model_reader(sv[1], nlines, len, nerr, (unsigned)reader_seed));
		}
		close(sv[1]);
		for (size_t pos = 0; pos < tlen;) {
			size_t n = 1 + (size_t)(rand() % 3000);
			if (n > tlen - pos)
				n = tlen - pos;
			static const uint8_t eline[] = "E-line\n";
			for (size_t k = pos; k < pos + n; k++)
				if (err_at[k])
					assert_int_equal(outq_output(&q, 2, eline, 7), 0);
			assert_int_equal(outq_output(&q, 1, (const uint8_t *)text + pos, n), 0);
			assert_int_equal(outq_flush(&q), 0);
			pos += n;
		}
		assert_int_equal(outq_finish(&q), 0);
		outq_release(&q);
		close(sv[0]);
		int status;
		assert_int_equal(waitpid(reader, &status, 0), reader);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			print_message("outq model case %d (seed %u): reader said %d\n", c, seed + c,
				      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			failures++;
		}
		free(err_at);
		free(len);
		free(text);
	}
	assert_int_equal(failures, 0);
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
	    cmocka_unit_test(test_model),
	    cmocka_unit_test(test_progress_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
