#!/bin/bash
# `recce dump -p PID`: every thread's stack now, kernel and user, each
# frame named with file and line; the target runs on unharmed. On the
# tree target (both threads asleep in slow_io), on Debian's redis-server
# (no frame pointers), Debian's node (an executable at fixed addresses
# that maps part of itself a second time) and Debian's stripped Go
# prometheus; JSON; and a second user who tries it on root's process is
# refused.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/tree" /usr/bin/redis-server /usr/bin/redis-cli /usr/bin/prometheus \
	/usr/bin/node
plan 26

# Both threads of the tree target asleep inside slow_io (60 s a call).
spawn_ready "$T/tree.out" "$TARGETS/tree" 10 go 60000 1
P=$PID
kill -USR1 "$P"
asleep() { [ "$(grep -l '^hrtimer_nanosleep$' /proc/"$P"/task/*/wchan 2>/dev/null | wc -l)" = 2 ]; }
ok "both threads of the target sleep in slow_io" wait_for 60 asleep
LINE=$(grep -n 'while (nanosleep(&ts, &ts) != 0)' tests/targets/tree.c | cut -d: -f1)
run "$RECCE" dump -p "$P"
is "$RC" 0 "dump exits 0" || show_run
cp "$OUT" "$T/tree.dump"
like "$(head -1 "$OUT")" "^process $P: 2 threads, stopped [0-9.]+ ms to read them$" \
	"it says how many threads and how long it stopped them"
# The user frames of a thread, by name, from slow_io outwards.
user_frames()
{
	awk -v tid="$1" '/^thread / { on = ($2 == tid) } on && /^    #/ { print $3 }' "$T/tree.dump" |
		sed -n '/^slow_io$/,$p' | tr '\n' ' '
}
WORKER=$(ls /proc/"$P"/task | grep -v "^$P$")
is "$(user_frames "$P")" "slow_io request main __libc_start_call_main __libc_start_main _start " \
	"the main thread: slow_io, request, main, down to _start"
is "$(user_frames "$WORKER")" "slow_io request worker start_thread clone3 " \
	"the worker: slow_io, request, worker, down to clone3"
is "$(grep -c "slow_io (.*tests/targets/tree.c:$LINE)" "$OUT")" 2 \
	"with the file and line each thread waits on"
is "$(grep -c "^thread [0-9]* (tree), sleeping in hrtimer_nanosleep:$" "$OUT")" 2 \
	"each thread with its state and wait channel"
is "$(grep -c '^    \[kernel\] hrtimer_nanosleep$' "$OUT")" 2 "and, as root, its kernel stack"
is "$(grep -c 'the walk ended here' "$OUT")" 0 "every walk reaches the outermost frame"
is "$(awk '{ print $3 }' /proc/"$P"/stat)" S "the target sleeps on, not stopped"
kill -0 "$P" && pass "and lives" || fail "and lives"

run "$RECCE" dump -p "$P" --json
is "$RC" 0 "dump --json exits 0" || show_run
is "$(python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["threads"]), all(t["complete"] for t in d["threads"]),
      sorted(t["frames"][[f["function"] for f in t["frames"]].index("slow_io") + 1]["function"]
             for t in d["threads"]))' <"$OUT")" "2 True ['request', 'request']" \
	"JSON: two complete threads, slow_io called by request in each"

# A second user cannot read root's process.
make_user
run runuser -u "$U" -- "$RECCE" dump -p "$P"
is "$RC" 1 "another user's dump of root's process: refused, exit 1"
like "$(cat "$ERR")" "$P" "naming the process"
is "$(awk '{ print $3 }' /proc/"$P"/stat)" S "and the target untouched"
kill "$P"

# Debian's redis-server, built without frame pointers: its main thread in
# epoll_wait under aeMain and main, whole, and it answers after.
spawn "$T/redis.log" /usr/bin/redis-server --port 0 --unixsocket "$T/redis.sock" \
	--save '' --appendonly no --daemonize no
REDIS=$PID
wait_for 30 test -S "$T/redis.sock" || diag "redis-server did not start"
# The main thread wakes ten times a second for serverCron, where a dump
# can catch it (a loaded run did, in read under serverCron): dumped
# again, a few times at most, until it is back in epoll_wait.
main_frames() { awk '/^thread / { n++ } n == 1' "$OUT" | grep '^    #' | awk '{ print $3 }' | tr '\n' ' '; }
for try in 1 2 3 4 5; do
	run "$RECCE" dump -p "$REDIS"
	[ "$RC" = 0 ] && [[ $(main_frames) == epoll_wait* ]] && break
done
is "$RC" 0 "dump of redis-server exits 0" || show_run
like "$(main_frames)" '^epoll_wait .*aeMain main ' "its main thread waits in epoll_wait under aeMain and main"
is "$(redis-cli -s "$T/redis.sock" ping)" PONG "and redis-server answers after"
kill "$REDIS"

# Debian's node, idle: V8 maps its builtins' code from the executable a
# second time, which must not cost the executable its CFI (it did: the
# walk ended at libc's epoll_pwait).
spawn "$T/node.out" /usr/bin/node -e \
	"require('http').createServer(() => {}).listen(0, '127.0.0.1', () => console.log('ready'))"
NODE=$PID
wait_for 30 grep -q ready "$T/node.out" || diag "node did not start: $(cat "$T/node.out")"
for try in 1 2 3 4 5; do
	run "$RECCE" dump -p "$NODE"
	[ "$RC" = 0 ] && [[ $(main_frames) == epoll_pwait* ]] && break
done
is "$RC" 0 "dump of node exits 0" || show_run
like "$(main_frames)" '^epoll_pwait uv__io_poll uv_run .*node::Start\(int, .*__libc_start_main _start $' \
	"its main thread waits in epoll_pwait under uv_run and node::Start, down to _start" ||
	diag "$(awk '/^thread / { n++ } n == 1' "$OUT")"
kill "$NODE"

# Debian's prometheus, a Go binary stripped of symbols and DWARF: names,
# files and lines from the Go runtime's own tables.
start_prometheus
run "$RECCE" dump -p "$PROM"
is "$RC" 0 "dump of the stripped Go prometheus exits 0" || show_run
like "$(cat "$OUT")" 'runtime\.futex \(runtime/sys_linux_amd64\.s:[0-9]+\)' \
	"its threads wait in runtime.futex, with file and line" || head -20 "$OUT"
# Each thread's stack ends where Go's own traceback ends it: where the
# thread started (mstart), or where it switched to its own stack to run
# the scheduler (mcall) or grow a goroutine's (morestack); no walk stops
# short of that.
is "$(grep -c '^thread ' "$OUT")" "$(awk '/^thread / { t = 1; next } t && /^    #/ { last = $0 } /^$/ && t { print last; t = 0 } END { if (t) print last }' "$OUT" |
	grep -cE ' runtime\.(mstart|mcall|morestack|goexit|rt0_go)(\.abi0)? ')" \
	"every thread's stack ends at runtime.mstart, mcall or morestack" ||
	diag "$(grep -B2 'walk ended here' "$OUT" | head -12)"
unlike "$(cat "$OUT")" 'the walk ended here' "and none says its walk ended short"
kill "$PROM"

run "$RECCE" dump
is "$RC" 2 "dump without -p: usage error"
