/*
 * A program that uses librecce, for tests/cli/events.t: THREADS threads
 * (named worker-N), released at once, each write a span "work" holding
 * EVENTS events "tick" and a counter "done" = EVENTS (the first events of
 * several threads meet in librecce's start); then the main thread writes "all_done",
 * prints "ready PATH" (its event file) and does what THEN says:
 *
 *   wait   sleep until killed (the default)
 *   exit   return from main (a clean exit)
 *   crash  write "about_to_crash", then touch address 0 (SIGSEGV)
 *   fork   a child writes "in_child" 5 times, prints "child PID", then both wait
 *   exec   exec itself as "ev-burst 1 3 wait"
 *   execgo the same once it gets SIGUSR1 (a reader follows it first)
 *   beat   write "beat" every millisecond until killed
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recce.h"

static long events;
static pthread_barrier_t all_made;

static void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "worker-%d", (int)(long)arg);
	prctl(PR_SET_NAME, name);
	pthread_barrier_wait(&all_made);
	recce_span_begin("work");
	for (long i = 0; i < events; i++)
		recce_event("tick");
	recce_counter("done", events);
	recce_span_end("work");
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr,
			"usage: ev-burst THREADS EVENTS [wait|exit|crash|fork|exec|execgo|beat]\n");
		return 2;
	}
	int threads = atoi(argv[1]);
	const char *then = argc > 3 ? argv[3] : "wait";
	events = atol(argv[2]);

	pthread_t *t = calloc((size_t)threads, sizeof(*t));
	pthread_barrier_init(&all_made, NULL, (unsigned)(threads > 0 ? threads : 1));
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(long)(i + 1));
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	free(t);
	recce_event("all_done");
	printf("ready %s\n", recce_file_path() ? recce_file_path() : "(none)");
	fflush(stdout);

	if (strcmp(then, "exit") == 0)
		return 0;
	if (strcmp(then, "crash") == 0) {
		recce_event("about_to_crash");
		*(volatile int *)(unsigned long)atoi("0") = 1;
	}
	if (strcmp(then, "execgo") == 0) {
		sigset_t go;
		int sig;
		sigemptyset(&go);
		sigaddset(&go, SIGUSR1);
		sigprocmask(SIG_BLOCK, &go, NULL);
		printf("waiting for SIGUSR1\n");
		fflush(stdout);
		sigwait(&go, &sig);
		sigprocmask(SIG_UNBLOCK, &go, NULL);
		then = "exec";
	}
	if (strcmp(then, "exec") == 0) {
		char *args[] = {argv[0], "1", "3", "wait", NULL};
		execv(argv[0], args);
		return 1;
	}
	if (strcmp(then, "fork") == 0) {
		pid_t child = fork();
		if (child == 0) {
			for (int i = 0; i < 5; i++)
				recce_event("in_child");
			printf("child %d %s\n", (int)getpid(), recce_file_path());
			fflush(stdout);
			for (;;)
				pause();
		}
		recce_event("forked");
	}
	if (strcmp(then, "beat") == 0)
		for (;;) {
			recce_event("beat");
			usleep(1000);
		}
	for (;;)
		pause();
}
