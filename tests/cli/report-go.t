#!/bin/bash
# recce report reads pprof files it did not write: a Go program (tests/go/)
# CPU-profiles itself with runtime/pprof, and the report must name its hot
# function with its file:line, in every output mode. Built offline with
# Debian's go in GOPATH mode (no modules, nothing downloaded).
. "$(dirname "$0")/lib.sh"
need_file "$RECCE"
command -v go >/dev/null 2>&1 || skip_all "go is not installed (Debian package golang-go)"
plan 23

SRC="$ROOT/tests/go/main.go"
export GO111MODULE=off GOFLAGS= GOCACHE="$T/gocache" GOPATH="$T/gopath"
run go build -o "$T/goprof" "$SRC"
is "$RC" 0 "the Go program builds offline" || show_run

# Without asynchronous preemption: on a busy machine the Go runtime
# interrupts the hot loop so often that its own profile puts half the
# samples in runtime.asyncPreempt, which is not the program's work.
run env GODEBUG=asyncpreemptoff=1 "$T/goprof" "$T/go.pprof" 1
is "$RC" 0 "it writes its own CPU profile" || show_run
ok "the profile is gzip, as runtime/pprof writes it" \
	sh -c "head -c 2 '$T/go.pprof' | od -An -tx1 | grep -q '1f 8b'"

FIRST=$(source_line "$SRC" 'func burnGoCPU')
LAST=$(awk -v f="$FIRST" 'NR > f && /^}/ { print NR; exit }' "$SRC")

# The default table: Go's default sample type is the last one, cpu.
run "$RECCE" report "$T/go.pprof"
is "$RC" 0 "report of a Go profile exits 0" || show_run
TOP=$(table_rows "$(cat "$OUT")" | head -n 1)
like "$TOP" ' main\.burnGoCPU ' "the top row is the hot function" || show_run
LINE=$(printf '%s\n' "$TOP" | sed -n 's/.*main\.go:\([0-9][0-9]*\)$/\1/p')
cmp_ok "${LINE:-0}" '>=' "$FIRST" "its location is main.go:$LINE, in burnGoCPU"
cmp_ok "${LINE:-0}" '<=' "$LAST" "... which ends at line $LAST"
SELF=$(printf '%s\n' "$TOP" | awk '{ sub(/%/, "", $1); print $1 }')
cmp_ok "$SELF" '>' 50 "it has most of the self time ($SELF%)"
like "$(cat "$OUT")" '^total: [0-9.]+m?s cpu$' "the header gives the total CPU time"
like "$(table_rows "$(cat "$OUT")")" ' main\.main ' "its caller main.main is listed"

# By sample count: totals agree between the table and the folded stacks.
run "$RECCE" report --value samples "$T/go.pprof"
is "$RC" 0 "report --value samples exits 0" || show_run
TOTAL=$(sed -n 's/^total: \([0-9]*\) samples$/\1/p' "$OUT")
# As many as the CPU a loaded machine gave the program: some.
cmp_ok "${TOTAL:-0}" '>' 0 "a second of profiling gives samples ($TOTAL)"

run "$RECCE" report --value samples --folded "$T/go.pprof"
is "$RC" 0 "report --folded exits 0" || show_run
FOLDED=$(cat "$OUT")
is "$(folded_total "$FOLDED")" "$TOTAL" "the folded counts add up to the total"
like "$FOLDED" '(^|;)runtime\.main;main\.main;main\.burnGoCPU [0-9]+$' \
	"stacks run root first: runtime.main;main.main;main.burnGoCPU"
cmp_ok "$(folded_count "$FOLDED" 'main\.burnGoCPU$')" '>' $((TOTAL / 2)) \
	"most samples end in burnGoCPU"

run "$RECCE" report --lines -n 3 "$T/go.pprof"
like "$(table_rows "$(cat "$OUT")" | head -n 1)" 'main\.go:[0-9]+ +main\.burnGoCPU$' \
	"--lines ranks a line of burnGoCPU first"

run "$RECCE" report --flame "$T/go.svg" "$T/go.pprof"
is "$RC" 0 "report --flame exits 0" || show_run
ok "the flamegraph holds the hot function" grep -q 'main\.burnGoCPU' "$T/go.svg"

# The same file uncompressed reads the same.
gzip -dc "$T/go.pprof" >"$T/go.raw"
run "$RECCE" report --value samples --folded "$T/go.raw"
is "$(cat "$OUT")" "$FOLDED" "the raw (not gzip) protobuf reads the same"

# Filters by function.
run "$RECCE" report --value samples --ignore 'burnGoCPU' "$T/go.pprof"
unlike "$(table_rows "$(cat "$OUT")")" 'burnGoCPU' "--ignore drops the hot function's samples"
like "$(cat "$OUT")" '^filters left out [0-9]+ samples' "and the header says how many"
run "$RECCE" report --value samples --focus '^main\.burnGoCPU$' --folded "$T/go.pprof"
is "$(grep -vc 'main\.burnGoCPU' "$OUT")" 0 "--focus keeps only the stacks through it"
