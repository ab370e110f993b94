#!/bin/bash
# Whole stacks on programs built the way Debian builds its packages:
# Debian's own redis-server, nginx and postgres (no frame pointers, their
# C library neither), under load, started by the test on sockets of their
# own. With the default --call-graph auto nearly no sample has an
# [unknown] frame, and the request paths run from main through redis's
# aeMain to processCommand, through nginx's worker loop to its ngx_http_*
# functions, and through a postgres backend's PostgresMain to its query
# stages, in `recce record` and in the continuous agent's store. Debian's stripped Go prometheus, answering queries: no stack
# goes on past where Go's own profiles start it.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" /usr/bin/redis-server /usr/bin/redis-benchmark /usr/bin/prometheus \
	/usr/sbin/nginx "$PGBIN/postgres" "$PGBIN/pgbench"

spawn "$T/redis.log" /usr/bin/redis-server --port 0 --unixsocket "$T/redis.sock" \
	--save '' --appendonly no --daemonize no
REDIS=$PID
ok "redis-server starts" wait_for 30 test -S "$T/redis.sock"
spawn "$T/bench.out" /usr/bin/redis-benchmark -s "$T/redis.sock" -n 20000 -c 4 \
	-t set,get,incr,lpush -q -l
BENCH=$PID
ok "redis-benchmark drives it" wait_for 30 grep -q 'requests per second' "$T/bench.out"

# nginx: a master and one worker, on a socket of the test's, from a
# configuration of the test's; curl asks it for one URL after another
# on one connection until it is killed.
mkdir -p "$T/nginx"
cat >"$T/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 1;
error_log stderr;
pid $T/nginx/nginx.pid;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $T/nginx/body;
	proxy_temp_path $T/nginx/proxy;
	fastcgi_temp_path $T/nginx/fastcgi;
	uwsgi_temp_path $T/nginx/uwsgi;
	scgi_temp_path $T/nginx/scgi;
	server {
		listen unix:$T/nginx/nginx.sock;
		location / { return 200 "hello\n"; }
	}
}
EOF
spawn "$T/nginx.log" /usr/sbin/nginx -p "$T/nginx" -c "$T/nginx/nginx.conf" -e stderr
NGINX=$PID
ok "nginx starts" wait_for 30 test -S "$T/nginx/nginx.sock"
spawn "$T/curl.out" bash -c "while :; do curl -s --unix-socket '$T/nginx/nginx.sock' -o /dev/null 'http://nginx/[1-100000]'; done"
NGINX_LOAD=$PID
ok "nginx has its worker" wait_for 30 eval '[ -n "$(pgrep -P "$NGINX" nginx)" ]'
NGINX_WORKER=$(pgrep -P "$NGINX" nginx)

# The share of samples with an [unknown] frame, in percent, and the
# samples of the request paths. nginx's worker loop is static, named by
# its .eh_frame range only: its request functions are under the call
# that starts the worker and the one that waits for its events.
REQUEST='(^|;)main;(.*;)?aeMain;(.*;)?processCommand(;|$)'
NGINX_REQUEST='(^|;)main;(.*;)?ngx_spawn_process;(.*;)?ngx_process_events_and_timers;(.*;)?ngx_http_[a-z_]+(;|$)'
NGINX_WHAT='main;...ngx_spawn_process;...ngx_process_events_and_timers;...ngx_http_*'
unknown_share()
{
	awk -v t="$(folded_total "$1")" -v u="$(folded_count "$1" '\[unknown\]')" \
		'BEGIN { printf "%.1f", t ? 100 * u / t : 100 }'
}

# whole_stacks WHERE PROFILE [REQUEST WHAT]: under 1% of its samples
# with an [unknown] frame, and the request path there (redis-server's
# by default).
whole_stacks()
{
	local f share request=${3:-$REQUEST} what=${4:-main;...aeMain;...processCommand}
	f=$(folded "$2")
	share=$(unknown_share "$f")
	cmp_ok "$share" '<=' 1 "$1: under 1% of the samples have an [unknown] frame ($share%)" ||
		diag "$(folded_top "$f")"
	cmp_ok "$(folded_count "$f" "$request")" '>' 0 "$1: requests run $what" ||
		diag "of $(folded_total "$f") samples, the most common:" "$(folded_top "$f" 5)"
}

# The commands redis-server has run so far.
commands()
{
	/usr/bin/redis-cli -s "$T/redis.sock" info stats 2>/dev/null |
		sed -n 's/^total_commands_processed:\([0-9]*\).*/\1/p'
}

# redis-server spends most of its time in the kernel: at 999 Hz the
# request path has dozens of samples, where the default's few could, on a
# busy machine, have none.
BEFORE=$(commands)
run "$RECCE" record -p "$REDIS" -F 999 -d 2 -o "$T/auto.pb.gz"
is "$RC" 0 "record -p redis-server exits 0" || show_run
whole_stacks "record" "$T/auto.pb.gz" ||
	diag "redis-server ran $(($(commands) - BEFORE)) commands meanwhile"
run "$RECCE" report "$T/auto.pb.gz" -n 0
like "$(grep -m1 ' processCommand ' "$OUT")" ' processCommand +redis-server$' \
	"named redis-server, as run, not redis-check-rdb, the file it links to"

# The frame-pointer walk alone, for contrast (not checked: the anchor).
run "$RECCE" record -p "$REDIS" -d 2 --call-graph fp -o "$T/fp.pb.gz"
diag "with --call-graph fp: $(unknown_share "$(folded "$T/fp.pb.gz")")% of the samples have an [unknown] frame"

# nginx's worker, as redis-server.
run "$RECCE" record -p "$NGINX_WORKER" -F 999 -d 2 -o "$T/nginx.pb.gz"
is "$RC" 0 "record -p the nginx worker exits 0" || show_run
whole_stacks "record, nginx" "$T/nginx.pb.gz" "$NGINX_REQUEST" "$NGINX_WHAT"
# Debian strips nginx's symbol table: a static function is not found by
# its name, and trace says why.
run "$RECCE" trace -p "$NGINX_WORKER" ngx_http_process_request_line --count 1
is "$RC" 1 "trace of nginx's static ngx_http_process_request_line exits 1"
like "$(cat "$ERR")" 'recce: /usr/sbin/nginx keeps no symbol table .* \(nginx!0xSTART-0xEND\) or by its address \(nginx:0xSTART\)$' \
	"and says nginx keeps no symbol table, and how to trace it" || show_run

# Debian's postgres: a backend answering pgbench's select-only queries on
# one connection, until pgbench is killed. Its static functions (Debian
# strips the symbol table) are named by their .eh_frame ranges.
start_postgres
"$PGBIN/pgbench" -h "$T/pg" -U postgres -i -s 1 postgres >"$T/pgbench-init.out" 2>&1 ||
	diag "pgbench -i failed: $(tail -n 3 "$T/pgbench-init.out")"
spawn "$T/pgbench.out" "$PGBIN/pgbench" -h "$T/pg" -U postgres -n -S -c 1 -T 600 postgres
PG_LOAD=$PID
backend() { pgrep -u postgres -f '^postgres: postgres postgres' | head -n 1; }
ok "pgbench connects" wait_for 60 eval '[ -n "$(backend)" ]'
PG_REQUEST='(^|;)main;PostmasterMain;(.*;)?PostgresMain;(.*;)?(pg_parse_query|pg_analyze_and_rewrite[a-z_]*|pg_plan_queries|PortalRun)(;|$)'
PG_WHAT='main;PostmasterMain;...;PostgresMain;...;pg_parse_query, pg_plan_queries, PortalRun...'

# The continuous agent, whole system, into its store.
STORE=$T/store
spawn_recce "$T/agent.out" "$T/agent.err" agent --continuous --socket "$T/a/a.sock" \
	--store "$STORE" --window 1s --rate 99
AGENT=$PID
ok "the agent starts" wait_for 15 grep -q 'profiling every process' "$T/agent.err"
FROM=$(date +%s.%N)
windows() {
	"$RECCE" query --store "$STORE" --from "@$FROM" --windows --json 2>/dev/null | grep -o start_ns | wc -l
}
ok "it writes 3 windows" wait_for 60 eval '[ "$(windows)" -ge 3 ]'
# At the agent's 99 Hz a few windows hold a few dozen samples of
# redis-server, on a busy machine none on the request path: the store is
# read again as windows come, until one has it (or for a minute).
fleet() {
	run "$RECCE" query --store "$STORE" --from "@$FROM" --comm redis-server -o "$T/fleet.pb.gz"
	QUERY_RC=$RC
	[ "$RC" = 0 ] && [ "$(folded_count "$(folded "$T/fleet.pb.gz")" "$REQUEST")" -gt 0 ]
}
wait_for 60 fleet
is "$QUERY_RC" 0 "query --comm redis-server exits 0" || show_run
whole_stacks "the agent's store" "$T/fleet.pb.gz"
# nginx's, from the same windows and more until one has its request path.
fleet_nginx() {
	run "$RECCE" query --store "$STORE" --from "@$FROM" --comm nginx -o "$T/fleet-nginx.pb.gz"
	QUERY_RC=$RC
	[ "$RC" = 0 ] &&
		[ "$(folded_count "$(folded "$T/fleet-nginx.pb.gz")" "$NGINX_REQUEST")" -gt 0 ]
}
wait_for 60 fleet_nginx
is "$QUERY_RC" 0 "query --comm nginx exits 0" || show_run
whole_stacks "the agent's store, nginx" "$T/fleet-nginx.pb.gz" "$NGINX_REQUEST" "$NGINX_WHAT"
# postgres's, from its backend: deep stacks (the agent's stack copy grows
# for them where they end at it).
fleet_pg() {
	run "$RECCE" query --store "$STORE" --from "@$FROM" --pid "$(backend)" -o "$T/fleet-pg.pb.gz"
	QUERY_RC=$RC
	[ "$RC" = 0 ] && [ "$(folded_count "$(folded "$T/fleet-pg.pb.gz")" "$PG_REQUEST")" -gt 0 ]
}
wait_for 60 fleet_pg
is "$QUERY_RC" 0 "query --pid (a postgres backend) exits 0" || show_run
whole_stacks "the agent's store, postgres" "$T/fleet-pg.pb.gz" "$PG_REQUEST" "$PG_WHAT"
f=$(folded "$T/fleet-pg.pb.gz")
diag "the agent's postgres backend: $(folded_count "$f" '\[stack copy ended\]') of $(folded_total "$f") samples cut where the copy ended; $(grep 'stack copy grew' "$T/agent.err" | sed 's/^recce: //')"
kill -INT "$AGENT"
wait_exit 20 "$AGENT"
is "$WAIT_RC" 0 "the agent stops on Ctrl-C with status 0"

kill_quietly "$BENCH" "$REDIS" "$NGINX_LOAD" "$NGINX"

# postgres's backend, as redis-server (the agent saw it above).
run "$RECCE" record -p "$(backend)" -F 999 -d 2 -o "$T/postgres.pb.gz"
is "$RC" 0 "record -p a postgres backend exits 0" || show_run
whole_stacks "record, postgres" "$T/postgres.pb.gz" "$PG_REQUEST" "$PG_WHAT"
kill_quietly "$PG_LOAD" "$PM"

# Debian's prometheus, a Go binary stripped of symbols and DWARF, answering
# queries: stacks start where Go's own profiles start them (a
# goroutine's runtime.goexit, a thread's runtime.mstart, the scheduler's
# runtime.mcall, a stack's growth in runtime.morestack), never with
# what a walk found past them.
start_prometheus
# Queries, one after another, until it is killed.
spawn "$T/load.out" bash -c "while :; do curl -s '$PROM_URL/api/v1/query?query=rate(prometheus_http_requests_total%5B1m%5D)' >/dev/null; curl -s '$PROM_URL/metrics' >/dev/null; done"
LOAD=$PID
run "$RECCE" record -p "$PROM" -F 999 -d 2 -o "$T/prom.pb.gz"
is "$RC" 0 "record -p prometheus exits 0" || show_run
kill_quietly "$LOAD"
f=$(folded "$T/prom.pb.gz")
cmp_ok "$(folded_total "$f")" '>' 0 "prometheus has samples"
# (A walk that never reaches one, all [unknown], is counted below.)
is "$(grep -cE ';runtime\.(goexit|mstart|mcall|morestack|rt0_go)[; ]' <<<"$f")" 0 \
	"prometheus: no stack goes on past runtime.goexit, mstart, mcall or morestack" ||
	diag "$(grep -E ';runtime\.(goexit|mstart|mcall|morestack|rt0_go)[; ]' <<<"$f" | head -n 3)"
cmp_ok "$(grep -cE '^runtime\.(goexit|mstart|mcall|morestack)[; ]' <<<"$f")" '>' 0 \
	"prometheus: stacks start there"
share=$(unknown_share "$f")
cmp_ok "$share" '<=' 1 "prometheus: under 1% of the samples have an [unknown] frame ($share%)" ||
	diag "$(folded_top "$f")"
kill_quietly "$PROM"
done_testing
