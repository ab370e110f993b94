#!/bin/bash
# `recce trace -o FILE --wrap` and `recce replay`: wrapped files keep the
# newest events, each file within its size; replay merges two processes'
# files in time order, filters with --if, and stops at damage, before the
# block of records it cannot trust.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/calls"

# The blocks of a trace file (format 3), one "OFFSET RECORDS" line each:
# a block header holds its length at +4 and its count of records at +16.
blocks()
{
	local size at=$((64 + 152)) bytes count # the header, the host record
	size=$(stat -c %s "$1")
	while [ $((at + 24)) -le "$size" ]; do
		bytes=$(od -An -t u4 -j $((at + 4)) -N 4 "$1" | tr -d ' ')
		count=$(od -An -t u4 -j $((at + 16)) -N 4 "$1" | tr -d ' ')
		echo "$at $count"
		at=$((at + 24 + bytes))
	done
}

# 1,000 calls into 3 files of 4 KiB (the smallest --wrap), about 170
# records each: the files are written in turn, and the last 3 keep the
# newest calls, as many as recce says, none missing between them.
spawn_ready "$T/a.out" "$TARGETS/calls" 1000 go
run_go "$PID" trace -p "$PID" add_pair --count 0 -o "$T/w.bin" --wrap 4K,3
is "$RC" 0 "trace -o --wrap exits 0" || show_run
like "$(cat "$ERR")" 'wrote 1000 events' "1000 events were written"
KEPT=$(sed -n 's/.*the newest \([0-9]*\) are kept, the \([0-9]*\) before them overwritten.*/\1 \2/p' "$ERR")
is "$(echo "$KEPT" | awk '{ print $1 + $2 }')" 1000 "and recce says how many the files keep and lost" ||
	show_run
KEPT=${KEPT%% *}
ok "more than two files' worth and less than three ($KEPT)" test "${KEPT:-0}" -gt 250 -a "${KEPT:-0}" -lt 600
run "$RECCE" replay "$T"/w.bin.*
is "$(grep -o 'a=[0-9]*' "$OUT" | cut -d= -f2 | tr '\n' ' ')" "$(seq -s ' ' $((1000 - KEPT)) 999) " \
	"the wrapped set holds the newest $KEPT calls, in call order" || show_run
for f in "$T"/w.bin.*; do
	ok "$(basename "$f") is within its 4 KiB" test "$(stat -c %s "$f")" -le 4096
done

# Two processes traced at once into two files; replay merges by time. Both
# start calling once both recces trace.
spawn_ready "$T/p.out" "$TARGETS/calls" 10 go
P1=$PID
spawn_ready "$T/q.out" "$TARGETS/calls" 10 go
P2=$PID
spawn_recce "$T/r1.out" "$T/r1.err" trace -p "$P1" greet --count 0 -o "$T/p1.bin"
R1=$PID
spawn_recce "$T/r2.out" "$T/r2.err" trace -p "$P2" greet --count 0 -o "$T/p2.bin"
R2=$PID
wait_for 60 grep -q '^recce: tracing' "$T/r1.err"
wait_for 60 grep -q '^recce: tracing' "$T/r2.err"
kill -USR1 "$P1" "$P2"
wait_exit 60 "$R1"
wait_exit 60 "$R2"
run "$RECCE" replay "$T/p1.bin" "$T/p2.bin"
is "$RC" 0 "replay of two files exits 0" || show_run
is "$(grep -c "<$P1> calls:greet" "$OUT")" 10 "it holds the 10 calls of the first process"
is "$(grep -c "<$P2> calls:greet" "$OUT")" 10 "and the 10 of the second"
TIMES=$(awk '{ print $1 }' "$OUT")
is "$TIMES" "$(printf '%s\n' "$TIMES" | sort)" "merged in time order"
run "$RECCE" replay "$T/p1.bin" "$T/p2.bin" --if 'name == "client-3"'
is "$(grep -c 'client-3' "$OUT")" 2 "replay --if selects across files"
# A file's host is the file's to say: a line of a host named with
# terminal controls shows them escaped.
cp "$T/p1.bin" "$T/evil.bin"
python3 - "$T/evil.bin" <<'PY'
import struct, sys, zlib
path = sys.argv[1]
b = bytearray(open(path, 'rb').read())
m = 64 # the host record, after the header: magic, flags, offset, host, pad, crc
b[m + 16:m + 144] = b'\x1b]0;owned\x07evil'.ljust(128, b'\0')
b[m + 148:m + 152] = struct.pack('<I', zlib.crc32(bytes(b[m:m + 148])) & 0xffffffff)
open(path, 'wb').write(b)
PY
run "$RECCE" replay "$T/evil.bin" "$T/p2.bin"
is "$(grep -c $'\x1b' "$OUT")" 0 "a host with terminal controls reaches the terminal escaped"
is "$(grep -c -F '\x1b]0;owned\x07evil ' "$OUT")" 10 "its 10 lines name it so"
run "$RECCE" replay "$T/p1.bin" --format json
like "$(head -n 1 "$OUT")" '^\{"time_ns":[0-9]+,"pid":'"$P1"',.*"event":"call","function":"calls:greet","args":\{"name":"client-0"\}\}$' "--format json"

# Damage: a file torn in its third block replays the two before it. The
# file of the set with the most blocks (written as recce caught up).
CUT=$(for f in "$T"/w.bin.*; do echo "$(blocks "$f" | wc -l) $f"; done | sort -n | tail -n 1 | cut -d' ' -f2)
blocks "$CUT" >"$T/blocks"
ok "the file has at least 3 blocks" test "$(wc -l <"$T/blocks")" -ge 3
BEFORE=$(head -n 2 "$T/blocks" | awk '{ n += $2 } END { print n }')
THIRD=$(sed -n 3p "$T/blocks" | cut -d' ' -f1)
cp "$CUT" "$T/cut.bin"
truncate -s $((THIRD + 30)) "$T/cut.bin"
run "$RECCE" replay "$T/cut.bin"
is "$RC" 1 "a truncated file exits 1"
is "$(grep -c 'add_pair(' "$OUT")" "$BEFORE" "after replaying the $BEFORE records of the whole blocks"
like "$(cat "$ERR")" "truncated in the middle of a block.* at byte $THIRD" "and says where it stopped"

# A trace that never starts leaves no file behind, wrapped or not.
spawn_ready "$T/idle.out" "$TARGETS/calls" 1 go
IDLE=$PID
run "$RECCE" trace -p "$IDLE" no_such_function -o "$T/never.trc"
is "$RC" 1 "a pattern that matches nothing exits 1"
ok "and leaves no trace file" test ! -e "$T/never.trc"
run "$RECCE" trace -p "$IDLE" no_such_function -o "$T/never.trc" --wrap 1M,3
ok "nor a wrapped one" test ! -e "$T/never.trc.0"

# Files given twice, copies, and what is not a file.
cp "$T/cut.bin" "$T/copy.bin"
run "$RECCE" replay "$T/cut.bin" "$T/cut.bin"
is "$(grep -c 'add_pair(' "$OUT")" "$BEFORE" "the same file named twice is read once"
like "$(cat "$ERR")" "is the same file as .*: read once" "and the reader is told"
run "$RECCE" replay "$T/cut.bin" "$T/copy.bin"
is "$(grep -c 'add_pair(' "$OUT")" "$BEFORE" "events in two copies of a file are shown once"
like "$(cat "$ERR")" "$BEFORE events appeared in more than one file" "saying how many repeated"
head -c 100 "$T/cut.bin" >"$T/header-only.bin"
run "$RECCE" replay "$T/header-only.bin"
is "$RC" 1 "a file with no whole record exits 1, without a crash" || show_run
mkfifo "$T/fifo"
run "$RECCE" replay "$T/fifo"
is "$RC" 1 "a FIFO is refused at once, not waited on" || show_run
like "$(cat "$ERR")" "is not a regular file" "saying why"

done_testing
