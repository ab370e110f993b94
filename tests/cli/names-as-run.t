#!/bin/bash
# A program run through a symlink (Debian's redis-server is a link to
# redis-check-rdb) is named as it was run, in profiles and traces, and a
# trace pattern may name it by either name.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot"

# Symbols but no DWARF: the report's location column is the module.
strip --strip-debug -o "$T/hot-file" "$TARGETS/hot"
ln -s hot-file "$T/hot-link"
spawn "$T/link.out" "$T/hot-link"
TGT=$PID
wait_for 10 grep -q hot-link "/proc/$TGT/comm"

run "$RECCE" record -p "$TGT" -d 1 -o "$T/link.pb.gz"
is "$RC" 0 "record -p of a program run through a symlink exits 0" || show_run
run "$RECCE" report "$T/link.pb.gz" -n 0
like "$(grep -m1 ' burn_cpu ' "$OUT")" ' burn_cpu +hot-link$' \
	"the report names the program as it was run" || diag "$(head -n 25 "$OUT")"
is "$(grep -c 'hot-file' "$OUT")" 0 "and never by the file the link points to"

# Stripped of its symbols too: the functions only .eh_frame knows are
# named after the program as it was run.
strip -o "$T/bare-file" "$TARGETS/hot"
ln -s bare-file "$T/bare-link"
run "$RECCE" record -o "$T/bare.pb.gz" -- "$T/bare-link" 1
run "$RECCE" report "$T/bare.pb.gz" -n 1
like "$(cat "$OUT")" ' bare-link!0x[0-9a-f]+-0x[0-9a-f]+ +bare-link' \
	"a stripped program's functions are named after the link it was run by" ||
	diag "$(cat "$OUT")"

# A command started by recce through the link: named from its mappings
# as the kernel reports them while it runs.
run "$RECCE" record -o "$T/cmd.pb.gz" -- "$T/hot-link" 1
is "$RC" 0 "record -- a command run through a symlink exits 0" || show_run
run "$RECCE" report "$T/cmd.pb.gz" -n 0
like "$(grep -m1 ' burn_cpu ' "$OUT")" ' burn_cpu +hot-link$' "it too is named as it was run"

# A link whose name begins the file's ("hot" for "hot-file") is a name
# of its own too.
ln -s hot-file "$T/hot"
run "$RECCE" record -o "$T/short.pb.gz" -- "$T/hot" 1
run "$RECCE" report "$T/short.pb.gz" -n 0
like "$(grep -m1 ' burn_cpu ' "$OUT")" ' burn_cpu +hot$' "a link named by the start of the file's name too"

for name in hot-link hot-file; do
	run "$RECCE" trace -p "$TGT" "$name:burn_cpu" --count 2 --time 60
	is "$RC" 0 "trace '$name:burn_cpu' exits 0" || show_run
	is "$(grep -c 'hot-link:burn_cpu(' "$OUT")" 2 "and shows 2 calls of hot-link:burn_cpu"
done

# argv[0] is the target's to write: it names the program only if it
# leads to the program's own file. Run through a link in d1 with an
# argv[0] that names a link in d2 to another file, the program keeps
# its file's name.
mkdir "$T/d1" "$T/d2"
ln -s ../hot-file "$T/d1/hot-lie"
cp "$TARGETS/hot" "$T/other"
ln -s ../other "$T/d2/hot-lie"
spawn "$T/lie.out" bash -c 'exec -a "$0" "$1"' "$T/d2/hot-lie" "$T/d1/hot-lie"
LIE=$PID
wait_for 10 grep -q hot-lie "/proc/$LIE/comm"
is "$(tr '\0' ' ' <"/proc/$LIE/cmdline")" "$T/d2/hot-lie " "the target's argv[0] names the other file"
run "$RECCE" record -p "$LIE" -d 1 -o "$T/lie.pb.gz"
run "$RECCE" report "$T/lie.pb.gz" -n 0
like "$(grep -m1 ' burn_cpu ' "$OUT")" ' burn_cpu +hot-file$' \
	"an argv[0] that leads to another file does not rename the program" ||
	diag "$(head -n 25 "$OUT")"

kill_quietly "$TGT" "$LIE"
done_testing
