/*
 * The fleet store's backlog (see backlog.h): a marked window read back
 * from the local store, its profiles decoded, and sent again.
 */
#include "continuous/backlog.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "continuous/window-copy.h"

/* Sends the windows of starts[0..n) again, in one process. 0, or
 * -errno; those that can never be sent (gone, unreadable) are marked
 * sent and left out. */
static int send_again(struct store *s, struct exporter *x, const char *dest, const int64_t *starts,
		      size_t n)
{
	struct window_copy *c = calloc(n, sizeof(*c));
	struct clickhouse_window *ws = calloc(n, sizeof(*ws));
	size_t k = 0;
	int err = c && ws ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && !err; i++) {
		err = window_copy_read(s, starts[i], &c[k]);
		if (err == -ENOENT || err == -EBADMSG) {
			/* Gone, or unreadable: it cannot be sent, ever. */
			window_copy_release(&c[k]);
			memset(&c[k], 0, sizeof(c[k]));
			store_sent(s, dest, starts[i]);
			err = 0;
			continue;
		}
		if (!err) {
			ws[k] = (struct clickhouse_window){&c[k].w, c[k].sp, c[k].p, c[k].n};
			k++;
		}
	}
	if (!err && k)
		err = exporter_send(x, ws, k, 1);
	for (size_t i = 0; c && i < n; i++)
		window_copy_release(&c[i]);
	free(c);
	free(ws);
	return err;
}

int backlog_pump(struct store *s, struct exporter *x, const char *dest, size_t batch, int flush)
{
	int64_t *starts = NULL;
	size_t total, cap = 2 * EXPORT_PROCESSES * batch;
	int started = 0;

	if (batch < 1 || batch > EXPORT_BATCH_MAX)
		return -EINVAL;
	if (!(starts = calloc(cap, sizeof(*starts))))
		return -ENOMEM;
	int n = store_unsent(s, dest, starts, cap, &total);
	if (n < 0) {
		free(starts);
		return n;
	}
	/* Those not on their way already, oldest first. */
	size_t k = 0;
	for (int i = 0; i < n; i++)
		if (!exporter_sending(x, starts[i]))
			starts[k++] = starts[i];
	for (size_t at = 0; at < k && exporter_room(x) > 1; at += batch) {
		size_t m = k - at < batch ? k - at : batch;
		if (m < batch && !flush)
			break; /* the batch is not full yet */
		int err = send_again(s, x, dest, starts + at, m);
		if (err) {
			free(starts);
			return started ? started : err;
		}
		started++;
	}
	free(starts);
	return started;
}

int64_t backlog_count(struct store *s, const char *dest)
{
	size_t total;
	int n = store_unsent(s, dest, NULL, 0, &total);

	return n < 0 ? n : (int64_t)total;
}
