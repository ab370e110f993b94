#!/bin/bash
# Stacks of programs built as distributions and cargo build them: at -O2
# without frame pointers (C; C++ with an exception always in flight), C
# linked by LLD (whose layout maps a file page twice, at two addresses),
# and a Rust release build (rustc -O; a recent rustc links with LLD too)
# whose panics unwind through libgcc. The truth is libdwfl's unwind of
# the same copy (RECCE_UNWIND_CHECK=1 compares both on every sample) and
# the chain each target's code is known to run.
. "$(dirname "$0")/lib.sh"
NOFP=$(dirname "$TARGETS")/targets-nofp
need_file "$RECCE" "$NOFP/qsort" "$NOFP/threads" "$NOFP/sigspin" "$NOFP/throws" "$NOFP/qsort-lld" "$NOFP/stackfault" "$NOFP/spawner" "$NOFP/deep"

RUST=
if rustc -g -O -o "$T/unwind" tests/rust/unwind.rs 2>"$T/rustc.err"; then
	RUST=$T/unwind
else
	fail "rustc of tests/rust/unwind.rs" "$(cat "$T/rustc.err")"
fi

# Both unwinders on every sample: none may differ, and the fast path
# does nearly all. With 16 KiB of environment above the program's first
# frame, each copy is as long as asked (a shorter one holds the stack to
# its top, and no walk of it is ever said to be cut): the check below
# sees every stack so said.
PAD=$(printf '%16384s' '')
for target in "$NOFP/qsort 1" "$NOFP/threads 1 --cpu" "$NOFP/sigspin 1" \
	"$NOFP/throws 6000000 0 7 0" "$NOFP/qsort-lld 1" ${RUST:+"$RUST 1"}; do
	name=${target%% *}
	# shellcheck disable=SC2086
	STACK_PAD=$PAD unwind_check "${name##*/}" 999 $target
done

# The profile of a checked run is libdwfl's unwind. In an epilogue past
# the pop of rbp it reads the popped slot, below the copy, and goes on
# without it to _start: a stack that reaches the outermost frame is
# whole, whatever read failed on the way, and is not said to be cut.
is "$(folded_count "$(folded "$T/check-throws.pb.gz")" '^\[[^;]*\];_start;')" 0 \
	"throws, by libdwfl: no whole stack is marked as cut"

# record_auto NAME TARGET...: the default unwind of TARGET, its stacks
# folded without the kernel's frames above the user's leaf, in $F, but
# for the samples of the exec that starts it (in the kernel, before the
# program has a stack: [unknown] alone).
record_auto()
{
	local name=$1
	shift
	run "$RECCE" record -F 999 -o "$T/auto-$name.pb.gz" -- "$@"
	is "$RC" 0 "$name: record exits 0" || show_run
	F=$(folded_user "$(folded "$T/auto-$name.pb.gz" | grep -Ev "$AT_EXEC|$AT_EXIT")")
}

# A sample in code without CFI as a file is loaded (crti's _init, which
# each library and the program runs once; a library's other such code):
# its stack ends there, marked so, honestly. (The rest of the program's
# own code always has CFI; a busy machine once sampled the Rust
# program's _init.) And one in ld.so's
# lazy binding, a function's first call through the PLT: the walk stops
# in _dl_runtime_resolve_*, whose frame address is rbx's (not yet
# followed: the fast path leaves it to libdwfl, which stops there).
AT_LOAD='^\[no unwind info: (lib[^]]*\];[^;]*|[^]]*\];_init)$'
RESOLVE='^_dl_runtime_resolve[a-z_]*;'
# And one in ld.so's first touch of a new page of its stack, as every
# program starts: the kernel's copy of the stack is empty, only the leaf
# is known (tested below).
UNPAGED='^\[stack not in memory\];'

# The comparator under libc's qsort: whole from _start, with no frame
# pointer anywhere. Linked by LLD, the text's file page is also mapped
# read-only at another address: the unwinder finds its CFI through the
# executable mapping (before, every stack ended at the first frame of
# the program, [no unwind info]).
for name in qsort qsort-lld; do
	record_auto $name "$NOFP/$name" 1
	CMP=$(folded_count "$F" '(^|;)slow_compare$')
	cmp_ok "$CMP" '>' 50 "$name: samples in slow_compare ($CMP)"
	is "$(folded_count "$F" '^_start;__libc_start_main;__libc_start_call_main;main;sort_batch;qsort_r;(.*;)?slow_compare$')" \
		"$CMP" "$name: every one whole, _start;...;main;sort_batch;qsort_r;...;slow_compare" ||
		diag "$(printf '%s\n' "$F" | grep 'slow_compare [0-9]*$' | grep -v '^_start;' | head -5)"
	is "$(folded_count "$F" '^\[')" "$(folded_count "$F" "$AT_LOAD|$UNPAGED")" \
		"$name: no stack ends with a marker (but at a library's code without CFI, or ld.so's first touch of a stack page)" ||
		diag "$(printf '%s\n' "$F" | grep '^\[' | head -5)"
done

# C++ throwing all the time: every sample of a throw in flight has its
# thrower's callers, and no stack that reaches _start says it ended
# early. Only while libgcc puts the handler's registers into
# _Unwind_RaiseException's own frame (its return address among them)
# does a stack end elsewhere: memory then holds neither the old stack
# nor yet the new.
record_auto throws "$NOFP/throws" 3000000 0 7 0
THROW=$(folded_count "$F" '(^|;)__cxa_throw(;|$)')
cmp_ok "$THROW" '>' 10 "throws: samples of a throw in flight ($THROW)"
is "$(folded_count "$F" '^_start;__libc_start_main;__libc_start_call_main;main;shop::restock\(long, long\);shop::fill_map\(long, long\)( \[clone \.cold\])?;__cxa_throw(;|$)')" \
	"$THROW" "throws: each whole from _start through restock and fill_map" ||
	diag "$(printf '%s\n' "$F" | grep '__cxa_throw' | grep -v '^_start;' | head -5)"
is "$(folded_count "$F" '^\[[^;]*\];_start;')" 0 "throws: no whole stack is marked as cut" ||
	diag "$(printf '%s\n' "$F" | grep '^\[[^;]*\];_start;' | head -5)"
is "$(folded_count "$F" "^(_start|_dl_start_user)(;|\$)|(^|;)_Unwind_RaiseException(;|\$)|$AT_LOAD|$RESOLVE|$UNPAGED")" \
	"$(folded_total "$F")" "throws: every stack is whole, or in the unwinder" ||
	diag "$(printf '%s\n' "$F" | grep -Ev '^(_start|_dl_start_user)[; ]|_Unwind_RaiseException' | head -5)"

# Rust, panicking every seventh call: each sample of inner is whole from
# _start through Rust's runtime, main, outer and middle.
if [ -n "$RUST" ]; then
	record_auto rust "$RUST" 1
	INNER=$(folded_count "$F" '(^|;)unwind::inner(;|$)')
	cmp_ok "$INNER" '>' 20 "rust: samples in inner ($INNER)"
	is "$(folded_count "$F" '^_start;__libc_start_main;__libc_start_call_main;main;std::rt::lang_start_internal;(.*;)?unwind::main;unwind::outer;(.*;)?unwind::middle;unwind::inner(;|$)')" \
		"$INNER" "rust: each whole, _start;...;unwind::main;unwind::outer;...;middle;inner" ||
		diag "$(printf '%s\n' "$F" | grep 'unwind::inner' | grep -v '^_start;' | head -5)"
	is "$(folded_count "$F" "^(_start|_dl_start_user)(;|\$)|(^|;)_Unwind_RaiseException(;|\$)|$AT_LOAD|$RESOLVE|$UNPAGED")" \
		"$(folded_total "$F")" "rust: every stack is whole, or in the unwinder" ||
		diag "$(printf '%s\n' "$F" | grep -Ev '^(_start|_dl_start_user)[; ]|_Unwind_RaiseException' | head -5)"
else
	skip 4 "no Rust target (rustc failed, above)"
fi

# A stack whose copy ends at a page not in memory: the target gives the
# pages below its stack back and calls big_frame(), whose 16 KiB frame's
# first touch, at the stack pointer, faults a page in (the kernel's copy
# is then empty), and whose untouched middle stays out of memory (the
# copy ends there, short of the caller). Each sample of big_frame is
# whole or says why it is not; none is big_frame alone, unmarked, as if
# the stack ended there. Recorded by -p, so that the target is alive when
# its samples are read (the memory past a short copy says which end it
# is).
spawn "$T/sf.out" "$NOFP/stackfault" 600 # killed below
SF=$PID
run "$RECCE" record -F 999 -p "$SF" -d 2 -o "$T/sf.pb.gz"
is "$RC" 0 "stackfault: record exits 0" || show_run
SAID=$(cat "$ERR")
kill "$SF"
F=$(folded_user "$(folded "$T/sf.pb.gz")")
BIG=$(folded_count "$F" '(^|;)big_frame$')
cmp_ok "$BIG" '>' 10 "stackfault: samples in big_frame ($BIG)"
MARKED=$(folded_count "$F" '^\[stack not in memory\];big_frame$')
# A copy that reached past the untouched pages (recce's own reads of
# them map them in) ends, as said, where the copy ends.
COPIED=$(folded_count "$F" '^\[stack copy ended\];big_frame$')
is "$(folded_count "$F" '^_start;__libc_start_main;__libc_start_call_main;main;churn;big_frame$')" \
	"$((BIG - MARKED - COPIED))" "stackfault: each is whole, _start;...;main;churn;big_frame, or marked" ||
	diag "$(printf '%s\n' "$F" | grep 'big_frame' | grep -Ev '^(_start;|\[stack not in memory\];|\[stack copy ended\];)' | head -5)"
cmp_ok "$MARKED" '>' 0 "stackfault: $MARKED marked [stack not in memory]"
like "$SAID" "[0-9]+ stacks end early, at a frame that says why: .* $(folded_count "$F" '^\[stack not in memory\];') \\[stack not in memory\\] \\(a page of the stack" \
	"stackfault: recce counts them, and says why"

# A thread per request, without frame pointers. The main thread's samples
# in glibc's clone3 (a wrapper without CFI, in its syscall) go on to its
# callers, by the return address on the stack's top; a new thread's
# first ones end at clone3, its outermost frame. None takes what rbp
# holds there (garbage, or the parent's frames) for callers: before,
# such stacks had up to 120 [unknown] frames.
spawn "$T/spawner.out" "$NOFP/spawner" 600 # killed below
SPAWNER=$PID
wait_for 10 grep -q '^ready' "$T/spawner.out" || diag "spawner did not start"
run "$RECCE" record -F 999 -p "$SPAWNER" -d 2 -o "$T/spawner.pb.gz"
is "$RC" 0 "spawner: record exits 0" || show_run
kill "$SPAWNER"
F=$(folded_user "$(folded "$T/spawner.pb.gz")")
is "$(folded_count "$F" '\[unknown\]')" 0 "spawner: no stack has an [unknown] frame" ||
	diag "$(printf '%s\n' "$F" | grep -F '[unknown]' | head -3)"
IN_CLONE=$(folded_count "$F" '(^|;)clone3$')
PARENT=$(folded_count "$F" '^_start;__libc_start_main;__libc_start_call_main;main;pthread_create[^;]*;([^;]+;)*clone3$')
cmp_ok "$PARENT" '>' 0 "spawner: the main thread's samples in clone3 have its callers to _start ($PARENT)"
is "$((PARENT + $(folded_count "$F" '^clone3$')))" "$IN_CLONE" \
	"spawner: every sample in clone3 is the main thread's, whole, or a new thread's, clone3 alone" ||
	diag "$(printf '%s\n' "$F" | grep -E '(^|;)clone3 ' | grep -Ev '^(_start;|clone3 )' | head -3)"

# A stack deeper than the copy, without frame pointers to go on by
# (deep: 40 frames of 1 KiB above bottom): recorded by -p, the default
# copy grows once stacks end where it did, to 64 KiB, and every stack
# after is whole. A copy given is kept as it is. So with -a, and for a
# command recce runs.
spawn "$T/deep.out" "$NOFP/deep" 600 # killed below
DEEP=$PID
run "$RECCE" record -F 499 -p "$DEEP" -d 3 -o "$T/deep.pb.gz"
is "$RC" 0 "deep: record exits 0" || show_run
like "$(cat "$ERR")" 'the stack copy grew from 8192 to 65528 bytes: [0-9]+ of the [0-9]+ samples taken with smaller copies were cut where it ended \(--call-graph auto,65528 copies that much from the start\)' \
	"deep: the run says the copy grew, and the option that copies that much"
CUT=$(sed -n 's/.*the stack copy grew from .* bytes: \([0-9]*\) of the.*/\1/p' "$ERR")
BEFORE=$(sed -n 's/.*the stack copy grew from .* bytes: [0-9]* of the \([0-9]*\) samples.*/\1/p' "$ERR")
is "$CUT" "$BEFORE" "deep: every sample taken with a smaller copy was cut, even those read after it grew"
like "$(cat "$ERR")" "[0-9]+ stacks end early, at a frame that says why: $CUT \\[stack copy ended\\] \\(each with a copy before it grew\\)" \
	"deep: the stacks cut short are those of the copies before"
F=$(folded "$T/deep.pb.gz")
WHOLE=$(folded_count "$F" "^_start;__libc_start_main;__libc_start_call_main;main;$(printf 'descend;%.0s' $(seq 40))bottom(;|\$)")
is "$(folded_count "$F" '^\[stack copy ended\];')" "$CUT" "deep: $CUT samples have [stack copy ended]"
is "$((WHOLE + CUT))" "$(folded_total "$F")" "deep: every other sample's stack is whole, main to bottom ($WHOLE)" ||
	diag "$(printf '%s\n' "$F" | grep -Ev '^(_start;|\[stack copy ended\];)' | head -3)"
cmp_ok "$WHOLE" '>' 0 "deep: samples come after the copy grew"
run "$RECCE" report "$T/deep.pb.gz" -n 1
like "$(cat "$OUT")" 'call-graph: auto,65528' "deep: the profile names the copy it ended with" &&
	like "$(cat "$OUT")" "stack-copy-grew: from 8192 bytes: $BEFORE samples taken with smaller copies, $CUT of them cut where the copy ended" \
	"and the one it began with"
run "$RECCE" record -F 499 -p "$DEEP" -d 1 --call-graph auto,8192 -o "$T/deep-8k.pb.gz"
is "$RC" 0 "deep, auto,8192: record exits 0" || show_run
unlike "$(cat "$ERR")" 'grew' "deep: a copy given does not grow"
run "$RECCE" report "$T/deep-8k.pb.gz" -n 1
is "$(grep -E '(call-graph|stack-copy-grew):' "$OUT" | sed 's/^ *//')" "call-graph: auto,8192" \
	"deep: the profile names the copy given, once"
cmp_ok "$(folded_count "$(folded "$T/deep-8k.pb.gz")" '^\[stack copy ended\];')" '>' 0 \
	"deep: and its stacks stay cut"
# One thread's events (--tid) are not reopened: its copy stays, and the
# run names the option that copies more.
run "$RECCE" record -F 499 --tid "$DEEP" -d 1 -o "$T/deep-tid.pb.gz"
is "$RC" 0 "deep, --tid: record exits 0" || show_run
unlike "$(cat "$ERR")" 'grew' "deep, --tid: a thread's copy does not grow"
like "$(cat "$ERR")" '[0-9]+ stacks end early, at a frame that says why: [1-9][0-9]* \[stack copy ended\] \(--call-graph auto,16384 copies more\)' \
	"deep, --tid: its stacks are cut, and the run says what copies more"
# The whole system's samples (-a): the copy grows as well, to 64 KiB
# (by way of a size another process asked for first, maybe), and deep's
# stacks are cut or whole.
run "$RECCE" record -a -F 499 -d 3 -o "$T/deep-a.pb.gz"
is "$RC" 0 "deep, -a: record exits 0" || show_run
like "$(cat "$ERR")" 'the stack copy grew from 8192 to 65528 bytes: ' "deep, -a: the copy grew to 64 KiB"
deep_grown "deep, -a" "$(folded "$T/deep-a.pb.gz" | grep "^\[deep $DEEP\];" | sed 's/^[^;]*;//')"
kill "$DEEP"
# A command recce runs: sampled per CPU as -p, its copy grows too.
run "$RECCE" record -F 499 -o "$T/deep-cmd.pb.gz" -- "$NOFP/deep" 3
is "$RC" 0 "record -- deep: exits 0" || show_run
like "$(cat "$ERR")" 'the stack copy grew from 8192 to 65528 bytes: ' "record -- deep: the copy grew to 64 KiB"
# Its start (ld.so, main) and its exit aside: the stacks down to bottom.
deep_grown "record -- deep" "$(folded "$T/deep-cmd.pb.gz" | grep -E ';bottom(;| )')"

done_testing
