#!/bin/bash
# --format pprof: the profile re-encoded after the filters, proven by Go's
# own reader: `go tool pprof -top` lists the same top function with the
# same total as `recce report`, and a timeline does not disturb it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format-consumers.sh"
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/threads"
command -v go >/dev/null 2>&1 || skip_all "go is not installed (Debian package golang-go)"
export GOCACHE="$T/gocache" GOFLAGS= GO111MODULE=off
plan 9

need_profile threads
run "$RECCE" report --format pprof -o "$T/out.pb.gz" "$THREADS"
is "$RC" 0 "report --format pprof exits 0" || show_run
run go tool pprof -raw "$THREADS"
is "$RC" 0 "go tool pprof reads recce's own --timeline profile (the extra field is skipped)" || show_run

# The totals: recce's sample count against pprof's, on the re-encoded file.
RECCE_TOTAL=$(folded_total "$(folded "$THREADS")")
run go tool pprof -sample_index=samples -top "$T/out.pb.gz"
is "$RC" 0 "go tool pprof -top reads the re-encoded file" || show_run
GO_TOTAL=$(sed -n 's/.* of \([0-9]*\) total.*/\1/p' "$OUT" | head -n 1)
is "$GO_TOTAL" "$RECCE_TOTAL" "pprof's total is recce's ($RECCE_TOTAL samples)"
GO_TOP=$(awk '/flat%/ { getline; print $NF; exit }' "$OUT")
run "$RECCE" report --value samples -n 1 "$THREADS"
RECCE_TOP=$(table_rows "$(cat "$OUT")" | awk '{ print $4 }')
is "$GO_TOP" "$RECCE_TOP" "pprof's top function is recce's ($RECCE_TOP)"

# After a filter, pprof sees exactly the samples the report kept.
run "$RECCE" report --format pprof --focus '^early_worker_spin$' -o "$T/early.pb.gz" "$THREADS"
is "$RC" 0 "--format pprof with --focus exits 0"
KEPT=$(folded_total "$(folded "$THREADS" --focus '^early_worker_spin$')")
run go tool pprof -sample_index=samples -top "$T/early.pb.gz"
GO_KEPT=$(sed -n 's/.* of \([0-9]*\) total.*/\1/p' "$OUT" | head -n 1)
is "$GO_KEPT" "$KEPT" "the filtered file totals the kept samples ($KEPT)"
cmp_ok "$KEPT" '<' "$RECCE_TOTAL" "which are fewer than all of them"
unlike "$(cat "$OUT")" 'late_worker_spin' "and it holds no stack the filter dropped"
