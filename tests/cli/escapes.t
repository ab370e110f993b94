#!/bin/bash
# Names from a target reach the terminal escaped: a function, file or
# thread name holding ESC or BEL (which could retitle the terminal, clear
# it, or worse) is shown as \x1b, \x07, never as the raw byte, by trace,
# replay, report (table and folded) and top -b.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/calls"

EVIL=$(printf 'evil\033]0;PWNED\007\033[2J')
SHOWN='evil\x1b]0;PWNED\x07\x1b[2J'

# raw_free DESC FILE: FILE holds no ESC and no BEL byte.
raw_free()
{
	is "$(tr -dc '\033\007' <"$2" | wc -c)" 0 "$1: no raw ESC or BEL reaches the terminal"
}

# A function whose symbol is that name (objcopy renames add_pair).
objcopy --redefine-sym add_pair="$EVIL" "$TARGETS/calls" "$T/calls-evil"
spawn_ready "$T/calls.out" "$T/calls-evil" 5 go 0
run_go "$PID" trace -p "$PID" 'evil*' --count 2
is "$RC" 0 "trace of a function named with control characters exits 0" || show_run
raw_free "trace" "$OUT"
like "$(head -1 "$OUT")" "calls-evil:evil\\\\x1b\\]0;PWNED\\\\x07\\\\x1b\\[2J\\(a=0, b=0\\)" \
	"the name is shown escaped"
run "$RECCE" trace -p "$PID" 'evil*' --count 2 -o "$T/evil.trc"
run "$RECCE" replay "$T/evil.trc"
is "$RC" 0 "replay of it exits 0" || show_run
raw_free "replay" "$OUT"
grep -qF "$SHOWN(a=" "$OUT"
is "$?" 0 "replay shows it escaped too"

# A profile whose function and file names hold them.
perl tests/cli/mkpprof.pl evil-names >"$T/evil.pb.gz"
run "$RECCE" report "$T/evil.pb.gz"
is "$RC" 0 "report of such a profile exits 0" || show_run
raw_free "report" "$OUT"
grep -qF "$SHOWN  /srv/app/\\x1b[31mred.go:42" "$OUT"
is "$?" 0 "report shows the function and its file escaped"
run "$RECCE" report --folded "$T/evil.pb.gz"
raw_free "report --folded" "$OUT"

# A thread named with them: a program whose file name holds ESC.
cp "$TARGETS/calls" "$T/$(printf 'x\033[2J')"
spawn_ready "$T/calls2.out" "$T/$(printf 'x\033[2J')" 5 go
run "$RECCE" top -b -n 1 -d 0.5 -p "$PID"
is "$RC" 0 "top -b of a thread named with ESC exits 0" || show_run
raw_free "top -b" "$OUT"
grep -qF 'x\x1b[2J' "$OUT"
is "$?" 0 "top -b shows the thread's name escaped"

done_testing
