/*
 * Merging the sequence events (SEQ_*) of several processes, live or saved
 * and from several machines, into the messages of each request: a send
 * and the receive with the same trace id and serial make one message,
 * from the sender's process to the receiver's. Messages are ordered by
 * serial within a trace, never by clocks (machines' clocks differ); a
 * send that no source received, or a receive whose send is in no
 * source, is kept with the other end unknown (-1). Participants are
 * processes, or threads where several threads of one process take part.
 *
 * Ownership: the caller fills the sources; seq_merge() allocates the
 * result, seq_result_release() frees it. Names point into the sources'
 * readers, which must outlive the result.
 */
#ifndef RECCE_EVENTS_SEQ_MERGE_H
#define RECCE_EVENTS_SEQ_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "events/ring-read.h"

/* One process's events. */
struct seq_source {
	const struct ring_reader *r;
	const struct ring_event *ev;
	size_t n;
	char name[96]; /* the participant, filled by seq_merge: comm, made unique */
};

/*
 * A participant of the diagram: a process, or, when several of its
 * threads pass tokens, each of those threads ("comm/thread"), as each
 * Erlang process is one.
 */
struct seq_party {
	int src;
	int32_t tid; /* 0: the whole process */
	char name[128];
};

struct seq_msg {
	uint64_t serial; /* the sender's current serial */
	uint64_t last;	 /* the sender's last received serial */
	const char *label;
	int from, to; /* participant indices, -1 when not seen */
	int32_t from_tid, to_tid;
	uint64_t send_real_ns, recv_real_ns; /* wall clock of each end's machine; 0 unseen */
};

/* A begin or an end of a token, drawn as a note. */
struct seq_mark {
	uint64_t serial;
	uint16_t kind; /* RECCE_EV_SEQ_BEGIN or _END */
	const char *label;
	int at; /* participant index */
	int32_t tid;
	uint64_t real_ns;
};

struct seq_trace {
	uint64_t id_hi, id_lo;
	const char *label; /* of its begin, else of its first message */
	struct seq_msg *msgs;
	size_t nmsgs;
	struct seq_mark *marks;
	size_t nmarks;
	uint64_t first_real_ns;
};

struct seq_result {
	struct seq_trace *traces; /* in the order they began */
	size_t ntraces;
	struct seq_party *parties; /* in the order they first act */
	size_t nparties;
};

/* Returns 0 or -ENOMEM. */
int seq_merge(struct seq_source *src, size_t nsrc, struct seq_result *out);
void seq_result_release(struct seq_result *res);

#endif
