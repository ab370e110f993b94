/*
 * A program that reaches librecce the way a Rust crate loading it at run
 * time does (libloading): dlopen of the shared library named in argv[1],
 * every function through dlsym, names that are Rust paths. THREADS
 * threads write EVENTS events "hot::engine::rank" each inside a span
 * "hot::engine::run", then exit; the library is dlclose'd (librecce stays:
 * it is never unloaded), and the main thread writes
 * "app::main::done". Prints "ready", then sleeps until killed.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void (*event)(const char *);
static void (*span_begin)(const char *);
static void (*span_end)(const char *);
static long events;

static void *worker(void *arg)
{
	span_begin("hot::engine::run");
	for (long i = 0; i < events; i++)
		event("hot::engine::rank");
	span_end("hot::engine::run");
	return arg;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: ev-dlopen LIBRECCE.so THREADS EVENTS\n");
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "ev-dlopen: %s\n", dlerror());
		return 1;
	}
	event = (void (*)(const char *))dlsym(lib, "recce_event");
	span_begin = (void (*)(const char *))dlsym(lib, "recce_span_begin");
	span_end = (void (*)(const char *))dlsym(lib, "recce_span_end");
	if (!event || !span_begin || !span_end || dlsym(lib, "names_intern")) {
		fprintf(stderr, "ev-dlopen: the API is not exported as declared\n");
		return 1;
	}
	int threads = atoi(argv[2]);
	events = atol(argv[3]);
	pthread_t *t = calloc((size_t)threads, sizeof(*t));
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	free(t);
	dlclose(lib);
	event("app::main::done");
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
