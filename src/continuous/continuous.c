/*
 * The continuous profiler (see continuous.h): a system-wide sampler whose
 * windows are cut into one profile per process and written to the store.
 * It owns the event loop: the sampler attached to it, a timer at the end
 * of each window, and the page's listening socket.
 */
#include "continuous/continuous.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "continuous/backlog.h"
#include "continuous/continuous-http.h"
#include "continuous/export.h"
#include "perf/perf-events.h"
#include "proc/proc-maps.h"
#include "proc/procstat.h"
#include "profile/aggregate.h"
#include "profile/merge.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "profile/resolve.h"
#include "sampling/sampler.h"
#include "store/clickhouse.h"
#include "store/store.h"
#include "symbols/kallsyms.h"
#include "symbols/symbolize.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/http-serve.h"
#include "util/u64map.h"

#define DEFAULT_WINDOW_NS ((int64_t)10 * 1000000000)
#define DEFAULT_FREQ	  19
#define TABLE_BUILD_MAX	  ((uint64_t)64 << 20) /* symbol tables kept on disk per binary */

/* The page's connections answered at once, and the time each has from
 * its accept to the end of its answer, TLS handshake included. */
#define PAGE_PROCESSES	16
#define PAGE_DEADLINE_S 10

struct continuous {
	const struct continuous_config *cfg;
	char host[256];
	int64_t window_ns;
	unsigned freq;
	struct symbolizer *sym;
	struct proc_registry *procs;
	struct aggregate *agg;
	struct kallsyms *kallsyms; /* read once, for every window's resolvers */
	struct resolver *resolver; /* the window's */
	struct sampler *sampler;
	struct evloop loop;
	/* The window being filled: its wall-clock bounds, and when it ends
	 * on CLOCK_MONOTONIC. */
	int64_t win_start, win_end, win_end_mono;
	struct store *store;
	struct clickhouse *fleet; /* --export, or NULL */
	struct exporter *exporter;
	int export_down; /* the last export failed */
	size_t batch;	 /* windows an export sends */
	int stopping;	 /* the last exports: batches not full go too */
	/* What a window sent is, to count it resent: one of an earlier run
	 * (it starts before first_ns, this run's first window), or one whose
	 * export failed (in failed, as start_ns -> 1; emptied when none
	 * waits). */
	int64_t first_ns;
	struct u64map failed;
	struct continuous_stats st;
	struct sampler_stats last; /* the sampler's counts at the last window's end */
	double last_cpu;	   /* the agent's CPU time then */
	/* The processes answering the page, each within PAGE_DEADLINE_S. */
	pid_t pages[PAGE_PROCESSES];
	size_t npages;
};

/* The profiler's memory in RAM (its resident set, /proc/self/stat), or 0
 * when it cannot be read. */
static uint64_t resident_bytes(void)
{
	struct procstat_reader r;
	struct procstat_task t = {0};
	uint64_t bytes = 0;

	if (procstat_reader_init(&r, NULL) == 0 && procstat_read_process(&r, getpid(), &t) == 0)
		bytes = t.rss_pages * (uint64_t)sysconf(_SC_PAGESIZE);
	procstat_reader_release(&r);
	return bytes;
}

/* The agent's CPU time, the processes that answered its page included. */
static double cpu_seconds(void)
{
	struct rusage ru, kids;

	getrusage(RUSAGE_SELF, &ru);
	getrusage(RUSAGE_CHILDREN, &kids);
	return (double)(ru.ru_utime.tv_sec + kids.ru_utime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + kids.ru_utime.tv_usec) / 1e6 +
	       (double)(ru.ru_stime.tv_sec + kids.ru_stime.tv_sec) +
	       (double)(ru.ru_stime.tv_usec + kids.ru_stime.tv_usec) / 1e6;
}

static void say(struct continuous *c, enum continuous_event ev, int err, const char *why)
{
	if (c->cfg->say)
		c->cfg->say(c->cfg->say_arg, ev, err, why);
}

/* The cgroup of pid ("/system.slice/x.service"), or "" when it is gone. */
static void cgroup_of(pid_t pid, char *buf, size_t size)
{
	char path[64], line[4096];
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	FILE *fp = fopen(path, "re");

	buf[0] = 0;
	if (!fp)
		return;
	/* cgroup v2 is the line "0::PATH". */
	while (fgets(line, sizeof(line), fp)) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = 0;
		size_t len = strnlen(line + 3, size - 1);
		memcpy(buf, line + 3, len);
		buf[len] = 0;
		break;
	}
	fclose(fp);
}

static void collect_image(void *ctx, uint64_t key, uint64_t val)
{
	(void)val;
	uint64_t **next = ctx;
	*(*next)++ = key;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The process images with samples in this window, each as pid << 32 |
 * generation, in order: a process that exec'd ran two programs, each its
 * own profile with its own labels. */
static uint64_t *window_images(struct aggregate *agg, size_t *n)
{
	struct u64map seen;
	size_t nstacks = aggregate_nstacks(agg);

	u64map_init(&seen);
	for (size_t i = 0; i < nstacks; i++) {
		const struct agg_stack *s = aggregate_stack(agg, i);
		if (u64map_put(&seen, (uint64_t)s->pid << 32 | s->gen, 1) < 0)
			break;
	}
	*n = u64map_count(&seen);
	uint64_t *images = malloc((*n ? *n : 1) * sizeof(*images)), *next = images;
	if (images) {
		u64map_each(&seen, collect_image, &next);
		qsort(images, *n, sizeof(*images), by_value);
	}
	u64map_release(&seen);
	return images;
}

/* One process's profile of the window, encoded, with its labels; the
 * strings it points to live in held (released by the caller). */
struct held {
	struct profile *p;
	void *pprof;
	char cgroup[512];
	char comm[64];
};

/* The window's resolver: it names a process's stacks when an exec is
 * about to replace its mappings, and everything else at the window's end. */
static struct resolver *new_resolver(struct continuous *c)
{
	struct resolver *r = resolver_new(c->procs, c->sym, 1000000000LL / c->freq);

	if (r && c->kallsyms)
		resolver_use_kallsyms(r, c->kallsyms);
	if (r)
		resolver_label_images(r, 1);
	return r;
}

/* The samples of one image of a process (image: pid << 32 | generation)
 * in the window's profile all, as a profile of its own, labelled by the
 * program that image ran: the one before an exec as r found it then. */
static int profile_process(struct continuous *c, const struct profile *all,
			   const struct resolver *r, uint64_t image, int64_t start, int64_t end,
			   struct store_profile *out, struct held *h)
{
	pid_t pid = (pid_t)(image >> 32);
	uint32_t gen = (uint32_t)image;
	struct profile_merger m;

	memset(h, 0, sizeof(*h));
	if (!(h->p = profile_new()))
		return -ENOMEM;
	profile_merger_init(&m, h->p);
	m.only[0].key = "pid";
	m.only[0].num = pid;
	m.only[1].key = "image";
	m.only[1].num = gen;
	m.only[1].drop = 1;
	m.nonly = 2;
	int err = profile_merge(&m, all, NULL, 0);
	profile_merger_release(&m);
	if (err)
		return err;
	h->p->time_nanos = start;
	h->p->duration_nanos = end - start;
	const struct resolver_image *before = resolver_image(r, pid, gen);
	const char *comm = before ? before->comm : procs_comm(c->procs, pid);
	snprintf(h->comm, sizeof(h->comm), "%s", comm ? comm : "");
	cgroup_of(pid, h->cgroup, sizeof(h->cgroup));
	const char *exe = "", *build_id = "";
	if (before) {
		exe = before->exe;
		build_id = before->build_id;
	} else {
		procs_program(c->procs, pid, &exe, &build_id);
	}
	*out = (struct store_profile){
	    .start_ns = start,
	    .end_ns = end,
	    .host = c->host,
	    .pid = pid,
	    .comm = h->comm,
	    .exe = exe,
	    .build_id = build_id,
	    .cgroup = h->cgroup,
	};
	for (size_t i = 0; i < h->p->nsamples; i++) {
		out->samples += (uint64_t)h->p->samples[i].values[0];
		out->cpu_ns += h->p->samples[i].values[1];
	}
	return pprof_encode(h->p, 1, &h->pprof, &out->pprof_len) < 0 ? -ENOMEM
								     : (out->pprof = h->pprof, 0);
}

/* Writes the window; a full disk is said once, and when it is over. */
static int write_window(struct continuous *c, const struct store_window *w,
			const struct store_profile *p, size_t n)
{
	int err = store_write(c->store, w, p, n, c->fleet ? clickhouse_where(c->fleet) : NULL);

	if (!err) {
		c->st.windows++;
		c->st.profiles += n;
		if (c->st.store_full)
			say(c, CONTINUOUS_STORE_BACK, 0, NULL);
		c->st.store_full = 0;
	} else {
		c->st.windows_failed++;
		if (err == -ENOSPC && !c->st.store_full)
			say(c, CONTINUOUS_STORE_FULL, err, NULL);
		else if (err != -ENOSPC)
			say(c, CONTINUOUS_STORE_FAILED, err, store_error(c->store));
		c->st.store_full = err == -ENOSPC;
	}
	size_t deleted = 0, unsent = 0;
	int64_t older = c->cfg->retain_ns ? w->end_ns - c->cfg->retain_ns : 0;
	if (store_retain(c->store, older, c->cfg->max_bytes, &deleted, &unsent) == 0) {
		c->st.retained += deleted;
		c->st.export_dropped += unsent;
	}
	c->st.store_bytes = store_bytes(c->store);
	return err;
}

/* What became of a window sent to the fleet store: a failure is said
 * once, and when windows go through again; then the windows it missed
 * follow, oldest first (continuous/backlog.h). */
static void on_exported(void *arg, const int64_t *start_ns, size_t n, int err, const char *why)
{
	struct continuous *c = arg;

	if (!err) {
		const char *dest = clickhouse_where(c->fleet);
		/* All of a batch marked before the backlog is looked at. */
		for (size_t i = 0; i < n; i++) {
			uint64_t failed = 0;
			store_sent(c->store, dest, start_ns[i]);
			u64map_get(&c->failed, (uint64_t)start_ns[i], &failed);
			c->st.resent += start_ns[i] < c->first_ns || failed;
		}
		c->st.exported += n;
		if (c->export_down) {
			int64_t missed = backlog_count(c->store, dest);
			say(c, CONTINUOUS_EXPORT_BACK, missed > 0 ? (int)missed : 0, dest);
		}
		c->export_down = 0;
		backlog_pump(c->store, c->exporter, dest, c->batch, c->stopping);
		return;
	}
	c->st.export_failed += n;
	/* Remembered, to be counted resent once sent. */
	for (size_t i = 0; i < n; i++)
		u64map_put(&c->failed, (uint64_t)start_ns[i], 1);
	if (!c->export_down)
		say(c, CONTINUOUS_EXPORT_FAILED, err, why);
	c->export_down = 1;
}

/* What the fleet store's retention did, once a day: said, and counted. */
static void on_retained(void *arg, const char *cutoff, int dropped, const char *why)
{
	struct continuous *c = arg;

	c->st.export_days_dropped += (uint64_t)(dropped > 0 ? dropped : 0);
	if (why)
		say(c, CONTINUOUS_EXPORT_RETAIN_FAILED, -EIO, why);
	else
		say(c, CONTINUOUS_EXPORT_RETAINED, dropped, cutoff);
}

/* Ships the window to the fleet store, from a process of its own; in
 * batches, the oldest windows not sent once batch of them wait (read
 * back from the store, where this one is now). One the store could not
 * write (a full disk) goes alone, from memory, as without batches. */
static void export_window(struct continuous *c, const struct store_window *w,
			  const struct store_profile *sp, const struct held *held, size_t n,
			  int stored)
{
	if (c->batch > 1 && stored) {
		if (backlog_pump(c->store, c->exporter, clickhouse_where(c->fleet), c->batch, 0) <
		    0)
			on_exported(c, &w->start_ns, 1, -EIO, store_error(c->store));
		return;
	}
	struct profile **ps = calloc(n ? n : 1, sizeof(*ps));

	if (!ps) {
		on_exported(c, &w->start_ns, 1, -ENOMEM, strerror(ENOMEM));
		return;
	}
	for (size_t i = 0; i < n; i++)
		ps[i] = held[i].p;
	struct clickhouse_window cw = {w, sp, ps, n};
	exporter_send(c->exporter, &cw, 1, 0);
	free(ps);
}

/*
 * What the window's processes left behind goes once they are gone: their
 * threads (after aggregate_clear()), their mappings, then the files only
 * they mapped (a descriptor and tables
 * each: on a host where programs come and go, a new file every run of a
 * fresh binary), once more than SWEEP_KEEP are unused, so that a program
 * run now and then is not opened anew each time. No answer of the
 * symbolizer is held between windows, so none is lost.
 */
#define SWEEP_KEEP 16

/* Whether thread tid of pid has exited: aggregate_drop_threads()'s
 * question (a signal 0 checks that it is there and sends nothing). */
static int thread_gone(void *arg, pid_t pid, pid_t tid)
{
	(void)arg;
	return syscall(SYS_tgkill, pid, tid, 0) < 0 && errno == ESRCH;
}

static void forget(struct continuous *c)
{
	aggregate_drop_threads(c->agg, thread_gone, NULL);
	procs_forget_dead(c->procs);
	procs_mark_files(c->procs);
	size_t closed = symbolizer_sweep(c->sym, SWEEP_KEEP);
	sampler_trim(c->sampler, closed > 0);
	c->st.files_closed += closed;
	c->st.files_open = symbolizer_files(c->sym);
	c->st.resident_bytes = resident_bytes();
}

static void on_window(struct continuous *c, int64_t start, int64_t end)
{
	struct sampler_stats now;
	size_t nimages = 0, npids = 0, n = 0;

	sampler_get_stats(c->sampler, &now);
	/* Every stack of the window, named at once; then the next window's
	 * resolver takes over. */
	struct profile *all = NULL;
	if (c->resolver && resolver_add(c->resolver, c->agg, 0) == 0)
		all = resolver_take_profile(c->resolver);
	c->st.python_unplaced += resolver_python_unplaced(c->resolver);
	struct resolver *named = c->resolver; /* what images exec ended */
	c->resolver = new_resolver(c);
	sampler_set_resolver(c->sampler, c->resolver);

	uint64_t *images = window_images(c->agg, &nimages);
	struct store_profile *profiles = calloc(nimages ? nimages : 1, sizeof(*profiles));
	struct held *held = calloc(nimages ? nimages : 1, sizeof(*held));
	for (size_t i = 0; all && images && profiles && held && i < nimages; i++) {
		if (profile_process(c, all, named, images[i], start, end, &profiles[n], &held[n]) ==
		    0) {
			npids += !n || profiles[n].pid != profiles[n - 1].pid;
			n++;
		} else {
			profile_free(held[n].p);
			free(held[n].pprof);
		}
	}
	profile_free(all);

	double cpu = cpu_seconds();
	struct store_window w = {
	    .start_ns = start,
	    .end_ns = end,
	    .host = c->host,
	    .samples = now.samples - c->last.samples,
	    .lost = now.lost - c->last.lost,
	    .idle = now.idle - c->last.idle,
	    .processes = npids,
	    .agent_cpu_ns = (int64_t)((cpu - c->last_cpu) * 1e9),
	};
	int stored = write_window(c, &w, profiles, n) == 0;
	if (!c->first_ns)
		c->first_ns = start;
	if (c->fleet)
		export_window(c, &w, profiles, held, n, stored);
	c->st.samples += w.samples;
	c->st.lost += w.lost;
	c->st.python_samples = now.python.matched;
	c->st.python_unread = now.python.unmatched;
	c->st.copy_ended = now.unwind_ends[UNWIND_END_COPY];
	if (c->cfg->dwarf && now.copy_bytes > c->st.copy_bytes) {
		c->st.copy_bytes = now.copy_bytes;
		say(c, CONTINUOUS_COPY_GREW, (int)now.copy_bytes, NULL);
	}
	c->st.cpu_seconds = c->last_cpu = cpu;
	c->last = now;

	for (size_t i = 0; i < n; i++) {
		profile_free(held[i].p);
		free(held[i].pprof);
	}
	free(held);
	free(profiles);
	free(images);
	resolver_free(named);
	aggregate_clear(c->agg);
	forget(c);
}

/*
 * The window that is over goes to on_window(), cut where its samples
 * end: every sample the kernel wrote until now is read first, and the
 * window ends now, not at its due time, when the timer comes late (a
 * slow resolve, a busy machine), so that it holds exactly the samples
 * taken in the span it says. The next starts where it ended, skipping no
 * time, and is due at the next multiple of the window, so that windows
 * line up again.
 */
static void on_window_end(void *arg, int64_t due)
{
	struct continuous *c = arg;

	(void)due;
	sampler_read(c->sampler);
	int64_t late = (int64_t)time_now_ns(CLOCK_MONOTONIC) - c->win_end_mono;
	int64_t end = late > 0 ? c->win_end + late : c->win_end;
	on_window(c, c->win_start, end);
	c->win_start = end;
	c->win_end += c->window_ns;
	c->win_end_mono += c->window_ns;
}

/* The first window ends at the next multiple of the window of the wall
 * clock, so that windows of every host and run line up. */
static int windows_start(struct continuous *c)
{
	int64_t now_real = (int64_t)time_now_ns(CLOCK_REALTIME);
	int64_t now_mono = (int64_t)time_now_ns(CLOCK_MONOTONIC);

	c->win_start = now_real;
	c->win_end = (now_real / c->window_ns + 1) * c->window_ns;
	c->win_end_mono = now_mono + (c->win_end - now_real);
	int id = evloop_timer_add(&c->loop, c->win_end_mono, c->window_ns, on_window_end, c);
	return id < 0 ? id : 0;
}

/* After the loop: the window that was due when sampling stopped, then
 * the one the stop cut short. */
static void windows_finish(struct continuous *c)
{
	if ((int64_t)time_now_ns(CLOCK_MONOTONIC) >= c->win_end_mono)
		on_window_end(c, c->win_end_mono);
	on_window(c, c->win_start, (int64_t)time_now_ns(CLOCK_REALTIME));
}

static void refresh_stats(void *arg)
{
	struct continuous *c = arg;

	c->st.cpu_seconds = cpu_seconds();
	if (c->fleet) {
		int64_t n = backlog_count(c->store, clickhouse_where(c->fleet));
		c->st.export_pending = n > 0 ? (uint64_t)n : 0;
		if (n == 0 && u64map_count(&c->failed)) {
			u64map_release(&c->failed);
			u64map_init(&c->failed);
		}
	}
}

/* Forgets the page's processes that have ended. */
static void pages_reap(struct continuous *c)
{
	for (size_t i = 0; i < c->npages;)
		if (waitpid(c->pages[i], NULL, WNOHANG) != 0)
			c->pages[i] = c->pages[--c->npages];
		else
			i++;
}

/* A connection's process: it answers one request by its deadline, from
 * its own handle on the store, with the counts as they were when it was
 * accepted, and ends; SIGALRM ends it at the deadline whatever it waits
 * for. Never returns. */
static void serve_page(struct continuous *c, int conn)
{
	sigset_t none;
	struct store *store = NULL;
	const char *why;

	sigemptyset(&none);
	signal(SIGALRM, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	alarm(PAGE_DEADLINE_S);
	if (c->cfg->http_tls && (conn = c->cfg->http_tls(c->cfg->http_tls_arg, conn)) < 0)
		_exit(1);
	if (store_open(c->cfg->store_dir, 0, &store, &why) < 0)
		_exit(1);
	struct continuous_http h = {store, c->host, &c->st, NULL, NULL};
	http_serve_conn(conn, c->cfg->http_token, continuous_http, &h);
	if (c->cfg->http_tls_done)
		c->cfg->http_tls_done(c->cfg->http_tls_arg);
	_exit(0);
}

/* A connection to the page: accepted here, answered by a process of its
 * own, so that no client, however slowly it sends or reads, ever holds
 * up the sampling. */
static void on_http(void *arg, int fd, short revents)
{
	struct continuous *c = arg;

	(void)revents;
	int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0)
		return;
	pages_reap(c);
	if (c->npages == PAGE_PROCESSES) {
		/* The oldest goes for the new one. */
		kill(c->pages[0], SIGKILL);
		waitpid(c->pages[0], NULL, 0);
		memmove(c->pages, c->pages + 1, (c->npages - 1) * sizeof(c->pages[0]));
		c->npages--;
	}
	refresh_stats(c);
	pid_t pid = fork();
	if (pid == 0)
		serve_page(c, conn);
	if (pid > 0)
		c->pages[c->npages++] = pid;
	close(conn);
}

static int start(struct continuous *c, const char **why)
{
	int err = store_open(c->cfg->store_dir, 1, &c->store, why);
	if (err)
		return err;
	if (c->cfg->export_url &&
	    ((err = clickhouse_open(c->cfg->export_url, &c->fleet, why)) ||
	     (c->cfg->export_password &&
	      (err = clickhouse_set_password(c->fleet, c->cfg->export_password))) ||
	     (err = exporter_new(c->fleet, &c->loop, on_exported, c, &c->exporter))))
		return err;
	if (c->fleet && c->cfg->export_retain_days) {
		clickhouse_set_retain(c->fleet, c->cfg->export_retain_days);
		exporter_on_retained(c->exporter, on_retained);
	}
	c->st.store_bytes = store_bytes(c->store);
	c->sym = symbolizer_new();
	c->procs = c->sym ? procs_new(c->sym) : NULL;
	c->agg = aggregate_new();
	c->kallsyms = kallsyms_load(NULL); /* NULL when unreadable: each resolver tries */
	if (!c->sym || !c->procs || !c->agg ||
	    (c->cfg->cache_dir && symbolizer_set_cache(c->sym, c->cfg->cache_dir, c->cfg->cache_max,
						       TABLE_BUILD_MAX) < 0))
		return -ENOMEM;
	struct sampler_config sc = {0};
	sc.system_wide = 1;
	sc.cgroup_fd = -1;
	sc.events = PERF_EVENTS_CPU_CLOCK;
	sc.freq = c->freq;
	sc.dwarf = c->cfg->dwarf;
	sc.fp_after = c->cfg->fp_after;
	sc.stack_bytes = c->cfg->stack_bytes;
	sc.copy_grows = c->cfg->copy_grows;
	sc.copy_max = CONTINUOUS_COPY_MAX;
	sc.stop_fd = c->cfg->stop_fd;
	sc.procs = c->procs;
	sc.agg = c->agg;
	sc.resolver = c->resolver = new_resolver(c);
	if (!c->resolver)
		return -ENOMEM;
	*why = "cannot start sampling";
	if ((err = sampler_new(&sc, &c->sampler)) || (err = sampler_start(c->sampler)))
		return err;
	*why = "";
	if ((err = sampler_attach(c->sampler, &c->loop, evloop_stop_done, &c->loop)) ||
	    (err = windows_start(c)))
		return err;
	if (c->cfg->http_fd >= 0) {
		/* A connection gone before its accept must not block the loop. */
		fcntl(c->cfg->http_fd, F_SETFL, fcntl(c->cfg->http_fd, F_GETFL) | O_NONBLOCK);
		err = evloop_add(&c->loop, c->cfg->http_fd, 0, on_http, c);
	}
	return err;
}

int continuous_run(const struct continuous_config *cfg, const char **why)
{
	struct continuous c = {.cfg = cfg};

	*why = "";
	c.window_ns = cfg->window_ns > 0 ? cfg->window_ns : DEFAULT_WINDOW_NS;
	c.batch = cfg->export_batch > 1 ? cfg->export_batch : 1;
	u64map_init(&c.failed);
	c.freq = cfg->freq ? cfg->freq : DEFAULT_FREQ;
	if (cfg->host)
		snprintf(c.host, sizeof(c.host), "%s", cfg->host);
	else if (gethostname(c.host, sizeof(c.host) - 1) < 0)
		snprintf(c.host, sizeof(c.host), "localhost");
	c.st.started_ns = (int64_t)time_now_ns(CLOCK_REALTIME);
	c.st.cpu_seconds = c.last_cpu = cpu_seconds();
	c.st.restarts = cfg->restarts;
	c.st.copy_bytes = cfg->dwarf ? cfg->stack_bytes : 0;
	evloop_init(&c.loop);
	int err = start(&c, why);
	if (!err) {
		struct sampler_stats st;
		sampler_get_stats(c.sampler, &st);
		if (st.user_only)
			say(&c, CONTINUOUS_USER_ONLY, 0, NULL);
		say(&c, CONTINUOUS_STARTED, 0, NULL);
		err = evloop_run(&c.loop);
		int r = sampler_drain(c.sampler);
		err = err ? err : r;
		if (!err)
			windows_finish(&c);
		r = sampler_finish(c.sampler);
		err = err ? err : r;
		if (err)
			*why = "sampling stopped";
	}
	/* The windows on their way to the fleet store, the last included;
	 * in batches, those that wait for a batch to fill go too. */
	c.stopping = 1;
	if (c.exporter && c.batch > 1)
		backlog_pump(c.store, c.exporter, clickhouse_where(c.fleet), c.batch, 1);
	exporter_free(c.exporter);
	evloop_release(&c.loop);
	for (size_t i = 0; i < c.npages; i++) {
		kill(c.pages[i], SIGKILL);
		waitpid(c.pages[i], NULL, 0);
	}
	sampler_free(c.sampler);
	resolver_free(c.resolver);
	store_close(c.store);
	clickhouse_close(c.fleet);
	u64map_release(&c.failed);
	aggregate_free(c.agg);
	kallsyms_free(c.kallsyms);
	procs_free(c.procs);
	symbolizer_free(c.sym);
	return err;
}

static void metric(FILE *fp, const char *name, const char *type, const char *help, double v)
{
	fprintf(fp, "# HELP recce_agent_%s %s\n# TYPE recce_agent_%s %s\nrecce_agent_%s %.10g\n",
		name, help, name, type, name, v);
}

void continuous_metrics(FILE *fp, const struct continuous_stats *st)
{
	metric(fp, "windows_written_total", "counter", "Windows written to the store.",
	       (double)st->windows);
	metric(fp, "windows_failed_total", "counter", "Windows the store could not take.",
	       (double)st->windows_failed);
	metric(fp, "profiles_written_total", "counter", "Process profiles written.",
	       (double)st->profiles);
	metric(fp, "samples_total", "counter", "Samples taken.", (double)st->samples);
	metric(fp, "records_lost_total", "counter",
	       "Records the kernel could not write: samples, and the mappings, names and tasks "
	       "beside them.",
	       (double)st->lost);
	metric(fp, "windows_retained_total", "counter", "Windows deleted by retention.",
	       (double)st->retained);
	metric(fp, "store_bytes", "gauge", "Bytes the store's data takes.",
	       (double)st->store_bytes);
	metric(fp, "store_full", "gauge", "1 while the disk is too full to write windows.",
	       st->store_full);
	metric(fp, "windows_exported_total", "counter", "Windows shipped to the fleet store.",
	       (double)st->exported);
	metric(fp, "windows_export_failed_total", "counter",
	       "Exports of windows the fleet store did not take (kept locally, sent again).",
	       (double)st->export_failed);
	metric(fp, "windows_export_pending", "gauge",
	       "Windows the fleet store has not taken yet, the window being sent included.",
	       (double)st->export_pending);
	metric(fp, "windows_resent_total", "counter",
	       "Windows the fleet store took when they were sent again.", (double)st->resent);
	metric(fp, "windows_export_dropped_total", "counter",
	       "Windows retention deleted before the fleet store took them.",
	       (double)st->export_dropped);
	metric(fp, "export_partitions_dropped_total", "counter",
	       "Days of the fleet store's tables its retention dropped (--export-retain).",
	       (double)st->export_days_dropped);
	metric(fp, "cpu_seconds_total", "counter", "CPU time the agent used.", st->cpu_seconds);
	metric(fp, "start_time_seconds", "gauge", "When the profiler started, in Unix time.",
	       (double)st->started_ns / 1e9);
	metric(fp, "profiler_restarts_total", "counter",
	       "Times the agent started its profiler again after it died.", (double)st->restarts);
	metric(fp, "profiler_resident_bytes", "gauge",
	       "The profiler's memory in RAM, read after the last window.",
	       (double)st->resident_bytes);
	metric(fp, "profiler_files_open", "gauge",
	       "Binaries the profiler holds open to name stacks.", (double)st->files_open);
	metric(fp, "profiler_files_closed_total", "counter",
	       "Binaries closed once no process mapped them.", (double)st->files_closed);
	metric(fp, "python_samples_total", "counter",
	       "Samples of CPython processes whose Python frames were read.",
	       (double)st->python_samples);
	metric(fp, "python_samples_unplaced_total", "counter",
	       "Of those, samples shown with native frames only: their Python frames did not "
	       "fit their native stack.",
	       (double)st->python_unplaced);
	metric(fp, "python_samples_unread_total", "counter",
	       "Samples of CPython processes whose Python frames were not read: native frames "
	       "only.",
	       (double)st->python_unread);
	metric(fp, "stack_copy_bytes", "gauge",
	       "Bytes of the sampled thread's stack each sample copies (--call-graph).",
	       (double)st->copy_bytes);
	metric(fp, "stacks_copy_ended_total", "counter",
	       "Stacks that ended where the stack copy did, their callers unknown.",
	       (double)st->copy_ended);
}
