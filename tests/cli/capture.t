#!/bin/bash
# recce capture: the next calls of a function in a live process, each call
# on its own with only what ran inside it, against a target that times its
# own calls and whose function has known callees (tests/targets/requests.c);
# every output format; C++ calls left by an exception, a Rust-named
# function, Go and a Python function (py:, through CPython's probes),
# each target unchanged; and the errors.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/requests" "$TARGETS/throws" "$TARGETS/shop"

spawn "$T/req.out" "$TARGETS/requests" 120
REQ=$PID
wait_for 5 grep -q '^handle' "$T/req.out" || diag "the requests target did not start"

# lost: whether the last run said the kernel lost records of the sampling
# (a recce slowed by a sanitizer on a busy machine can fall behind): a
# call may then lack its samples, and the checks that want every call's
# samples say why they are not asked.
lost()
{
	grep -q 'the kernel lost [0-9]* records of the sampling' "$ERR"
}

# --- three calls, as folded stacks ----------------------------------------

run "$RECCE" capture -p "$REQ" handle --calls 3 --format folded -o "$T/calls.folded"
is "$RC" 0 "capture --calls 3 exits 0" || show_run
like "$(cat "$ERR")" 'recce: 3 calls, [0-9]+ samples inside them; wrote ' "it says what it wrote"
FOLDED=$(cat "$T/calls.folded")
is "$(printf '%s\n' "$FOLDED" | sed -n 's/^\(call [0-9]*\): .*/\1/p' | sort -u | paste -sd, -)" \
	"call 1,call 2,call 3" "three calls, each its own root"
unlike "$FOLDED" 'background_work|worker' "nothing of the other thread, nor of the loop around the calls"
for i in 1 2 3; do
	ROOT=$(printf '%s\n' "$FOLDED" | sed -n "s/^\\(call $i: [^;]*\\);.*/\\1/p" | head -n 1)
	SEQ=$(printf '%s\n' "$ROOT" | sed -n 's/.*handle(seq=\([0-9]*\)) = .*/\1/p')
	MS=$(printf '%s\n' "$ROOT" | sed -n 's/.*, \([0-9.]*\) ms$/\1/p')
	like "$ROOT" "^call $i: handle\\(seq=[0-9]+\\) = $((SEQ * 2)), [0-9.]+ ms\$" \
		"call $i is named with its argument, its result and its duration"
	WANT=$(awk -v s="$SEQ" '$1 == "handle" && $2 == s { print $3 }' "$T/req.out")
	# handle times itself inside its body; the probes, around it, see at
	# least that, and more by their own traps and by whatever the
	# scheduler does meanwhile on a busy machine: never less, and not a
	# unit off (five times is no scheduler's doing at 10 ms).
	cmp_ok "${MS:-0} * 1e6 + 5000" '>=' "${WANT:-1}" \
		"call $i lasted $MS ms (to 0.01 ms), at least the $WANT ns handle timed itself"
	cmp_ok "${MS:-0} * 1e6" '<' "${WANT:-1} * 5" "call $i: and its duration is in the same unit"
	CALL=$(printf '%s\n' "$FOLDED" | grep "^call $i: ")
	TOTAL=$(folded_total "$CALL")
	for f in parse compute reply; do
		if lost; then
			pass "call $i ran $f: not asked, recce said it lost samples"
		else
			cmp_ok "$(folded_count "$CALL" ";handle;$f(;|\$)")" '>' 0 "call $i ran $f"
		fi
	done
	OTHER=$(folded_count "$CALL" ';handle;(parse|compute|reply)(;|$)')
	cmp_ok "$TOTAL - $OTHER" '<=' "$TOTAL * 0.1" \
		"call $i: everything else under handle is under a tenth (the probes' own traps)"
	SHARE=$(awk -v a="$(folded_count "$CALL" ';handle;compute(;|$)')" -v t="$TOTAL" \
		'BEGIN { printf "%.0f", 100 * a / t }')
	# Samples of CPU time: the callees spin for the thread's own CPU
	# time, so the share holds on a busy machine; the band is for the
	# sampling's own spread.
	cmp_ok "($SHARE - 60) ^ 2" '<=' 400 "call $i spent $SHARE% in compute (6 of 10 ms)"
done

# --- the other formats ----------------------------------------------------

run "$RECCE" capture -p "$REQ" handle -n 3 -o "$T/calls.svg"
is "$RC" 0 "capture to an SVG exits 0" || show_run
for i in 1 2 3; do
	if lost; then
		pass "the flamegraph holds call $i: not asked, recce said it lost samples"
	else
		ok "the flamegraph holds call $i" grep -q "call $i: handle(seq=" "$T/calls.svg"
	fi
done
ok "and the callees" grep -q '>compute<\|compute (' "$T/calls.svg"

run "$RECCE" capture -p "$REQ" handle -n 3 --format speedscope -o "$T/calls.json"
is "$RC" 0 "capture --format speedscope exits 0" || show_run
if lost; then
	pass "speedscope: one profile per call: not asked, recce said it lost samples"
else
	is "$(grep -o '{"type":"sampled","name":"call [0-9]*' "$T/calls.json" | sed 's/.*call //' |
		paste -sd, -)" "1,2,3" "speedscope: one profile per call, in call order"
fi

run "$RECCE" capture -p "$REQ" handle -n 3 --format chrome -o "$T/calls.trace.json"
is "$RC" 0 "capture --format chrome exits 0" || show_run
is "$(grep -o '"ph":"M","pid":[0-9]*,"tid":[0-9]*,"name":"thread_name","args":{"name":"call [0-9]*' \
	"$T/calls.trace.json" | wc -l)" 3 "Chrome trace: one row per call" ||
	diag "$(head -c 600 "$T/calls.trace.json")"

run "$RECCE" capture -p "$REQ" handle -n 2 --split -o "$T/one.svg"
is "$RC" 0 "capture --split exits 0" || show_run
ok "--split writes one file a call" test -s "$T/one-1.svg" -a -s "$T/one-2.svg"
ok "the first holds call 1 only" sh -c "grep -q 'call 1: handle' '$T/one-1.svg' &&
	! grep -q 'call 2: handle' '$T/one-1.svg'"

# A sampling ring too small for one sample (RECCE_RING_PAGES=1: a page,
# where a stack copy is 8 KiB): every sample is lost, and said; the calls
# are still written.
RECCE_RING_PAGES=1 run "$RECCE" capture -p "$REQ" handle -n 2 --format folded -o "$T/lost.folded"
is "$RC" 0 "samples lost: capture exits 0" || show_run
like "$(cat "$ERR")" 'recce: 2 calls, 0 samples inside them; wrote ' "the calls are written, with no sample"
like "$(cat "$ERR")" 'warning: the kernel lost [0-9]+ records of the sampling when its ring was full' \
	"and the records lost are said"

run "$RECCE" capture -p "$REQ" handle -n 2 --format pprof -o "$T/calls.pb.gz"
is "$RC" 0 "capture --format pprof exits 0" || show_run
run "$RECCE" report -n 0 "$T/calls.pb.gz"
like "$(cat "$OUT")" ' compute ' "recce report reads it back" || show_run
ok "the target still runs" kill -0 "$REQ"

# --- errors ---------------------------------------------------------------

run "$RECCE" capture -p "$REQ" no_such_function_here
is "$RC" 1 "a function that is not there: exit 1"
like "$(cat "$ERR")" "'no_such_function_here' matches no function" "it says so"
run "$RECCE" capture -p "$REQ" background_work --time 1 -o "$T/never.svg"
is "$RC" 1 "a function that is not called: exit 1" || show_run
like "$(cat "$ERR")" 'no call of background_work finished while captured' "it says so"
ok "and writes nothing" test ! -e "$T/never.svg"
run "$RECCE" capture -p "$(unused_pid)" handle
is "$RC" 1 "a pid that is gone: exit 1"
run "$RECCE" capture handle
is "$RC" 2 "no -p: a usage error"
run "$RECCE" capture -p "$REQ" handle --format lines
is "$RC" 2 "--format lines: a usage error"
run "$RECCE" capture -p "$REQ" 'usdt:python:function__entry'
is "$RC" 2 "a USDT probe: a usage error"
like "$(cat "$ERR")" "'usdt:python:function__entry' is not a function pattern: .*py:GLOB \\(USDT probes: recce trace\\)" \
	"which says what capture takes and where USDT probes are traced"
ok "the target still runs after all of it" kill -0 "$REQ"
kill -TERM "$REQ"

# --- C++: calls left by an exception, the target unchanged ----------------

run "$TARGETS/throws" 1500 0 7
WANT=$(cat "$OUT")
spawn "$T/throws.out" "$TARGETS/throws" 1500 300 7
THR=$PID
run "$RECCE" capture -p "$THR" 'shop::restock' -n 10 --format folded -o "$T/cxx.folded"
is "$RC" 0 "capture of a C++ function that throws exits 0" || show_run
like "$(cat "$ERR")" 'recce: 10 calls' "it has the 10 calls"
wait_exit 20 "$THR"
is "$WAIT_RC" 0 "the C++ target exits 0"
is "$(grep '^throws:' "$T/throws.out")" "$WANT" "with the output of an untraced run"

# --- Rust-named: hot::engine::rank, by its path ---------------------------

spawn "$T/shop.out" "$TARGETS/shop" 2000 300
SHOP=$PID
run "$RECCE" capture -p "$SHOP" 'hot::engine::rank' -n 3 --format folded -o "$T/rust.folded"
is "$RC" 0 "capture of a Rust-named function by its path exits 0" || show_run
like "$(cat "$ERR")" 'recce: 3 calls' "it has the 3 calls"
wait_exit 30 "$SHOP"
is "$WAIT_RC" 0 "the target exits 0"

# --- Go ---------------------------------------------------------------------

if command -v go >/dev/null 2>&1; then
	export GO111MODULE=off GOFLAGS= GOCACHE="$T/gocache" GOPATH="$T/gopath"
	if go build -o "$T/gotrace" tests/go/trace/main.go 2>"$T/go.err"; then
		run "$T/gotrace" 300 0 2
		WANT=$(cat "$OUT")
		# It waits for the capture to be in (a sanitized recce on a
		# busy machine once came after its calls).
		spawn_ready "$T/go.out" "$T/gotrace" 300 go 2
		GOP=$PID
		run_go "$GOP" capture -p "$GOP" main.sortWork -n 3 --format folded -o "$T/go.folded"
		is "$RC" 0 "capture of a Go function exits 0" || show_run
		like "$(cat "$ERR")" 'recce: 3 calls' "it has the 3 calls"
		unlike "$(cat "$T/go.folded")" ';(main\.main|runtime\.main);' \
			"what it holds ran inside the calls, not around them"
		wait_exit 30 "$GOP"
		is "$WAIT_RC" 0 "the Go target exits 0"
		is "$(grep -v ': ready$' "$T/go.out")" "$WANT" "with the output of an untraced run"
	else
		fail "go build of tests/go/trace" "$(cat "$T/go.err")"
		skip 4 "no Go target"
	fi
else
	skip 5 "go is not installed (Debian package golang-go)"
fi

# --- Python: py:handle, through CPython's probes ----------------------------
# handle() spends a quarter of its CPU time in parse() and three quarters
# in compute() (tests/py/capture-target.py). Each call is named as trace
# names it, by its file and the line of its def, and its stacks are cut
# at handle, the Python frames named as record names them.
PYSRC=tests/py/capture-target.py
spawn_ready "$T/py.out" /usr/bin/python3.11 "$PYSRC"
PYP=$PID
run_go "$PYP" capture -p "$PYP" 'py:handle' -n 2 --format folded -o "$T/py.folded"
is "$RC" 0 "capture of a Python function exits 0" || show_run
like "$(cat "$ERR")" "recce: capturing the next 2 calls of py:handle in process $PYP" \
	"it says what it captures"
like "$(cat "$ERR")" 'while traced, python3\.11 runs Python code many times slower' \
	"and what CPython's probes cost the target meanwhile"
like "$(cat "$ERR")" 'recce: 2 calls, [0-9]+ samples inside them' "it has the 2 calls"
PYF=$(cat "$T/py.folded")
is "$(printf '%s\n' "$PYF" | sed -n 's/^\(call [0-9]*\): .*/\1/p' | sort -u | paste -sd, -)" \
	"call 1,call 2" "two Python calls, each its own root"
for i in 1 2; do
	CALL=$(printf '%s\n' "$PYF" | grep "^call $i: ")
	# (A stack of handle alone, a sample in its own code or in the
	# probe's trap at a child's entry, sorts first: the name is read on
	# one with a frame under handle.)
	like "$(printf '%s\n' "$CALL" | grep ';__main__\.handle;' | head -n 1)" \
		"^call $i: capture-target\\.handle\\(file=\"[^\"]*/capture-target\\.py\", line=$(source_line "$PYSRC" "# mark: handle")\\), [0-9.]+ ms;__main__\\.handle;" \
		"call $i: named by its module, file and line, its stacks under handle"
	is "$(printf '%s\n' "$CALL" | grep -vEc "^call $i: [^;]*;__main__\\.handle(;| )")" 0 \
		"call $i: every stack cut at handle" ||
		diag "$(printf '%s\n' "$CALL" | grep -vE "^call $i: [^;]*;__main__\\.handle(;| )" | head -n 3)"
	PARSE=$(folded_count "$CALL" ';__main__\.handle;__main__\.parse(;|$)')
	COMPUTE=$(folded_count "$CALL" ';__main__\.handle;__main__\.compute(;|$)')
	N=$(((PARSE + COMPUTE) / 200040)) # CPU ns: 200,040 a sample at 4999 Hz
	SHARE=$(awk -v a="$PARSE" -v b="$COMPUTE" 'BEGIN { printf "%.1f", a + b ? 100 * a / (a + b) : 0 }')
	if lost; then
		pass "call $i: parse()'s share not asked, recce said it lost samples"
	else
		share_near "$SHARE" 25 "$N" "call $i: parse() has 25% of the $N samples under parse() and compute() ($SHARE%)"
	fi
done
wait_exit 30 "$PYP"
is "$WAIT_RC" 0 "the Python target exits 0"
# Every Python call of the process counts toward the breaker (each
# handle() makes seven): tripped, it says what to ask for instead.
spawn_ready "$T/py2.out" /usr/bin/python3.11 "$PYSRC"
PYP=$PID
run_go "$PYP" capture -p "$PYP" 'py:handle' --limit 3/1000 -o "$T/never-py.svg"
is "$RC" 1 "a Python capture stopped by its breaker before a call ended: exit 1" || show_run
like "$(cat "$ERR")" 'each Python call, shown or not, costs the target a trap into the kernel; if it can afford more, raise the limit \(--limit 30/1000\)' \
	"it says what each Python call costs and which limit to ask for"
ok "and writes nothing" test ! -e "$T/never-py.svg"
wait_exit 30 "$PYP"
is "$WAIT_RC" 0 "the Python target, its probes out, exits 0"

done_testing
