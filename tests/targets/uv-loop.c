/*
 * A libuv program with known callbacks, for `recce tasks --libuv`: built
 * against Debian's libuv1 and never changed for recce.
 *
 *   uv-loop
 *
 * Prints "ready" and waits for SIGUSR1 (seen by on_signal, itself a libuv
 * callback), then runs on one loop:
 *
 * - tick_fast, a repeating 3 ms timer, 100 runs of 2 ms on the CPU each;
 * - tick_slow, a repeating 10 ms timer, 20 runs of 5 ms each;
 * - a TCP echo on loopback: a client connects (on_connected), sends
 *   "ping\n" 50 times, each after the echo of the last came back
 *   (client_read), then closes; the server accepts it (on_connection),
 *   echoes each message (server_read: 50 messages and the end of the
 *   stream) and closes its side.
 *
 * - the thread pool: pool_work runs on it 20 times, one after another,
 *   each followed on the loop by after_work; and 20 uv_fs_stat of
 *   /proc/self, each completion (after_stat) starting the next. libuv
 *   reaches after_work and after_stat by a tail call.
 *
 * tick_fast and tick_slow time themselves (CLOCK_MONOTONIC, first
 * statement to last). Prints "tick_fast RUNS NS" and "tick_slow RUNS NS"
 * (their runs and the sum of those times), then "done", when all of it
 * is over, then idles on the loop (a timer
 * that does nothing, idle_tick, every 100 ms) until killed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#define FAST_RUNS 100
#define SLOW_RUNS 20
#define PINGS	  50
#define POOL_RUNS 20

static uv_loop_t *loop;
static uv_timer_t fast, slow, idle;
static uv_signal_t sig;
static uv_tcp_t server, client, accepted;
static uv_connect_t connect_req;
static int fast_runs, slow_runs, pings, parts_done, works, stats;
static uv_work_t work_req;
static uv_fs_t stat_req;
static char buf_mem[2][256];
static int64_t fast_ns, slow_ns;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void busy_ms(double ms)
{
	int64_t end = now_ns() + (int64_t)(ms * 1e6);

	while (now_ns() < end)
		;
}

static void part_done(void)
{
	if (++parts_done == 5) {
		printf("tick_fast %d %lld\ntick_slow %d %lld\ndone\n", fast_runs,
		       (long long)fast_ns, slow_runs, (long long)slow_ns);
		fflush(stdout);
	}
}

/* A timer's run: ms on the CPU, timed; the last of limit runs stops it. */
static void timed_run(uv_timer_t *t, double ms, int *runs, int limit, int64_t *ns)
{
	int64_t start = now_ns();

	busy_ms(ms);
	int last = ++*runs == limit;
	if (last)
		uv_timer_stop(t);
	*ns += now_ns() - start;
	if (last)
		part_done();
}

__attribute__((noinline)) void tick_fast(uv_timer_t *t)
{
	timed_run(t, 2, &fast_runs, FAST_RUNS, &fast_ns);
}

__attribute__((noinline)) void tick_slow(uv_timer_t *t)
{
	timed_run(t, 5, &slow_runs, SLOW_RUNS, &slow_ns);
}

__attribute__((noinline)) void idle_tick(uv_timer_t *t)
{
	(void)t;
}

static void alloc_buf(uv_handle_t *h, size_t size, uv_buf_t *b)
{
	(void)size;
	*b = uv_buf_init(buf_mem[h == (uv_handle_t *)&client], sizeof(buf_mem[0]));
}

static void send_ping(void);

__attribute__((noinline)) void client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	(void)b;
	if (n <= 0)
		return;
	if (++pings < PINGS) {
		send_ping();
		return;
	}
	uv_read_stop(s);
	uv_close((uv_handle_t *)s, NULL);
	part_done();
}

static void send_ping(void)
{
	static uv_write_t req;
	static char ping[] = "ping\n";
	uv_buf_t b = uv_buf_init(ping, 5);

	uv_write(&req, (uv_stream_t *)&client, &b, 1, NULL);
}

__attribute__((noinline)) void on_connected(uv_connect_t *req, int status)
{
	if (status < 0) {
		fprintf(stderr, "uv-loop: connect: %s\n", uv_strerror(status));
		exit(1);
	}
	uv_read_start(req->handle, alloc_buf, client_read);
	send_ping();
}

__attribute__((noinline)) void server_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	static uv_write_t reqs[PINGS];
	static char copies[PINGS][64];
	static int echoed;

	if (n < 0) {
		uv_close((uv_handle_t *)s, NULL);
		uv_close((uv_handle_t *)&server, NULL);
		return;
	}
	if (n == 0 || echoed >= PINGS)
		return;
	memcpy(copies[echoed], b->base, (size_t)n < 64 ? (size_t)n : 64);
	uv_buf_t out = uv_buf_init(copies[echoed], (unsigned)(n < 64 ? n : 64));
	uv_write(&reqs[echoed], s, &out, 1, NULL);
	echoed++;
}

__attribute__((noinline)) void on_connection(uv_stream_t *srv, int status)
{
	if (status < 0)
		return;
	uv_tcp_init(loop, &accepted);
	if (uv_accept(srv, (uv_stream_t *)&accepted) == 0)
		uv_read_start((uv_stream_t *)&accepted, alloc_buf, server_read);
}

__attribute__((noinline)) void pool_work(uv_work_t *w)
{
	(void)w;
	busy_ms(1);
}

__attribute__((noinline)) void after_work(uv_work_t *w, int status)
{
	(void)status;
	if (++works < POOL_RUNS)
		uv_queue_work(loop, w, pool_work, after_work);
	else
		part_done();
}

__attribute__((noinline)) void after_stat(uv_fs_t *req)
{
	uv_fs_req_cleanup(req);
	if (++stats < POOL_RUNS)
		uv_fs_stat(loop, req, "/proc/self", after_stat);
	else
		part_done();
}

__attribute__((noinline)) void on_signal(uv_signal_t *s, int signum)
{
	(void)signum;
	uv_signal_stop(s);
	uv_close((uv_handle_t *)s, NULL);
	uv_timer_start(&fast, tick_fast, 3, 3);
	uv_timer_start(&slow, tick_slow, 10, 10);
	struct sockaddr_in addr;
	int len = sizeof(addr);
	uv_tcp_getsockname(&server, (struct sockaddr *)&addr, &len);
	uv_tcp_init(loop, &client);
	uv_tcp_connect(&connect_req, &client, (const struct sockaddr *)&addr, on_connected);
	uv_queue_work(loop, &work_req, pool_work, after_work);
	uv_fs_stat(loop, &stat_req, "/proc/self", after_stat);
}

int main(void)
{
	struct sockaddr_in addr;

	loop = uv_default_loop();
	uv_timer_init(loop, &fast);
	uv_timer_init(loop, &slow);
	uv_timer_init(loop, &idle);
	uv_timer_start(&idle, idle_tick, 100, 100);
	uv_ip4_addr("127.0.0.1", 0, &addr);
	uv_tcp_init(loop, &server);
	if (uv_tcp_bind(&server, (const struct sockaddr *)&addr, 0) != 0 ||
	    uv_listen((uv_stream_t *)&server, 8, on_connection) != 0) {
		fprintf(stderr, "uv-loop: cannot listen on loopback\n");
		return 1;
	}
	uv_signal_init(loop, &sig);
	uv_signal_start(&sig, on_signal, SIGUSR1);
	printf("ready\n");
	fflush(stdout);
	return uv_run(loop, UV_RUN_DEFAULT);
}
