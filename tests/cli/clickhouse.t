#!/bin/bash
# The fleet store on a real ClickHouse (Debian's clickhouse-server, run by
# this test from a temporary config on loopback): an agent exports every
# window while a target with a known CPU split runs; `recce query
# --clickhouse` reads it back with the same shares as the agent's local
# store, by command, host and label; each stack is one row a day, samples
# and stacks partitioned by day; ClickHouse stopped mid-run costs the agent nothing
# but a warning, and when it is back the windows it missed are sent, so
# that it holds every window of the local store once, with the same
# samples; a profiler killed after ClickHouse took a window and before it
# heard so sends that window again without making it twice, and exports
# that overlap or follow a restart send no stack twice; a password
# given in a file is used and seen by no other user, one in a URL is
# warned about; a server that is not there and a URL that is not one are
# refused with what to do. With --export-retain, the days past it go from
# the three tables, once a day, and every later sample keeps its stack; a
# stacks table of an earlier recce (no days) is refused with what to do,
# and the statement docs/fleet-store.md gives keeps its stacks. recce
# view --clickhouse serves the profile page over three hosts' windows,
# opened in headless Chromium.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format-consumers.sh"
FLEET_SIM=$TARGETS/../bench/fleet-sim # built with the targets
need_file "$RECCE" "$TARGETS/split" "$TARGETS/hot" "$FLEET_SIM"
. "$(dirname "$0")/clickhouse.sh"
[ -x /usr/bin/chromium ] || skip_all "chromium is not installed (Debian package chromium)"
need_js playwright-core
mkdir -p "$B/artifacts"

now() { date +%s.%N; }

# A free port on loopback, for ClickHouse's HTTP and native interfaces.
free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
HTTP_PORT=$(free_port)
TCP_PORT=$(free_port)
CH=$T/ch
ch_config "$CH" "$HTTP_PORT" "$TCP_PORT" 127.0.0.1

# start_clickhouse: the server, until it answers; sets CHPID.
start_clickhouse() { ch_start "$CH" "http://127.0.0.1:$HTTP_PORT"; }

# sql QUERY: ClickHouse's answer to QUERY, in TabSeparated.
sql()
{
	curl -sf --data-binary "$1" "http://127.0.0.1:$HTTP_PORT/"
}

# fleet_windows DB: each window's start and its processes' samples, one
# line each, in ClickHouse's database DB; the same text as local_windows
# of the local store when ClickHouse holds every window once.
fleet_windows()
{
	sql "SELECT start_ns, n FROM (SELECT start_ns FROM $1.windows)
	     ANY LEFT JOIN (SELECT start_ns, sum(samples) AS n FROM $1.samples GROUP BY start_ns)
	     USING start_ns ORDER BY start_ns FORMAT TSV" | tr '\t' ' '
}

# export_agent NAME URL [ARGS...]: an agent of 1 s windows exporting to
# URL, its store in $T/NAME-store, its output in $T/NAME.err; sets XAGENT
# and XMETRICS (its /metrics).
export_agent()
{
	local name=$1 url=$2
	shift 2
	spawn_recce "$T/$name.out" "$T/$name.err" agent --continuous --socket "$T/$name/a.sock" \
		--store "$T/$name-store" --window 1s --rate 99 --http 127.0.0.1:0 --export "$url" "$@"
	set -- "$name"
	XAGENT=$PID
	wait_for 15 grep -q 'metrics at http' "$T/$1.err" || diag "$(cat "$T/$1.err")"
	XMETRICS=$(sed -n 's/.*metrics at \(http:\/\/[0-9.:]*\).*/\1/p' "$T/$1.err")
}

# same_windows STORE DB NAME: the check NAME that ClickHouse's database DB
# holds every window of the local STORE once, with its samples (both
# lists kept in $T/local-windows and $T/fleet-windows).
same_windows()
{
	local_windows "$1" >"$T/local-windows"
	fleet_windows "$2" >"$T/fleet-windows"
	is "$(cat "$T/fleet-windows")" "$(cat "$T/local-windows")" "$3" ||
		diag "$(diff "$T/local-windows" "$T/fleet-windows" | head -n 10)"
}

# settled METRICS: waits until that agent has no window waiting for
# ClickHouse (one on its way is taken within the wait).
settled()
{
	local url=$1
	wait_for 60 eval '[ "$(agent_metric "$url" windows_export_pending)" = 0 ]'
}

start_clickhouse
ok "clickhouse-server runs from a temporary config" curl -sf "http://127.0.0.1:$HTTP_PORT/ping" -o /dev/null
# The stacks tables of fleet and fleet2 made before the agents, as plain
# MergeTree (the agent leaves a table that is there), so that a stack
# sent twice on a day stays two rows when parts merge.
for db in fleet fleet2; do
	sql "CREATE DATABASE $db" && sql "CREATE TABLE $db.stacks (day Date, stack_hash UInt64,
		functions Array(String), files Array(String), lines Array(UInt32),
		modules Array(String)) ENGINE = MergeTree PARTITION BY day ORDER BY stack_hash" ||
		diag "cannot make $db.stacks"
done
URL=clickhouse://127.0.0.1:$HTTP_PORT/fleet

T0=$(now)
spawn_recce "$T/agent.out" "$T/agent.err" agent --continuous --socket "$T/a/a.sock" \
	--store "$T/store" --window 1s --rate 99 --http 127.0.0.1:0 --export "$URL"
AGENT=$PID
wait_for 15 grep -q 'exporting every window' "$T/agent.err" || diag "$(cat "$T/agent.err")"
like "$(cat "$T/agent.err")" "exporting every window to ClickHouse at 127\\.0\\.0\\.1:$HTTP_PORT/fleet" \
	"the agent says where it exports"
METRICS=$(sed -n 's/.*metrics at \(http:\/\/[0-9.:]*\).*/\1/p' "$T/agent.err")
next_count windows_exported_total "$METRICS" || diag "no window was exported"
spawn "$T/split.out" "$TARGETS/split" 8
SPLIT=$PID
sleep 1 # split alone for a while: a time apart, not a wait
"$TARGETS/hot" 2 >/dev/null 2>&1
wait_exit 20 "$SPLIT"
is "$WAIT_RC" 0 "the split target ran to its end"
next_count windows_exported_total "$METRICS" || diag "split's last window was never exported"
END=$(now)
# The window holding END, in both stores before either is read.
next_count windows_exported_total "$METRICS" || diag "the window holding END was never exported"

# --- read back --------------------------------------------------------

# The agent profiles every process: another test's split may run beside
# this one, so its pid joins the name.
run "$RECCE" query --clickhouse "$URL" --from "@$T0" --to "@$END" --comm split --pid "$SPLIT" -n 0
is "$RC" 0 "query --clickhouse exits 0" || show_run
cp "$OUT" "$T/fleet.txt"
WA=$(awk '$4 == "work_a" { sub("%", "", $2); print $2; exit }' "$OUT")
WB=$(awk '$4 == "work_b" { sub("%", "", $2); print $2; exit }' "$OUT")
N=$(query_samples "$(cat "$OUT")")
share_near "$WA" 75 "$N" "work_a has 75% of split's $N samples in ClickHouse ($WA%)" || diag "$(cat "$OUT")"
share_near "$WB" 25 "$N" "work_b has 25% ($WB%)"
like "$(cat "$OUT")" 'work_a +[^ ]*split\.c:[0-9]+' "with file:line"
like "$(cat "$OUT")" 'processes: 1 ' "one process of that name and pid"

run "$RECCE" query --store "$T/store" --from "@$T0" --to "@$END" --comm split --pid "$SPLIT" -n 0
is "$(grep -E '^ +[0-9]' "$OUT" | awk '{ print $1, $2, $3, $4 }')" \
	"$(grep -E '^ +[0-9]' "$T/fleet.txt" | awk '{ print $1, $2, $3, $4 }')" \
	"the fleet store gives the same table as the agent's own store"

run "$RECCE" query --clickhouse "$URL" --from "@$T0" --to "@$END" --comm hot -n 3
like "$(cat "$OUT")" 'burn_cpu +.*hot\.c:' "the process that lived 2 s is there, named"

run "$RECCE" query --clickhouse "$URL" --from "@$T0" --to "@$END" --host "$(hostname)" --comm split -n 3
like "$(cat "$OUT")" 'work_a' "--host picks this host's windows"
run "$RECCE" query --clickhouse "$URL" --from "@$T0" --to "@$END" --host another-host
is "$RC" 1 "another host has none of them"
like "$(cat "$ERR")" "no samples in 127\\.0\\.0\\.1:$HTTP_PORT/fleet .* that match" "and says so"
run "$RECCE" query --clickhouse "$URL" --from "@$T0" --to "@$END" --label "pid=$SPLIT" -n 3
like "$(cat "$OUT")" 'work_a' "--label pid=PID picks one process"

run "$RECCE" query --clickhouse "$URL" --from "@$T0" --to "@$END" --pid "$SPLIT" -o "$T/split.pb.gz"
is "$RC" 0 "query --clickhouse -o writes a pprof profile" || show_run
perl "$(dirname "$0")/pprof-labels.pl" "$T/split.pb.gz" >"$T/labels"
# Before its exec the process was spawn's setsid and env, and its samples
# say so.
is "$(grep -Ev "pid=$SPLIT .*comm=(setsid|env) exe=/usr/bin/(setsid|env) " "$T/labels" |
	grep -vc "pid=$SPLIT .*comm=split exe=/[^ ]*/split build_id=[0-9a-f]\\{40\\}")" 0 \
	"every sample has the process's pid, comm, exe and build-id" ||
	diag "$(head -n 3 "$T/labels")"
if command -v go >/dev/null; then
	run go tool pprof -top "$T/split.pb.gz"
	like "$(cat "$OUT")" 'work_a' "go tool pprof reads it"
else
	skip 1 "go is not installed"
fi

# --- the schema -------------------------------------------------------

is "$(sql "SELECT count() - uniqExact(day, stack_hash) FROM fleet.stacks")" 0 \
	"every stack was sent once a day"
is "$(sql "SELECT count() FROM fleet.samples WHERE (day, stack_hash) NOT IN (SELECT day, stack_hash FROM fleet.stacks)")" 0 \
	"every sample's stack is in the stacks table, on the sample's day"
is "$(sql "SELECT DISTINCT partition FROM system.parts WHERE database = 'fleet' AND table = 'samples' AND active")" \
	"$(date -u +%Y-%m-%d)" "samples are partitioned by day" ||
	diag "(a run across midnight UTC has two days)"
cmp_ok "$(sql "SELECT count() FROM fleet.windows")" '>=' 8 "every window has its row"

curl -sf "$METRICS/metrics" >"$T/metrics"
like "$(cat "$T/metrics")" 'recce_agent_windows_exported_total [1-9]' "/metrics counts the windows exported"
like "$(cat "$T/metrics")" 'recce_agent_windows_export_failed_total 0' "and none failed" ||
	diag "$(grep -E 'warning|error' "$T/agent.err")"

# --- ClickHouse away and back -----------------------------------------

kill -TERM "$CHPID"
wait_exit 30 "$CHPID"
wait_for 60 grep -q 'cannot export a window' "$T/agent.err"
# Refused, or reset when it went away in the middle of a window's insert.
like "$(cat "$T/agent.err")" "warning: cannot export a window to 127\\.0\\.0\\.1:$HTTP_PORT/fleet: .*(refused|reset by peer|Broken pipe|timed out|answered [0-9]+).*: windows wait in $T/store and are sent when it takes them again, oldest first" \
	"ClickHouse gone: the agent warns, and why"
FAILED=$(agent_metric "$METRICS" windows_export_failed_total)
ok "the windows go on failing while it is away" \
	wait_for 60 eval '[ "$(agent_metric "$METRICS" windows_export_failed_total)" -ge $((FAILED + 2)) ]'
is "$(grep -c 'cannot export a window' "$T/agent.err")" 1 "and the warning is said once" ||
	diag "$(grep -E 'warning|error|again' "$T/agent.err")"
ok "and goes on" kill -0 "$AGENT"
AWAY=$(now)
start_clickhouse
wait_for 15 grep -q 'exported to .* again' "$T/agent.err"
like "$(cat "$T/agent.err")" "windows are exported to 127\\.0\\.0\\.1:$HTTP_PORT/fleet again; the [0-9]+ it missed follow, oldest first" \
	"ClickHouse back: windows go through again, and those it missed follow" ||
	diag "$(tail -n 5 "$T/agent.err")"
# The window after the one that went through first starts after AWAY.
next_count windows_exported_total "$METRICS" || diag "no window was exported after ClickHouse came back"
cmp_ok "$(sql "SELECT count() FROM fleet.windows WHERE start_ns > $(awk "BEGIN { printf \"%d\", $AWAY * 1e9 }")")" \
	'>=' 1 "and land there"
settled "$METRICS" || diag "windows still wait: $(agent_metric "$METRICS" windows_export_pending)"
cmp_ok "$(agent_metric "$METRICS" windows_resent_total)" '>=' 2 \
	"the windows ClickHouse missed are sent again"
kill -INT "$AGENT"
wait_exit 10 "$AGENT"
is "$WAIT_RC" 0 "the agent stops with status 0"
same_windows "$T/store" fleet \
	"ClickHouse has every window of the local store once, each with the same samples"
cmp_ok "$(wc -l <"$T/local-windows")" '>=' 10 "the local store has the run's windows"
run "$RECCE" query --clickhouse "$URL" --from "@$T0" -n 1
is "$RC" 0 "a query of the whole run exits 0" || show_run
unlike "$(cat "$OUT" "$ERR")" 'missing|no window' "and no time of it is missing" ||
	diag "$(grep -v '^ ' "$OUT"; cat "$ERR"; grep -v 'exported to' "$T/agent.err" | tail -n 5)"

# --- a profiler killed between ClickHouse's answer and its mark -----------

# A relay to ClickHouse that holds each answer 0.4 s while the file
# FLAG is there, so that an export lasts long enough to stop the profiler
# in the middle of it, and holds the first insert of stacks 1.5 s, so
# that the next window asks which stacks ClickHouse has before they are
# there. It prints its port.
cat >"$T/relay.py" <<'PY'
import os, socket, sys, threading, time
upstream, flag = int(sys.argv[1]), sys.argv[2]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
held = []
def pipe(a, b, delay):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            if delay and os.path.exists(flag):
                time.sleep(delay)
            if not delay and not held and b"INSERT" in data and b"stacks" in data:
                held.append(1)
                time.sleep(1.5)
            b.sendall(data)
    except OSError:
        pass
    for c in (a, b):
        try:
            c.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    c = s.accept()[0]
    u = socket.create_connection(("127.0.0.1", upstream))
    threading.Thread(target=pipe, args=(c, u, 0), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c, 0.4), daemon=True).start()
PY
touch "$T/slow"
# A stack in every window: that of hot, which burns until it is killed.
spawn "$T/hot.out" "$TARGETS/hot"
HOT=$PID
spawn "$T/relay.out" python3 "$T/relay.py" "$HTTP_PORT" "$T/slow"
RELAY=$PID
wait_for 10 test -s "$T/relay.out" || diag "the relay did not start"
export_agent kill "clickhouse://127.0.0.1:$(head -n 1 "$T/relay.out")/fleet2"
KAGENT=$XAGENT KMETRICS=$XMETRICS
next_count windows_exported_total "$KMETRICS" || diag "no window went through the relay"
PROFILER=$(pgrep -P "$KAGENT")
# exports_running: the profiler has a child that has not ended (its
# exports, through the relay, last over a second each).
exports_running()
{
	ps -o stat= --ppid "$PROFILER" | grep -qv '^Z'
}
# Stopped while exports run, which then end, their answers unread; the
# windows they took are still marked in its store.
wait_for 30 exports_running || diag "no export ran: $(ps -o pid,stat --ppid "$PROFILER")"
kill -STOP "$PROFILER"
wait_for 60 eval '! exports_running' || diag "the exports did not end: $(ps -o pid,stat --ppid "$PROFILER")"
python3 - "$T/kill-store/store.db" >"$T/unsent" <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
print(",".join(str(r[0]) for r in db.execute("SELECT start_ns FROM unsent")) or "0")
PY
cmp_ok "$(sql "SELECT count() FROM fleet2.windows WHERE start_ns IN ($(cat "$T/unsent"))")" '>=' 1 \
	"a window ClickHouse took is still marked unsent when its profiler is killed"
kill -KILL "$PROFILER"
rm "$T/slow"
wait_for 60 grep -q 'samples again' "$T/kill.err" || diag "$(cat "$T/kill.err")"
next_count windows_exported_total "$KMETRICS" || diag "no window went through after the restart"
settled "$KMETRICS" || diag "windows still wait: $(agent_metric "$KMETRICS" windows_export_pending)"
cmp_ok "$(agent_metric "$KMETRICS" windows_resent_total)" '>=' 1 \
	"the window whose answer was lost is sent again"
kill -INT "$KAGENT"
wait_exit 30 "$KAGENT"
is "$WAIT_RC" 0 "the agent stops with status 0"
kill_quietly "$RELAY"
kill_quietly "$HOT"
is "$(sql "SELECT count() - uniqExact(start_ns) FROM fleet2.windows")" 0 \
	"and it is there once"
# Exports through the relay last longer than a window, so that they
# overlap (the second waits for the first's stacks), and the profiler
# started again knows nothing it sent.
is "$(sql "SELECT count() - uniqExact(day, stack_hash) FROM fleet2.stacks")" 0 \
	"every stack was sent once a day, by exports at the same time and by a profiler started again" ||
	diag "$(sql "SELECT day, stack_hash, count() FROM fleet2.stacks GROUP BY day, stack_hash HAVING count() > 1")"
same_windows "$T/kill-store" fleet2 \
	"ClickHouse has every window the local store has, once, with its samples"
run "$RECCE" query --clickhouse "clickhouse://127.0.0.1:$HTTP_PORT/fleet2" --from "@$T0" -n 1
like "$(cat "$OUT")" "windows: [0-9]+, [0-9.]+ s missing between them \\($(hostname)\\)" \
	"a query over the kill says how long no window covers, and on which host" || show_run
like "$(cat "$ERR")" "warning: no window of 127\\.0\\.0\\.1:$HTTP_PORT/fleet2 covers [0-9.]+ s of the range \\(hosts: $(hostname)\\)" \
	"and warns"

# --- a password kept out of every user's sight ----------------------------

make_user
printf 'fleet-pw-3141\n' >"$T/secret"
chmod 600 "$T/secret"
export_agent pw "clickhouse://recce@127.0.0.1:$HTTP_PORT/fleet3" --export-password "$T/secret"
next_count windows_exported_total "$XMETRICS" || diag "no window went with the password: $(cat "$T/pw.err")"
cmp_ok "$(sql "SELECT count() FROM fleet3.windows")" '>=' 1 \
	"--export-password FILE: the agent exports as a user with a password"
SEEN=$(su -s /bin/sh "$U" -c "cat /proc/$XAGENT/cmdline /proc/$(pgrep -P "$XAGENT")/cmdline; ps -eo args" |
	tr '\0' ' ')
like "$SEEN" "export-password $T/secret" "another user sees the agent's command line"
unlike "$SEEN" 'fleet-pw-3141' "and not the password"
unlike "$(cat "$T/pw.err")" 'password' "the agent has nothing to warn about"
kill -INT "$XAGENT"
wait_exit 30 "$XAGENT"
is "$WAIT_RC" 0 "the agent stops with status 0"

run "$RECCE" query --clickhouse "clickhouse://recce@127.0.0.1:$HTTP_PORT/fleet3" \
	--clickhouse-password "$T/secret" --from "@$T0" -n 1
is "$RC" 0 "query --clickhouse-password FILE reads as that user" || show_run
unlike "$(cat "$ERR")" 'password' "without a warning"
run "$RECCE" query --clickhouse "clickhouse://recce:fleet-pw-3141@127.0.0.1:$HTTP_PORT/fleet3" \
	--from "@$T0" -n 1
is "$RC" 0 "a password in the URL still works" || show_run
like "$(cat "$ERR")" "warning: the password in --clickhouse can be read by every user of this machine \\(ps\\): put it in a file, and give --clickhouse-password FILE" \
	"with a warning that says where to put it"
printf 'not-it\n' >"$T/bad-pw"
chmod 644 "$T/bad-pw"
run "$RECCE" query --clickhouse "clickhouse://recce@127.0.0.1:$HTTP_PORT/fleet3" \
	--clickhouse-password "$T/bad-pw" --from "@$T0"
is "$RC" 1 "a wrong password exits 1"
like "$(cat "$ERR")" "warning: $T/bad-pw \\(--clickhouse-password\\) can be read by other users: 'chmod 600 $T/bad-pw'" \
	"a password file others can read is said"
like "$(cat "$ERR")" "cannot query ClickHouse at .*: ClickHouse answered [0-9]+: .*(password|Authentication)" \
	"and ClickHouse's refusal is passed on"
run "$RECCE" query --clickhouse-password "$T/secret"
is "$RC" 2 "--clickhouse-password without --clickhouse is a usage error"

# --- a ClickHouse that takes connections and never answers ----------------

# It prints its port, then "accepted" and "closed" for each connection.
# The first connection's answer never ends: a byte of a header each
# second, so that the export waits for it until its deadline (30 s),
# not the 5 s an export waits for a silent server, as the others do.
cat >"$T/hole.py" <<'PY'
import select, socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
conns = []
first = None
while True:
    ready, _, _ = select.select([s] + conns, [], [], 1)
    if first in conns:
        try:
            first.send(b"HTTP/1.1 200 OK\r\nX-Wait: " if first_new else b"a")
            first_new = False
        except OSError:
            pass
    for c in ready:
        if c is s:
            conns.append(s.accept()[0])
            if first is None:
                first, first_new = conns[-1], True
            print("accepted", flush=True)
            continue
        try:
            data = c.recv(65536)
        except OSError:
            data = b""
        if not data:
            conns.remove(c)
            c.close()
            print("closed first" if c is first else "closed", flush=True)
PY
spawn "$T/hole.out" python3 "$T/hole.py"
HOLE=$PID
wait_for 10 test -s "$T/hole.out" || diag "the silent server did not start"
export_agent hole "clickhouse://127.0.0.1:$(head -n 1 "$T/hole.out")/fleet"
HOLE_AGENT=$XAGENT HOLE_METRICS=$XMETRICS
wait_for 30 grep -q '^accepted' "$T/hole.out" || diag "the agent never tried to export"
W0=$(windows_written "$HOLE_METRICS")
# The first export waits 30 s for its answer: two windows of 1 s come first.
ok "while an export waits on ClickHouse, windows go on being written" \
	wait_for 30 eval '[ "$(windows_written "$HOLE_METRICS")" -ge $((W0 + 2)) ]'
is "$(grep -c '^closed first' "$T/hole.out")" 0 "before the agent gave up its first connection"
wait_for 30 grep -q 'cannot export a window' "$T/hole.err"
like "$(cat "$T/hole.err")" "warning: cannot export a window to 127\\.0\\.0\\.1:[0-9]+/fleet: .*(timed out|still busy)" \
	"then it says the exports are timing out, or all busy waiting"
# Without its server, the exports still waiting end at once.
kill_quietly "$HOLE"
kill -INT "$HOLE_AGENT"
wait_exit 30 "$HOLE_AGENT"
is "$WAIT_RC" 0 "the agent stops with status 0, its exports ended"

# --- batches ------------------------------------------------------------

# --export-batch 4: one INSERT a table for every 4 windows. A server that
# answers an error to a batch's windows' rows (a view of them that throws,
# once ClickHouse has taken some or all of them) has them sent again,
# each window once.
export_agent batch "clickhouse://127.0.0.1:$HTTP_PORT/fleet4" --export-batch 4
BATCH_AGENT=$XAGENT BATCH_METRICS=$XMETRICS
ok "batches of 4 windows go through" \
	wait_for 60 eval '[ "$(agent_metric "$BATCH_METRICS" windows_exported_total)" -ge 8 ]'
is "$(agent_metric "$BATCH_METRICS" windows_resent_total)" 0 "none of them counted as sent again"
sql "SYSTEM FLUSH LOGS" || diag "cannot flush ClickHouse's query log"
# The rows of each INSERT into the windows table so far.
sql "SELECT written_rows FROM system.query_log WHERE type = 2
	AND query LIKE 'INSERT INTO fleet4.windows %'" >"$T/batch-inserts"
is "$(sort -u "$T/batch-inserts") $(($(wc -l <"$T/batch-inserts") >= 2))" "4 1" \
	"each INSERT into the windows table holds 4 windows" ||
	diag "$(tr '\n' ' ' <"$T/batch-inserts")"
sql "CREATE MATERIALIZED VIEW fleet4.refuse ENGINE = Null
	AS SELECT throwIf(start_ns != 0) AS refused FROM fleet4.windows" ||
	diag "cannot make fleet4 refuse windows"
ok "a server that refuses the windows' rows fails whole batches" \
	wait_for 60 eval '[ "$(agent_metric "$BATCH_METRICS" windows_export_failed_total)" -ge 8 ]'
sql "DROP TABLE fleet4.refuse" || diag "cannot make fleet4 take windows again"
# batch_settled: the windows that failed are sent again, and no more
# wait than fill the next batch.
batch_settled()
{
	[ "$(agent_metric "$BATCH_METRICS" windows_resent_total)" -ge 8 ] &&
		[ "$(agent_metric "$BATCH_METRICS" windows_export_pending)" -le 3 ]
}
ok "and once it takes them, they are sent again" wait_for 60 batch_settled
kill -INT "$BATCH_AGENT"
wait_exit 30 "$BATCH_AGENT"
is "$WAIT_RC" 0 "the agent stops with status 0, its last windows sent"
same_windows "$T/batch-store" fleet4 \
	"ClickHouse has every window of the batching agent's store once, each with the same samples"
cmp_ok "$(wc -l <"$T/local-windows")" '>=' 16 "the batching agent's store has its windows"
# A full disk under a batching agent: the windows its store cannot
# write go to ClickHouse alone, from memory, as without batches.
if [ "$(id -u)" = 0 ] && mkdir "$T/tiny-store" && mount -t tmpfs -o size=1m tmpfs "$T/tiny-store"; then
	unmount_at_exit "$T/tiny-store"
	export_agent tiny "clickhouse://127.0.0.1:$HTTP_PORT/fleet8" --export-batch 4
	wait_for 30 eval '[ "$(agent_metric "$XMETRICS" windows_written_total)" -ge 1 ]' ||
		diag "the agent wrote no window"
	dd if=/dev/zero of="$T/tiny-store/fill" bs=4k count=1024 2>/dev/null
	ok "the batching agent's disk is full" wait_for 30 grep -q 'is full: windows are not written' "$T/tiny.err"
	E=$(agent_metric "$XMETRICS" windows_exported_total)
	ok "windows its store cannot write go to ClickHouse" \
		wait_for 60 eval '[ "$(agent_metric "$XMETRICS" windows_exported_total)" -ge $((E + 2)) ]'
	like "$(curl -sf "$XMETRICS/metrics")" 'recce_agent_store_full 1' "while the store is full"
	cmp_ok "$(sql "SELECT count() FROM fleet8.windows")" '>=' $((E + 2)) "and ClickHouse has them"
	rm -f "$T/tiny-store/fill"
	kill -INT "$XAGENT"
	wait_exit 30 "$XAGENT"
else
	skip 4 "needs root to mount a small tmpfs"
fi
run "$RECCE" agent --continuous --export "$URL" --export-batch 61
is "$RC" 2 "--export-batch past 60 is a usage error"
like "$(cat "$ERR")" "export-batch wants a number of windows from 1 to 60, not '61'" "and says the bounds"

# --- a stacks table of an earlier recce ---------------------------------

# Made as recce made it before its stacks had days, with a stack of an
# application whose sample, of yesterday, the agent's tables get below.
sql "CREATE DATABASE fleet5" && sql "CREATE TABLE fleet5.stacks (stack_hash UInt64,
	functions Array(String), files Array(String), lines Array(UInt32),
	modules Array(String)) ENGINE = ReplacingMergeTree ORDER BY stack_hash" &&
	sql "INSERT INTO fleet5.stacks VALUES (42, ['main','old_fn'], ['',''], [0,0], ['oldapp','oldapp'])" ||
	diag "cannot make fleet5.stacks"
export_agent old "clickhouse://127.0.0.1:$HTTP_PORT/fleet5"
OLD_AGENT=$XAGENT OLD_METRICS=$XMETRICS
ok "the agent warns of the stacks table" \
	wait_for 30 grep -q 'is an earlier recce' "$T/old.err"
like "$(cat "$T/old.err")" "cannot export a window to 127\\.0\\.0\\.1:$HTTP_PORT/fleet5: fleet5\\.stacks is an earlier recce's, without days: rename it \\(RENAME TABLE fleet5\\.stacks TO fleet5\\.stacks_undated\\) and the next export makes it anew" \
	"with what to do"
is "$(agent_metric "$OLD_METRICS" windows_exported_total)" 0 "and exports nothing into it"
YESTERDAY=$(date -u +%Y-%m-%d -d '-1 day')
sql "INSERT INTO fleet5.samples (day, start_ns, end_ns, host, pid, comm, stack_hash, samples, cpu_ns)
	VALUES ('$YESTERDAY', $(date -u +%s -d "$YESTERDAY 12:00")000000000,
	$(date -u +%s -d "$YESTERDAY 12:00")010000000, 'oldhost', 7, 'oldapp', 42, 5, 50000000)" &&
	sql "RENAME TABLE fleet5.stacks TO fleet5.stacks_undated" || diag "cannot rename fleet5.stacks"
ok "renamed as it says, the windows go, those that waited too" \
	wait_for 60 grep -q 'windows are exported to .*fleet5 again' "$T/old.err"
# The statement of docs/fleet-store.md.
sql "$(sed -n '/^    INSERT INTO recce.stacks SELECT/,/USING stack_hash/p' "$ROOT/docs/fleet-store.md" |
	sed 's/recce\./fleet5./g')" || diag "the statement of docs/fleet-store.md fails"
run "$RECCE" query --clickhouse "clickhouse://127.0.0.1:$HTTP_PORT/fleet5" \
	--from "$YESTERDAY 00:00" --comm oldapp --format folded
is "$(cat "$OUT")" "main;old_fn 50000000" "and the earlier samples keep their stacks" || diag "$(cat "$ERR")"
kill -INT "$OLD_AGENT"
wait_exit 30 "$OLD_AGENT"
same_windows "$T/old-store" fleet5 "ClickHouse has every window of that agent's store once"

# --- retention --------------------------------------------------------

# Days of another host in the three tables: one past the day kept,
# yesterday, kept. And as if sent yesterday, the stacks the first agent
# sent (hot's among them), which the agent below sends again today.
LONG_AGO=$(date -u +%Y-%m-%d -d '-10 days')
sql "CREATE DATABASE fleet6" || diag "cannot make fleet6"
for t in stacks samples windows; do
	sql "CREATE TABLE fleet6.$t AS fleet5.$t" || diag "cannot make fleet6.$t"
done
for day in "$LONG_AGO" "$YESTERDAY"; do
	at=$(date -u +%s -d "$day 12:00")000000000
	sql "INSERT INTO fleet6.stacks VALUES ('$day', 42, ['main','old_fn'], ['',''], [0,0], ['a','a'])" &&
		sql "INSERT INTO fleet6.samples (day, start_ns, end_ns, host, comm, stack_hash, samples, cpu_ns)
			VALUES ('$day', $at, $at, 'oldhost', 'oldapp', 42, 5, 50000000)" &&
		sql "INSERT INTO fleet6.windows (day, start_ns, end_ns, host, samples)
			VALUES ('$day', $at, $at, 'oldhost', 5)" || diag "cannot fill fleet6 on $day"
done
sql "INSERT INTO fleet6.stacks SELECT toDate('$YESTERDAY'), stack_hash, functions, files, lines,
	modules FROM fleet.stacks" || diag "cannot copy fleet.stacks to yesterday"
# Each export takes 2 s more than a window: exports of the first day's
# windows run side by side, and still only one drops days.
sql "CREATE MATERIALIZED VIEW fleet6.slow ENGINE = Null
	AS SELECT sleep(2) AS slept FROM fleet6.windows" || diag "cannot make fleet6 slow"
export_agent retain "clickhouse://127.0.0.1:$HTTP_PORT/fleet6" --export-retain 1d
RETAIN_AGENT=$XAGENT RETAIN_METRICS=$XMETRICS
ok "the agent drops the days past --export-retain" \
	wait_for 30 grep -q 'fleet6: the days before' "$T/retain.err"
CUTOFF=$(date -u +%Y-%m-%d -d "$(sql "SELECT max(day) FROM fleet6.windows WHERE host != 'oldhost'") -1 day")
like "$(cat "$T/retain.err")" "127\\.0\\.0\\.1:$HTTP_PORT/fleet6: the days before $CUTOFF dropped, older than --export-retain 1d \\(3 partitions of its tables\\)" \
	"and says which, and how many partitions"
is "$(sql "SELECT DISTINCT table, partition FROM system.parts WHERE database = 'fleet6' AND active
	AND partition < '$CUTOFF' ORDER BY table")" "" "none of the three tables has a day before"
is "$(sql "SELECT DISTINCT table FROM system.parts WHERE database = 'fleet6' AND active
	AND partition = '$YESTERDAY' ORDER BY table" | tr '\n' ' ')" "samples stacks windows " \
	"and each keeps yesterday"
is "$(agent_metric "$RETAIN_METRICS" export_partitions_dropped_total)" 3 "/metrics counts them"
"$TARGETS/hot" 2 >/dev/null 2>&1
W=$(agent_metric "$RETAIN_METRICS" windows_exported_total)
ok "windows go on" \
	wait_for 60 eval '[ "$(agent_metric "$RETAIN_METRICS" windows_exported_total)" -ge $((W + 3)) ]'
cmp_ok "$(sql "SELECT count() FROM fleet6.stacks WHERE day > '$YESTERDAY'
	AND stack_hash IN (SELECT stack_hash FROM fleet6.stacks WHERE day = '$YESTERDAY')")" '>' 0 \
	"stacks the server has of yesterday are sent again today"
is "$(sql "SELECT count() FROM fleet6.samples WHERE (day, stack_hash) NOT IN (SELECT day, stack_hash FROM fleet6.stacks)")" 0 \
	"every sample's stack is in the stacks table, on the sample's day"
is "$(grep -c 'the days before' "$T/retain.err")" \
	"$(sql "SELECT uniqExact(day) FROM fleet6.windows WHERE host != 'oldhost'")" \
	"retention runs once a day of the windows"
run "$RECCE" query --clickhouse "clickhouse://127.0.0.1:$HTTP_PORT/fleet6" \
	--from "$YESTERDAY 00:00" --comm oldapp --format folded
is "$(cat "$OUT")" "main;old_fn 50000000" "yesterday's samples keep their stack" || diag "$(cat "$ERR")"
kill -INT "$RETAIN_AGENT"
wait_exit 30 "$RETAIN_AGENT"
# An agent that runs past midnight: the windows of the first agent's
# store sent on a day and the next by one ClickHouse object, as
# bench/fleet-sim sends them.
run "$FLEET_SIM" "$T/store" "clickhouse://127.0.0.1:$HTTP_PORT/fleet7" 1 1 1 2
is "$RC" 0 "windows of two days go through one object" || diag "$(cat "$ERR")"
is "$(sql "SELECT uniqExact(day) FROM fleet7.samples")" 2 "the samples are of two days"
is "$(sql "SELECT count() FROM fleet7.samples WHERE (day, stack_hash) NOT IN (SELECT day, stack_hash FROM fleet7.stacks)")" 0 \
	"and each day's have their stacks on their day"
run "$RECCE" agent --continuous --export "$URL" --export-retain 36h
is "$RC" 2 "--export-retain of part of a day is a usage error"
like "$(cat "$ERR")" "export-retain wants whole days, such as 30d, not '36h'" "and says so"
run "$RECCE" agent --continuous --export-retain 2d
is "$RC" 2 "--export-retain without --export is a usage error"

# --- the fleet page ------------------------------------------------------

# The windows of an agent that saw split run in a systemd unit's cgroup
# and hot after it in this test's, sent as three hosts' by
# bench/fleet-sim (all but the last, cut short), served by recce view
# --clickhouse: the hosts, the chart summed over them or of one, the
# flamegraph and top table of one host, the cgroups and one cgroup's
# stacks, in headless Chromium with its host and cgroup pickers; a page
# that another user of the machine cannot read without its token.
CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
UNIT_CG=/system.slice/recce-page-$$.service
OWN_CG=$(sed -n 's/^0:://p' /proc/self/cgroup)
mkdir -p "$CG_ROOT$UNIT_CG"
spawn_recce "$T/pa.out" "$T/pa.err" agent --continuous --socket "$T/pa/a.sock" \
	--store "$T/page-store" --window 1s --rate 99 --http 127.0.0.1:0
PAGENT=$PID
wait_for 15 grep -q 'metrics at http' "$T/pa.err" || diag "$(cat "$T/pa.err")"
PMETRICS=$(sed -n 's/.*metrics at \(http:\/\/[0-9.:]*\).*/\1/p' "$T/pa.err")
next_count windows_written_total "$PMETRICS" || diag "the page's agent wrote no window"
# shellcheck disable=SC2016 # $$ and $1 are the shell's
spawn "$T/split2.out" sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" 3' sh "$CG_ROOT$UNIT_CG" "$TARGETS/split"
wait_exit 20 "$PID"
"$TARGETS/hot" 1 >/dev/null 2>&1
next_count windows_written_total "$PMETRICS" || diag "hot's last window was never written"
kill -INT "$PAGENT"
wait_exit 30 "$PAGENT"
rmdir "$CG_ROOT$UNIT_CG"
NW=$(($(local_windows "$T/page-store" | wc -l) - 1))
run "$FLEET_SIM" "$T/page-store" "clickhouse://127.0.0.1:$HTTP_PORT/fleet9" 3 "$NW" 1
is "$RC" 0 "three hosts' windows sent" || diag "$(cat "$ERR")"
spawn_recce "$T/view.out" "$T/view.err" view --clickhouse "clickhouse://127.0.0.1:$HTTP_PORT/fleet9"
VIEW=$PID
wait_for 15 grep -q 'serving' "$T/view.err" || diag "$(cat "$T/view.err")"
like "$(cat "$T/view.err")" \
	"serving the fleet store at 127\\.0\\.0\\.1:$HTTP_PORT/fleet9 on http://127\\.0\\.0\\.1:[0-9]+/\\?token=[0-9a-f]{32} ; Ctrl-C to stop" \
	"recce view --clickhouse says where the page is, with its token"
PAGE=$(sed -n 's/.* on \(http:\/\/[0-9.:]*\/\).*/\1/p' "$T/view.err")
TOKEN=$(sed -n 's/.*?token=\([0-9a-f]*\).*/\1/p' "$T/view.err")
FROM="from=$(date -d "@${T0%.*}" +%s)000000000&to=$(date +%s)000000000"
RANGE="$FROM&token=$TOKEN"
# Another user of this machine reaches the port, but not the fleet.
is "$(su -s /bin/sh "$U" -c "curl -s -o /dev/null -w '%{http_code}' '${PAGE}api/top?$FROM'")" 401 \
	"another user without the token is refused the fleet store"
is "$(su -s /bin/sh "$U" -c "curl -s -o /dev/null -w '%{http_code}' '${PAGE}api/hosts?token=0$TOKEN'")" 401 \
	"and with a token of a guess"
# json_of URL EXPR: EXPR of the JSON at URL (d is the object), by Python.
json_of()
{
	curl -sf "$1" | python3 -c "import json, sys; d = json.load(sys.stdin); print($2)"
}
HOSTS=$(json_of "${PAGE}api/hosts?$RANGE" '" ".join("%s:%d" % (h["host"], h["windows"]) for h in d["hosts"])')
is "$HOSTS" "sim-00000:$NW sim-00001:$NW sim-00002:$NW" "the page's hosts, each with its $NW windows" ||
	diag "$(sql "SELECT host, count(), min(start_ns), max(end_ns) FROM fleet9.windows GROUP BY host")"
# The chart: one step a window (every host's windows line up), and each
# command's CPU the sum of every host's, or one host's.
chart_cpu()
{
	json_of "${PAGE}api/series?$RANGE$1" \
		'len(d["windows"]), sum(sum(s["cpu_ns"]) for s in d["series"] if s["comm"] == "split")'
}
is "$(chart_cpu "")" "$NW $(sql "SELECT sum(cpu_ns) FROM fleet9.samples WHERE comm = 'split'")" \
	"the chart has one step a window, and split's CPU of every host"
is "$(chart_cpu "&host=sim-00002")" \
	"$NW $(sql "SELECT sum(cpu_ns) FROM fleet9.samples WHERE comm = 'split' AND host = 'sim-00002'")" \
	"host= gives one host's"
is "$(json_of "${PAGE}api/series?$RANGE&by=host" \
	'" ".join("%s:%d" % (s["host"], sum(s["cpu_ns"])) for s in sorted(d["series"], key=lambda s: s["host"]))')" \
	"$(sql "SELECT host, sum(cpu_ns) FROM fleet9.samples GROUP BY host ORDER BY host" |
		awk '{ printf "%s%s:%s", (NR > 1 ? " " : ""), $1, $2 }')" \
	"by=host: a line of each host's CPU"
like "$(curl -sf "${PAGE}api/top?$RANGE&host=sim-00001&comm=split")" 'work_a +[^ ]*split\.c:[0-9]+' \
	"the top table of one host and command, with file:line"
like "$(curl -sf "${PAGE}api/flame?$RANGE&host=sim-00001")" '(^|;)work_a [0-9]+' "and its flamegraph"
is "$(curl -sf "${PAGE}api/flame?$RANGE&host=another-host")" "" "a host without windows has an empty one"
# The fleet's flamegraph, merged by command and stack in ClickHouse, holds
# every host's CPU.
is "$(curl -sf "${PAGE}api/flame?$RANGE" | awk '{ s += $NF } END { printf "%.0f\n", s }')" \
	"$(sql "SELECT sum(cpu_ns) FROM fleet9.samples")" "the fleet's flamegraph holds every host's CPU"
# The cgroups of the samples, split's unit among them with its CPU, and
# each request of the page in one cgroup.
CGROUPS=$(json_of "${PAGE}api/cgroups?$RANGE" '" ".join("%s:%d" % (c["cgroup"], c["cpu_ns"]) for c in d["cgroups"])')
like " $CGROUPS " " $UNIT_CG:$(sql "SELECT sum(cpu_ns) FROM fleet9.samples WHERE cgroup = '$UNIT_CG'") " \
	"the page's cgroups: split's unit, with its CPU" || diag "$CGROUPS"
like " $CGROUPS " " $OWN_CG:[0-9]+ " "and this test's, where hot ran"
CGQ="&cgroup=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$UNIT_CG")"
like "$(curl -sf "${PAGE}api/flame?$RANGE$CGQ")" '(^|;)work_a [0-9]+' "cgroup= gives the unit's flamegraph: split's"
unlike "$(curl -sf "${PAGE}api/flame?$RANGE$CGQ")" 'burn_cpu' "and none of hot's"
is "$(chart_cpu "$CGQ")" "$NW $(sql "SELECT sum(cpu_ns) FROM fleet9.samples WHERE comm = 'split' AND cgroup = '$UNIT_CG'")" \
	"and its chart"
like "$(json_of "${PAGE}api/series?$RANGE$CGQ" '" ".join(s["comm"] for s in d["series"])')" '^split$' \
	"in which split alone ran"
# The page asks for a range's flamegraph and top table at once: the second
# of the pair is answered from the profile the first read, one question
# to ClickHouse for both, and its answer is the one read anew.
PAIR="$RANGE&host=sim-00002&comm=hot"
curl -sf "${PAGE}api/flame?$PAIR" > "$T/pair.flame"
curl -sf "${PAGE}api/top?$PAIR" > "$T/pair.top"
curl -sf "${PAGE}api/top?$PAIR" > "$T/pair.again"
like "$(cat "$T/pair.top")" 'burn_cpu +[^ ]*hot\.c:[0-9]+' "the top table of a flamegraph's pair has its functions"
is "$(cat "$T/pair.top")" "$(cat "$T/pair.again")" "and is the one a top table alone reads"
sql "SYSTEM FLUSH LOGS" >/dev/null
is "$(sql "SELECT count() FROM system.query_log WHERE type = 2 AND query LIKE 'SELECT \\'\\', 0, comm, % FROM fleet9.samples WHERE %host = \\'sim-00002\\'% AND comm IN (\\'hot\\')%'")" 2 \
	"ClickHouse was asked once for the pair, once for the top table alone"
page_check "the fleet page" "$PAGE?token=$TOKEN" "$B/artifacts/page-fleet" "" "" "$UNIT_CG"
like "$F" 'error: none' "the page works over the fleet store" || diag "$(head -c 2000 "$T/facts")"
like "$F" "title: recce: the fleet in 127\\.0\\.0\\.1:$HTTP_PORT/fleet9" "its title names the store"
like "$F" 'asked: series (flame top|top flame) (hosts cgroups|cgroups hosts)$' \
	"the page draws the range first, then asks for its pickers' lists" || diag "$(grep '^asked' "$T/facts")"
like "$F" 'hosts:  sim-00000 sim-00001 sim-00002' "the picker has every host, and each"
like "$F" 'by host: sim-00000 sim-00001 sim-00002' "the chart draws a line of each host, when asked"
like "$F" 'host status: .*, on sim-00000' "a host picked is said"
like "$F" 'host whole: .*work_a' "and its flamegraph drawn"
like "$F" "cgroups: =every cgroup \\([0-9]+\\) \\| .*$UNIT_CG=recce-page-$$\\.service" \
	"the cgroup picker names split's by its unit" || diag "$(grep '^cgroup' "$T/facts")"
like "$F" "cgroup status: .*, on sim-00000, in recce-page-$$\\.service" "a cgroup picked is said"
like "$F" 'cgroup whole: .*work_a' "its stacks drawn"
unlike "$F" 'cgroup whole: .*burn_cpu' "and no other cgroup's"
sql "SYSTEM FLUSH LOGS" >/dev/null
# asked LIKE: how many statements of the query log are LIKE that.
asked() { sql "SELECT count() FROM system.query_log WHERE type = 2 AND query LIKE '$1'"; }
cmp_ok "$(asked "SELECT intDiv(end_ns, % FROM fleet9.samples WHERE %host = \\'sim-00000\\'%")" '>=' 1 \
	"the page asked for that host's chart"
cmp_ok "$(asked "SELECT \\'\\', 0, comm, % FROM fleet9.samples WHERE %host = \\'sim-00000\\'%")" '>=' 1 \
	"and for its flamegraph and top table"
kill -INT "$VIEW"
wait_exit 10 "$VIEW"
is "$WAIT_RC" 0 "Ctrl-C stops the fleet page with status 0"
run "$RECCE" view --clickhouse "clickhouse://127.0.0.1:$HTTP_PORT/nodb"
is "$RC" 1 "a database that is not there is an error at once"
like "$(cat "$ERR")" "recce: error: cannot read the fleet store at 127\\.0\\.0\\.1:$HTTP_PORT/nodb: .*Database nodb doesn't exist" \
	"that says what ClickHouse said"
run "$RECCE" view --clickhouse "$URL" "$T/split.pb.gz"
is "$RC" 2 "a file and --clickhouse is a usage error"

# --- refusals ---------------------------------------------------------

run "$RECCE" query --clickhouse "clickhouse://127.0.0.1:$(free_port)/fleet"
is "$RC" 1 "no ClickHouse there exits 1"
like "$(cat "$ERR")" 'Connection refused: is its HTTP interface there' "and says what to check"
run "$RECCE" query --clickhouse "${URL}nothing" --from "@$T0"
is "$RC" 1 "a database that does not exist exits 1"
like "$(cat "$ERR")" "cannot query ClickHouse at .*: ClickHouse answered [0-9]+: .*fleetnothing" \
	"and passes on ClickHouse's words"
run "$RECCE" query --clickhouse "http://127.0.0.1:$HTTP_PORT/"
is "$RC" 2 "a URL that is not clickhouse:// is a usage error"
like "$(cat "$ERR")" 'wants clickhouse://' "and says what it wants"
run "$RECCE" agent --continuous --export "clickhouse://127.0.0.1/bad-name"
is "$RC" 2 "the agent refuses a database name ClickHouse would not take"
unlike "$(cat "$ERR")" 'serving on' "before it takes its socket or a port (another agent may hold them)"
run "$RECCE" query --clickhouse "$URL" --store "$T/store"
is "$RC" 2 "--store and --clickhouse together are a usage error"
kill -TERM "$CHPID"
wait_exit 30 "$CHPID"

done_testing
