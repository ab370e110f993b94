#!/bin/bash
# `recce record -p PID -- CMD` (and -t, -a): the command times the
# recording, as in `perf record -a -- sleep 2`: the targets are recorded
# while it runs, not the command; recording ends when it exits; its
# failure is recce's; one that cannot run records nothing.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/spinner"
plan 21

spawn "$T/hot.out" "$TARGETS/hot"
HOT=$PID
ran_cpu "$HOT" 20 || diag "hot used no CPU"

# A busy command beside hot: hot is recorded, the command is not.
P=$T/beside.pb.gz
run "$RECCE" record -p "$HOT" -o "$P" -- "$TARGETS/spinner" 0.5 1
is "$RC" 0 "record -p hot -- spinner exits 0" || show_run
like "$(cat "$ERR")" "^recce: recording process at 99 Hz until '$TARGETS/spinner' exits$" \
	"it says the recording lasts until the command exits"
like "$(cat "$OUT")" "^spinner: done$" "the command ran, its output passed through"
F=$(folded "$P")
cmp_ok "$(folded_count "$F" '(^|;)burn_cpu(;|$)')" '>' 0 "hot's burn_cpu is in the profile"
# The spinner's own functions, whole (a kernel frame such as
# _raw_spin_lock under hot's samples is hot's).
is "$(folded_count "$F" '(^|;)(spin|spin_step|brief|churn)(;|$)')" 0 "the command's own code is not" ||
	diag "$(printf '%s\n' "$F" | grep spin)"
is "$("$RECCE" report "$P" -n 0 2>/dev/null | sed -n 's/^pid: //p')" "$HOT" \
	"the profile is of hot's process alone"

# The recording ends when the command does.
spawn_recce "$T/w.out" "$T/w.err" record -p "$HOT" -o "$T/w.pb.gz" -- \
	sh -c 'until [ -e "$0" ]; do sleep 0.05; done' "$T/go"
REC=$PID
ok "recording begins" wait_for 60 grep -q '^recce: recording' "$T/w.err"
ok "and goes on while the command waits" kill -0 "$REC"
touch "$T/go"
ok "the command's exit ends it" wait_exit 60 "$REC"
is "$WAIT_RC" 0 "with status 0" || diag "$(cat "$T/w.err")"
ok "and the profile is written" gzip -t "$T/w.pb.gz"

# The command's failure is recce's, as for a command of its own.
run "$RECCE" record -p "$HOT" -o "$T/f.pb.gz" -- sh -c 'exit 3'
is "$RC" 3 "a command that exits 3 makes record exit 3"
like "$(cat "$ERR")" "the command exited with status 3" "and says so"

# -d first: the command runs on, and that is said.
run "$RECCE" record -p "$HOT" -d 0.3 -o "$T/d.pb.gz" -- sleep 1000
is "$RC" 0 "-d ends the recording before the command ends: exit 0" || show_run
RUNS=$(sed -n "s/^recce: 'sleep' runs on, as process \([0-9]*\)$/\1/p" "$ERR")
ok "the command still running is named ($RUNS)" kill -0 "${RUNS:-0}"
kill "${RUNS:-0}" 2>/dev/null

# -a too: every process while the command runs.
run "$RECCE" record -a -o "$T/a.pb.gz" -- "$TARGETS/spinner" 0.3 1
is "$RC" 0 "record -a -- spinner exits 0" || show_run
like "$(cat "$ERR")" "until '$TARGETS/spinner' exits" "-a: until the command exits"

# A command that cannot run: nothing recorded, nothing written.
run "$RECCE" record -p "$HOT" -o "$T/n.pb.gz" -- "$T/no-such-command"
is "$RC" 1 "a command that does not exist: exit 1"
is "$(cat "$ERR")" "recce: error: cannot run '$T/no-such-command': No such file or directory (nothing was recorded)" \
	"it says so, and that nothing was recorded"
ok "and no profile is written" test ! -e "$T/n.pb.gz"
run "$RECCE" record -p "$HOT" -o "$T/n.pb.gz" -- no-such-command-anywhere
is "$(cat "$ERR")" "recce: error: cannot run 'no-such-command-anywhere': not found on PATH (nothing was recorded)" \
	"a name not on PATH: said the same way"
