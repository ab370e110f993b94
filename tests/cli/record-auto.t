#!/bin/bash
# --call-graph auto, the default: the copied stack is unwound with the
# files' call-frame information and, where the copy ends before the
# stack does, the frame-pointer walk goes on from the frame both reached.
# deep runs at the bottom of 40 recursive 1 KiB frames, five times the
# 8 KiB copy: dwarf alone never reaches main; auto gives every sample
# the whole chain, each of the 40 frames once, as the frame-pointer walk
# of this frame-pointer build does.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/deep"

# The stack of a sample in bottom (or below it, in clock_gettime).
IN_BOTTOM='(^|;)bottom(;|$)'
# (awk has no {40}: the 40 frames written out)
WHOLE="(^|;)main;$(printf 'descend;%.0s' $(seq 40))bottom(;|\$)"

for mode in auto dwarf fp; do
	P="$T/$mode.pb.gz"
	if [ $mode = auto ]; then
		run "$RECCE" record -o "$P" -- "$TARGETS/deep" 1
	else
		run "$RECCE" record --call-graph $mode -o "$P" -- "$TARGETS/deep" 1
	fi
	is "$RC" 0 "record ($mode) -- deep exits 0" || show_run
	F=$(folded "$P")
	eval "BOTTOM_$mode=\$(folded_count \"\$F\" \"\$IN_BOTTOM\")"
	eval "WHOLE_$mode=\$(folded_count \"\$F\" \"\$WHOLE\")"
	eval "MAIN_$mode=\$(folded_count \"\$F\" '(^|;)main;(.*;)?bottom(;|\$)')"
	eval "F_$mode=\$F"
done

cmp_ok "$BOTTOM_auto" '>' 0 "auto: samples in bottom ($BOTTOM_auto)"
is "$WHOLE_auto" "$BOTTOM_auto" "auto: every one has main and the 40 frames of descend, each once" ||
	diag "$(folded_top "$F_auto")"
is "$MAIN_dwarf" 0 "dwarf alone: the 8 KiB copy never reaches main"
cmp_ok "$BOTTOM_dwarf" '>' 0 "... though it names bottom ($BOTTOM_dwarf)"
is "$WHOLE_fp" "$BOTTOM_fp" "fp: every sample whole too (frame pointers, the anchor)"

run "$RECCE" report "$T/auto.pb.gz" -n 1
like "$(cat "$OUT")" 'call-graph: auto,8192' "the profile says how its stacks were walked"

run "$RECCE" record --call-graph auto,100000 -- "$TARGETS/deep" 0.1
is "$RC" 2 "auto with a copy beyond the kernel's limit: usage error"
like "$(cat "$ERR")" '--call-graph auto,BYTES: BYTES must be between 8 and 65528' "saying the range"
done_testing
