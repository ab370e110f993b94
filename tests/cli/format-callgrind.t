#!/bin/bash
# --format callgrind, proven by Valgrind's callgrind_annotate: the hot
# function first by self cost, inclusive costs through the calls, and the
# hot source line in the annotated source.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format-consumers.sh"
need_file "$RECCE" "$TARGETS/hot"
command -v callgrind_annotate >/dev/null 2>&1 || skip_all "callgrind_annotate is missing (Debian package valgrind)"
plan 10

need_profile hot
run "$RECCE" report --format callgrind -o "$T/out.cg" "$HOT"
is "$RC" 0 "report --format callgrind exits 0" || show_run
like "$(head -n 12 "$T/out.cg")" '^events: samples cpu$' "its events are samples and cpu"
TOTAL=$(folded_total "$(folded "$HOT")")
# calls= says what the header says it is: the samples through the call
# site, the same number as the call's inclusive samples on the next line.
CALL=$(awk '/^cfn=.*burn_cpu/ { getline; split($1, c, "="); getline; print c[2], $2; exit }' "$T/out.cg")
is "$(echo "$CALL" | awk '{ print ($1 == $2 && $1 > 0) ? "same" : "differ: " $0 }')" same \
	"calls= of main's call to burn_cpu is its number of samples ($CALL)"
like "$(head -n 12 "$T/out.cg")" '# calls= counts the samples' "and the header says so"

run callgrind_annotate "$T/out.cg"
is "$RC" 0 "callgrind_annotate reads it" || show_run
FIRST=$(awk '/file:function/ { getline; getline; print; exit }' "$OUT")
like "$FIRST" 'hot\.c:burn_cpu$' "the hot function comes first by self cost" || diag "$(cat "$OUT")"
like "$(cat "$OUT")" "^$TOTAL \(100\.0%\) .*PROGRAM TOTALS" "the program total is recce's ($TOTAL samples)"

run callgrind_annotate --inclusive=yes "$T/out.cg"
MAIN=$(grep -E 'hot\.c:main$' "$OUT" | head -n 1 | awk '{ gsub(/,/, "", $1); print $1 }')
# A sample taken in the startup or exit code may not be under main.
cmp_ok "${MAIN:-0}" '>=' "$TOTAL * 0.9" "inclusive: main, which calls burn_cpu, costs its samples ($MAIN of $TOTAL)" || diag "$(cat "$OUT")"

# The annotated source: the line marked HOT-LINE carries the samples.
HOT_LINE=$(source_line tests/targets/hot.c HOT-LINE)
run callgrind_annotate --auto=yes --show-percs=no "$T/out.cg"
ROW=$(grep -E 'HOT-LINE' "$OUT" | head -n 1)
like "$ROW" '^ *[0-9,]+ ' "the annotated source shows samples on hot.c:$HOT_LINE" || diag "$(grep -A3 -B3 HOT-LINE "$OUT")"
N=$(printf '%s\n' "$ROW" | awk '{ gsub(/,/, "", $1); print $1 }')
cmp_ok "${N:-0}" '>=' "$TOTAL * 0.5" "most samples are on that line ($N of $TOTAL)"
