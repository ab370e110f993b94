#!/bin/bash
# recce record --event alloc --fast: allocations sampled in the process,
# through recce's library and jumps on the allocator instead of uprobes.
# Checked against the target with known bytes per call site
# (tests/targets/allocs.c), paced so that every sample is kept: each
# site's share of the bytes within 2 points, what is in use; C++ with
# exceptions and a Rust-named function; Debian's redis-server (jemalloc,
# no frame pointers) under redis-benchmark; the target's code equal to its
# files after the recording and after a SIGKILL of recce; the refusals.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/allocs" "$TARGETS/allocs-cxx"

# --- glibc, paced: every sample kept ------------------------------------------

# 3 rounds a millisecond: about 4,000 samples a second, which a sanitized
# recce beside another test keeps up with (at 10 it once lost 292 of
# 36,000); recorded until the ring of kept blocks has turned three times.
spawn "$T/a.out" "$TARGETS/allocs" 120 3
TGT=$PID
wait_for 5 grep -q '^ready' "$T/a.out" || diag "the allocation target did not start"
P="$T/fast.pb.gz"
record_turns "$T/a.out" record -p "$TGT" --event alloc --fast --alloc-interval 4K -o "$P"
is "$RC" 0 "record --event alloc --fast -p exits 0" || show_run
like "$(cat "$ERR")" 'recording the allocations of 1 process inside it \(--fast\), one sample per 4K allocated' \
	"it says what it records, and how"
like "$(cat "$ERR")" 'recce: [0-9]+ allocations sampled in [0-9.]+ s \(about [0-9]+ allocations, [0-9.]+ [KMG]iB\), [0-9]+ of them freed, [0-9]+ still in use, from 1 thread' \
	"the summary counts samples, what they stand for, frees and what is in use"
# alloc_fates: from record's standard error, NS samples, NF of them
# freed, NL still in use, NU with no block to follow (said only when
# some), LOST records lost (said only when some).
alloc_fates() {
	local sum
	sum=$(sed -n 's/^recce: \([0-9]*\) allocations sampled .*, \([0-9]*\) of them freed, \([0-9]*\) still in use.*/\1 \2 \3/p' "$ERR")
	read -r NS NF NL <<<"$sum"
	NU=$(sed -n 's/^recce: \([0-9]*\) of the sampled allocations had no block to follow .*/\1/p' "$ERR")
	NU=${NU:-0}
	LOST=$(sed -n 's/^recce: warning: \([0-9]*\) allocation records were lost, .*/\1/p' "$ERR")
	LOST=${LOST:-0}
}
# Every sample is followed to its result, and to its free or to the end;
# but a call still running as the recording ends (one a thread at most),
# or one whose records were lost, has no block to follow, and is said.
alloc_fates
# Paced to be kept whole; but a sanitized recce on a loaded machine
# falls behind (461 records of 12,000 once, 783 of 9,290 another time):
# a loss is said with its count and leaves most samples; nothing else
# is warned of. The shares below hold either way.
unlike "$(grep -v 'allocation records were lost' "$ERR")" 'lost|warning' \
	"nothing is warned of but a loss of records" || show_run
cmp_ok "$LOST" '<=' "${NS:-0} / 4" "and what was lost, if any, is said and a small part ($LOST of ${NS:-0})"
is "$((NF + NL + NU))" "$NS" "each of the $NS samples was freed ($NF), is still in use ($NL) or is said to have no block ($NU)"
cmp_ok "$NU" '<=' "1 + $LOST" "and those with no block are the call running at the end, or lost ones"
F=$(value_folded "$P" alloc_space)
for site in alloc_small:30 alloc_zeroed:20 alloc_grown:10 alloc_kept:40; do
	want=${site#*:}
	got=$(folded_share "$F" "(^|;)${site%%:*};")
	cmp_ok "($got) - ($want) <= 2 && ($want) - ($got) <= 2" '==' 1 \
		"${site%%:*} has $got% of the bytes allocated, the target allocates $want%"
done
like "$F" '(^|;)main;round_of;alloc_small;malloc [0-9]+' \
	"whole stacks, the allocator's function the leaf"
like "$F" '(^|;)round_of;alloc_grown;malloc [0-9]+' \
	"glibc's realloc(NULL, n) is sampled once, as the malloc it jumps to"
unlike "$F" '(^|;)alloc_grown;realloc' "and not as realloc too"
INUSE=$(value_folded "$P" inuse_space)
KEPT=$(folded_count "$INUSE" '(^|;)alloc_kept;')
# At 4K a 16000-byte block is sampled with p = 0.98: within 5% of the truth.
ok "$KEPT bytes in use from alloc_kept, the target holds 16384000 (within 5%)" \
	near "$KEPT" 16384000 0.05
cmp_ok "$(folded_total "$INUSE") - $KEPT" '<' 163840 \
	"what the other sites allocated was followed to its free (under 1% of it left in use)"
run "$RECCE" report -n 1 "$P"
like "$(cat "$OUT")" 'alloc-probes: in-process trampolines \(--fast\)' \
	"the profile says how it was sampled"
like "$(cat "$OUT")" 'allocator: /[^ ]*libc\.so\.6' "and names the allocator"
ok "the target still runs" kill -0 "$TGT"
run python3 tests/cli/code-bytes.py "$TGT"
is "$RC" 0 "its code is its files' again" || show_run

# A SIGKILL of recce while it records: the library's watchdog puts the
# allocator's bytes back, and the target goes on.
spawn_recce "$T/k.out" "$T/k.err" record -p "$TGT" --event alloc --fast -d 600 -o "$T/k.pb.gz"
K=$PID
ok "a second recording starts" wait_for 60 grep -q '^recce: recording' "$T/k.err"
run python3 tests/cli/code-bytes.py "$TGT"
is "$RC" 1 "while it runs, the allocator jumps to recce's trampolines" || show_run
like "$(cat "$OUT")" 'libc\.so\.6' "in libc"
kill_quietly "$K"
ok "after recce's SIGKILL the code equals its files within 2 s" \
	wait_for 2 python3 tests/cli/code-bytes.py "$TGT"
ok "and the target still runs" kill -0 "$TGT"
kill_quietly "$TGT"

# --- freed by another thread ---------------------------------------------------

# Each thread writes its own ring: a block freed by the consumer right
# after the producer allocated it is followed to that free only when the
# two rings are read in time order.
need_file "$TARGETS/handoff"
spawn "$T/h.out" "$TARGETS/handoff" 120 100
HO=$PID
wait_for 5 grep -q '^ready' "$T/h.out" || diag "the hand-off target did not start"
run "$RECCE" record -p "$HO" --event alloc --fast --alloc-interval 16K -d 2 -o "$T/h.pb.gz"
is "$RC" 0 "hand-off: record exits 0" || show_run
alloc_fates
# How many in 2 s depends on how much CPU the target got; the checks
# below are exact whatever the count.
cmp_ok "${NS:-0}" '>' 100 "hand-off: $NS samples"
is "$((NF + NL + NU))" "$NS" "hand-off: each was freed on the other thread ($NF), is in use ($NL) or is said to have no block ($NU)"
cmp_ok "$NU" '<=' "1 + $LOST" "hand-off: those with no block are the producer's call running at the end, or lost ones"
cmp_ok "${NL:-99}" '<=' 20 "hand-off: few are in use at the end (about 4 expected: the ring holds 64 blocks)"
like "$(value_folded "$T/h.pb.gz" alloc_space)" '(^|;)main;make_block;malloc [0-9]+' \
	"hand-off: the producer's allocations"
kill_quietly "$HO"

# --- --leaks: the stacks whose use only grows -----------------------------------

# tests/targets/leaks.c keeps one block a round (leak_request), frees one
# at once (churn) and 16 a round 16 rounds later (cache_put, steady once
# full: what it holds goes up and down from one snapshot to the next).
need_file "$TARGETS/leaks"
spawn "$T/l.out" "$TARGETS/leaks"
LK=$PID
wait_for 10 grep -q '^full' "$T/l.out" || diag "the leak target's cache did not fill"
run "$RECCE" record -p "$LK" --event alloc --fast --leaks --alloc-interval 64K -d 8 -o "$T/leaks.pb.gz"
is "$RC" 0 "--leaks: record exits 0" || show_run
like "$(cat "$ERR")" 'recce: --leaks: [0-9]+ stacks? only grew in use over [0-9]+ snapshots 1 s apart \(a leak, or a cache not yet full\): recce report --value growing_space ' \
	"--leaks: it says how many stacks only grew, and where to look" || show_run
G=$(value_folded "$T/leaks.pb.gz" growing_space)
like "$G" '(^|;)main;leak_request;malloc [0-9]+' "--leaks: leak_request's blocks only grew"
unlike "$G" 'churn|cache_put' "--leaks: neither the churn nor the full cache is said to grow"
INUSE=$(value_folded "$T/leaks.pb.gz" inuse_space)
like "$INUSE" '(^|;)main;cache_put;malloc [0-9]+' "--leaks: the cache is in use all the same"
run "$RECCE" report -n 1 "$T/leaks.pb.gz"
like "$(cat "$OUT")" 'growing: [0-9]+ stacks only grew in use over [0-9]+ snapshots 1 s apart' \
	"--leaks: the profile says so too"
if command -v go >/dev/null 2>&1; then
	run go tool pprof -top -sample_index=growing_space "$T/leaks.pb.gz"
	like "$(cat "$OUT")" 'Type: growing_space' "go tool pprof reads growing_space" || show_run
	like "$(cat "$OUT")" 'leak_request' "and finds leak_request in it"
else
	fail "go is not installed (Debian package golang-go): run scripts/install-deps.sh"
fi
kill_quietly "$LK"

# --- a child forked while recorded ----------------------------------------------

# It keeps the jumps and records into rings of its own: its 1,000
# allocations of 256 KiB (about 500 samples) are in the profile, under
# its own stack, though it exits before recce reads them (recce is
# stopped while the child runs, and goes on once it has exited).
spawn "$T/fa.out" "$TARGETS/forker" 1 0 alloc
FP=$PID
wait_for 20 grep -q 'forker: ready' "$T/fa.out" || diag "forker did not start"
spawn_recce "$T/fa.rec.out" "$T/fa.rec.err" record --event alloc --fast -p "$FP" -o "$T/fa.pb.gz" -d 600
R=$PID
ok "child: recording starts" wait_for 60 grep -q '^recce: recording' "$T/fa.rec.err"
kill -USR1 "$FP"
ok "child: the target forks" wait_for 20 grep -q '^child ' "$T/fa.out"
kill -STOP "$R"
kill -USR1 "$(sed -n 's/^child //p' "$T/fa.out")"
ok "child: the child is done" wait_for 60 grep -q 'forker: done' "$T/fa.out"
kill -CONT "$R"
kill -INT "$R"
wait "$R"
is "$?" 0 "child: record exits 0"
N=$(sed -n 's/^recce: \([0-9]*\) allocations sampled.*/\1/p' "$T/fa.rec.err")
cmp_ok "${N:-0}" '>' 100 "child: its allocations are sampled ($N samples)"
unlike "$(cat "$T/fa.rec.err")" 'could not be read' "child: none of its records was left out" ||
	cat "$T/fa.rec.err"
like "$(value_folded "$T/fa.pb.gz" alloc_space)" '(^|;)main;spawn;malloc [0-9]+' \
	"child: under the child's own stack"
kill_quietly "$FP"

# --- C++ with exceptions, a Rust-named function ---------------------------------

# Paced as allocs is, so that a sanitized recce on a loaded machine
# keeps up: some 10,000 samples, the share within 2 points.
spawn "$T/cxx.out" "$TARGETS/allocs-cxx" 60 5
CXX=$PID
wait_for 5 grep -q '^ready' "$T/cxx.out" || diag "allocs-cxx did not start"
P="$T/cxx.pb.gz"
run "$RECCE" record -p "$CXX" --event alloc --fast --alloc-interval 8K -d 3 -o "$P"
is "$RC" 0 "record --event alloc --fast of a C++ target exits 0" || show_run
F=$(value_folded "$P" alloc_space)
FILL=$(folded_count "$F" '(^|;)shop::Basket::fill\(\);operator new\(unsigned long\);malloc$')
GROW=$(folded_count "$F" '(^|;)alloc::raw_vec::finish_grow;malloc$')
got=$(awk -v a="$FILL" -v b="$GROW" 'BEGIN { printf "%.2f", (a + b > 0 ? 100 * a / (a + b) : 0) }')
cmp_ok "($got) - 40 <= 2 && 40 - ($got) <= 2" '==' 1 \
	"C++ new[] under Basket::fill and a Rust-named finish_grow: $got% and the rest (40/60)" ||
	cat "$ERR"
like "$F" '(^|;)shop::Basket::reject\(\);__cxa_allocate_exception;malloc [0-9]+' \
	"a thrown exception's allocation is under Basket::reject"
ok "the C++ target still runs" kill -0 "$CXX"
run python3 tests/cli/code-bytes.py "$CXX"
is "$RC" 0 "its code is its files' again" || show_run
kill_quietly "$CXX"

# --- Debian's redis-server: jemalloc, no frame pointers ---------------------------

REDIS=$(command -v redis-server)
if [ -n "$REDIS" ] && command -v redis-benchmark >/dev/null; then
	PORT=$((20000 + $$ % 20000))
	spawn "$T/redis.out" "$REDIS" --port "$PORT" --bind 127.0.0.1 --save '' \
		--appendonly no --dir "$T"
	RP=$PID
	wait_for 10 grep -q 'Ready to accept connections' "$T/redis.out" ||
		diag "redis-server did not start"
	spawn_recce "$T/r.out" "$T/r.err" record -p "$RP" --event alloc --fast \
		--alloc-interval 16K -d 600 -o "$T/redis.pb.gz"
	R=$PID
	ok "redis: recording starts" wait_for 60 grep -q '^recce: recording' "$T/r.err"
	run redis-benchmark -p "$PORT" -n 20000 -q -t set,lpush -d 256
	is "$RC" 0 "redis-benchmark runs while recorded" || show_run
	kill -INT "$R"
	wait "$R"
	is "$?" 0 "redis: record exits 0" || cat "$T/r.err"
	like "$(cat "$T/r.err")" 'recce: [0-9]+ allocations sampled' "redis: it sampled" ||
		cat "$T/r.err"
	F=$(value_folded "$T/redis.pb.gz" alloc_space)
	like "$F" '(^|;)main;aeMain;.*;processCommand;call;.*;zmalloc;malloc [0-9]+' \
		"redis: a command's allocation has its whole stack, from main, through jemalloc's malloc" ||
		diag "$(echo "$F" | head -n 5)"
	run "$RECCE" report -n 1 "$T/redis.pb.gz"
	like "$(cat "$OUT")" 'allocator: /[^ ]*libjemalloc\.so\.2' "redis: jemalloc is hooked"
	ok "redis-server still answers" sh -c "redis-cli -p $PORT ping | grep -q PONG"
	run python3 tests/cli/code-bytes.py "$RP"
	is "$RC" 0 "redis: its code is its files' again" || show_run
	kill_quietly "$RP"
else
	fail "redis-server and redis-benchmark are not installed (Debian package redis): run scripts/install-deps.sh"
fi

# --- Debian's node: JavaScript's allocations through V8's JIT code ------------------

# JIT code has no unwind information: the frame pointers' chain in the
# copied stack goes on from where the unwinder stops, as in a CPU sample.
if command -v node >/dev/null; then
	spawn "$T/node.out" node -e 'let k = []; console.log("ready");
		setInterval(() => { for (let i = 0; i < 100; i++) k.push(Buffer.alloc(8192));
			if (k.length > 5000) k = []; }, 1)'
	NP=$PID
	wait_for 10 grep -q '^ready' "$T/node.out" || diag "node did not start"
	run "$RECCE" record -p "$NP" --event alloc --fast -d 2 -o "$T/node.pb.gz"
	is "$RC" 0 "node: record exits 0" || show_run
	like "$(value_folded "$T/node.pb.gz" alloc_space)" \
		'(^|;)node::Start\(int, char\*\*\);.*;uv_run;uv__run_timers;.*;\[JIT: node\];.*;node::NodeArrayBufferAllocator::Allocate\(unsigned long\);calloc [0-9]+' \
		"node: a timer's Buffer allocations (zeroed: calloc) have whole stacks, from main through V8's JIT code"
	ok "node still runs" kill -0 "$NP"
	run python3 tests/cli/code-bytes.py "$NP"
	is "$RC" 0 "node: its code is its files' again" || show_run
	kill_quietly "$NP"
else
	fail "node is not installed (Debian package nodejs): run scripts/install-deps.sh"
fi

# --- refusals --------------------------------------------------------------------

run "$RECCE" record -p 1 --fast -d 1
is "$RC" 2 "--fast without --event alloc is a usage error"
like "$(cat "$ERR")" '--fast goes with --event alloc' "and says so"
run "$RECCE" record -p 1 --leaks -d 1
is "$RC" 2 "--leaks without --event alloc is a usage error"
like "$(cat "$ERR")" '--leaks goes with --event alloc' "and says so"
run "$RECCE" record -p "$(unused_pid)" --event alloc --fast -d 1
is "$RC" 1 "--event alloc --fast of a missing process exits 1"
like "$(cat "$ERR")" 'no process with PID' "and says so"
RECCE_FAST_LIB=/nonexistent/librecce-fast.so spawn "$T/b.out" "$TARGETS/allocs" 30
wait_for 5 grep -q '^ready' "$T/b.out" || diag "the allocation target did not start"
RECCE_FAST_LIB=/nonexistent/librecce-fast.so run "$RECCE" record -p "$PID" --event alloc --fast -d 1 -o "$T/no.pb.gz"
is "$RC" 1 "without recce's library, --fast exits 1"
like "$(cat "$ERR")" 'librecce-fast\.so is not installed' "and says what is missing" || show_run
ok "the target still runs" kill -0 "$PID"
kill_quietly "$PID"

done_testing
