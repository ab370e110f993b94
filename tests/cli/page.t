#!/bin/bash
# The profile page in headless Chromium (playwright-core driving
# /usr/bin/chromium), served by a real agent --continuous and by recce
# view: the chart names the commands that ran, the flamegraph of the whole
# range has their functions under a frame per program, a drag across the
# chart over the time only `split` ran shows split's functions and none of
# hot's, the search highlights, a click zooms to the full width, the
# top table has file:line and sits beside the flamegraph, the whole range
# compared with split's time shows hot's frames grown and split's shrunk,
# and the bottom-up and callers-and-callees views put each function's
# callers under it. Screenshots are kept as artifacts
# ($B/artifacts/page-*.png).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format-consumers.sh"
need_file "$RECCE" "$TARGETS/split" "$TARGETS/hot"
[ -x /usr/bin/chromium ] || skip_all "chromium is not installed (Debian package chromium)"
need_js playwright-core
mkdir -p "$B/artifacts"

# --- the agent's page -----------------------------------------------------

spawn_recce "$T/agent.out" "$T/agent.err" agent --continuous --socket "$T/a/a.sock" \
	--store "$T/store" --window 1s --rate 99 --http 127.0.0.1:0
AGENT=$PID
wait_for 15 grep -q 'metrics at http' "$T/agent.err" || diag "$(cat "$T/agent.err")"
URL=$(sed -n 's/.*metrics at \(http:\/\/[0-9.:]*\).*/\1/p' "$T/agent.err")
SPLIT_FROM=$(date +%s%N)
"$TARGETS/split" 4 >/dev/null
SPLIT_TO=$(date +%s%N)
"$TARGETS/hot" 2 >/dev/null 2>&1
next_window "$URL" || diag "the agent wrote no window after hot ended"

# The drag: over the windows the agent wrote while split alone ran (a
# window ends when its samples do, late on a busy machine), 0.2 s inside
# their edges.
RANGE=$("$RECCE" query --store "$T/store" --windows --json |
	python3 -c '
import json, sys
lo, hi = int(sys.argv[1]), int(sys.argv[2])
ws = [json.loads(l) for l in sys.stdin if l.strip()]
inside = [w for w in ws if w["start_ns"] >= lo and w["end_ns"] <= hi]
if inside:
    print(inside[0]["start_ns"] + 200000000, inside[-1]["end_ns"] - 200000000)
' "$SPLIT_FROM" "$SPLIT_TO")
[ -n "$RANGE" ] || diag "no window lies within split's run: $("$RECCE" query --store "$T/store" --windows --json)"
read -r DRAG_FROM DRAG_TO <<<"${RANGE:-0 0}"
SHOT=$B/artifacts/page-agent
page_check "the agent's page" "$URL/" "$SHOT" "$DRAG_FROM" "$DRAG_TO"
like "$F" 'error: none' "the page does all a person does with it" || diag "$(head -c 2000 "$T/facts")"
like "$F" 'errors: 0' "its script raises no error"
like "$F" "title: recce: every process on $(hostname)" "its title names the host"
like "$F" 'comms: .*split.*' "the chart draws split's CPU"
like "$F" 'comms: .*hot' "and hot's"
like "$F" 'gaps: none' "one agent's windows leave no gap in the chart"
like "$F" 'whole: .*\[split\].*work_a' "the whole range's flamegraph has split's functions under [split]"
like "$F" 'whole: .*burn_cpu' "and hot's"
like "$F" 'range: .*\[split\].*work_a' "a drag over split's time shows its functions"
unlike "$F" 'range: .*burn_cpu' "and none of hot, which ran later"
like "$F" 'matched: [1-9]' "the search matches"
like "$F" 'highlighted: [1-9]' "and highlights"
like "$F" 'zoomed: True' "a click on a frame zooms it to the full width"
like "$F" 'top: .*work_a +[^ ]*split\.c:[0-9]+' "the top table has file:line"
# Compared with split's time, the whole range has hot's frames, which
# grew from nothing, and less of split's share.
like "$F" 'grew: .*burn_cpu' "compared with split's time, hot's burn_cpu grew" || diag "$(grep -E 'grew|shrank' "$T/facts")"
like "$F" 'shrank: .*work_a' "and split's work_a shrank"
unlike "$F" 'shrank: .*burn_cpu' "burn_cpu did not shrink"
like "$F" 'diff status: .*compared with .*red: grew, blue: shrank' "the page says what it compares"
like "$F" 'compare after: 0' "no comparison takes the colours back"
# The bottom-up view: the functions that ran first, each caller under
# it; burn_cpu clicked there, its callers and callees, none of split's.
like "$F" 'bottom-up: .*1:burn_cpu<all .*2:main<burn_cpu' "bottom-up: burn_cpu, and main under it, its caller" ||
	diag "$(grep -E '^(bottom-up|callees|callers)' "$T/facts")"
like "$F" 'bottom-up: .*1:work_a<all' "and split's work_a"
like "$F" 'callees: 0:all< 1:burn_cpu<all' "burn_cpu's callees: burn_cpu at their root"
# (Whole names: a sample in burn_cpu can hold the kernel's
# sched_balance_domains, under a timer interrupt.)
unlike "$F" 'callees: .* [0-9]+:(main|work_a)<' "and none of its callers or split's functions (it calls nothing)"
like "$F" 'callers: 0:all< 1:burn_cpu<all 2:main<burn_cpu' "its callers: main, and main's"
unlike "$F" 'callers: .* [0-9]+:work_a<' "none of split's functions among them"
like "$F" 'callers title: callers of burn_cpu' "the page says whose callers they are"
like "$F" 'focus label: callers and callees of burn_cpu' "and the view's name says whose"
like "$F" 'callers hidden after: True' "the flamegraph again hides the callers"
like "$F" 'flame again: all .*burn_cpu' "and draws the stacks root first"
like "$F" 'side by side: True' "the top table is beside the flamegraph, not below it"
like "$F" 'comm options:  .*hot' "the command picker lists every command" || diag "$(grep '^comm' "$T/facts")"
like "$F" 'comm status: .*, hot only' "hot picked there is said"
like "$F" 'comm whole: .*burn_cpu' "and its stacks drawn"
unlike "$F" 'comm whole: .*work_a' "without split's"
ok "the screenshots are kept" test -s "$SHOT-whole.png" -a -s "$SHOT-range.png" -a -s "$SHOT-diff.png" \
	-a -s "$SHOT-views.png"
kill -INT "$AGENT"
wait_exit 10 "$AGENT"
is "$WAIT_RC" 0 "the agent stops with status 0"

# --- on the network: HTTPS and a token ---------------------------------

run "$RECCE" agent --continuous --socket "$T/n/a.sock" --store "$T/store-n" --http 0.0.0.0:0 \
	--tls "$T/none"
is "$RC" 1 "--http on the network without certificates is refused"
like "$(cat "$ERR")" "is on the network, where the page is served over HTTPS with a token: it needs $T/none/ca\\.pem \\(make the certificates with 'recce certs init $T/none'" \
	"and says how to make them"
run "$RECCE" certs init "$T/tls"
is "$RC" 0 "certificates for the agent" || show_run
echo "a-token-from-a-file-0123" >"$T/token"
spawn_recce "$T/net.out" "$T/net.err" agent --continuous --socket "$T/n/a.sock" \
	--store "$T/store-n" --window 1s --rate 99 --http 0.0.0.0:0 --tls "$T/tls" \
	--http-token "$T/token"
NET=$PID
wait_for 15 grep -q 'the page: https' "$T/net.err" || diag "$(cat "$T/net.err")"
like "$(cat "$T/net.err")" 'the page: https://0\.0\.0\.0:[0-9]+/\?token=a-token-from-a-file-0123' \
	"the agent says where the page is, with its token"
PORT=$(sed -n 's/.*the page: https:\/\/0\.0\.0\.0:\([0-9]*\).*/\1/p' "$T/net.err")
"$TARGETS/hot" 2 >/dev/null 2>&1
next_window "https://127.0.0.1:$PORT" --cacert "$T/tls/ca.pem" \
	-H 'Authorization: Bearer a-token-from-a-file-0123' || diag "the agent wrote no window after hot ended"
if command -v curl >/dev/null; then
	CODE=$(curl -s --cacert "$T/tls/ca.pem" -o "$T/body" -w '%{http_code}' "https://127.0.0.1:$PORT/metrics")
	is "$CODE" 401 "a request without the token is refused"
	like "$(cat "$T/body")" 'wants its token' "and told what it lacks"
	CODE=$(curl -s --cacert "$T/tls/ca.pem" -o "$T/body" -w '%{http_code}' \
		-H 'Authorization: Bearer a-token-from-a-file-0123' "https://127.0.0.1:$PORT/metrics")
	is "$CODE" 200 "the token as a bearer, as Prometheus sends it, is let in"
	like "$(cat "$T/body")" 'recce_agent_windows_written_total [1-9]' "and gets the metrics"
	CODE=$(curl -s --cacert "$T/tls/ca.pem" -o /dev/null -w '%{http_code}' \
		"https://127.0.0.1:$PORT/api/series?token=not-the-token-0000000")
	is "$CODE" 401 "a wrong token is refused"
	curl -s -m 5 -o /dev/null "http://127.0.0.1:$PORT/metrics"
	isnt "$?" 0 "plain HTTP gets nothing"
else
	skip 6 "curl is not installed"
fi
page_check "the page over HTTPS" "https://127.0.0.1:$PORT/?token=a-token-from-a-file-0123" \
	"$B/artifacts/page-https"
like "$F" 'error: none' "the page, given its token, works" || diag "$(head -c 2000 "$T/facts")"
like "$F" 'whole: .*\[hot\].*burn_cpu' "its requests carry the token: the flamegraph has hot's functions"
ok "the agent still runs after them all" kill -0 "$NET"
kill -INT "$NET"
wait_exit 10 "$NET"
is "$WAIT_RC" 0 "the agent stops with status 0"

# --- recce view FILE ------------------------------------------------------

run "$RECCE" record -o "$T/hot.pb.gz" -- "$TARGETS/hot" 1
is "$RC" 0 "a profile to view" || show_run
spawn_recce "$T/view.out" "$T/view.err" view "$T/hot.pb.gz"
VIEW=$PID
wait_for 10 grep -q 'serving' "$T/view.err" || diag "$(cat "$T/view.err")"
like "$(cat "$T/view.err")" "serving $T/hot.pb.gz at http://127\\.0\\.0\\.1:[0-9]+/ ; Ctrl-C to stop" \
	"recce view says where the page is"
URL=$(sed -n 's/.*at \(http:\/\/[0-9.:]*\/\).*/\1/p' "$T/view.err")
page_check "recce view's page" "$URL" "$B/artifacts/page-view"
like "$F" 'error: none' "the page works" || diag "$(head -c 2000 "$T/facts")"
like "$F" 'title: recce: hot.pb.gz' "its title names the file"
like "$F" 'chart: False' "a file has no chart"
like "$F" 'compare button: False' "and nothing to compare"
like "$F" 'whole: .*burn_cpu' "the flamegraph has the profile's functions"
like "$F" 'top: .*burn_cpu +.*hot\.c:[0-9]+' "the top table too, with file:line"
like "$F" 'zoomed: True' "a click zooms"
STACK='1:burn_cpu<all 2:main<burn_cpu 3:__libc_start_call_main<main 4:__libc_start_main<__libc_start_call_main 5:_start<__libc_start_main( |$)'
like "$F" "bottom-up: (.* )?$STACK" "bottom-up: burn_cpu and its callers to the program's start" ||
	diag "$(grep -E '^(bottom-up|callers)' "$T/facts")"
like "$F" "callers: 0:all< $STACK" "burn_cpu's callers: the same, its only stack"
kill -INT "$VIEW"
wait_exit 10 "$VIEW"
is "$WAIT_RC" 0 "Ctrl-C stops recce view with status 0"

run "$RECCE" view "$T/nothing.pb.gz"
is "$RC" 1 "a file that is not there exits 1"
like "$(cat "$ERR")" "nothing.pb.gz" "and names it"
run "$RECCE" view
is "$RC" 2 "no file is a usage error"

done_testing
