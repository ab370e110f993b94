#!/bin/bash
# recce record --event alloc: sampled allocations of a running process,
# checked against a target with known bytes per call site
# (tests/targets/allocs.c): each site's share of the bytes allocated, the
# bytes still in use after the target's known frees, on glibc's malloc
# (in uprobe sessions, and as on older kernels through entry and return
# links or perf uprobe events) and on jemalloc preloaded; C++ with exceptions and a Rust-named function;
# a Go program, which allocates in its own runtime, refused clearly; go tool
# pprof reading the four sample types; and the usage errors.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/allocs" "$TARGETS/allocs-cxx"

# check_sites NAME PROFILE: the four sites' shares of the bytes, and what
# is still in use, against the target's truth (allocs.c).
check_sites()
{
	local name=$1 p=$2 f got want site inuse kept
	f=$(value_folded "$p" alloc_space)
	for site in alloc_small:30 alloc_zeroed:20 alloc_grown:10 alloc_kept:40; do
		want=${site#*:}
		got=$(folded_share "$f" "(^|;)${site%%:*};")
		cmp_ok "($got) - ($want) <= 5 && ($want) - ($got) <= 5" '==' 1 \
			"$name: ${site%%:*} has $got% of the bytes allocated, the target allocates $want%"
	done
	like "$f" '(^|;)alloc_small;malloc [0-9]+' "$name: the allocator's function is the leaf"
	# The ring of 1024 blocks of 16000 bytes turned over while recorded:
	# they are what is in use, all of it from alloc_kept.
	inuse=$(value_folded "$p" inuse_space)
	kept=$(folded_count "$inuse" '(^|;)alloc_kept;')
	if ! grep -q 'the kernel lost [0-9]* records' "$ERR"; then
		ok "$name: $kept bytes in use from alloc_kept, the target holds 16384000" \
			near "$kept" 16384000 0.25 || diag "recce said:" "$(cat "$ERR")"
	else
		# Frees lost with the rest (a machine too busy for recce to
		# read in time), as recce said: in use, but not how much.
		cmp_ok "$kept" '>' 0 "$name: records lost, as said: alloc_kept still has bytes in use"
	fi
	cmp_ok "$(folded_total "$inuse") - $kept" '<' 163840 \
		"$name: what the other sites allocated was freed (under 1% of it left in use)"
}

# --- glibc -----------------------------------------------------------------

spawn "$T/a.out" "$TARGETS/allocs" 600 # killed below; lives through every recording of it
TGT=$PID
wait_for 5 grep -q '^ready' "$T/a.out" || diag "the allocation target did not start"
P="$T/glibc.pb.gz"
record_turns "$T/a.out" record -p "$TGT" --event alloc --alloc-interval 64K -o "$P"
is "$RC" 0 "record --event alloc -p exits 0" || show_run
like "$(cat "$ERR")" 'recording the allocations of 1 process, one sample per 64K allocated' \
	"it says what it records"
like "$(cat "$ERR")" 'recce: [0-9]+ allocations sampled in [0-9.]+ s \(about [0-9]+ allocations, [0-9.]+ [KMG]iB\), [0-9]+ of them freed, [0-9]+ still in use, from 1 thread' \
	"the summary counts samples, what they stand for, frees and what is in use"
check_sites glibc "$P"
ok "the target still runs" kill -0 "$TGT"

run "$RECCE" report -n 3 "$P"
like "$(cat "$OUT")" 'allocator: /[^ ]*libc\.so\.6' "the profile names the allocator probed"
like "$(cat "$OUT")" 'alloc-interval: 65536 bytes' "and the interval"
if command -v go >/dev/null 2>&1; then
	run go tool pprof -top -sample_index=inuse_space "$P"
	like "$(cat "$OUT")" 'Type: inuse_space' "go tool pprof reads inuse_space" || show_run
	like "$(cat "$OUT")" ' [0-9.]+MB +[0-9.]+% +alloc_kept' \
		"and finds alloc_kept holding megabytes"
	run go tool pprof -top -sample_index=alloc_objects "$P"
	like "$(cat "$OUT")" 'Type: alloc_objects' "and alloc_objects" || show_run
else
	skip 3 "go is not installed (Debian package golang-go)"
fi

# older_kernel NAME ENV WARNING COMMENT: recorded as on an older kernel
# (ENV=1 forces it here, as make check-kernels finds it there): the same
# shares and the same bytes in use, and recce says how it sampled and
# why, on its standard error (WARNING) and in the profile (COMMENT).
# glibc's realloc(NULL) goes on to malloc with its return address
# already a return probe's trampoline: the stack has the real caller in
# its place.
older_kernel()
{
	local name=$1 env=$2 warning=$3 comment=$4 P="$T/glibc-$2.pb.gz"
	export "$env=1"
	record_turns "$T/a.out" record -p "$TGT" --event alloc --alloc-interval 64K -o "$P"
	unset "$env"
	is "$RC" 0 "$name: record --event alloc exits 0" || show_run
	like "$(cat "$ERR")" "warning: allocations are sampled through $warning" \
		"$name: it says how it samples, and why"
	check_sites "glibc, $name" "$P"
	run "$RECCE" report -n 1 "$P"
	like "$(cat "$OUT")" "alloc-probes: $comment" "$name: the profile says how it was sampled"
	is "$(value_folded "$P" alloc_space | grep -c '\[uprobes\]')" 0 \
		"$name: no stack holds a return probe's trampoline" || value_folded "$P" alloc_space
	like "$(value_folded "$P" alloc_space)" '(^|;)main;round_of;alloc_grown;malloc [0-9]+' \
		"$name: realloc(NULL)'s malloc is alloc_grown's"
	ok "$name: the target still runs after the probes are gone" kill -0 "$TGT"
}
# Without uprobe sessions (before 6.13: Debian 12's 6.12), every
# allocator call's return is probed too, by a second link.
older_kernel "entry and return probes" RECCE_ALLOC_NO_SESSIONS \
	'entry and return probes: this kernel has no uprobe sessions \(Linux 6\.13\)' \
	'entry and return probes \(no uprobe sessions\)'
# Without uprobe_multi links either (before 6.6: Debian 12's 6.1), perf
# uprobe events at each function's entry and return run the same program.
older_kernel "perf uprobe events" RECCE_NO_LINKS \
	'entry and return perf uprobe events: this kernel has no uprobe_multi links \(Linux 6\.6\) or sessions \(6\.13\)' \
	'entry and return perf uprobe events \(no uprobe_multi links\)'

# Dwarf stacks give the same shares.
P="$T/glibc-dwarf.pb.gz"
run "$RECCE" record -p "$TGT" --event alloc --alloc-interval 64K --call-graph dwarf -d 2 -o "$P"
is "$RC" 0 "record --event alloc --call-graph dwarf exits 0" || show_run
F=$(value_folded "$P" alloc_space)
got=$(folded_share "$F" '(^|;)main;round_of;alloc_kept;posix_memalign$')
cmp_ok "($got) - 40 <= 5 && 40 - ($got) <= 5" '==' 1 \
	"dwarf: main;round_of;alloc_kept;posix_memalign has $got% of the bytes (40%)"
# Records the kernel lost: recce stopped while the target allocates,
# every allocation sampled, until the rings are full. recce says the
# bytes in use may be too many, and still writes what it has.
spawn_recce "$T/lost.out" "$T/lost.err" record -p "$TGT" --event alloc --alloc-interval 1 \
	-o "$T/lost.pb.gz"
RP=$PID
recording "$T/lost.err" || diag "recce never said it records"
kill -STOP "$RP"
ran_cpu "$TGT" 30 || diag "the target did not run"
kill -CONT "$RP"
kill -INT "$RP"
wait_exit 60 "$RP"
is "$WAIT_RC" 0 "records lost: record --event alloc exits 0" || cat "$T/lost.err"
like "$(cat "$T/lost.err")" 'recce: warning: the kernel lost [0-9]+ records when its ring was full: allocations, and frees, so that the bytes in use may be too many; a larger --alloc-interval helps' \
	"recce says records were lost, and that bytes in use may be too many"
like "$(value_folded "$T/lost.pb.gz" alloc_space)" '(^|;)alloc_kept;' "and writes what it sampled"
kill -TERM "$TGT"

# --- jemalloc, preloaded ------------------------------------------------------

JE=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1)
if [ -n "$JE" ]; then
	LD_PRELOAD=$JE spawn "$T/j.out" "$TARGETS/allocs" 60
	TGT=$PID
	wait_for 5 grep -q '^ready' "$T/j.out" || diag "the target did not start with jemalloc"
	P="$T/jemalloc.pb.gz"
	record_turns "$T/j.out" record -p "$TGT" --event alloc --alloc-interval 64K -o "$P"
	is "$RC" 0 "record --event alloc of a jemalloc process exits 0" || show_run
	check_sites jemalloc "$P"
	run "$RECCE" report -n 1 "$P"
	like "$(cat "$OUT")" 'allocator: /[^ ]*libjemalloc\.so\.2' "jemalloc is among the allocators probed"
	kill -TERM "$TGT"
else
	skip 9 "libjemalloc2 is not installed"
fi

# --- C++ with exceptions, a Rust-named function ----------------------------

spawn "$T/cxx.out" "$TARGETS/allocs-cxx" 60
CXX=$PID
wait_for 5 grep -q '^ready' "$T/cxx.out" || diag "allocs-cxx did not start"
P="$T/cxx.pb.gz"
run "$RECCE" record -p "$CXX" --event alloc --alloc-interval 64K --call-graph dwarf -d 2 -o "$P"
is "$RC" 0 "record --event alloc of a C++ target exits 0" || show_run
F=$(value_folded "$P" alloc_space)
FILL=$(folded_count "$F" '(^|;)shop::Basket::fill\(\);operator new\(unsigned long\);malloc$')
GROW=$(folded_count "$F" '(^|;)alloc::raw_vec::finish_grow;malloc$')
got=$(awk -v a="$FILL" -v b="$GROW" 'BEGIN { printf "%.2f", (a + b > 0 ? 100 * a / (a + b) : 0) }')
# A sample stands for 64 KiB: the bytes of the two tell how many there
# were, and so how far a right share may stray.
SAMPLES=$(awk -v a="$FILL" -v b="$GROW" 'BEGIN { printf "%d", (a + b) / 65536 }')
share_near "$got" 40 "$SAMPLES" \
	"C++ new[] under Basket::fill and a Rust-named finish_grow: $got% and the rest (40/60)"
like "$F" '(^|;)shop::Basket::reject\(\);__cxa_allocate_exception;malloc [0-9]+' \
	"a thrown exception's allocation is under Basket::reject"
ok "the C++ target still runs" kill -0 "$CXX"
kill -TERM "$CXX"

# --- Go: no malloc to probe ------------------------------------------------

spawn_go offcpu "$T/go.out" 30
case $? in
0)
	GOP=$PID
	run "$RECCE" record -p "$GOP" --event alloc -d 1 -o "$T/go.pb.gz"
	is "$RC" 1 "record --event alloc of a Go program exits 1" || show_run
	like "$(cat "$ERR")" "maps an allocator.*go tool pprof" \
		"it says a Go program allocates in its runtime, and where to look"
	ok "the Go program still runs" kill -0 "$GOP"
	# With a C process beside it: the C one is recorded, the Go one said.
	spawn "$T/a2.out" "$TARGETS/allocs" 30
	wait_for 5 grep -q '^ready' "$T/a2.out" || diag "the allocation target did not start"
	run "$RECCE" record -p "$PID,$GOP" --event alloc -d 1 -o "$T/mixed.pb.gz"
	is "$RC" 1 "record --event alloc of a C and a Go process exits 1" || show_run
	like "$(cat "$ERR")" "process $GOP maps no allocator recce knows" "it names the Go process"
	like "$(value_folded "$T/mixed.pb.gz" alloc_space)" '(^|;)alloc_small;malloc [0-9]+' \
		"and still writes the C process's allocations"
	;;
1) skip 5 "no Go target" ;;
*) skip 6 "go is not installed (Debian package golang-go)" ;;
esac

# --- a child created while recorded -----------------------------------------

# linked_to PID: whether one of recce's ($R's) BPF links is of process PID.
linked_to()
{
	grep -qs "^pid:[[:space:]]*$1\$" /proc/"$R"/fdinfo/*
}

# The child waits to allocate until its own link is in: its 1,000
# allocations of 256 KiB are sampled (about 500 samples), and recce says
# the child was sampled from when it read of it.
spawn "$T/fa.out" "$TARGETS/forker" 1 0 alloc
P=$PID
wait_for 20 grep -q 'forker: ready' "$T/fa.out"
spawn_recce "$T/fa.rec.out" "$T/fa.rec.err" record --event alloc -p "$P" -o "$T/fa.pb.gz" -d 600
R=$PID
ok "alloc child: recording starts" wait_for 60 grep -q '^recce: recording' "$T/fa.rec.err"
kill -USR1 "$P"
ok "alloc child: the target forks" wait_for 20 grep -q '^child ' "$T/fa.out"
C=$(sed -n 's/^child //p' "$T/fa.out")
ok "alloc child: recce links the child's allocator" wait_for 60 linked_to "$C"
kill -USR1 "$C"
ok "alloc child: the child is done" wait_for 60 grep -q 'forker: done' "$T/fa.out"
kill -INT "$R"
wait "$R"
is "$?" 0 "alloc child: record exits 0"
like "$(cat "$T/fa.rec.err")" \
	'1 process the target created while recorded was sampled from when recce read of it' \
	"alloc child: recce says the child was sampled from when it read of it"
N=$(sed -n 's/^recce: \([0-9]*\) allocations sampled.*/\1/p' "$T/fa.rec.err")
cmp_ok "${N:-0}" '>' 100 "alloc child: its allocations are sampled ($N samples)"
kill_quietly "$P"

# --- --leaks through uprobes -------------------------------------------------

# The same snapshots of what is in use as with --fast (record-alloc-fast.t).
need_file "$TARGETS/leaks"
spawn "$T/l.out" "$TARGETS/leaks"
LK=$PID
wait_for 10 grep -q '^full' "$T/l.out" || diag "the leak target's cache did not fill"
run "$RECCE" record -p "$LK" --event alloc --leaks --alloc-interval 64K -d 5 -o "$T/leaks.pb.gz"
is "$RC" 0 "--leaks: record --event alloc exits 0" || show_run
LEAKS_ERR=$(cat "$ERR")
G=$(value_folded "$T/leaks.pb.gz" growing_space)
like "$G" '(^|;)main;leak_request;malloc [0-9]+' "--leaks: leak_request's blocks only grew" ||
	show_run
# Each CPU has its ring; a block's return and its free, read from two of
# them, are handled in the order they happened, so no churned block is
# left in use.
unlike "$G" 'churn|cache_put' "--leaks: neither the churn nor the full cache is said to grow" ||
	diag "record said:" "$LEAKS_ERR"
kill_quietly "$LK"

# --- usage errors ----------------------------------------------------------

run "$RECCE" record --event alloc -d 1 -- "$TARGETS/allocs" 1
is "$RC" 2 "--event alloc of a command is a usage error"
like "$(cat "$ERR")" 'give -p PID' "and says to give -p"
run "$RECCE" record --event alloc -a -d 1
is "$RC" 2 "--event alloc with -a is a usage error"
run "$RECCE" record -p 1 --event alloc --alloc-interval 0 -d 1
is "$RC" 2 "--alloc-interval 0 is a usage error"
run "$RECCE" record -p 1 --alloc-interval 1M -d 1
is "$RC" 2 "--alloc-interval without --event alloc is a usage error"
run "$RECCE" record -p 1 --event alloc -F 99 -d 1
is "$RC" 2 "-F with --event alloc is a usage error"
run "$RECCE" record -p "$(unused_pid)" --event alloc -d 1
is "$RC" 1 "--event alloc of a missing process exits 1"
like "$(cat "$ERR")" 'no process with PID' "and says so"

done_testing
