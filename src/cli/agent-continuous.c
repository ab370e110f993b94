/*
 * `recce agent --continuous` (see agent-continuous.h): the options read
 * into the continuous engine's config, the profiler forked beside the
 * agent's server and kept alive (cli/keeper.h), and what it says about
 * its store.
 */
#include "cli/agent-continuous.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/dirs.h"
#include "cli/keeper.h"
#include "cli/secret.h"
#include "cli/usage.h"
#include "continuous/continuous.h"
#include "continuous/export.h"
#include "proc/self.h"
#include "remote/tls.h"
#include "store/clickhouse.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/hex.h"
#include "util/tcp.h"
#include "util/when.h"

#define DEFAULT_HTTP   "127.0.0.1:7451"
#define DEFAULT_RETAIN "7d"
#define DEFAULT_MAX    ((uint64_t)1 << 30)

struct said {
	const char *store;
	char http[128];
	const char *scheme; /* "http" or "https" */
	const char *token;  /* the page's token on the network, or NULL */
	unsigned freq;
	const char *window;
	char export_to[400]; /* HOST:PORT/DB, no password */
	int export_retain_days;
	int ready_fd;	     /* written once sampling runs, then closed */
	unsigned restarts;   /* how often the agent started it again */
};

static void say(void *arg, enum continuous_event ev, int err, const char *why)
{
	struct said *s = arg;

	switch (ev) {
	case CONTINUOUS_STARTED:
		if (s->restarts)
			goto ready; /* the agent says it samples again */
		note("profiling every process at %u Hz per CPU in windows of %s into %s%s%s%s%s",
		     s->freq, s->window, s->store, s->http[0] ? "; metrics at " : "",
		     s->http[0] ? s->scheme : "", s->http[0] ? "://" : "", s->http);
		if (s->token)
			note("the page: %s://%s/?token=%s (scrapers send 'Authorization: Bearer "
			     "TOKEN')",
			     s->scheme, s->http, s->token);
		if (s->export_to[0])
			note("exporting every window to ClickHouse at %s", s->export_to);
	ready:
		if (s->ready_fd >= 0) {
			char one = 1;
			if (write(s->ready_fd, &one, 1) < 0) {
				/* The agent is gone: its death signal stops us too. */
			}
			close(s->ready_fd);
			s->ready_fd = -1;
		}
		break;
	case CONTINUOUS_USER_ONLY:
		warning("kernel.perf_event_paranoid forbids kernel sampling: profiling user-space "
			"code only");
		break;
	case CONTINUOUS_STORE_FULL:
		warning("the disk of %s is full: windows are not written until there is room "
			"(sampling and serving go on)",
			s->store);
		break;
	case CONTINUOUS_STORE_BACK:
		note("%s has room again: windows are written", s->store);
		break;
	case CONTINUOUS_STORE_FAILED:
		error("cannot write a window to %s: %s (%s)", s->store, strerror(-err), why);
		break;
	case CONTINUOUS_EXPORT_FAILED:
		warning("cannot export a window to %s: %s: windows wait in %s and are sent when it "
			"takes them again, oldest first",
			s->export_to, why && why[0] ? why : strerror(-err), s->store);
		break;
	case CONTINUOUS_EXPORT_RETAINED:
		note("%s: the days before %s dropped, older than --export-retain %dd (%d "
		     "partitions of its tables)",
		     s->export_to, why, s->export_retain_days, err);
		break;
	case CONTINUOUS_EXPORT_RETAIN_FAILED:
		warning(
		    "cannot drop the old days of %s (--export-retain): %s; tried again tomorrow",
		    s->export_to, why);
		break;
	case CONTINUOUS_COPY_GREW:
		note("stacks ended where the stack copy did, 1 in 100 or more: it grew to %d "
		     "bytes (at most %d: --call-graph auto,BYTES copies more from the start)",
		     err, CONTINUOUS_COPY_MAX);
		break;
	case CONTINUOUS_EXPORT_BACK:
		if (err > 0)
			note("windows are exported to %s again; the %d it missed follow, oldest "
			     "first",
			     s->export_to, err);
		else
			note("windows are exported to %s again", s->export_to);
		break;
	}
}

static int64_t span_option(const char *opt, const char *s, const char *dflt)
{
	int64_t ns;

	if (when_span(s ? s : dflt, &ns) < 0 || ns <= 0)
		usage_die("agent", "%s wants a span such as 2s, 30m, 7d, not '%s'", opt, s);
	return ns;
}

/* The messages of a profiler that could not start, in the child. */
static void say_start_failed(const char *store, int err, const char *why)
{
	if (err == -EACCES && strcmp(why, "cannot start sampling") == 0)
		die("perf_event_open refused system-wide sampling: run the agent as root, or "
		    "lower kernel.perf_event_paranoid (sysctl -w kernel.perf_event_paranoid=-1)");
	if (err == -EMFILE || err == -ENFILE)
		die("out of file descriptors (one per CPU is needed): raise the limit with "
		    "'ulimit -n'");
	if (err == -ENOSPC)
		die("cannot make the store in %s: the disk is full", store);
	if (err == -EBADMSG)
		die("%s/" STORE_FILE " is not a recce store: give another --store", store);
	if (strcmp(why, "cannot start sampling") == 0 || strcmp(why, "sampling stopped") == 0)
		die("%s: %s", why, strerror(-err));
	die("cannot open the store in %s: %s (%s)", store, strerror(-err), why);
}

/* The TLS handshake of a connection to the page on the network: the
 * plain end of its relay, or -1 (dropped: the client was not TLS). */
static int page_tls(void *arg, int fd)
{
	char err[256];

	return tls_accept_anyone(arg, fd, 2000, err, sizeof(err));
}

/* The relay still holds the end of the answer: let it go out. */
static void page_tls_done(void *arg)
{
	(void)arg;
	tls_relays_wait(2000);
}

/* The page's token: the first line of --http-token FILE, or new. */
static const char *page_token(const char *file)
{
	static char token[129];

	if (!file) {
		unsigned char r[16];
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			die("cannot make the page's token: %s", strerror(errno));
		hex_of(r, sizeof(r), token);
		return token;
	}
	FILE *fp = fopen(file, "re");
	if (!fp || !fgets(token, sizeof(token), fp))
		die("cannot read the token in %s: %s", file, fp ? "it is empty" : strerror(errno));
	fclose(fp);
	token[strcspn(token, "\r\n")] = 0;
	if (strlen(token) < 16 || strspn(token, "0123456789abcdefghijklmnopqrstuvwxyz"
						"ABCDEFGHIJKLMNOPQRSTUVWXYZ-_.~") != strlen(token))
		die("the token in %s must be 16 to 128 letters, digits or -_.~ (e.g. "
		    "'openssl rand -hex 16 > %s')",
		    file, file);
	return token;
}

/* --http on an address other than loopback: HTTPS with the agent's
 * certificate, and a token every request must carry. */
static void serve_on_network(const struct agent_continuous_args *a, struct continuous_config *cfg,
			     struct said *said, const char *spec)
{
	static char dir[PATH_MAX];
	char f[PATH_MAX + 16];

	if (a->tls)
		snprintf(dir, sizeof(dir), "%s", a->tls);
	else
		dirs_tls(1, dir, sizeof(dir));
	if (tls_agent_files(dir, f, sizeof(f)) < 0)
		die("--http %s is on the network, where the page is served over HTTPS with a "
		    "token: it needs %s (make the certificates with 'recce certs init %s', or "
		    "give --tls DIR), or serve on 127.0.0.1 and reach it through 'ssh -L'",
		    spec, f, dir);
	cfg->http_tls = page_tls;
	cfg->http_tls_done = page_tls_done;
	cfg->http_tls_arg = dir;
	cfg->http_token = said->token = page_token(a->http_token);
	said->scheme = "https";
}

/* The profiler: its config, and what it says. */
static struct profiler {
	struct continuous_config cfg;
	struct said said;
	char store[PATH_MAX];
	struct keeper *keeper;
} profiler;

/* The profiler's process (a keeper_child_fn): samples until stop_fd
 * says so. */
static void profiler_child(void *arg, unsigned restarts, int ready_fd)
{
	struct profiler *p = arg;
	int keep[] = {p->cfg.stop_fd, p->cfg.http_fd, ready_fd};

	/* Nothing of the agent's held: its sockets, its clients' pipes. */
	proc_close_all_but(keep, sizeof(keep) / sizeof(keep[0]));
	p->said.ready_fd = ready_fd;
	p->said.restarts = p->cfg.restarts = restarts;
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	const char *why = "";
	int err = continuous_run(&p->cfg, &why);
	if (err)
		say_start_failed(p->store, err, why);
	exit(0); /* as die() does: a leak checker looks at the profiler too */
}

void agent_continuous_options(const struct agent_continuous_args *a)
{
	struct profiler *k = &profiler;
	struct continuous_config *cfg = &k->cfg;
	struct said *said = &k->said;

	*said = (struct said){
	    .window = a->window ? a->window : "10s", .scheme = "http", .ready_fd = -1};
	if (a->store)
		snprintf(k->store, sizeof(k->store), "%s", a->store);
	else
		dirs_data(k->store, sizeof(k->store));
	cfg->store_dir = said->store = k->store;
	static char cache[PATH_MAX];
	if (dirs_cache(cache, sizeof(cache), &cfg->cache_max) == 0)
		cfg->cache_dir = cache;
	cfg->window_ns = span_option("--window", a->window, "10s");
	if (cfg->window_ns < 1000000000)
		usage_die("agent", "--window is at least 1s, not '%s'", a->window);
	cfg->retain_ns = span_option("--retain", a->retain, DEFAULT_RETAIN);
	cfg->max_bytes = DEFAULT_MAX;
	if (a->max_store &&
	    (parse_size_prefix(a->max_store, &cfg->max_bytes) != (int)strlen(a->max_store) ||
	     !cfg->max_bytes))
		usage_die("agent", "--max-store wants a size such as 500M or 2G, not '%s'",
			  a->max_store);
	cfg->freq = a->rate ? (unsigned)parse_freq_option("agent", a->rate) : 19;
	enum call_graph cg = CALL_GRAPH_AUTO;
	cfg->stack_bytes = CALL_GRAPH_STACK_BYTES;
	int given = a->call_graph &&
		    parse_call_graph_option("agent", a->call_graph, &cg, &cfg->stack_bytes);
	cfg->dwarf = cg != CALL_GRAPH_FP;
	cfg->fp_after = cg == CALL_GRAPH_AUTO;
	cfg->copy_grows = cg == CALL_GRAPH_AUTO && !given;
	said->freq = cfg->freq;
	if (a->export_url) {
		struct clickhouse *ch;
		const char *why;
		int err = clickhouse_open(a->export_url, &ch, &why);
		if (err == -EINVAL)
			usage_die("agent", "--export %s, not '%s'", why, a->export_url);
		if (err < 0)
			die("cannot export to %s: %s", a->export_url, strerror(-err));
		snprintf(said->export_to, sizeof(said->export_to), "%s", clickhouse_where(ch));
		if (a->export_password) {
			static char password[256];
			secret_read(a->export_password, "--export-password", password,
				    sizeof(password));
			cfg->export_password = password;
		} else if (clickhouse_url_password(ch)) {
			warning(
			    "the password in --export can be read by every user of this machine "
			    "(ps): put it in a file only root reads, and give --export-password "
			    "FILE");
		}
		clickhouse_close(ch);
		cfg->export_url = a->export_url;
		cfg->export_batch = 1;
		if (a->export_batch) {
			char *end;
			unsigned long n = strtoul(a->export_batch, &end, 10);
			if (!isdigit((unsigned char)a->export_batch[0]) || *end || n < 1 ||
			    n > EXPORT_BATCH_MAX)
				usage_die("agent",
					  "--export-batch wants a number of windows from 1 to %d, "
					  "not '%s'",
					  EXPORT_BATCH_MAX, a->export_batch);
			cfg->export_batch = n;
		}
		if (a->export_retain) {
			int64_t ns = span_option("--export-retain", a->export_retain, NULL);
			if (ns < DAY_NS || ns % DAY_NS || ns / DAY_NS > 100000)
				usage_die("agent",
					  "--export-retain wants whole days, such as 30d, not '%s'",
					  a->export_retain);
			cfg->export_retain_days = (int)(ns / DAY_NS);
			said->export_retain_days = cfg->export_retain_days;
		}
	}
}

void *agent_continuous_start(const struct agent_continuous_args *a, int stop_fd)
{
	struct profiler *k = &profiler;
	struct continuous_config *cfg = &k->cfg;
	struct said *said = &k->said;

	cfg->stop_fd = stop_fd;
	cfg->http_fd = -1;
	if (!a->http || strcmp(a->http, "off") != 0) {
		const char *spec = a->http ? a->http : DEFAULT_HTTP;
		cfg->http_fd = tcp_listen(spec, said->http, sizeof(said->http));
		if (cfg->http_fd == -EINVAL)
			usage_die("agent", "--http wants [ADDR:]PORT or off, not '%s'", spec);
		if (cfg->http_fd < 0)
			die("cannot listen on %s: %s: give another --http, or --http off", spec,
			    strerror(-cfg->http_fd));
		if (strncmp(said->http, "127.", 4) != 0 && strncmp(said->http, "[::1]", 5) != 0)
			serve_on_network(a, cfg, said, spec);
	}
	cfg->say = say;
	cfg->say_arg = said;

	int err = keeper_start("the profiler", profiler_child, k, &k->keeper);
	if (err == -ECHILD)
		exit(RECCE_EXIT_ERROR); /* it said why on its way out */
	if (err < 0)
		die("cannot start the profiler: %s", strerror(-err));
	if (cfg->http_fd >= 0) {
		/* Kept for the profilers started again; never accepted on here. */
		fcntl(cfg->http_fd, F_SETFD, FD_CLOEXEC);
	}
	return k;
}

int agent_continuous_attach(void *arg, struct evloop *loop)
{
	struct profiler *k = arg;

	return keeper_attach(k->keeper, loop);
}

int agent_continuous_stop(void *arg)
{
	struct profiler *k = arg;

	if (!k)
		return 0;
	int gave_up = keeper_stop(k->keeper);
	keeper_free(k->keeper);
	k->keeper = NULL;
	if (k->cfg.http_fd >= 0)
		close(k->cfg.http_fd);
	k->cfg.http_fd = -1;
	return gave_up;
}
