#!/bin/bash
# --diff BEFORE AFTER: a text table of the largest changes of share and a
# differential flamegraph (red grew, blue shrank); profiles of different
# sample types are refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format-consumers.sh"
need_file "$RECCE" "$TARGETS/threads" "$TARGETS/hot"
plan 11

need_profile hot
need_profile threads
run "$RECCE" report --diff "$HOT" "$THREADS"
is "$RC" 0 "report --diff exits 0" || show_run
ROWS=$(grep -E '^ *[0-9.]+% +[0-9.]+% +[-+][0-9.]+%' "$OUT")
# hot spends nearly all its samples in burn_cpu (a timer interrupt may take
# one); threads never calls it, so its whole share is lost.
BURN=$(printf '%s\n' "$ROWS" | head -n 2 | grep ' burn_cpu ')
like "$BURN" '^ *(100\.00|9[0-9]\.[0-9]{2})% +0\.00% +-(100\.00|9[0-9]\.[0-9]{2})% .* burn_cpu ' \
	"burn_cpu is one of the two largest changes, from over 90% to 0%" || show_run
is "$(printf '%s\n' "$BURN" | awk '{ print "-" $1 }')" "$(printf '%s\n' "$BURN" | awk '{ print $3 }')" \
	"burn_cpu lost its whole share"
like "$(printf '%s\n' "$ROWS" | head -n 2)" '^ *0\.00% +[0-9.]+% +\+[0-9.]+% .* spin_until ' "spin_until gained one"
run "$RECCE" report --diff "$HOT" "$HOT" -n 3
ALLZERO=$(grep -cE '^ *[0-9.]+% +[0-9.]+% +\+0\.00%' "$OUT")
is "$ALLZERO" 3 "a profile compared with itself shows no change"

run "$RECCE" report --diff --format svg -o "$T/diff.svg" "$HOT" "$THREADS"
is "$RC" 0 "report --diff --format svg exits 0" || show_run
S=$(cat "$T/diff.svg")
like "$S" 'data-name="spin_until"[^>]* data-delta="[0-9]' "a frame that grew has a positive delta"
like "$(grep -o 'data-name="spin_until".*' "$T/diff.svg" | head -n 1)" 'fill="rgb\(255,[0-9]+,[0-9]+\)' "and is red"
like "$S" '<title>spin_until \([^)]*was 0\.00%, \+[0-9.]+%\)</title>' "its tooltip says what it was and the change"

# Different sample types: an allocation profile against a CPU profile.
perl -e 'sub v { my $n = shift; my $s = ""; while ($n >= 128) { $s .= chr(($n & 127) | 128); $n >>= 7 } $s . chr($n) }
	sub b { my ($f, $x) = @_; v(($f << 3) | 2) . v(length $x) . $x }
	sub n { my ($f, $x) = @_; v($f << 3) . v($x) }
	print b(1, n(1, 1) . n(2, 2)), b(2, b(1, v(1)) . b(2, v(4096))),
	      b(4, n(1, 1) . b(4, n(1, 1))), b(5, n(1, 1) . n(2, 3)),
	      b(6, ""), b(6, "alloc_space"), b(6, "bytes"), b(6, "malloc_site")' >"$T/heap.pb"
run "$RECCE" report --folded "$T/heap.pb"
is "$(cat "$OUT")" "malloc_site 4096" "the allocation profile reads" || show_run
run "$RECCE" report --diff "$T/heap.pb" "$HOT"
ok "--diff of different sample types is refused with a clear message (exit 1)" \
	sh -c "[ $RC = 1 ] && grep -q \"cannot compare .* has no sample type 'cpu'\" '$ERR'"
