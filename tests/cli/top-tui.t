#!/bin/bash
# recce top's screen, driven in tmux: sort keys reorder the rows, p
# pauses, Enter opens the hottest stacks of the selected thread with its
# hot function, f writes a flamegraph, a tiny terminal is told so, q quits
# and gives the terminal back.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/topmix"
command -v tmux >/dev/null || skip_all "tmux is not installed"

SOCK="recce-top-test-$$"
tm() { tmux -L "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; _on_exit' EXIT

spawn "$T/mix.out" "$TARGETS/topmix" 60
MIX=$PID
wait_for 5 grep -q 'topmix: ready' "$T/mix.out" || diag "topmix never got ready"
# A second process that holds 64 MiB, far more than topmix: m sorts it first.
spawn "$T/big.out" python3 -c 'import sys, time
b = b"x" * (64 << 20)
print("big: ready", flush=True)
time.sleep(60)'
BIG=$PID
wait_for 5 grep -q 'big: ready' "$T/big.out" || diag "the big process never got ready"

screen() { tm capture-pane -p -t top; }
# The rows' names in screen order (lines that start with the PID).
names() { screen | awk -v p="$MIX" '$1 == p { print $3 }' | paste -sd' ' -; }
# The PID of the first row.
first_pid() { screen | awk -v a="$MIX" -v b="$BIG" '$1 == a || $1 == b { print $1; exit }'; }
shows() { screen | grep -qE -- "$1"; }

tm new-session -d -s top -x 160 -y 40 \
	"cd '$T' && '$RECCE' top -d 0.5 -p $MIX,$BIG; echo RECCE-EXIT-\$?; exec sleep 60"
wait_for 10 shows 'busy_spin \(' || diag "the screen never showed busy_spin" "$(screen)"

tm send-keys -t top n
wait_for 5 eval '[ "$(names)" = "busy idle topmix" ]'
is "$(names)" "busy idle topmix" "n sorts the rows by name"
tm send-keys -t top m
wait_for 5 eval '[ "$(first_pid)" = "$BIG" ]'
is "$(first_pid)" "$BIG" "m sorts by memory: the 64 MiB process comes first"
tm send-keys -t top c
wait_for 5 eval '[ "$(names | cut -d" " -f1)" = busy ]'
is "$(names | cut -d' ' -f1)" busy "c sorts by CPU: the busy thread comes first"
is "$(first_pid)" "$MIX" "and topmix, whose thread it is, comes before the idle big process"

tm send-keys -t top p
wait_for 5 shows 'PAUSED'
like "$(screen)" '\| PAUSED' "p pauses the screen, and says so"
tm send-keys -t top p
wait_for 5 eval '! shows PAUSED'
unlike "$(screen)" 'PAUSED' "p again resumes it"

# Select the first row, open its stacks.
tm send-keys -t top Up Up Up Enter
wait_for 5 shows 'hottest stacks of thread' || diag "$(screen)"
like "$(screen)" 'hottest stacks of thread [0-9]+ \(busy\)' "Enter opens the stacks of the selected thread"
like "$(screen)" '^ +busy_spin +.*topmix\.c:[0-9]+$' "the stack names busy_spin with file:line"
like "$(screen)" '^ +busy_main +.*topmix\.c:[0-9]+$' "and its caller"
# The spin loop's instructions are one or two lines: stacks that name the
# same frames are merged, so no whole stack is listed twice (one frame may
# be in two stacks, say under an interrupt's kernel frames). Each stack is
# its header line and its frame lines, down to its root.
STACKS=$(screen | awk '/^ *[0-9.]+%  [0-9]+ samples?$/ { if (b != "") print b; b = "#"; next }
	b != "" && /^    / { b = b "|" $0; next } { if (b != "") print b; b = "" }
	END { if (b != "") print b }')
cmp_ok "$(printf '%s\n' "$STACKS" | grep -c .)" '>=' 1 "the stack view lists whole stacks"
is "$(printf '%s\n' "$STACKS" | sort | uniq -d | wc -l)" 0 \
	"each named stack is listed once, with its whole share"
tm send-keys -t top Escape
wait_for 5 eval '! shows "hottest stacks"'
unlike "$(screen)" 'hottest stacks' "Esc goes back to the rows"

tm send-keys -t top f
wait_for 5 shows "wrote 'recce-top-[0-9]+\\.svg'"
SVG=$(ls "$T"/recce-top-*.svg 2>/dev/null | head -n 1)
ok "f writes a flamegraph file" test -s "$SVG"
like "$(cat "$SVG" 2>/dev/null)" 'data-name="busy_spin"' "the flamegraph holds busy_spin"

tm send-keys -t top /
tm send-keys -t top -l idle
tm send-keys -t top Enter
wait_for 5 eval '[ "$(names)" = idle ]'
is "$(names)" idle "/ filters the rows"

tm resize-window -t top -x 40 -y 8 2>/dev/null
wait_for 5 shows 'terminal too small'
like "$(screen)" 'terminal too small' "a tiny terminal is told so"
tm resize-window -t top -x 160 -y 40 2>/dev/null
wait_for 5 shows 'PID +TID'
like "$(screen)" 'PID +TID' "and the rows come back when it grows"

tm send-keys -t top q
wait_for 5 shows 'RECCE-EXIT-0'
like "$(screen)" '^RECCE-EXIT-0$' "q quits with status 0"
unlike "$(screen)" 'PID +TID|recce top - up' "and the screen is given back (alternate screen left)"

done_testing
