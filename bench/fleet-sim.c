/*
 * bench/fleet-sim.c: a fleet of hosts exporting to the fleet store, for
 * the numbers of docs/fleet-store.md. The last BATCH whole windows of a
 * real agent's store (one host; its very last window, cut short when
 * the agent stopped, left out) are sent again as HOSTS hosts, each under a
 * name of its own (sim-00000, ...), BATCH windows an export as an agent
 * with --export-batch BATCH sends them, by SENDERS processes at once,
 * each with a ClickHouse object of its own (so a stack another sender
 * sent is asked for, as another host's would be). With DAYS, each host's
 * windows are sent again on each of the DAYS days that follow theirs, by
 * the same objects, as agents that run past midnight send them (a stack
 * is sent once a day). With ROUNDS, each day's windows are sent ROUNDS
 * times, each round moved on by the span of the batch, so that the fleet
 * store holds ROUNDS x BATCH windows of every host in a row (a range of
 * the fleet page). Prints one line:
 *
 *     hosts=H batch=B windows=W seconds=S failed=F
 *
 *     fleet-sim STORE-DIR clickhouse://HOST:PORT/DB HOSTS BATCH SENDERS [DAYS [ROUNDS]]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "continuous/window-copy.h"
#include "store/clickhouse.h"
#include "store/store.h"
#include "util/clock.h"

#define MAX_WINDOWS 60

struct starts {
	int64_t v[4096];
	size_t n;
};

static int on_window(void *arg, const struct store_window *w)
{
	struct starts *s = arg;

	if (s->n == sizeof(s->v) / sizeof(s->v[0]))
		memmove(s->v, s->v + 1, --s->n * sizeof(s->v[0]));
	s->v[s->n++] = w->start_ns;
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The windows c[0..nw), and their processes', moved by shift_ns. */
static void shift(struct window_copy *c, size_t nw, int64_t shift_ns)
{
	for (size_t i = 0; i < nw; i++) {
		c[i].w.start_ns += shift_ns;
		c[i].w.end_ns += shift_ns;
		for (size_t j = 0; j < c[i].n; j++) {
			c[i].sp[j].start_ns += shift_ns;
			c[i].sp[j].end_ns += shift_ns;
		}
	}
}

/* Sender k of n: hosts k, k + n, ..., on each of days days, rounds
 * times. Exits with how many exports failed (255 at most). */
static void sender(const char *url, struct window_copy *c, size_t nw, int hosts, int days,
		   int rounds, int k, int n)
{
	int64_t span = c[nw - 1].w.end_ns - c[0].w.start_ns;
	struct clickhouse *ch;
	const char *why;
	struct clickhouse_window ws[MAX_WINDOWS];
	int failed = 0;

	if (clickhouse_open(url, &ch, &why) < 0) {
		fprintf(stderr, "fleet-sim: %s %s\n", url, why);
		_exit(255);
	}
	for (int d = 0; d < days * rounds; d++) {
		for (int h = k; h < hosts; h += n) {
			for (size_t i = 0; i < nw; i++) {
				snprintf(c[i].host, sizeof(c[i].host), "sim-%05d", h);
				for (size_t j = 0; j < c[i].n; j++)
					c[i].sp[j].host = c[i].host;
				ws[i] =
				    (struct clickhouse_window){&c[i].w, c[i].sp, c[i].p, c[i].n};
			}
			if (clickhouse_export(ch, ws, nw, 0) < 0) {
				if (!failed)
					fprintf(stderr, "fleet-sim: %s\n", clickhouse_error(ch));
				failed++;
			}
		}
		/* The next round follows this one; the next day starts again
		 * from the first round's windows, a day on. */
		if ((d + 1) % rounds)
			shift(c, nw, span);
		else
			shift(c, nw, DAY_NS - (rounds - 1) * span);
	}
	clickhouse_close(ch);
	_exit(failed > 254 ? 254 : failed);
}

int main(int argc, char **argv)
{
	if (argc < 6 || argc > 8) {
		fprintf(stderr,
			"usage: fleet-sim STORE-DIR URL HOSTS BATCH SENDERS [DAYS [ROUNDS]]\n");
		return 2;
	}
	int hosts = atoi(argv[3]), batch = atoi(argv[4]), senders = atoi(argv[5]);
	int days = argc >= 7 ? atoi(argv[6]) : 1, rounds = argc == 8 ? atoi(argv[7]) : 1;
	if (hosts < 1 || batch < 1 || batch > MAX_WINDOWS || senders < 1 || days < 1 ||
	    rounds < 1) {
		fprintf(
		    stderr,
		    "fleet-sim: HOSTS >= 1, BATCH 1 to %d, SENDERS >= 1, DAYS >= 1, ROUNDS >= 1\n",
		    MAX_WINDOWS);
		return 2;
	}
	struct store *s;
	const char *why;
	if (store_open(argv[1], 0, &s, &why) < 0) {
		fprintf(stderr, "fleet-sim: cannot open the store %s: %s\n", argv[1], why);
		return 1;
	}
	static struct starts st;
	store_windows(s, 0, INT64_MAX, on_window, &st);
	if (st.n < (size_t)batch + 1) {
		fprintf(stderr, "fleet-sim: %s holds %zu windows, not %d whole ones\n", argv[1],
			st.n, batch);
		return 1;
	}
	static struct window_copy c[MAX_WINDOWS];
	for (int i = 0; i < batch; i++) {
		int err = window_copy_read(s, st.v[st.n - 1 - (size_t)batch + (size_t)i], &c[i]);
		if (err) {
			fprintf(stderr, "fleet-sim: cannot read a window back: %s\n",
				strerror(-err));
			return 1;
		}
	}
	store_close(s);

	double t0 = now();
	for (int k = 0; k < senders; k++) {
		pid_t pid = fork();
		if (pid == 0)
			sender(argv[2], c, (size_t)batch, hosts, days, rounds, k, senders);
		if (pid < 0) {
			perror("fleet-sim: fork");
			return 1;
		}
	}
	int failed = 0, status;
	while (wait(&status) > 0)
		failed += WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	printf("hosts=%d batch=%d windows=%d seconds=%.3f failed=%d\n", hosts, batch,
	       hosts * batch * days * rounds, now() - t0, failed);
	for (int i = 0; i < batch; i++)
		window_copy_release(&c[i]);
	return failed ? 1 : 0;
}
