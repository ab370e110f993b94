#!/bin/bash
# Bad input to --format: an unknown format lists the known ones; an
# unwritable output is refused before the profile is read; --diff wants
# two profiles and a format it can draw.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE"
plan 6

perl tests/cli/mkpprof.pl go >"$T/go.pb.gz"
run "$RECCE" report --format nope "$T/go.pb.gz"
is "$RC" 2 "an unknown format is a usage error (exit 2)"
like "$(cat "$ERR")" "unknown format 'nope' \(known: text, folded, pprof, callgrind, speedscope, chrome, svg\)" "which lists the known formats"
run "$RECCE" report --format callgrind -o "$T/no/such/dir/out.cg" "$T/missing.pb.gz"
is "$RC" 1 "an unwritable output is refused (exit 1)"
like "$(cat "$ERR")" "cannot write '.*/no/such/dir/out.cg'" "before the profile is read (its absence is not mentioned)"
run "$RECCE" report --diff "$T/go.pb.gz"
is "$RC" 2 "--diff with one profile is a usage error"
run "$RECCE" report --diff --format chrome "$T/go.pb.gz" "$T/go.pb.gz"
is "$RC" 2 "--diff in a format it cannot draw is a usage error"
