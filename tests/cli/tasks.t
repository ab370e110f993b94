#!/bin/bash
# librecce's task hooks and `recce tasks`: an event loop with known tasks
# (tests/targets/ev-tasks.c: runs and busy times it measures itself,
# children that run after their parent finished, two loop threads): counts
# exact and times between the least and the most the target's own clock
# readings around its calls allow; the live screen in tmux;
# /metrics scraped by a real Prometheus server and read back through its
# query API; bad input.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/ev-tasks"
export RECCE_EVENTS_DIR="$T/shm"
mkdir -p "$RECCE_EVENTS_DIR"

# Its tick tasks go on while the test runs; a ring 8 times the default
# keeps the first tasks' events for minutes, not 20 s, on a slow machine.
spawn "$T/tasks.out" env RECCE_RING_EVENTS=65536 "$TARGETS/ev-tasks" loop
wait_for 20 grep -q '^ready' "$T/tasks.out" || fail "ev-tasks did not start" "$(cat "$T/tasks.out")"
LOOP=$PID

# truth TYPE FIELD: what the target measured (created, runs, its time
# running at least, exec, and at most, exec_hi, its wait at least,
# wait_lo, and at most, wait_hi, and its longest run at least, max_lo,
# and at most, max_hi).
truth()
{
	awk -v t="$1" -v f="$2" '$1 == "truth" && $2 == t {
		n = f == "created" ? 3 : f == "runs" ? 4 : f == "exec" ? 5 : f == "wait_lo" ? 6 : f == "wait_hi" ? 7 : f == "max_lo" ? 8 : f == "max_hi" ? 9 : 10
		print $n }' "$T/tasks.out"
}
# got TYPE FIELD: the same from recce's JSON ($OUT).
got()
{
	python3 -c "
import json, sys
for t in json.load(open(sys.argv[1]))['types']:
    if t['type'] == sys.argv[2]:
        print(t[sys.argv[3]])" "$OUT" "$1" "$2"
}
within10()
{
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b / 10) }'
}

run "$RECCE" tasks -p "$LOOP" --json -n 1
is "$RC" 0 "tasks --json -n 1 exits 0" || show_run
head -1 "$OUT" >"$T/one.json" && mv "$T/one.json" "$OUT"
for ty in parse handle db_query timer; do
	is "$(got "$ty" created)" "$(truth "$ty" created)" "$ty: created exactly as the target counted"
	is "$(got "$ty" runs)" "$(truth "$ty" runs)" "$ty: runs exactly"
	E=$(got "$ty" exec_ns)
	ok "$ty: execution time as the target measured it ($(truth "$ty" exec) <= $E <= $(truth "$ty" exec_hi) ns)" \
		test "$(truth "$ty" exec)" -le "$E" -a "$E" -le "$(truth "$ty" exec_hi)"
done
is "$(got handle finished)" 20 "the 20 handles finished"
W=$(got timer wait_ns)
ok "timer: time ready but not running as the target measured it ($(truth timer wait_lo) <= $W <= $(truth timer wait_hi) ns)" \
	test "$(truth timer wait_lo)" -le "$W" -a "$W" -le "$(truth timer wait_hi)"
C=$(got handle children_ns)
ok "children: the db_query time counts for handle, though each ran after its parent finished ($C ns)" \
	test "$(truth db_query exec)" -le "$C" -a "$C" -le "$(truth db_query exec_hi)"
is "$(got parse children_ns)" 0 "parse has no children"
live_children=$(got handle children_ns)
max=$(got handle exec_max_ns)
ok "handle's longest run as the target measured it ($(truth handle max_lo) <= $max <= $(truth handle max_hi) ns)" \
	test "$(truth handle max_lo)" -le "$max" -a "$max" -le "$(truth handle max_hi)"

run "$RECCE" tasks -p "$LOOP" -b -n 2 -i 0.2 --sort runs --filter a
is "$RC" 0 "-b -n 2 exits 0"
is "$(grep -c '^TYPE' "$OUT")" 2 "two tables"
is "$(awk '$1 == "TYPE" { getline; print $1; exit }' "$OUT")" parse "--sort runs: parse (100 runs) first"
is "$(grep -c '^timer' "$OUT")" 0 "--filter a leaves timer out"

# A saved file is read once, with the same counts.
run "$RECCE" events -p "$LOOP" -o "$T/loop.events"
run "$RECCE" tasks "$T/loop.events" --json
is "$RC" 0 "tasks FILE.events exits 0" || show_run
is "$(got parse runs)" 100 "a saved file: parse ran 100 times"
ok "and handle's children's time, as read live (each read converts the clock afresh)" \
	within10 "$(got handle children_ns)" "$live_children"

# --- The live screen in tmux ------------------------------------------------
if command -v tmux >/dev/null; then
	SOCK="recce-tasks-test-$$"
	tm() { tmux -L "$SOCK" "$@"; }
	trap 'tm kill-server 2>/dev/null; _on_exit' EXIT
	screen() { tm capture-pane -p -t tasks; }
	shows() { screen | grep -qE -- "$1"; }
	tm new-session -d -s tasks -x 140 -y 30 \
		"'$RECCE' tasks -p $LOOP; echo RECCE-EXIT-\$?; exec sleep 60"
	ok "the screen shows the table" wait_for 10 shows '^parse +50 +100 '
	# Heaviest first: down the first table, EXEC(s) never grows. (Which
	# type is on top depends on how long the loop has run: its tick task
	# never stops, and passes parse after a few seconds.)
	ok "heaviest first: the rows by execution time, descending" \
		sh -c "tmux -L '$SOCK' capture-pane -p -t tasks | awk '\$1 == \"TYPE\" { t++; next } t == 1 && NF >= 9 { n++; if (n > 1 && \$4 + 0 > last + 0) bad = 1; last = \$4 } t == 1 && NF < 9 { exit } END { exit !(n >= 5 && !bad) }'"
	tm send-keys -t tasks s
	ok "s sorts by the next column" wait_for 5 shows 'sort: by runs'
	tm send-keys -t tasks q
	ok "q quits, exit status 0" wait_for 5 shows 'RECCE-EXIT-0'
else
	skip 4 "tmux is not installed"
fi

# --- Prometheus -----------------------------------------------------------
free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
if command -v prometheus >/dev/null; then
	spawn_recce "$T/serve.out" "$T/serve.err" tasks -p "$LOOP" --serve 127.0.0.1:0
	SERVER=$PID
	wait_for 10 grep -q 'serving Prometheus metrics at' "$T/serve.err" || fail "no server" "$(cat "$T/serve.err")"
	ADDR=$(sed -n 's|.*at http://\([^/]*\)/metrics|\1|p' "$T/serve.err")
	run curl -s "http://$ADDR/metrics"
	is "$RC" 0 "GET /metrics answers"
	like "$(cat "$OUT")" "recce_task_runs_total\\{pid=\"$LOOP\",comm=\"loop-1\",type=\"parse\"\\} 100" \
		"recce_task_runs_total of parse is 100"
	if command -v promtool >/dev/null; then
		ok "promtool finds the metrics well formed" sh -c "promtool check metrics < '$OUT'"
	fi
	run curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/nothing"
	is "$(cat "$OUT")" 404 "another path: 404"

	PPORT=$(free_port)
	cat >"$T/prom.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: recce
    static_configs:
      - targets: ['$ADDR']
YML
	spawn "$T/prom.out" prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
		--web.listen-address="127.0.0.1:$PPORT"
	query()
	{
		curl -s "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" |
			python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2>/dev/null
	}
	scraped() { [ -n "$(query 'recce_task_runs_total{type="parse"}')" ]; }
	ok "a Prometheus server scraped recce's /metrics" wait_for 30 scraped
	is "$(query 'recce_task_runs_total{type="parse"}')" 100 "and reads back 100 runs of parse"
	is "$(query 'recce_task_created_total{type="db_query",comm="loop-1"}')" 20 \
		"and 20 db_query tasks created, labelled by comm"
	is "$(query 'sum(recce_task_run_seconds_count{type="handle"})')" 20 "the histogram counts 20 handle runs"
	# Every query of the Grafana dashboard in the tree is one Prometheus
	# runs, and each finds the target's series.
	ok "every panel of contrib/grafana-tasks.json is a query Prometheus answers with data" \
		python3 - "$ROOT/contrib/grafana-tasks.json" "$PPORT" <<'PY'
import json, sys, time, urllib.parse, urllib.request
dash = json.load(open(sys.argv[1]))
def answer(expr):
    q = expr.replace('$__rate_interval', '1m').replace('$comm', '.*').replace('$pid', '.*')
    url = 'http://127.0.0.1:%s/api/v1/query?%s' % (sys.argv[2], urllib.parse.urlencode({'query': q}))
    return json.load(urllib.request.urlopen(url))
# A rate needs two scrapes: wait for them, then ask every panel.
for panel in dash['panels']:
    for t in panel['targets']:
        for _ in range(40):
            r = answer(t['expr'])
            if r['status'] != 'success' or r['data']['result']:
                break
            time.sleep(0.5)
        if r['status'] != 'success' or not r['data']['result']:
            sys.exit('%s: %s' % (panel['title'], r))
PY
	kill -TERM "$SERVER"
	wait_for 5 _gone "$SERVER"
else
	skip 8 "prometheus is not installed"
fi
kill_quietly "$LOOP"

# --- Bad input ------------------------------------------------------------
run "$RECCE" tasks
is "$RC" 2 "no -p is a usage error"
run "$RECCE" tasks "$T/loop.events" --serve 0
is "$RC" 2 "--serve of a file is a usage error"
run "$RECCE" tasks -p 1 --sort nothing
is "$RC" 2 "an unknown column is a usage error"
run "$RECCE" tasks -p 1 --serve nowhere
is "$RC" 2 "an address that is none is a usage error"
run "$RECCE" tasks -p "$(unused_pid)" -b -n 1
is "$RC" 1 "a pid that does not exist exits 1"
like "$(cat "$ERR")" "no process with pid" "and says so"
true

done_testing
