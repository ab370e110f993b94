#!/bin/bash
# recce agent --continuous keeps its profiler alive: killed with SIGKILL
# (as a user or the OOM killer would), the agent says which process died
# and how, starts it again, counts the restart in /metrics, writes windows
# again, and its page shades the time no window covers; a profiler the
# kernel's OOM killer kills (its memory cgroup made too small by the
# test) is named as such; Ctrl-C after a restart still stops the agent
# with status 0; the fifth death in 10 minutes ends the agent with status
# 1, for its service manager to start it anew, with no profiler left.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format-consumers.sh"
need_file "$RECCE" "$TARGETS/hot"
[ -x /usr/bin/chromium ] || skip_all "chromium is not installed (Debian package chromium)"
need_js playwright-core
mkdir -p "$B/artifacts"

# start_agent N: an agent with 1 s windows; sets AGENT and URL.
start_agent()
{
	spawn_recce "$T/agent$1.out" "$T/agent$1.err" agent --continuous --socket "$T/a$1/a.sock" \
		--store "$T/store$1" --window 1s --rate 99 --http 127.0.0.1:0
	AGENT=$PID
	wait_for 15 grep -q 'profiling every process' "$T/agent$1.err" ||
		diag "agent $1 did not start: $(cat "$T/agent$1.err")"
	URL=http://$(sed -n 's/.*metrics at http:\/\/\([0-9.:]*\).*/\1/p' "$T/agent$1.err")
}

# profiler: the agent's one child, the profiler (its connections have
# none open here); empty while it is down.
profiler()
{
	pgrep -P "$AGENT"
}

# restarted N ERR: waits until the agent says its profiler runs again
# for the Nth time.
restarted()
{
	wait_for 60 grep -q "the profiler samples again (pid [0-9]*, restart $1)" "$2"
}

# --- a profiler killed ----------------------------------------------------

start_agent 1
next_window "$URL" || diag "the agent wrote no window"
P1=$(profiler)
kill -KILL "$P1"
restarted 1 "$T/agent1.err"
is "$?" 0 "a profiler killed with SIGKILL is started again" || diag "$(cat "$T/agent1.err")"
like "$(cat "$T/agent1.err")" \
	"recce: warning: the profiler \\(pid $P1\\) was killed by SIGKILL after [0-9]+ s of sampling: the window it was filling is lost; it starts again" \
	"the agent says which process died, how, and what was lost"
P2=$(profiler)
isnt "$P2" "$P1" "the profiler running is a new process"
is "$(agent_metric "$URL" profiler_restarts_total)" 1 "/metrics counts the restart"
"$TARGETS/hot" 1 >/dev/null 2>&1
next_window "$URL" || diag "the new profiler wrote no window"
run "$RECCE" query --store "$T/store1" --from -1h --comm hot -n 50
is "$RC" 0 "the store is read after the restart" || show_run
like "$(cat "$OUT")" 'burn_cpu' "and holds what ran after it"
run "$RECCE" query --store "$T/store1" --from -1h --windows
like "$(cat "$OUT")" '^  \([0-9.]+ s that no window covers\)$' \
	"query --windows shows the time the profiler was down" || show_run

RUN_TIMEOUT=120 run node tests/js/page-check.js "$URL/" "$B/artifacts/agent-keep"
is "$RC" 0 "Chromium opens the page" || show_run
GAPS=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("error","")); print(len(d.get("gaps",[])))' "$OUT")
is "$GAPS" "$(printf '\n1')" "the page shades one gap, where the profiler was down" ||
	diag "$(head -c 2000 "$OUT")"

# --- killed by the OOM killer ---------------------------------------------

# A memory cgroup of one page for the profiler: its next allocation is
# more than the kernel lets it have.
MEMCG=
if [ -d /sys/fs/cgroup/memory ]; then
	MEMCG=/sys/fs/cgroup/memory/recce-keep-$$
	mkdir "$MEMCG" && echo 4096 >"$MEMCG/memory.limit_in_bytes"
elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
	MEMCG=/sys/fs/cgroup/recce-keep-$$
	mkdir "$MEMCG" && echo 4096 >"$MEMCG/memory.max"
fi
if [ -n "$MEMCG" ]; then
	echo "$P2" >"$MEMCG/cgroup.procs"
	restarted 2 "$T/agent1.err"
	is "$?" 0 "a profiler the OOM killer killed is started again" || diag "$(cat "$T/agent1.err")"
	like "$(cat "$T/agent1.err")" \
		"the profiler \\(pid $P2\\) was killed by the kernel's out-of-memory killer after" \
		"the agent says the OOM killer killed it"
	rmdir "$MEMCG"
else
	skip_env 2 "this kernel has no memory cgroup controller to limit"
fi

kill -INT "$AGENT"
wait_exit 30 "$AGENT"
is "$WAIT_RC" 0 "Ctrl-C after a restart stops the agent with status 0"

# --- five deaths ----------------------------------------------------------

start_agent 2
for n in 1 2 3 4; do
	kill -KILL "$(profiler)"
	restarted "$n" "$T/agent2.err" || {
		diag "restart $n: $(cat "$T/agent2.err")"
		break # the checks below fail; no need to wait for the others
	}
done
P5=$(profiler)
kill -KILL "$P5"
wait_exit 30 "$AGENT"
is "$WAIT_RC" 1 "the fifth death in 10 minutes ends the agent with status 1"
like "$(cat "$T/agent2.err")" \
	"recce: error: the profiler \\(pid $P5\\) was killed by SIGKILL after [0-9]+ s, its 5th death in 10 minutes: the agent stops, for its service manager to start it anew" \
	"and says why"
unlike "$(cat "$T/agent2.err")" "restart 5" "it did not start a sixth"
is "$(pgrep -f "recce agent --continuous --socket $T/a2/" | wc -l)" 0 "no profiler is left"

done_testing
