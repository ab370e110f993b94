#!/bin/bash
# recce top's stacks are walked as recce record walks them: with the
# default --call-graph auto through code without frame pointers (the C
# library's start-up code, as Debian builds it) down to _start, which the
# frame-pointer walk (--call-graph fp) never reaches; a CPython's with
# its Python frames in place of the interpreter's. Seen in the
# flamegraph that f writes. A CPython's threads by their Python names.
# A stack deeper than the copy: the copy grows.
. "$(dirname "$0")/lib.sh"
NOFP=$(dirname "$TARGETS")/targets-nofp
need_file "$RECCE" "$TARGETS/hot" /usr/bin/python3.11 "$NOFP/deep"
command -v tmux >/dev/null || {
	echo "Bail out! tmux is not installed (scripts/install-deps.sh installs it)"
	exit 1
}

SOCK="recce-top-stacks-$$"
tm() { tmux -L "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; _on_exit' EXIT
screen() { tm capture-pane -p -t "$1"; }
shows() { screen "$1" | grep -qE -- "$2"; }

spawn "$T/hot.out" "$TARGETS/hot" 120
HOT=$PID

# flamegraph NAME ARGS...: runs top with ARGS in its own directory, waits
# for the screen to show $SHOWN, presses f; the SVG's path in $SVG.
SHOWN='burn_cpu \('

flamegraph()
{
	local name=$1
	shift
	mkdir "$T/$name"
	tm new-session -d -s "$name" -x 160 -y 40 \
		"cd '$T/$name' && '$RECCE' top -d 0.5 -p $HOT $*; exec sleep 60"
	wait_for 20 shows "$name" "$SHOWN" || diag "top never showed $SHOWN" "$(screen "$name")"
	tm send-keys -t "$name" f
	wait_for 10 shows "$name" "wrote 'recce-top-[0-9]+\\.svg'" || diag "$(screen "$name")"
	SVG=$(ls "$T/$name"/recce-top-*.svg 2>/dev/null | head -n 1)
	tm send-keys -t "$name" q
}

flamegraph auto
ok "f writes a flamegraph (auto)" test -s "$SVG"
like "$(cat "$SVG")" 'data-name="burn_cpu"' "it holds burn_cpu"
like "$(cat "$SVG")" 'data-name="_start"' "and the stack down to _start, through the C library"

flamegraph fp --call-graph fp
ok "f writes a flamegraph (fp)" test -s "$SVG"
like "$(cat "$SVG")" 'data-name="burn_cpu"' "it holds burn_cpu"
unlike "$(cat "$SVG")" 'data-name="_start"' "but the frame-pointer walk stops in the C library"

kill_quietly "$HOT"

# Debian's python3.11: the Python frames read at each sample by BPF, as
# record reads them.
spawn "$T/py.out" /usr/bin/python3.11 tests/py/record-target.py
HOT=$PID
wait_for 60 grep -q ready "$T/py.out" || diag "the Python target did not start"
SHOWN=', [1-9][0-9]* samples'
flamegraph python
ok "f writes a flamegraph (python)" test -s "$SVG"
like "$(cat "$SVG")" 'data-name="__main__\.(spin|hasher)"' "it holds a thread's Python function"
unlike "$(cat "$SVG")" 'data-name="_PyEval_EvalFrameDefault"' \
	"in place of the interpreter's frames that ran them"
# Its threads by their threading.Thread names, the main thread too (the
# target renames it from threading's MainThread).
run "$RECCE" top -b -n 2 -d 0.5 -p "$HOT"
HASHER=$(sed -n 's/^hasher //p' "$T/py.out")
is "$(awk -v t="$HASHER" '$2 == t { n = $3 } END { print n }' "$OUT")" "hasher-ü" \
	"top names a Python thread by its threading.Thread's name" || show_run
is "$(awk -v t="$HOT" '$2 == t { n = $3 } END { print n }' "$OUT")" "main-ü" \
	"and the main thread by threading's name for it"
# HOT and LAST: the Python function where the interpreter runs one, its
# helpers included (the main thread spins in spin() only; n ^= 1 runs
# PyNumber_InPlaceXor and the int's own xor, which took half the samples
# of a refresh under load when they were named).
is "$(awk -v t="$HOT" '$2 == t { h = $12 } END { print h }' "$OUT")" "__main__.spin" \
	"its hot function is the Python function it runs, not the interpreter's loop" || show_run
kill_quietly "$HOT"

# A Python function that spends its time in a builtin: every sample's
# leaf is the interpreter's sum() or the range's iterator, under summer.
spawn "$T/sum.out" /usr/bin/python3.11 -c 'def summer():
    while True:
        sum(range(1000000))
print("ready", flush=True)
summer()'
SUM=$PID
wait_for 60 grep -q ready "$T/sum.out" || diag "the Python target did not start"
run "$RECCE" top -b -n 2 -d 0.5 -p "$SUM"
is "$(awk -v t="$SUM" '$2 == t && $12 != "-" { print $12, $14 }' "$OUT" | sort -u)" \
	"__main__.summer __main__.summer" \
	"HOT and LAST name the Python function that calls a builtin, not the builtin" || show_run
kill_quietly "$SUM"

# A stack deeper than the copy, without frame pointers (deep, built as
# Debian builds: 41 KiB of stack above bottom): top's copy grows, as
# record's does, and says so once per size; its flamegraph then has
# whole stacks, main to bottom, where those cut before it grew are
# marked [stack copy ended].
spawn "$T/deep.out" "$NOFP/deep" 600
DEEP=$PID
run "$RECCE" top -b -n 8 -d 0.5 -p "$DEEP"
like "$(cat "$OUT")" 'the stack copy grew from [0-9]+ to 65528 bytes \(--call-graph auto,65528 copies that much from the start\)' \
	"top -b: the copy grows to 64 KiB, and top says so" || show_run
is "$(grep -o 'grew from [0-9]* to [0-9]*' "$OUT" | sort | uniq -d)" "" "each growth said once"
run "$RECCE" top -b -n 8 -d 0.5 -p "$DEEP" --call-graph auto,8192
unlike "$(cat "$OUT")" 'grew' "a copy given does not grow"
mkdir "$T/deep"
tm new-session -d -s deep -x 160 -y 40 "cd '$T/deep' && '$RECCE' top -d 1 -p $DEEP; exec sleep 60"
# The refresh after the one that says it grew to 64 KiB holds samples
# taken with that copy.
wait_for 60 shows deep 'grew from [0-9]+ to 65528' || diag "top never grew its copy" "$(screen deep)"
wait_for 20 eval '! shows deep "grew from [0-9]+ to 65528"' || diag "$(screen deep)"
tm send-keys -t deep f
wait_for 10 shows deep "wrote 'recce-top-[0-9]+\\.svg'" || diag "$(screen deep)"
SVG=$(ls "$T/deep"/recce-top-*.svg 2>/dev/null | head -n 1)
tm send-keys -t deep q
ok "f writes a flamegraph (deep)" test -s "$SVG"
like "$(cat "$SVG")" 'data-name="main"' "it holds deep's whole stacks, main to bottom"
like "$(cat "$SVG")" 'data-name="\[stack copy ended\]"' "and marks those cut before the copy grew"
kill_quietly "$DEEP"
done_testing
