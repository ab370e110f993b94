#!/usr/bin/env bash
# recce trace --fast: calls and returns traced through recce's library
# loaded into a running process. Exact counts from four threads in tight
# loops, the instructions a trampoline must move (a RIP-relative load, a
# conditional jump, float arguments, the bytes before a ret), C++ with
# exceptions thrown through traced functions, a Rust-named function, 20
# SIGKILLs of recce at random moments each followed by the target's code
# equal to its files and no watchdog left running, and the refusals.
. "$(dirname "$0")/lib.sh"

need_file "$RECCE" "$TARGETS/tight" "$TARGETS/throws" "$TARGETS/patchee" "$TARGETS/spinner" "$TARGETS/tree"

# A process to start fresh for each part: it says "ready", then waits.
start_tight()
{
	spawn "$T/tight.out" "$TARGETS/tight" "$@"
	TIGHT=$PID
	wait_for 5 grep -q ready "$T/tight.out"
}

# --- exact counts from four threads, and the instructions moved ---------------
start_tight 20000 4
spawn_recce "$T/fast.out" "$T/fast.err" trace --fast -p "$TIGHT" tight:step bump clampit scale \
	--return --args --count 0 --limit 0 --time 30 -o "$T/fast.trace"
R=$PID
ok "recce says it traces with the library" \
	wait_for 10 grep -q "with jumps into recce's library" "$T/fast.err"
kill -USR1 "$TIGHT"
ok "the four threads finish" wait_for 20 grep -q '^done' "$T/tight.out"
like "$(cat "$T/tight.out")" 'done calls=80000 bad=0' \
	"every result is right: the RIP-relative load, the conditional jump and the doubles moved intact"
# What the rings still hold is read after the jumps are out.
kill -INT "$R"
wait_exit 10 "$R"
is "$WAIT_RC" 0 "Ctrl-C ends the trace with status 0" || diag "$(cat "$T/fast.err")"
like "$(cat "$T/fast.err")" 'stopped after 92000 events' "every call is shown, none lost"
unlike "$(cat "$T/fast.err")" 'not recorded' "and recce says none was lost"
run "$RECCE" replay "$T/fast.trace"
is "$(grep -c 'tight:step(' "$OUT")" 80000 "step: exactly 4 x 20000 calls"
is "$(grep -c 'tight:step/2 --> ' "$OUT")" 80000 "and as many returns"
is "$(grep -c 'tight:bump(' "$OUT")" 4000 "bump: exactly 4 x 1000 calls"
is "$(grep -c 'tight:bump/1 --> ' "$OUT")" 4000 "and returns, its ret moved with its entry"
is "$(grep -c 'tight:clampit(' "$OUT")" 4000 "clampit: exactly 4 x 1000 calls"
is "$(grep -c 'tight:clampit --> 0x0 ' "$OUT")" 2000 \
	"and returns from both of its rets: 0 for the 500 negative arguments of each thread"
is "$(grep -c 'tight:scale(' "$OUT")" 4000 "scale: exactly 4 x 1000 calls"
is "$(grep -c 'tight:scale/3 --> ' "$OUT")" 4000 "and returns, through a window of its own before its ret"
like "$(grep -m1 'tight:step(' "$OUT")" 'tight:step\(i=[0-9]+, t=[0-3]\)' "arguments are named from DWARF"
like "$(grep -m1 'tight:bump/1 -->' "$OUT")" 'tight:bump/1 --> [0-9]+  \([0-9.]+ [nu]s\)' \
	"a return shows its value and duration"
is "$(grep -c 'tight:step(i=19999, t=' "$OUT")" 4 "each thread's last call is there"
is "$(awk '{ print $2 }' "$OUT" | sort -u | wc -l)" 4 "from four threads"
run python3 tests/cli/code-bytes.py "$TIGHT"
is "$RC" 0 "the code equals its files after the trace" || show_run
ok "the target still runs" kill -0 "$TIGHT"
run "$RECCE" trace --fast -p "$TIGHT" pick --return --count 1
is "$RC" 1 "a return --fast cannot hook is refused"
like "$(cat "$ERR")" 'pick \(its code jumps into the last bytes before a return\); trace it without --fast, or its calls only' \
	"with what to do"
# Hundreds of libc functions with --return: those --fast cannot hook are
# left out with their reasons (planned without a process to change),
# the others traced, and recce neither crashes nor leaves a byte behind.
run "$RECCE" trace --fast -p "$TIGHT" 'libc:s*' --return --max-probes 10000 --count 1 --time 0.2
is "$RC" 0 "trace --fast --return of libc:s* exits 0" || show_run
like "$(cat "$ERR")" 'tracing [0-9]+ functions in process' "and traces those it can"
run python3 tests/cli/code-bytes.py "$TIGHT"
is "$RC" 0 "the code equals its files after it" || show_run

# --- what the trace shows on a terminal, and the limits ------------------------
run "$RECCE" trace --fast -p "$TIGHT" step --count 3 --time 1
is "$RC" 0 "a trace of a quiet process exits 0"
kill_quietly "$TIGHT"

# From here the threads make 400,000 calls a second together, twice the
# breaker's limit below, rather than all the CPU they get (which starved
# the tests beside this one).
start_tight 0 4 400000
kill -USR1 "$TIGHT"
run "$RECCE" trace --fast -p "$TIGHT" step --caller --count 5
is "$RC" 0 "--count 5 exits 0" || show_run
is "$(grep -c 'tight:step(' "$OUT")" 5 "five calls shown"
like "$(head -n 1 "$OUT")" "<- worker" "--caller names the caller"
like "$(cat "$ERR")" 'stopped after 5 events \(--count 5\); all probes removed' "and says why it stopped"
run "$RECCE" trace --fast -p "$TIGHT" step --count 0 --limit 20000/100 -o "$T/breaker.trace"
is "$RC" 0 "the breaker stops the trace with status 0"
like "$(cat "$ERR")" 'circuit breaker tripped \(--limit 20000/100' "the breaker trips on a flood"
like "$(cat "$ERR")" 'tens of nanoseconds' "and says what a call costs"
run python3 tests/cli/code-bytes.py "$TIGHT"
is "$RC" 0 "the code equals its files after the breaker" || show_run
run "$RECCE" trace --fast -p "$TIGHT" step --if 'i == 7 && t == 2' --count 3
like "$(cat "$OUT")" 'tight:step\(i=7, t=2\)' "--if selects calls by argument"
is "$(grep -cv 'i=7, t=2' "$OUT")" 0 "and only those"

# Two processes at once: both loaded into, both traced, both put back.
spawn "$T/tight2.out" "$TARGETS/tight" 0 1 100000
TIGHT2=$PID
wait_for 5 grep -q ready "$T/tight2.out"
kill -USR1 "$TIGHT2"
run "$RECCE" trace --fast -p "$TIGHT,$TIGHT2" tight:step --return --count 0 --limit 0 --time 0.5 \
	-o "$T/two.trace"
is "$RC" 0 "two processes at once exit 0" || show_run
like "$(cat "$ERR")" 'in processes from' "recce says it traces both"
run "$RECCE" replay "$T/two.trace"
is "$(awk '{ print $2 }' "$OUT" | sort -u | wc -l)" 5 "the calls of all five threads of both are there"
run python3 tests/cli/code-bytes.py "$TIGHT2"
is "$RC" 0 "and both processes' code is their files' again" || show_run

# A trace file stays mapped as zero pages after its trace (a thread may
# still be in the recorder); the next trace maps its file over it, so
# traces one after another leave one such range, not one each.
# big_anon PID: PID's anonymous writable ranges of 16 MiB or more.
big_anon()
{
	python3 -c '
import sys
for l in open("/proc/%s/maps" % sys.argv[1]):
    f = l.split()
    a, b = (int(x, 16) for x in f[0].split("-"))
    if len(f) == 5 and f[1] == "rw-p" and b - a >= 16 << 20:
        print(f[0])' "$1"
}
ONE=$(big_anon "$TIGHT2")
for i in 1 2 3; do
	run "$RECCE" trace --fast -p "$TIGHT2" tight:step --count 1 --time 60
	is "$RC" 0 "trace $((i + 1)) in a row exits 0" || show_run
done
is "$(big_anon "$TIGHT2")" "$ONE" "three more traces left no more memory in the process"
is "$(echo "$ONE" | grep -c .)" 1 "one range of zero pages is left, for the next trace"
kill_quietly "$TIGHT2"

# --- 20 SIGKILLs at random moments ---------------------------------------------
bad=0 traced=0
for i in $(seq 1 20); do
	spawn_recce "$T/k.out" "$T/k.err" trace --fast -p "$TIGHT" tight:step scale --return \
		--count 0 --limit 0 --time 60
	K=$PID
	sleep "0.$((RANDOM % 40))"
	grep -q "with jumps" "$T/k.err" && traced=$((traced + 1))
	kill_quietly "$K"
	if ! wait_for 2 python3 tests/cli/code-bytes.py "$TIGHT" --padding 512 >/dev/null 2>&1; then
		bad=$((bad + 1))
		diag "kill $i: $(python3 tests/cli/code-bytes.py "$TIGHT" 2>&1 | head -n 3)"
	fi
done
is "$bad" 0 "after each of 20 SIGKILLs, the code equals its files within 2 s"
# A recce killed between making its shared file and loading the library
# leaves the file; the next trace --fast removes it, and only such files.
DEAD=$(unused_pid)
LEFT=/dev/shm/recce-fast-$TIGHT-$DEAD-0badf00d
LIVE=/dev/shm/recce-fast-$TIGHT-$$-0badf00d
LINK=/dev/shm/recce-fast-$TIGHT-$DEAD-0badf11d
: >"$LEFT"
: >"$LIVE"
ln -s "$LIVE" "$LINK"
remove_at_exit "$LEFT" "$LIVE" "$LINK"
run "$RECCE" trace --fast -p "$TIGHT" tight:step --count 1 --time 10
is "$RC" 0 "a trace --fast after them exits 0" || show_run
ok "the file a killed recce left is removed" test ! -e "$LEFT"
ok "one whose recce still runs is not" test -e "$LIVE"
ok "nor a symbolic link of the same name" test -L "$LINK"
cmp_ok "$traced" -ge 5 "and at least 5 of them came while the trace ran ($traced)"
# Nothing of recce's runs on in the target: its code is its files' (each
# kill above), and each watchdog left once it had put the bytes back.
watchdogs() { cat /proc/"$TIGHT"/task/*/comm 2>/dev/null | grep -c '^recce-watchdog$'; }
ok "no watchdog of recce's is left running in the target" \
	wait_for 20 eval '[ "$(watchdogs)" = 0 ]'
AFTER=$(rates "$T/tight.out")
ok "the target still runs (its own clock goes on)" wait_for 60 rates_past "$T/tight.out" "$AFTER" 2
kill_quietly "$TIGHT"

# --- C++: exceptions thrown through a traced function --------------------------
run "$TARGETS/throws" 300 0 7
want=$(cat "$OUT")
spawn_ready "$T/throws.out" "$TARGETS/throws" 300 go 7
X=$PID
run_go "$X" trace --fast -p "$X" 'shop::*' --return --count 0 --time 60 -o "$T/throws.trace"
is "$RC" 0 "a C++ trace with returns exits 0" || show_run
ok "the C++ target ends" wait_exit 10 "$X"
is "$(grep '^throws: calls' "$T/throws.out")" "$want" "it throws and catches exactly as untraced"
run "$RECCE" replay "$T/throws.trace"
# The target waited for the trace (in a system call, a thread recce may
# borrow): every call is traced, from the first.
first=$(grep -m1 -o 'shop::restock(i=[0-9]*' "$OUT" | sed 's/.*=//')
is "$first" 0 "the trace began before the first call"
is "$(grep -c 'shop::restock(' "$OUT")" "$((300 - ${first:-300}))" \
	"every call of shop::restock from the first one traced (i=$first) is traced"
is "$(grep -c 'shop::fill_map(' "$OUT")" "$((300 - ${first:-300}))" "and of shop::fill_map, which throws"
thrown=$(seq "${first:-300}" 299 | awk '$1 % 7 == 0' | wc -l)
is "$(grep -c 'shop::fill_map/2 --> (unwound)' "$OUT")" "$thrown" \
	"each call that threw ends (unwound): $thrown of them"
is "$(grep -c 'shop::restock/2 --> (unwound)' "$OUT")" "$thrown" "and so does its caller's"
is "$(grep -c 'shop::fill_map/2 --> [0-9]' "$OUT")" "$((300 - ${first:-300} - thrown))" \
	"every other call returns its value"

# --- a Rust-named function, and refusals ---------------------------------------
spawn "$T/rust.out" "$TARGETS/patchee"
P=$PID
wait_for 5 grep -q old= "$T/rust.out"
run "$RECCE" trace --fast -p "$P" 'payroll::total' --count 20
is "$RC" 0 "a Rust-mangled function by its demangled name" || show_run
is "$(grep -c 'payroll::total' "$OUT")" 20 "twenty calls shown"
run "$RECCE" trace --fast -p "$P" tiny --count 1 --time 1
is "$RC" 1 "a function shorter than the jump is refused"
like "$(cat "$ERR")" 'fast cannot trace patchee:tiny \(shorter than the 5-byte jump\); trace it without --fast' \
	"and the message says what to do"
run "$RECCE" trace --fast -p "$P" step --stack
is "$RC" 2 "--stack with --fast is a usage error"
like "$(cat "$ERR")" 'not --stack: leave out --fast' "that says what to do"
run "$RECCE" trace --fast step -- "$TARGETS/tight" 1 1
is "$RC" 2 "a command with --fast is a usage error"
run "$RECCE" trace --fast -p "$(unused_pid)" step
is "$RC" 1 "a PID that does not exist"
like "$(cat "$ERR")" 'no process with PID' "is said"
run setpriv --reuid=65534 --regid=65534 --clear-groups "$RECCE" trace --fast -p "$P" slow_fib --count 1
is "$RC" 1 "another user's process is refused"
like "$(cat "$ERR")" 'ptrace|not allowed|permission' "with what would allow it"
ok "the target still runs after the refusals" kill -0 "$P"
run python3 tests/cli/code-bytes.py "$P"
is "$RC" 0 "and its code is its files'" || show_run

# --- Go: refused, with the reason ----------------------------------------------
spawn_go offcpu "$T/go.out" 30
case $? in
0)
	run "$RECCE" trace --fast -p "$PID" 'main.*' --count 1 --time 2
	is "$RC" 1 "a Go program is refused"
	like "$(cat "$ERR")" 'it is a Go program.*trace without --fast' "with the reason and what to do"
	;;
2) skip 2 "go is missing" ;;
*) skip 2 "the Go target did not build" ;;
esac

# --- threads that come and go: more over the trace than there are rings -------
# 200 threads one after another, 10 calls each; the process had one thread
# when the trace began, so 5 rings: a thread that ended leaves its ring to
# the next.
spawn "$T/wv.out" "$TARGETS/waves" 200 10
WV=$PID
wait_for 20 grep -q ready "$T/wv.out" || fail "waves starts" "$(cat "$T/wv.out")"
spawn_recce "$T/wv.trc" "$T/wv.err" trace --fast -p "$WV" waves:step --count 0 --limit 0 --time 120
R=$PID
wait_for 30 grep -q 'with jumps' "$T/wv.err" || fail "the trace of waves starts" "$(cat "$T/wv.err")"
kill -USR1 "$WV"
wait_exit 60 "$WV"
wait_exit 60 "$R" || fail "the trace ends with the target" "still running"
is "$WAIT_RC" 0 "trace --fast of 200 threads in turn exits 0" || cat "$T/wv.err"
is "$(grep -c 'waves:step(i=' "$T/wv.trc")" 2000 "every one of the 2000 calls is recorded"
is "$(awk '{ print $2 }' "$T/wv.trc" | sort -u | wc -l)" 200 "from 200 threads, each under its own id"
unlike "$(cat "$T/wv.err")" 'not recorded' "none lost"

# --- a real program: an Erlang node, its C functions traced ---------------------
if command -v erl >/dev/null && command -v erlc >/dev/null && mkdir -p "$T/ebin" &&
	erlc -o "$T/ebin" tests/targets/erlang/fib.erl 2>/dev/null; then
	spawn "$T/erl.out" erl -noshell -pa "$T/ebin" -eval 'fib:loop(0)' -s init stop
	BEAM=$PID
	# Its schedulers run once the VM has started (erl execs beam.smp); the
	# threads are listed anew at each look.
	beam_up() { grep -qsx 1_scheduler /proc/"$BEAM"/task/*/comm; }
	wait_for 20 beam_up || diag "the BEAM never started"
	run "$RECCE" trace --fast -p "$BEAM" 'beam.smp:erts_schedule' --count 4
	is "$RC" 0 "the BEAM's scheduler, traced with --fast" || show_run
	is "$(grep -c 'beam.smp:erts_schedule(' "$OUT")" 4 "four calls"
	run "$RECCE" trace --fast -p "$BEAM" 'beam.smp:erts_schedule' --return --count 4
	like "$(cat "$ERR")" 'it jumps through a table or a register' \
		"its returns are refused: it has a jump table"
	ok "the node still runs" kill -0 "$BEAM"
	run python3 tests/cli/code-bytes.py "$BEAM" --padding 512
	is "$RC" 0 "and its code is its files' again" || show_run
	kill_quietly "$BEAM"
else
	skip 5 "erl and erlc are not installed"
fi

# --- losses are a ring's own ----------------------------------------------
# Each thread writes its own ring. The spinner's thread calls spin_step
# faster than any reader: its ring is full, and its open calls end
# "(return lost)". The tree's threads sleep 20 ms in each slow_io() and
# lose nothing: every one of their calls keeps its duration (a loss in
# any ring once ended them all so: 176 of 298 here).
spawn_exec "$T/lspin.out" "$TARGETS/spinner" 120 1
LSPIN=$PID
spawn_exec "$T/ltree.out" "$TARGETS/tree" 100000 0 20 1
LTREE=$PID
run "$RECCE" trace --fast -p "$LSPIN,$LTREE" spinner:spin_step tree:slow_io --return \
	--count 0 --limit 0 --time 3
is "$RC" 0 "a trace of two processes, one losing calls, exits 0" || show_run
like "$(cat "$ERR")" 'not recorded' "recce says calls were lost"
cmp_ok "$(grep -c 'spinner:spin_step/1 --> (return lost)$' "$OUT")" '>' 0 \
	"the spinner's calls open across its losses end (return lost)"
cmp_ok "$(grep -c 'tree:slow_io/1 --> [0-9]* *([0-9.]* ms)$' "$OUT")" '>' 10 \
	"slow_io() returned many times, with durations"
is "$(grep -c 'tree:slow_io/1 --> (return lost)' "$OUT")" 0 \
	"and none of its calls is said lost: its rings lost nothing"
kill_quietly "$LSPIN"
kill_quietly "$LTREE"

done_testing
