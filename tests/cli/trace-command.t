#!/bin/bash
# `recce trace -- CMD` finds a command's functions before it runs, in the
# files the dynamic loader will map for it: its program, and the libraries
# its DT_NEEDED names, found by its RUNPATH ($ORIGIN), LD_LIBRARY_PATH and
# the system's folders, not in recce's own. needs calls greet in its
# private library (libs/libgreet.so beside it), which recce does not map;
# recce maps libsqlite3, which needs does not.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/needs" "$TARGETS/libs/libgreet.so"

run "$RECCE" trace greet --count 3 -- "$TARGETS/needs" 3
is "$RC" 0 "a function of the command's private library, by RUNPATH: exit 0" || show_run
# (The first call's string may be on a page not read in yet, which the
# probe cannot copy, and gone with the command by the time recce reads
# it: shown by its address.)
is "$(grep -c '<[0-9]*> libgreet.so:greet(who=' "$OUT")" 3 "each of its 3 calls shown" ||
	show_run

# The same library in a folder named by LD_LIBRARY_PATH, for a copy of
# the program whose RUNPATH leads nowhere.
mkdir -p "$T/bin" "$T/other"
cp "$TARGETS/needs" "$T/bin/needs"
cp "$TARGETS/libs/libgreet.so" "$T/other/libgreet.so"
LD_LIBRARY_PATH="$T/other" run "$RECCE" trace greet --count 2 -- "$T/bin/needs" 2
is "$RC" 0 "by LD_LIBRARY_PATH: exit 0" || show_run
is "$(grep -c 'libgreet.so:greet(' "$OUT")" 2 "each of its 2 calls shown" || show_run

# A library recce maps and the command does not: nothing to trace there.
run "$RECCE" trace 'sqlite3_open*' --count 1 -- "$TARGETS/needs" 1
is "$RC" 1 "a function of a library the command does not load: exit 1" || show_run
like "$(head -1 "$ERR")" "^recce: error: 'sqlite3_open\\*' matches no function in the command '$TARGETS/needs' or the libraries it loads at its start\$" \
	"saying what was searched"
unlike "$(cat "$OUT")" 'hello' "and the command was not run"

# Its library stripped of its symbol table: a name one edit from one it
# exports is a misspelling, said with the nearest names alone; a name far
# from any brings the note that the library keeps no symbol table.
mkdir -p "$T/strip/libs"
cp "$TARGETS/needs" "$T/strip/needs"
strip -o "$T/strip/libs/libgreet.so" "$TARGETS/libs/libgreet.so"
run "$RECCE" trace gret -- "$T/strip/needs" 1
is "$RC" 1 "a misspelled name: exit 1"
like "$(cat "$ERR")" 'the nearest names are: greet(,|$)' "the name meant is offered" || show_run
unlike "$(cat "$ERR")" 'symbol table' "and no word of a symbol table"
run "$RECCE" trace say_goodbye_twice -- "$T/strip/needs" 1
is "$RC" 1 "a name near none: exit 1"
like "$(cat "$ERR")" "recce: $T/strip/libs/libgreet.so keeps no symbol table " \
	"the stripped library is named" || show_run

# A script: its program is known only when it runs.
printf '#!/bin/sh\nexec "%s" 1\n' "$TARGETS/needs" >"$T/run-needs"
chmod +x "$T/run-needs"
run "$RECCE" trace greet --count 1 -- "$T/run-needs"
is "$RC" 1 "a script as the command: exit 1" || show_run
like "$(cat "$ERR")" "^recce: error: '$T/run-needs' \\($T/run-needs\\) is a script, .*name the program the script runs .*or start the command and trace it with -p PID\$" \
	"saying what to trace instead"
run "$RECCE" trace greet -- "$T/no-such-program"
is "$RC" 1 "a command that does not exist: exit 1"
like "$(cat "$ERR")" "^recce: error: cannot run '$T/no-such-program': no such executable\$" "said so"

done_testing
