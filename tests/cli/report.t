#!/bin/bash
# `recce report`: its views and filters on one recorded profile, and a
# profile recce did not write (shaped like Go's).
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot"

P="$T/hot.pb.gz"
run "$RECCE" record -o "$P" -- "$TARGETS/hot" 1
is "$RC" 0 "a profile of hot is recorded" || show_run
FOLDED=$(folded "$P")
TOTAL=$(folded_total "$FOLDED")
BURN=$(folded_count "$FOLDED" '(^|;)burn_cpu$')
THROUGH=$(folded_count "$FOLDED" '(^|;)burn_cpu(;|$)')

# -o writes what stdout would show.
run "$RECCE" report "$P"
cp "$OUT" "$T/stdout.txt"
run "$RECCE" report -o "$T/report.txt" "$P"
is "$RC" 0 "report -o FILE exits 0"
is "$(cat "$T/report.txt")" "$(cat "$T/stdout.txt")" "report -o FILE writes the report shown on stdout"
is "$(cat "$OUT")" "" "and prints nothing on stdout"

# -n limits the rows.
run "$RECCE" report -n 1 --value samples "$P"
is "$(table_rows "$(cat "$OUT")" | wc -l)" 1 "report -n 1 shows one row"
like "$(table_rows "$(cat "$OUT")")" 'burn_cpu' "and it is burn_cpu"
# The table's numbers are consistent: the top row's samples over the total.
ROW=$(table_rows "$(cat "$OUT")")
SELF_PCT=$(printf '%s\n' "$ROW" | awk '{ sub(/%/, "", $1); print $1 }')
SELF_N=$(printf '%s\n' "$ROW" | awk '{ print $3 }')
cmp_ok "$SELF_N" '==' "$BURN" "burn_cpu's samples in the table match the folded stacks ($SELF_N)"
cmp_ok "$(awk -v a="$SELF_PCT" -v n="$SELF_N" -v t="$TOTAL" 'BEGIN { d = a - 100 * n / t; print d < 0 ? -d : d }')" '<' 0.15 \
	"and its self % is samples/total ($SELF_PCT% ~ $SELF_N/$TOTAL)"

# A caller's row: main's self % is its own samples, its total % all those
# through it, each exactly as the folded stacks give them (to 2 decimals).
run "$RECCE" report -n 0 --value samples "$P"
MAIN=$(table_rows "$(cat "$OUT")" | awk '$4 == "main" { print $1, $2, $3; exit }')
WANT=$(awk -v s="$(folded_count "$FOLDED" '(^|;)main$')" \
	-v a="$(folded_count "$FOLDED" '(^|;)main(;|$)')" -v t="$TOTAL" \
	'BEGIN { printf "%.2f%% %.2f%% %d\n", 100 * s / t, 100 * a / t, s }')
is "$MAIN" "$WANT" "main's row: self % and total % of the folded stacks, and its own samples"

# --focus keeps the stacks through a function, --ignore drops them.
run "$RECCE" report --folded --value samples --focus '^burn_cpu$' "$P"
is "$RC" 0 "report --focus exits 0"
is "$(folded_total "$(cat "$OUT")")" "$THROUGH" "--focus burn_cpu keeps exactly the samples through burn_cpu"
run "$RECCE" report --folded --value samples --ignore 'burn_' "$P"
is "$RC" 0 "report --ignore exits 0"
is "$(folded_count "$(cat "$OUT")" 'burn_cpu')" 0 "--ignore burn_ drops every stack through burn_cpu"
is "$(folded_total "$(cat "$OUT")")" $((TOTAL - THROUGH)) "and keeps all the others"
run "$RECCE" report --folded --value samples --focus 'no_such_function_anywhere' "$P"
is "$RC" 0 "a --focus that matches nothing is not an error"
is "$(folded_total "$(cat "$OUT")")" 0 "and shows no samples"

# --value cpu weighs by CPU time: about 1/99 s per sample.
run "$RECCE" report --folded --value cpu "$P"
is "$RC" 0 "report --value cpu exits 0"
NS=$(folded_total "$(cat "$OUT")")
cmp_ok "$NS" '>' "$TOTAL * 5000000" "--value cpu totals nanoseconds: more than 5 ms a sample ($NS ns, $TOTAL samples)"
cmp_ok "$NS" '<' "$TOTAL * 20000000" "and less than 20 ms a sample"
run "$RECCE" report --folded --value samples "$P"
is "$(folded_total "$(cat "$OUT")")" "$TOTAL" "--value samples counts samples"

# --flame writes one self-contained SVG.
run "$RECCE" report --flame "$T/flame.svg" "$P"
is "$RC" 0 "report --flame exits 0" || show_run
SVG=$(cat "$T/flame.svg" 2>/dev/null)
like "$(head -c 300 "$T/flame.svg")" '<svg|<\?xml' "it writes an SVG"
like "$SVG" '<title>burn_cpu [^<]*[0-9.]+%[^<]*</title>' "hovering burn_cpu shows its name, value and percent"
like "$SVG" '<script' "it carries its own script (zoom, search)"
like "$SVG" '[Ss]earch' "with a search control"
like "$SVG" '</svg>' "complete (it ends with </svg>)"
unlike "$SVG" '(src|href)="(https?:)?//' "with no reference to the network"
if command -v xmllint >/dev/null; then
	ok "it is well-formed XML" xmllint --noout "$T/flame.svg"
fi

# A profile recce did not write: Go's layout (runtime.main -> main.main ->
# main.hotLoop, 30 and 5 samples), packed fields, no labels.
perl tests/cli/mkpprof.pl go >"$T/go.pb.gz"
run "$RECCE" report --folded --value samples "$T/go.pb.gz"
is "$RC" 0 "report --folded of a Go-style profile exits 0" || show_run
is "$(sort "$OUT")" "$(printf '%s\n' 'runtime.main;main.main 5' 'runtime.main;main.main;main.hotLoop 30')" \
	"it shows its stacks and counts"
# pprof's rule: without default_sample_type, the last sample type (cpu).
run "$RECCE" report --folded "$T/go.pb.gz"
is "$(sort "$OUT")" "$(printf '%s\n' 'runtime.main;main.main 50000000' 'runtime.main;main.main;main.hotLoop 300000000')" \
	"by default it shows the last sample type, as pprof does"
run "$RECCE" report "$T/go.pb.gz"
is "$RC" 0 "report of a Go-style profile exits 0" || show_run
like "$(table_rows "$(cat "$OUT")" | head -n 1)" 'main\.hotLoop +.*main\.go:42$' \
	"its top row is main.hotLoop with main.go:42"
perl tests/cli/mkpprof.pl deep >"$T/deep.pb.gz"
run "$RECCE" report --folded "$T/deep.pb.gz"
is "$RC" 0 "a 3000-frame stack is reported" || show_run
like "$(cat "$OUT")" '^runtime\.main(;main\.main){3000};main\.hotLoop 10000000$' "in full"

# An uncompressed profile (Go's tools accept both).
gzip -dc "$P" >"$T/raw.pb"
run "$RECCE" report --folded --value samples "$T/raw.pb"
is "$RC" 0 "an uncompressed profile is read"
is "$(cat "$OUT")" "$FOLDED" "and gives the same stacks"

done_testing
