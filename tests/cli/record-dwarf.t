#!/bin/bash
# --call-graph dwarf: a comparator called by libc's qsort (built without
# frame pointers) gets its whole caller chain, main -> sort_batch -> qsort
# -> slow_compare. The unwinder's fast path (cached CFI rules) gives the
# same stacks as libdwfl's unwinder, sample by sample.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/qsort" "$TARGETS/threads" "$TARGETS/reader"

# A stack from main through sort_batch and libc's qsort to slow_compare.
CHAIN='(^|;)main;(.*;)?sort_batch;(.*;)?[^;]*qsort[^;]*;(.*;)?slow_compare$'
# The same as a whole folded line, with its count.
CHAIN_LINE='(^|;)main;(.*;)?sort_batch;(.*;)?[^;]*qsort[^;]*;(.*;)?slow_compare [0-9]+$'

P="$T/dwarf.pb.gz"
run "$RECCE" record --call-graph dwarf -o "$P" -- "$TARGETS/qsort" 2
is "$RC" 0 "record --call-graph dwarf -- qsort 2 exits 0" || show_run
like "$(cat "$OUT")" '^qsort: [0-9]+ batches, check 0$' "the target ran correctly under dwarf sampling"
run "$RECCE" report --folded --value samples "$P"
is "$RC" 0 "report --folded exits 0" || show_run
FOLDED=$(cat "$OUT")
TOTAL=$(folded_total "$FOLDED")
USER_FOLDED=$(folded_user "$FOLDED")
CMP=$(folded_count "$USER_FOLDED" '(^|;)slow_compare$')
FULL=$(folded_count "$USER_FOLDED" "$CHAIN")
cmp_ok "$CMP" '>' "$TOTAL * 0.5" "slow_compare is the leaf of most samples ($CMP of $TOTAL)"
like "$FOLDED" "$CHAIN_LINE" "a stack runs main;...sort_batch;...qsort...;slow_compare"
cmp_ok "$FULL" '>=' "$CMP * 0.9" "nearly every slow_compare sample has the complete chain ($FULL of $CMP)"
diag "dwarf: the heaviest stack:" "$(folded_top "$FOLDED")"

# A larger stack copy is accepted too.
run "$RECCE" record --call-graph dwarf,16384 -o "$T/dwarf16k.pb.gz" -- "$TARGETS/qsort" 0.5
is "$RC" 0 "--call-graph dwarf,16384 is accepted" || show_run
like "$(folded "$T/dwarf16k.pb.gz")" "$CHAIN_LINE" "and gives the complete chain too"

# What frame pointers alone give (for information; libc has none).
run "$RECCE" record --call-graph fp -o "$T/fp.pb.gz" -- "$TARGETS/qsort" 1
is "$RC" 0 "--call-graph fp is accepted" || show_run
FP=$(folded "$T/fp.pb.gz")
diag "fp: $(folded_count "$FP" "$CHAIN") of $(folded_count "$FP" '(^|;)slow_compare$') slow_compare samples have the complete chain; the heaviest stack:" \
	"$(folded_top "$FP")"

# RECCE_UNWIND_CHECK=1 unwinds every sample with both unwinders and counts
# the stacks that differ: none may, and the fast path must do the most,
# signal frames among them (sigspin spends half its time in a handler).
for target in "qsort 1" "threads 1 --cpu" "sigspin 1"; do
	# shellcheck disable=SC2086
	unwind_check "${target%% *}" 499 "$TARGETS"/$target
done
# Through the signal frame, the handler's stacks are whole: main and
# work below glibc's restorer, named as it is.
SIG=$(folded_user "$(folded "$T/check-sigspin.pb.gz")")
HS=$(folded_count "$SIG" '(^|;)handler_spin$')
cmp_ok "$HS" '>' 0 "sigspin: samples in the handler"
is "$(folded_count "$SIG" '^_start;__libc_start_main;__libc_start_call_main;main;work;(.*;)?__restore_rt;on_signal;handler_spin$')" \
	"$HS" "sigspin: every one of them is main;work;...;__restore_rt;on_signal;handler_spin" ||
	diag "$(printf '%s\n' "$SIG" | grep handler_spin | grep -v '^_start;.*;main;work;.*__restore_rt;on_signal;' | head -5)"

# On a signal stack of its own (sigaltstack, where Go's handlers run),
# the interrupted stack is not in the copy: the walk reaches work() from
# the signal frame, and where work's rbp is its own frame pointer, the
# kernel's frame-pointer walk (through the handler's frames, checked in
# the copy) gives its callers, for as long as each keeps its frame
# pointer (Debian's libc does not: past libc's clock_gettime the walk
# would skip cpu_seconds, and is cut there, marked [interrupted stack
# not copied]; it ends at libc's start code). In a prologue the stack
# ends at the interrupted frame, marked too.
run "$RECCE" record -F 499 -o "$T/sigalt.pb.gz" -- "$TARGETS/sigspin" 1 alt
is "$RC" 0 "record -- sigspin alt exits 0" || show_run
ALT_ERR=$(cat "$ERR")
ALT=$(folded_user "$(folded "$T/sigalt.pb.gz")")
HS=$(folded_count "$ALT" '(^|;)handler_spin$')
WHOLE=$(folded_count "$ALT" '^(_start;__libc_start_main;)?__libc_start_call_main;main;work;(cpu_seconds;)?__restore_rt;on_signal;handler_spin$')
MARKED=$(folded_count "$ALT" '^\[interrupted stack not copied\];([^;]*;)*__restore_rt;on_signal;handler_spin$')
cmp_ok "$WHOLE" '>' 0 "sigspin alt: handler stacks whole below the signal stack ($WHOLE of $HS)"
is "$((WHOLE + MARKED))" "$HS" "sigspin alt: the others end marked at the interrupted frame" ||
	diag "$(printf '%s\n' "$ALT" | grep handler_spin | head -5)"
# A larger copy would not reach them: the run counts them apart from
# the stacks whose copy ended.
ALL_MARKED=$(folded_count "$ALT" '^\[interrupted stack not copied\];')
if [ "$ALL_MARKED" -gt 0 ]; then
	like "$ALT_ERR" "recce: [0-9]+ stacks end early, at a frame that says why: 0 \\[stack copy ended\\] .* $ALL_MARKED \\[interrupted stack not copied\\] \\(a signal handler ran on a stack of its own" \
		"sigspin alt: the run counts the $ALL_MARKED cut below the signal stack, none as a copy that ended"
else
	unlike "$ALT_ERR" "stacks end early" "sigspin alt: no stack cut, none counted"
fi
# Without the frame-pointer walk, every stack of the handler ends at the
# frame it interrupted, marked so, and counted so. (At -O2 cpu_seconds is
# inlined into work: an address in it is the one frame work;cpu_seconds.)
run "$RECCE" record --call-graph dwarf -F 499 -o "$T/sigalt-dwarf.pb.gz" -- "$TARGETS/sigspin" 1 alt
is "$RC" 0 "record --call-graph dwarf -- sigspin alt exits 0" || show_run
ALT_ERR=$(cat "$ERR")
ALT=$(folded_user "$(folded "$T/sigalt-dwarf.pb.gz")")
HS=$(folded_count "$ALT" '(^|;)handler_spin$')
cmp_ok "$HS" '>' 0 "sigspin alt, dwarf: samples in the handler"
is "$(folded_count "$ALT" '^\[interrupted stack not copied\];(work;cpu_seconds|[^;]+);__restore_rt;on_signal;handler_spin$')" "$HS" \
	"sigspin alt, dwarf: each ends marked at the frame the signal interrupted" ||
	diag "the handler's other stacks:" "$(printf '%s\n' "$ALT" | grep -E 'handler_spin [0-9]+$' |
		grep -Ev '^\[interrupted stack not copied\];(work;cpu_seconds|[^;]+);__restore_rt;on_signal;handler_spin ' | head -5)"
# The run counts every stack so marked: the handler's, and the few taken
# in the restorer or in on_signal.
like "$ALT_ERR" "at a frame that says why: 0 \\[stack copy ended\\] .* $(folded_count "$ALT" '^\[interrupted stack not copied\];') \\[interrupted stack not copied\\]" \
	"sigspin alt, dwarf: and the run counts them so"

# One call is one frame: with libc's debug info, read's cancellable path
# is "__libc_read inlined into __libc_read", at an address named read.
# Neither way of unwinding shows read;__libc_read.
LIBC=$(ldd "$TARGETS/reader" | awk '/libc.so/ {print $3}')
LIBC_ID=$(readelf -n "$LIBC" 2>/dev/null | awk '/Build ID/ {print $3}')
if [ -n "$LIBC_ID" ] && [ -e "/usr/lib/debug/.build-id/${LIBC_ID:0:2}/${LIBC_ID:2}.debug" ]; then
	for cg in dwarf fp; do
		run "$RECCE" record --call-graph $cg -o "$T/reader-$cg.pb.gz" -- "$TARGETS/reader" 1
		is "$RC" 0 "$cg: record of a program in read() exits 0" || show_run
		R=$(folded "$T/reader-$cg.pb.gz")
		cmp_ok "$(folded_count "$R" '(^|;)read(;|$)')" '>' 0 "$cg: read is in the profile"
		is "$(folded_count "$R" '__libc_read')" 0 "$cg: and never a second frame __libc_read" ||
			diag "$(printf '%s\n' "$R" | grep __libc_read | head -3)"
	done
else
	skip 6 "libc has no debug info here (Debian package libc6-dbg)"
fi

done_testing
