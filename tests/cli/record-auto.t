#!/bin/bash
# --call-graph auto, the default: the copied stack is unwound with the
# files' call-frame information and, where the copy ends before the
# stack does, the frame-pointer walk goes on from the frame both reached.
# deep runs at the bottom of 40 recursive 1 KiB frames, five times the
# 8 KiB copy: dwarf alone never reaches main; auto gives every sample
# the whole chain, each of the 40 frames once, as the frame-pointer walk
# of this frame-pointer build does. dwarf's stacks end with a frame that
# says why ([stack copy ended]), counted. deep skip puts a function
# without a frame pointer among those with one.
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
	cp "$ERR" "$T/$mode.err"
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
# Past main the kernel's chain ends: the C library keeps no frame
# pointer. __libc_start_call_main's callers are read from the thread's
# memory (frames older than a live one do not change) and stepped by
# their CFI, to _start.
is "$(folded_count "$F_auto" "^_start;__libc_start_main;__libc_start_call_main;$(printf 'descend;%.0s' $(seq 40) | sed 's/^/main;/')bottom(;|\$)")" \
	"$BOTTOM_auto" "auto: every one whole from _start, the C library's frames past main read" ||
	diag "$(folded_top "$F_auto" 3)"
# So for a thread, to clone3: deep's hole runs on a stack of its own,
# 16 KiB of it never touched, which the copy cannot pass.
run "$RECCE" record -o "$T/hole.pb.gz" -- "$TARGETS/deep" 1 hole
is "$RC" 0 "record -- deep hole exits 0" || show_run
F=$(folded "$T/hole.pb.gz")
cmp_ok "$(folded_count "$F" "$IN_BOTTOM")" '>' 0 "hole: samples in bottom"
is "$(folded_count "$F" '^clone3;start_thread;hole_thread;hole;bottom(;|$)')" \
	"$(folded_count "$F" "$IN_BOTTOM")" "hole: every one whole from clone3" || diag "$(folded_top "$F" 3)"

# A stack the unwind could not finish ends with a frame that says why,
# not with made-up callers: each of dwarf's ends (its root, in folded
# form) with [stack copy ended]; auto's, which the frame pointers
# finished, never do. Both are counted, in the run's words and the
# profile's.
is "$(folded_count "$F_dwarf" '^\[stack copy ended\];(.*;)?bottom(;|$)')" "$BOTTOM_dwarf" \
	"dwarf: every stack of bottom ends with [stack copy ended]" || diag "$(folded_top "$F_dwarf" 3)"
is "$(folded_count "$F_auto" '\[(stack copy ended|depth limit)\]')" 0 \
	"auto: none ends early, the frame pointers went on"
like "$(cat "$T/dwarf.err")" '^recce: [0-9]+ stacks end early, at a frame that says why: [1-9][0-9]* \[stack copy ended\] \(--call-graph dwarf,16384 copies more\)' \
	"dwarf: the run says how many stacks end early, and why, and the option that copies more"
# Which works: 64 KiB hold deep's 41 KiB of stack.
run "$RECCE" record --call-graph dwarf,65528 -o "$T/dwarf-64k.pb.gz" -- "$TARGETS/deep" 1
is "$RC" 0 "record (dwarf,65528) -- deep exits 0" || show_run
F=$(folded "$T/dwarf-64k.pb.gz")
cmp_ok "$(folded_count "$F" "$IN_BOTTOM")" '>' 0 "dwarf,65528: samples in bottom"
is "$(folded_count "$F" "$WHOLE")" "$(folded_count "$F" "$IN_BOTTOM")" \
	"dwarf,65528: every one reaches main" || diag "$(folded_top "$F" 3)"
unlike "$(cat "$T/auto.err")" 'stacks end early' "auto: and says nothing of it"

# One frame larger than twice the copy (deep's wide: 20 KiB): the option
# the run names is the one whose copy gets past it, which it then does.
IN_WIDE='(^|;)main;wide;bottom(;|$)'
run "$RECCE" record --call-graph dwarf -o "$T/wide.pb.gz" -- "$TARGETS/deep" 1 wide
is "$RC" 0 "record (dwarf) -- deep wide exits 0" || show_run
like "$(cat "$ERR")" '^recce: [0-9]+ stacks end early, at a frame that says why: [1-9][0-9]* \[stack copy ended\] \(--call-graph dwarf,32768 copies more\)' \
	"a 20 KiB frame: the run names the copy of 32 KiB, the first twice over that gets past it"
is "$(folded_count "$(folded "$T/wide.pb.gz")" "$IN_WIDE")" 0 "dwarf: no stack of bottom reaches main"
run "$RECCE" record --call-graph dwarf,32768 -o "$T/wide-32k.pb.gz" -- "$TARGETS/deep" 1 wide
is "$RC" 0 "record (dwarf,32768) -- deep wide exits 0" || show_run
F=$(folded "$T/wide-32k.pb.gz")
cmp_ok "$(folded_count "$F" '(^|;)bottom(;|$)')" '>' 0 "dwarf,32768: samples in bottom"
is "$(folded_count "$F" "$IN_WIDE")" "$(folded_count "$F" '(^|;)bottom(;|$)')" \
	"dwarf,32768: every one reaches main through wide" || diag "$(folded_top "$F" 3)"
run "$RECCE" report "$T/dwarf.pb.gz" -n 1
like "$(cat "$OUT")" 'stacks-ended-early: [1-9][0-9]* where the stack copy ended, 0 at the depth limit' \
	"the profile counts them by why"

run "$RECCE" report "$T/auto.pb.gz" -n 1
like "$(cat "$OUT")" 'call-graph: auto,8192' "the profile says how its stacks were walked"
is "$(folded_count "$F_auto$F_dwarf" '\[no unwind info')" 0 \
	"no stack of deep ends at code without unwind information"

# A function without a frame pointer among those with one: deep's
# middle, between outer and the 40 frames of descend, leaves rbp as
# outer's, so the kernel's frame-pointer walk goes from middle to main,
# outer skipped. Past a function its CFI says keeps no frame pointer the
# walk is not followed: each stack ends there, marked, where made-up
# callers would say main called middle (the copy is given, so that it
# does not grow past them). The whole truth, from a copy that holds the
# stack: main, outer, middle.
IN_MIDDLE='(^|;)middle;descend;(.*;)?bottom(;|$)'
run "$RECCE" record --call-graph auto,8192 -o "$T/skip.pb.gz" -- "$TARGETS/deep" 1 skip
is "$RC" 0 "record -- deep skip exits 0" || show_run
F=$(folded "$T/skip.pb.gz")
MIDDLE=$(folded_count "$F" "$IN_MIDDLE")
cmp_ok "$MIDDLE" '>' 0 "skip: samples under middle ($MIDDLE)"
is "$(folded_count "$F" '(^|;)main;middle;')" 0 "skip: no stack has main call middle" ||
	diag "$(folded_top "$F" 3)"
is "$(folded_count "$F" '^\[stack copy ended\];middle;descend;')" "$MIDDLE" \
	"skip: every one ends at middle with [stack copy ended]" || diag "$(folded_top "$F" 3)"
run "$RECCE" record --call-graph dwarf,65528 -o "$T/skip-64k.pb.gz" -- "$TARGETS/deep" 1 skip
is "$RC" 0 "record (dwarf,65528) -- deep skip exits 0" || show_run
F=$(folded "$T/skip-64k.pb.gz")
cmp_ok "$(folded_count "$F" "$IN_MIDDLE")" '>' 0 "dwarf,65528: samples under middle"
is "$(folded_count "$F" '(^|;)main;outer;middle;descend;')" "$(folded_count "$F" "$IN_MIDDLE")" \
	"dwarf,65528: every one has main, outer, middle" || diag "$(folded_top "$F" 3)"

# Code without unwind information: nocfi's stub, assembly with no CFI,
# calls spin with a frame pointer that leads nowhere. Every stack of spin
# ends with a frame that names where the walk stopped, in the file: the
# return address in stub, past its call of spin. None reaches main.
need_file "$TARGETS/nocfi"
RET=$(objdump -d --no-show-raw-insn "$TARGETS/nocfi" | awk '/<stub>:/ { f = 1 } f && /\tcall/ { getline; sub(/:.*/, ""); print $1; exit }')
# Its file offset: through the executable segment's load address.
read -r SEG_OFF SEG_ADDR <<<"$(readelf -lW "$TARGETS/nocfi" | awk '$1 == "LOAD" && $7 ~ /E/ { print $2, $3 }')"
OFF=$(printf '%x' $((16#$RET - SEG_ADDR + SEG_OFF)))
run "$RECCE" record -o "$T/nocfi.pb.gz" -- "$TARGETS/nocfi" 0.5
is "$RC" 0 "record -- nocfi exits 0" || show_run
cp "$ERR" "$T/nocfi.err"
F=$(folded "$T/nocfi.pb.gz")
SPIN=$(folded_count "$F" '(^|;)stub;spin(;|$)')
cmp_ok "$SPIN" '>' 0 "samples in spin, under stub ($SPIN)"
is "$(folded_count "$F" "^\\[no unwind info: nocfi\\+0x$OFF\\];stub;spin(;|\$)")" "$SPIN" \
	"every one ends with [no unwind info: nocfi+0x$OFF], where the walk stopped" ||
	diag "$(folded_top "$F" 3)"
is "$(folded_count "$F" '(^|;)main;stub(;|$)')" 0 "none goes on to main, unknown past stub"
# The samples of the run's start and end (main's puts, say) are whole
# and not counted; every one that ends at stub or spin is.
NOUNW=$(folded_count "$F" '^\[no unwind info: ')
like "$(cat "$T/nocfi.err")" "^recce: [0-9]+ stacks end early, at a frame that says why: 0 \\[stack copy ended\\] .*, 0 \\[depth limit\\], $NOUNW \\[no unwind info: FILE\\+OFFSET\\]" \
	"the run counts each, as ending early for want of unwind information" ||
	diag "$(cat "$T/nocfi.err")"
run "$RECCE" report "$T/nocfi.pb.gz" -n 1
like "$(cat "$OUT")" "stacks-ended-early: 0 where the stack copy ended, 0 at the depth limit, $NOUNW in code without unwind information" \
	"and so does the profile" || show_run

run "$RECCE" record --call-graph auto,100000 -- "$TARGETS/deep" 0.1
is "$RC" 2 "auto with a copy beyond the kernel's limit: usage error"
like "$(cat "$ERR")" '--call-graph auto,BYTES: BYTES must be between 8 and 65528' "saying the range"
done_testing
