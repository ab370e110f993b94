#!/bin/bash
# `recce trace`: --hist, --format json on a live trace, `recce replay
# --format chrome`, --time, Ctrl-C, `-- CMD`, and a multi-threaded target
# (threads that exist at attach and threads created while traced).
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/calls"

# to_ns "54.91 us": a duration as trace prints it, in nanoseconds.
to_ns()
{
	awk -v v="$1" 'BEGIN { split(v, a, " "); m = 1
		if (a[2] == "s") m = 1e9; else if (a[2] == "ms") m = 1e6; else if (a[2] == "us") m = 1e3
		if (a[1] != "") printf "%.0f\n", a[1] * m }'
}

# hist_field LINE NAME: the duration after NAME in a --hist summary line.
hist_field()
{
	printf '%s\n' "$1" | sed -n "s/.* $2 \([0-9.]* [mun]*s\)\(,.*\)*\$/\1/p"
}

# --hist: one summary per function, its count the exact number of calls,
# and its percentiles in order.
spawn_ready "$T/h.out" "$TARGETS/calls" 20 go
run_go "$PID" trace -p "$PID" add_pair greet --hist --count 0 --time 60
is "$RC" 0 "trace --hist exits 0" || show_run
H=$(grep '^calls:add_pair: count' "$OUT")
like "$H" '^calls:add_pair: count 20, min [0-9.]+ [mun]?s, median [0-9.]+ [mun]?s, p99 [0-9.]+ [mun]?s, max [0-9.]+ [mun]?s$' \
	"--hist summarizes add_pair: its 20 calls" || show_run
like "$(cat "$OUT")" '^calls:greet: count 20, ' "and greet's 20"
MIN=$(to_ns "$(hist_field "$H" min)")
MED=$(to_ns "$(hist_field "$H" median)")
P99=$(to_ns "$(hist_field "$H" p99)")
MAX=$(to_ns "$(hist_field "$H" max)")
cmp_ok "$MIN" '<=' "$MED" "min <= median ($MIN, $MED ns)"
cmp_ok "$MED" '<=' "$P99" "median <= p99 ($MED, $P99 ns)"
cmp_ok "$P99" '<=' "$MAX" "p99 <= max ($P99, $MAX ns)"
BARS=$(awk '/^calls:add_pair: count/ { on = 1; next } /^calls:/ { on = 0 }
	on && /\|/ { sub(/ *\|.*/, ""); n += $NF } END { print n + 0 }' "$OUT")
is "$BARS" 20 "the buckets of add_pair's histogram hold the 20 calls"
unlike "$(cat "$OUT")" 'add_pair\(' "--hist prints the histograms, not every event"

# --format json on a live trace: every line is a JSON object, with the
# function, its arguments and its return value.
spawn_ready "$T/j.out" "$TARGETS/calls" 5 go
run_go "$PID" trace -p "$PID" add_pair greet --return --format json --count 0
is "$RC" 0 "trace --format json exits 0" || show_run
J=$(python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
print(len(ev))
for e in ev:
    if e["event"] == "call" and e["function"] == "calls:add_pair" and e["args"] == {"a": 3, "b": 6}:
        print("call a=3 b=6")
    if e["event"] == "return" and e["function"] == "calls:add_pair" and e["args"]["a"] == 3:
        print("return %d after %s ns" % (e["ret"], "some" if e["duration_ns"] > 0 else "no"))
    if e["event"] == "call" and e["function"] == "calls:greet" and e["args"] == {"name": "client-4"}:
        print("greet client-4")
    if e["event"] == "return" and e["function"] == "calls:greet" and e["args"]["name"] == "client-4":
        print("greet returns %d" % e["ret"])
' <"$OUT" 2>&1)
is "$(printf '%s\n' "$J" | head -n 1)" 20 "20 lines (5 calls and 5 returns of each), each valid JSON" ||
	diag "$J"
like "$J" '^call a=3 b=6$' "a call object names its function and arguments"
like "$J" '^return 9 after some ns$' "a return object carries the value 3+6=9 and a duration"
like "$J" '^greet client-4$' "a string argument is a JSON string"
like "$J" '^greet returns 8$' "and greet returns its length, 8"

# replay --format chrome: one JSON document, events in time order, each
# call's B matched by its E.
spawn_ready "$T/ch.out" "$TARGETS/calls" 6 go
run_go "$PID" trace -p "$PID" add_pair greet --return --count 0 -o "$T/ch.bin"
is "$RC" 0 "trace -o exits 0" || show_run
run "$RECCE" replay "$T/ch.bin" --format chrome
is "$RC" 0 "replay --format chrome exits 0" || show_run
CH=$(python3 -c '
import json, sys
doc = json.load(sys.stdin)
ev = doc["traceEvents"]
print("events %d" % len(ev))
ts = [e["ts"] for e in ev]
print("ordered" if ts == sorted(ts) else "unordered")
depth, bad = {}, 0
for e in ev:
    d = depth.get(e["tid"], 0) + (1 if e["ph"] == "B" else -1)
    bad += d < 0
    depth[e["tid"]] = d
print("balanced" if not bad and not any(depth.values()) else "unbalanced")
print(" ".join(sorted(set(e["name"] for e in ev))))
' <"$OUT" 2>&1)
like "$CH" '^events 24$' "the Chrome trace is valid JSON with 24 events (6 calls, 6 returns, twice)" ||
	diag "$CH"
like "$CH" '^ordered$' "ordered by ts"
like "$CH" '^balanced$' "every B has its E on the same thread"
like "$CH" '^calls:add_pair calls:greet$' "named by function"

# --time: the trace ends after that time, says so, and the target runs on.
spawn_ready "$T/t.out" "$TARGETS/calls" 1000000 go 0
C=$PID
kill -USR1 "$C"
run "$RECCE" trace -p "$C" add_pair --count 0 --time 1.5 --limit 0
is "$RC" 0 "trace --time exits 0" || show_run
like "$(cat "$ERR")" '^recce: stopped after [0-9]+ events: time limit reached \(--time 1.5\); all probes removed$' \
	"the stop line names the time limit"
cmp_ok "$ELAPSED" '>=' 1.5 "recce ran for the 1.5 s ($ELAPSED s), and the stop line says why it stopped"
cmp_ok "$(grep -c 'add_pair(' "$OUT")" '>' 100 "calls were traced meanwhile"
ok "the target runs on" kill -0 "$C"

# Ctrl-C: SIGINT to recce stops the trace with its line; the target runs on.
spawn_recce "$T/i.out" "$T/i.err" trace -p "$C" add_pair --count 0 --time 0 --limit 0
REC=$PID
wait_for 60 grep -q 'add_pair(' "$T/i.out" || diag "recce traced no call"
kill -INT "$REC"
wait_exit 5 "$REC" || fail "recce exits on SIGINT" "still running"
is "${WAIT_RC:-}" 0 "recce exits 0 on SIGINT"
like "$(cat "$T/i.err")" '^recce: stopped after [0-9]+ events: interrupted; all probes removed$' \
	"the stop line says it was interrupted"
cmp_ok "$(grep -c 'add_pair(' "$T/i.out")" '>' 0 "and the events before it were printed"
ok "the target runs on after recce's SIGINT" kill -0 "$C"
run "$RECCE" trace -p "$C" add_pair --count 3
is "$(grep -c 'add_pair(' "$OUT")" 3 "and keeps calling: a new trace sees its next 3 calls" || show_run
STATE=$(awk '{ print $3 }' "/proc/$C/stat" 2>/dev/null)
like "$STATE" '^[RS]$' "and is not left stopped (state $STATE)"
kill "$C"

# -- CMD: a launched command is traced from its first call.
run "$TARGETS/calls" 25 10
WANT=$(grep checksum "$OUT")
run "$RECCE" trace add_pair --return --count 0 -- "$TARGETS/calls" 25 10
is "$RC" 0 "trace -- CMD exits 0" || show_run
is "$(grep -c 'calls:add_pair(' "$OUT")" 25 "exactly the command's 25 calls are traced"
is "$(grep -c 'calls:add_pair/2 --> ' "$OUT")" 25 "and their 25 returns"
like "$(cat "$OUT")" 'calls:add_pair\(a=0, b=0\)$' "from the very first"
is "$(grep checksum "$OUT")" "$WANT" "the command's output is as untraced"
like "$(cat "$ERR")" '^recce: stopped after 25 events: the target exited; all probes removed$' \
	"the stop line says the command exited"

# Threads: 3 that exist when recce attaches, 3 created while it traces.
spawn_ready "$T/m.out" "$TARGETS/calls" 30 go 1 6
C=$PID
EARLY=$(ls "/proc/$C/task" | grep -vx "$C" | sort -n)
run_go "$C" trace -p "$C" add_pair --return --count 0 --limit 0
is "$RC" 0 "trace of a multi-threaded target exits 0" || show_run
is "$(printf '%s\n' "$EARLY" | grep -c .)" 3 "3 worker threads exist at attach"
for tid in $EARLY; do
	is "$(grep -c "<$tid> calls:add_pair(" "$OUT")" 30 "thread $tid: exactly its 30 calls"
	is "$(grep -c "<$tid> calls:add_pair/2 --> " "$OUT")" 30 "thread $tid: and its 30 returns"
done
is "$(grep -c checksum "$T/m.out")" 6 "the 3 threads created while traced run (clone is unaffected)"
LATE=$(grep -o '^[0-9:.]* <[0-9]*> calls:add_pair(' "$OUT" | grep -o '<[0-9]*>' | tr -d '<>' |
	sort -un | grep -vxF "$EARLY")
is "$(printf '%s\n' "$LATE" | grep -c .)" 3 "the 3 threads created while traced are traced too"
for tid in $LATE; do
	like "$(grep "<$tid> " "$OUT")" 'calls:add_pair\(a=29, b=58\)$' "thread $tid: up to its last call"
done

# Two processes in one trace, two functions with their returns: every
# call of each, paired with its return, under the right process.
spawn_ready "$T/p1.out" "$TARGETS/calls" 12 go
P1=$PID
spawn_ready "$T/p2.out" "$TARGETS/calls" 12 go
P2=$PID
run_go "$P1,$P2" trace -p "$P1,$P2" add_pair greet --return --count 0 --time 60 --format json
is "$RC" 0 "trace -p A,B exits 0" || show_run
J=$(python3 -c '
import json, sys
pids = sys.argv[1:]
ev = [json.loads(l) for l in sys.stdin]
for p in pids:
    for f in ("calls:add_pair", "calls:greet"):
        c = sum(1 for e in ev if str(e["pid"]) == p and e["function"] == f and e["event"] == "call")
        r = sum(1 for e in ev if str(e["pid"]) == p and e["function"] == f and e["event"] == "return")
        print(f, c, r)
' "$P1" "$P2" < "$OUT")
is "$J" "$(printf 'calls:add_pair 12 12\ncalls:greet 12 12\ncalls:add_pair 12 12\ncalls:greet 12 12')" \
	"each process: its 12 calls of each function and their 12 returns"

# An IFUNC (strlen, memcpy in glibc): its symbol's code is the resolver,
# run once at load; the calls go to the implementation it chose, which is
# what recce probes, saying which.
spawn "$T/if.out" "$TARGETS/calls" 10 0 0
IF=$PID
wait_for 20 grep -q checksum "$T/if.out" || fail "calls runs" "$(cat "$T/if.out")"
run "$RECCE" trace -p "$IF" 'libc:strlen' --count 5 --time 20
is "$RC" 0 "trace of libc:strlen exits 0" || show_run
is "$(grep -c 'libc.so.6:strlen()$' "$OUT")" 5 "its calls are seen: 5 of 5 (strdup's, printf's)"
like "$(cat "$ERR")" 'libc.so.6:strlen is chosen at load time \(an IFUNC\): tracing the implementation this process uses, __strlen_[a-z0-9_]+' \
	"and recce names the implementation it probes"
kill_quietly "$IF"

# A library by its soname or its stem, whatever version its file carries:
# a recce maps Debian's libdw-0.188.so, to which libdw.so.1 links.
spawn "$T/idle.out" sleep 120
IDLE=$PID
spawn_recce "$T/rd.out" "$T/rd.err" record -p "$IDLE" -d 120 -o "$T/idle.pb.gz"
RD=$PID
wait_for 20 grep -q '^recce: recording' "$T/rd.err" || fail "recce records" "$(cat "$T/rd.err")"
run "$RECCE" trace -p "$RD" 'libdw.so.1:dwfl_begin' 'libdw:dwfl_end' --count 1 --time 0.2
is "$RC" 0 "libdw.so.1: and libdw: name libdw-0.188.so" || show_run
like "$(cat "$ERR")" "tracing 2 functions in process $RD" "both functions are traced"
kill_quietly "$RD" "$IDLE"

# A profile of a traced process: samples taken while a thread sat in a
# probe's trap (the breakpoint, the single step after it, the handlers)
# keep their user frames, never the probe's kernel frames. spin_step's
# first instruction is run out of line, in the [uprobes] page, where most
# samples find the thread: its caller is kept there too.
spawn "$T/sp.out" "$TARGETS/spinner" 60 1
SP=$PID
wait_for 20 grep -q rate "$T/sp.out" || fail "spinner runs" "$(cat "$T/sp.out")"
spawn_recce "$T/sp.trc" "$T/sp.err" trace -p "$SP" spin_step --count 0 --limit 0 --time 60
SPT=$PID
wait_for 20 grep -q '^recce: tracing' "$T/sp.err" || fail "the trace of spinner starts" "$(cat "$T/sp.err")"
run "$RECCE" record -p "$SP" -d 1 -o "$T/sp.pb.gz"
is "$RC" 0 "record of a process being traced exits 0" || show_run
run "$RECCE" report "$T/sp.pb.gz" --format folded
unlike "$(cat "$OUT")" 'asm_exc_int3|asm_exc_debug|exc_debug_user|uprobe_notify_resume|handle_swbp|uprobe_dispatcher|bpf_prog' \
	"no frame of a probe's trap or handler in any stack"
SPIN=$(folded_count "$(cat "$OUT")" '^clone3;start_thread(;|$)')
cmp_ok "$SPIN" '>' 0 "the spinning thread's samples are there"
is "$(folded_count "$(cat "$OUT")" '^clone3;start_thread;spin(;|$)')" "$SPIN" \
	"each under spin: in it, in spin_step or in its instruction run out of line" ||
	diag "$(head -5 "$OUT")"
unlike "$(cat "$OUT")" '\[unknown\]' \
	"no frame is unknown: the instruction the kernel steps out of line is named [uprobes]"
kill_quietly "$SPT" "$SP"

done_testing
