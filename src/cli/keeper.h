/*
 * A child process kept alive from a loop (util/evloop.h): the continuous
 * profiler beside `recce agent`'s server. The child is forked and waited
 * for until it says it runs; once the keeper is in the caller's loop, a
 * child that dies is said (which process, how: a signal, a status, the
 * kernel's OOM killer when the kernel's log says so) and forked again
 * 1 s later. The fifth death within 10 minutes, or a child that ends
 * before it says it runs, stops the loop: the keeper gave up.
 *
 * Ownership: the caller owns the keeper (keeper_start/keeper_free) and
 * the loop; the keeper owns its child.
 */
#ifndef RECCE_CLI_KEEPER_H
#define RECCE_CLI_KEEPER_H

struct evloop;
struct keeper;

/* A child's work, in the forked process: it writes one byte to ready_fd
 * once it runs; restarts says how often it was forked again. Never
 * returns. */
typedef void (*keeper_child_fn)(void *arg, unsigned restarts, int ready_fd);

/* Forks the first child, named what in messages ("the profiler"), and
 * waits until it runs. Returns 0, -errno, or -ECHILD when it ended first
 * (it said why). */
int keeper_start(const char *what, keeper_child_fn fn, void *arg, struct keeper **out);

/* Watches the child from loop, which the keeper stops if it gives up.
 * 0 or -errno. */
int keeper_attach(struct keeper *k, struct evloop *loop);

/* Stops the child with SIGTERM and reaps it. Returns -1 when the keeper
 * gave up, else 0. */
int keeper_stop(struct keeper *k);

void keeper_free(struct keeper *k);

#endif
