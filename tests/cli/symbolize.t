#!/bin/bash
# Late symbolization: `record --no-symbolize` writes addresses and
# build-ids only (a valid pprof file without names) and keeps a symbol
# table of every binary it saw; `recce symbolize` names the profile
# afterwards, from the binary at its path when the build-id matches, else
# from the kept table once the binary is gone ("another machine": a copy
# in a directory that is removed). recce report names such a profile on
# its own; go tool pprof reads the named file.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/calls"

mkdir "$T/m1"
cp "$TARGETS/hot" "$T/m1/hot"
run "$RECCE" record --no-symbolize -o "$T/p.pb.gz" -- "$T/m1/hot" 0.5
is "$RC" 0 "record --no-symbolize exits 0" || show_run
is "$(zcat "$T/p.pb.gz" | grep -c -a -e burn_cpu -e hot\\.c)" 0 \
	"the profile holds no function or file names of the binary"
bid=$(readelf -n "$T/m1/hot" | awk '/Build ID/ { print $3 }')
ok "but its build-id" sh -c "zcat '$T/p.pb.gz' | grep -q -a '$bid'"
ok "and the binary's symbol table is kept" test -s "$RECCE_CACHE_DIR/symbols/${bid:0:2}/${bid:2}.sym"

# report names it from the binary, which is still there.
run "$RECCE" report --folded "$T/p.pb.gz"
is "$RC" 0 "report of the address-only profile exits 0"
cp "$OUT" "$T/folded.path"
like "$(folded_top "$(cat "$OUT")" | sed 's/ [0-9]*$//')" ';main;burn_cpu$' \
	"report names it: main;burn_cpu"
is "$(cat "$ERR")" "" "without a warning"

# The binary goes away; the kept table names the profile.
rm -rf "$T/m1"
run "$RECCE" symbolize "$T/p.pb.gz" -o "$T/q.pb.gz"
is "$RC" 0 "symbolize with the binary gone exits 0" || show_run
# Every address the binary names is named from the table (the same
# stacks, below); a sample that fell where nothing can name it (rarely,
# at the command's start) stays unnamed either way.
like "$(cat "$ERR")" "named [0-9]+ of [0-9]+ addresses; wrote '$T/q.pb.gz'" "and says how many addresses it named"
NAMED=$(sed -n 's/.*named \([0-9]*\) of \([0-9]*\) addresses.*/\1 \2/p' "$ERR")
run "$RECCE" report --folded "$T/q.pb.gz"
is "$(cat "$OUT")" "$(cat "$T/folded.path")" "the same stacks as named from the binary itself"
run "$RECCE" report "$T/q.pb.gz"
like "$(cat "$OUT")" 'burn_cpu +[^ ]*hot\.c:[0-9]+' "with source lines"
is "$(zcat "$T/q.pb.gz" | grep -c -a burn_cpu)" 1 "the names are in the written file"
run "$RECCE" symbolize "$T/q.pb.gz"
set -- $NAMED
if [ "${1:-x}" = "${2:-y}" ]; then
	is "$RC" 0 "symbolizing a named profile again exits 0"
	like "$(cat "$ERR")" "had no addresses without names" "and says there was nothing to do"
else
	is "$RC" 1 "symbolizing again, with $(($2 - $1)) address(es) nothing can name, exits 1"
	like "$(cat "$ERR")" "named none of the $(($2 - $1)) addresses" "and says none could be named"
fi

# Another binary at the recorded path is not trusted: build-ids differ.
mkdir "$T/m1"
cp "$TARGETS/calls" "$T/m1/hot"
run "$RECCE" report --folded "$T/p.pb.gz"
is "$(cat "$OUT")" "$(cat "$T/folded.path")" "a different binary at the path is ignored for the kept table"

# Neither binary nor table: the profile is written with what could be
# named, and the warning says which binary is missing.
RECCE_CACHE_DIR=$T/empty run "$RECCE" symbolize "$T/p.pb.gz" -o "$T/r.pb.gz"
like "$(cat "$ERR")" "no binary and no kept symbol table for 1 mapping, such as $T/m1/hot \\(build-id $bid\\)" \
	"a binary found nowhere is named in a warning"
ok "the profile is still written" test -s "$T/r.pb.gz"
RECCE_CACHE_DIR=$T/empty run "$RECCE" report --folded "$T/r.pb.gz"
like "$(cat "$OUT")" 'hot\+0x[0-9a-f]+' "its code shows as MODULE+0xOFFSET"
run "$RECCE" symbolize "$T/r.pb.gz" -o "$T/s.pb.gz"
is "$RC" 0 "and a later run with the table names it after all"
run "$RECCE" report --folded "$T/s.pb.gz"
is "$(cat "$OUT")" "$(cat "$T/folded.path")" "to the same stacks"

# A real consumer of the file.
if command -v go >/dev/null; then
	run go tool pprof -top "$T/q.pb.gz"
	like "$(cat "$OUT")" 'burn_cpu' "go tool pprof -top reads the named profile"
else
	skip 1 "no Go toolchain"
fi

# Go, built with a GNU build-id: record without names, name later.
if command -v go >/dev/null &&
	go build -ldflags="-B 0x$(sha1sum tests/go/main.go | cut -c1-40)" -o "$T/goprof" tests/go/main.go 2>"$T/go.err"; then
	run "$RECCE" record --no-symbolize -o "$T/g.pb.gz" -- "$T/goprof" "$T/go.pprof" 1
	is "$RC" 0 "record --no-symbolize of a Go program exits 0" || show_run
	is "$(zcat "$T/g.pb.gz" | grep -c -a burnGoCPU)" 0 "its profile holds no Go names"
	rm -f "$T/goprof"
	run "$RECCE" symbolize "$T/g.pb.gz"
	is "$RC" 0 "symbolize names it with the Go binary gone"
	run "$RECCE" report --folded "$T/g.pb.gz"
	like "$(folded_top "$(cat "$OUT")")" 'main\.burnGoCPU [0-9]+$' "its heaviest stack ends in main.burnGoCPU"
else
	skip 4 "no Go toolchain"
fi

# Bad input.
run "$RECCE" symbolize "$T/none.pb.gz"
is "$RC" 1 "a missing profile: exit 1"
like "$(cat "$ERR")" "cannot open '$T/none.pb.gz'" "which says so"
echo garbage >"$T/bad.pb.gz"
run "$RECCE" symbolize "$T/bad.pb.gz"
is "$RC" 1 "a corrupt profile: exit 1"
run "$RECCE" symbolize
is "$RC" 2 "no profile named: usage error"

done_testing
